"""Needlework's server: ``streamlit run serve.py`` (``make run`` and the browser tests do).

It serves ``app.py`` (the router) through Streamlit's ASGI app with natural URLs: each
page also answers at the words people type for it, ``/home`` and unknown paths land on
Home without a "Page not found" dialog, and repeated query parameters are dropped
(:mod:`needlework.web`). ``streamlit run app.py`` serves the same app without them.
"""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from needlework.web import NaturalUrls, routes_of

app = st.App("app.py", middleware=[
    Middleware(NaturalUrls, routes=routes_of(Path(__file__).with_name("app.py")))])
