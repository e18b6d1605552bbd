"""Widget callbacks that run to their end.

Streamlit checks for a rerun the browser asked for at each session-state access and each
element drawn while a script runs, callbacks included; a callback it interrupts there is
dropped from that point on, and the next run does not call it again (its widget's value is
no longer new). A save in a callback could so be lost while the page showed the value: an
answer left with Esc at the moment the outbox asked for a redraw.

:func:`uninterrupted` makes a callback one step: a rerun asked for meanwhile waits, and
starts once the callbacks are done (Streamlit checks again right after them). Every
``on_change`` / ``on_click`` callback of the pages is one (``tests/test_callbacks.py``);
the wait lasts as long as the callback, which only writes a few rows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from streamlit.runtime.scriptrunner import get_script_run_ctx

F = TypeVar("F", bound=Callable[..., Any])


def script_runner() -> Any | None:
    """The script runner of this thread's run, or ``None`` where there is none (a bare
    call, a test of the function alone) or Streamlit keeps it elsewhere: it is reached
    through the session state's check for a rerun (``_yield_callback``, a method of the
    runner), whose ``_execing`` flag turns the checks on and off."""
    ctx = get_script_run_ctx(suppress_warning=True)
    check = getattr(ctx.session_state, "_yield_callback", None) if ctx is not None else None
    runner = getattr(check, "__self__", None)
    return runner if isinstance(getattr(runner, "_execing", None), bool) else None


def uninterrupted(callback: F) -> F:
    """``callback`` as a widget callback no rerun asked for meanwhile interrupts (see the
    module's docstring). Outside a script run it is ``callback`` called plainly."""

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        runner = script_runner()
        if runner is None or not runner._execing:
            return callback(*args, **kwargs)
        runner._execing = False  # no check for a rerun until the callback returns
        try:
            return callback(*args, **kwargs)
        finally:
            runner._execing = True

    return run  # type: ignore[return-value]
