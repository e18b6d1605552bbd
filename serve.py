"""Needlework's server: ``streamlit run serve.py`` (``make run`` and the browser tests do).

It serves ``app.py`` (the router) through Streamlit's ASGI app with natural URLs: each
page also answers at the words people type for it, ``/home`` and unknown paths land on
Home without a "Page not found" dialog, and repeated query parameters are dropped
(:mod:`needlework.web`); it takes the key actions of the annotate and review pages
(:mod:`needlework.actions.route`) and in team mode sets and clears the HttpOnly session
cookie (:mod:`needlework.teams.session_cookie`). ``streamlit run app.py`` serves the same
pages without them: keys are not saved there, and in team mode a reload asks to sign in
again.
"""

import streamlit as st

from needlework.teams.config import load_config, serving_refusal

# Local mode has no sign-in: never serve it beyond this machine, however it was started
# (.streamlit/config.toml says 127.0.0.1; a --server.address flag may say otherwise). In
# .venv the .pth guard (listen_guard) has refused before Streamlit opened
# its socket; this is the same refusal for a Streamlit started without it, and the first
# thing this file does, so nothing of the app loads until the mode allows the address.
# `make run` never gets here with a wrong address: it asks `python -m needlework mode`.
_refusal = serving_refusal(load_config(), st.get_option("server.address"))
if _refusal:
    raise SystemExit(_refusal)

# The app, only once it may serve on this address (so: imports below the refusal).
from pathlib import Path  # noqa: E402

from starlette.middleware import Middleware  # noqa: E402

import store  # noqa: E402
from needlework.actions import route as action_route  # noqa: E402
from needlework.teams import session_cookie  # noqa: E402
from needlework.web import NaturalUrls, routes_of  # noqa: E402

# Two routes of our own: the key actions, committed as they arrive (needlework.actions.route),
# and team mode's HttpOnly session cookie, set for a one-time ticket after a sign-in
# (needlework.teams.session_cookie).
app = st.App("app.py",
             routes=[*action_route.routes(store.thread_connection),
                     *session_cookie.routes(lambda: store.connect(migrate=False))],
             middleware=[Middleware(NaturalUrls,
                                    routes=routes_of(Path(__file__).with_name("app.py")))])
