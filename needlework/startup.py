"""Importing a server's modules once per process, never by two threads at once.

A server runs many threads: one per browser session's script run, and one that
imports the heavy modules (PyTorch, transformers: seconds) in the background so the
first visit to a page that needs them does not wait for the import. Two threads
importing modules that import each other can see one of them half initialised
(``cannot import name 'get_db' from partially initialized module ...``). So:

1. :func:`import_first` imports the light modules once, under a lock: the first caller
   imports them, any other caller waits until they are all imported;
2. :func:`warm_up` starts, once per process, the thread that imports the heavy modules
   after the light ones (it calls :func:`import_first` itself, so it waits too);
3. code that needs a heavy module joins that thread before importing it
   (``warm_up(...).join()``); light modules never import a heavy one.

The app's lists of modules are in :mod:`components.boot`. No streamlit import here.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence

_FIRST_LOCK = threading.Lock()
_FIRST_DONE: list[bool] = []
_WARM_UP: list[threading.Thread] = []
_WARM_UP_LOCK = threading.Lock()


def import_first(names: Sequence[str]) -> None:
    """Import every module of ``names``, once per process; a second caller waits for the first."""
    with _FIRST_LOCK:
        if _FIRST_DONE:
            return
        for name in names:
            importlib.import_module(name)
        _FIRST_DONE.append(True)


def _import_heavy(first: Sequence[str], heavy: Sequence[str]) -> None:
    import_first(first)
    for name in heavy:
        importlib.import_module(name)


def warm_up(first: Sequence[str], heavy: Sequence[str]) -> threading.Thread:
    """The thread that imports ``heavy`` after ``first`` (:func:`import_first`), started on
    the first call of the process; later calls return the same thread (join it to wait)."""
    with _WARM_UP_LOCK:
        if not _WARM_UP:
            thread = threading.Thread(target=_import_heavy, args=(tuple(first), tuple(heavy)),
                                      daemon=True, name="needlework-warm-up")
            thread.start()
            _WARM_UP.append(thread)
        return _WARM_UP[0]
