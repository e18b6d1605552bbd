"""Needlework: the router. Pages live in pages/, logic in needlework/."""

import streamlit as st

from components.sidebar import render_sidebar
from components.state import get_db

st.set_page_config(page_title="Needlework", page_icon="🪡", layout="wide")

navigation = st.navigation(
    {
        "Work": [
            st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="home", default=True),
        ],
        "Inspect": [],
        "Data": [
            st.Page("pages/data.py", title="Import & export", icon=":material/swap_vert:", url_path="data"),
        ],
    }
)
render_sidebar(get_db())
navigation.run()
