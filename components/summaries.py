"""Item summaries of a grounding dataset, cached per dataset version: the annotate page's
question list and the agreement page's item titles read the same copy."""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.state import get_db
from store.grounding import item_summaries


@st.cache_resource(show_spinner=False, max_entries=16)
def cached_summaries(path: str, dataset: str, created_at: str) -> list[dict[str, Any]]:
    """Item summaries of a dataset (read with the calling run's connection to ``path``,
    the app's database); records never change after import, so they are cached per
    (database, dataset, import time). Shared, not copied (a resource cache): callers
    must not modify them."""
    return item_summaries(get_db(), dataset)
