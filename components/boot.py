"""Importing the app's modules once, never by two threads at once (the start-up rule).

Streamlit runs each browser session's script in a thread of its own, and the server's
warm-up thread imports the reward engine meanwhile. Two threads importing modules
that import each other can see one of them half initialised (``cannot import name
'get_db' from partially initialized module 'components.state'``, ``partially
initialized module 'needlework.formats.garage'``: about one server start in ten). So:

- every component is **light** or **engine**: the engine ones are the modules of the
  subpackages in :data:`ENGINE_PACKAGES` (they import PyTorch and transformers), every
  other component is light and never imports an engine module;
- ``app.py`` calls :func:`import_app` before anything else: the first session imports
  every light component (and :data:`SHARED` logic) under a lock while any other session
  waits for it (:func:`needlework.startup.import_first`);
- the warm-up thread (:func:`start_warm_up`, started by the first ``get_db()``) imports the
  engine components afterwards, and the pages that need them call
  :func:`components.state.engine` (which waits for it) before importing them. With
  ``NEEDLEWORK_WARM_UP=0`` the thread starts only when a page first needs the engine (a
  server that only annotates never imports PyTorch; the browser tests run so, but for
  their start-up tests).

The lists are found on disk (no module is imported to find them); this module imports
only :mod:`needlework.startup`, which imports nothing of ours.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from needlework import startup

#: Subpackages of components/ whose modules import the reward engine.
ENGINE_PACKAGES = ("models", "needle", "rewards")
#: Logic the engine's closure shares with pages (imported with the light components).
SHARED = ("needlework.jobs.runner", "needlework.figures.metrics", "needlework.needle.builder",
          "needlework.needle.findings", "needlework.needle.headline", "needlework.needle.slide_meta",
          "needlework.rewards.registry")
#: Logic the warm-up thread imports before the engine components.
ENGINE_LOGIC = ("needlework.rewards.job", "needlework.needle.job", "needlework.rewards.token_pairs")
_HERE = Path(__file__).parent


@functools.cache
def components() -> tuple[str, ...]:
    """Every component module (dotted, without ``components.``), packages' own files left
    out (read once per process: every run asks, through ``get_db``)."""
    names = []
    for path in sorted(_HERE.rglob("*.py")):
        parts = path.relative_to(_HERE).with_suffix("").parts
        if parts[-1] != "__init__" and parts != ("boot",):
            names.append(".".join(parts))
    return tuple(names)


def is_engine(name: str) -> bool:
    """True for a component that imports the reward engine (``rewards.scoring``)."""
    return name.split(".")[0] in ENGINE_PACKAGES


def light() -> list[str]:
    """The light components."""
    return [m for m in components() if not is_engine(m)]


def engine_components() -> list[str]:
    """The engine components."""
    return [m for m in components() if is_engine(m)]


def _light_imports() -> tuple[str, ...]:
    return (*(f"components.{m}" for m in light()), *SHARED)


def _engine_imports() -> tuple[str, ...]:
    return (*ENGINE_LOGIC, *(f"components.{m}" for m in engine_components()))


def import_app() -> None:
    """Import every light component and the logic it uses, once per process."""
    startup.import_first(_light_imports())


def start_warm_up() -> None:
    """Start the warm-up (once per process): the reward engine and the components that
    use it are imported in the background, after the light ones. Nothing with
    ``NEEDLEWORK_WARM_UP=0``: :func:`wait_for_engine` starts it when a page needs it."""
    if os.environ.get("NEEDLEWORK_WARM_UP", "").strip() == "0":
        return
    startup.warm_up(_light_imports(), _engine_imports())


def wait_for_engine() -> None:
    """Wait until the warm-up has imported the engine components (starting it if needed)."""
    startup.warm_up(_light_imports(), _engine_imports()).join()
