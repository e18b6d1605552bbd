"""Needlework: the router. Pages live in app_pages/, logic in needlework/."""

import streamlit as st

from components.boot import import_app

import_app()  # first, once: a second session starting meanwhile waits (components/boot.py)
from components.position import arrive, opening  # noqa: E402
from components.sidebar import render_sidebar  # noqa: E402
from components.state import get_db  # noqa: E402
from components.teams.session import offered_pages, sign_in_gate  # noqa: E402

st.set_page_config(page_title="Needlework", page_icon="🪡", layout="wide")

PAGES = {
    "Work": [
        st.Page("app_pages/home.py", title="Home", icon=":material/home:", url_path="home", default=True),
        st.Page("app_pages/annotate.py", title="Annotate", icon="🏷️", url_path="annotate"),
        st.Page("app_pages/agreement.py", title="Agreement", icon="🤝", url_path="agreement"),
        st.Page("app_pages/review.py", title="Review pairs", icon="⚖️", url_path="review"),
    ],
    "Inspect": [
        st.Page("app_pages/rewards.py", title="Reward model", icon=":material/model_training:", url_path="rewards"),
        st.Page("app_pages/needle.py", title="Needle lab", icon=":material/search_insights:", url_path="needle"),
        st.Page("app_pages/rag.py", title="RAG answers", icon="📑", url_path="rag"),
    ],
    "Data": [
        st.Page("app_pages/data.py", title="Import & export", icon=":material/swap_vert:", url_path="data"),
        st.Page("app_pages/suggestions.py", title="Suggestions", icon="🪄", url_path="suggestions"),
    ],
    "Team": [  # team mode only, by role (components/teams/session.py)
        st.Page("app_pages/users.py", title="Users", icon=":material/group:", url_path="users"),
        st.Page("app_pages/assign.py", title="Assignment", icon=":material/assignment_ind:", url_path="assign"),
        st.Page("app_pages/quality.py", title="Quality", icon=":material/verified:", url_path="quality"),
        st.Page("app_pages/guidelines.py", title="Guidelines", icon=":material/menu_book:", url_path="guidelines"),
        st.Page("app_pages/audit.py", title="Audit", icon=":material/history_edu:", url_path="audit"),
    ],
}
user = sign_in_gate(get_db(), PAGES)  # team mode: who is signed in, else the sign-in form (and stop)
navigation = st.navigation(offered_pages(PAGES, user), expanded=True)  # the lead's pages too
render_sidebar(get_db(), opening=opening(navigation.url_path))  # a link's ?dataset= counts
arrive(navigation.url_path)  # a page just opened reads its ?item= link (components/position.py)
navigation.run()
