"""Importing the app's modules once, in one thread, before anything runs in parallel.

Streamlit runs each browser session's script in a thread of its own, and the server's
warm-up thread imports the reward engine meanwhile. Two threads importing modules
that import each other can see one of them half initialised (``cannot import name
'get_db' from partially initialized module 'components.state'``, ``partially
initialized module 'needlework.formats.garage'``: about one server start in ten). So
``app.py`` calls :func:`import_app` before anything else: the first session imports
every light component under a lock while any other session waits for it; the warm-up
thread (:func:`components.state.engine`) imports the engine components afterwards, and
the pages that need those wait for the warm-up. This module imports nothing of ours at
its top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from needlework import startup

if TYPE_CHECKING:
    from threading import Thread

#: Components that import the reward engine (PyTorch, transformers: seconds to import).
ENGINE = ("jobs", "model_picker", "needle_builder", "needle_charts",
          "needle_scoring", "per_token", "presentation", "rewards", "token_view")
#: Every other component: imported by :func:`import_app`.
LIGHT = ("agreement", "answer", "datasets", "diff_view", "grounding", "keyboard", "long_text",
         "needle", "outbox", "passages", "question_list", "review", "review_filters",
         "review_keys", "review_overview", "review_state", "sidebar", "state", "text")
#: Logic the engine's closure shares with pages (imported with the light components).
SHARED = ("needlework.metrics", "needlework.needle.builder", "needlework.needle.findings")



def _light() -> tuple[str, ...]:
    return (*(f"components.{m}" for m in LIGHT), *SHARED)


def _engine() -> tuple[str, ...]:
    return ("needlework.rewards.job", "needlework.needle.job", "needlework.rewards.token_pairs",
            *(f"components.{m}" for m in ENGINE))


def import_app() -> None:
    """Import every light component and the logic it uses, once per process."""
    startup.import_first(_light())


def warm_up() -> Thread:
    """The warm-up thread (started on the first call): it imports the reward engine and
    the components that use it, after the light ones."""
    return startup.warm_up(_light(), _engine())
