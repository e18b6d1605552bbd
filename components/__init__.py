"""Streamlit components: ``render_*`` functions that draw and return plain values.

Untrusted text (anything that came from data) is drawn only through
:mod:`components.text`, which shows it literally: never as HTML, Markdown or LaTeX.
"""


def _use_the_router() -> None:
    """Make ``app.py``'s ``st.navigation`` the only router, from the first run on.

    Streamlit treats an app with a ``pages/`` folder as a legacy multipage app
    until some session runs ``st.navigation``; a server's first visitor landing
    on ``/data`` would get ``pages/data.py`` run alone, without the sidebar. Every
    page imports this package, so the first such run switches the legacy mode off
    and reruns, and ``app.py`` then routes as usual. That rerun is raised while this
    package is being imported, which can take it away from another session importing
    it at the same moment; ``serve.py`` (what ``make run`` and the tests serve) switches
    the mode off at server start, so this is only the fallback for ``streamlit run
    app.py``.
    """
    from streamlit.runtime.pages_manager import PagesManager  # noqa: PLC0415

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        import streamlit as st  # noqa: PLC0415

        if st.runtime.exists():
            st.rerun()


_use_the_router()
