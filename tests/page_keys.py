"""What the key scripts do, for page tests (AppTest): read the data a page gives its key
script, and move the way the script does, with a ``move`` action through the same
write service as the action route (tests/browser/ drives the scripts themselves)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from streamlit.testing.v1 import AppTest

import store
from needlework.actions.service import apply_actions

TAB = "apptest-tab-1"
SCRIPTS = {"annotate": "needlework.annotate_keys_data", "review": "needlework.review_keys_data"}


def key_data(at: AppTest, page: str) -> dict[str, Any]:
    """The data the page's last run gave its key script (``page``: annotate or review)."""
    def find(node: Any) -> Any:
        children = getattr(node, "children", None)
        for child in (children.values() if isinstance(children, dict) else []):
            proto = getattr(child, "proto", None)
            if getattr(proto, "component_name", "") == SCRIPTS[page]:
                return child
            found = find(child)
            if found is not None:
                return found
        return None

    element = find(at._tree)
    assert element is not None, f"no {page} key script on the page"
    return json.loads(element.proto.json)


def as_tab(at: AppTest, tab: str = TAB) -> AppTest:
    """The browser says which tab it is (the outbox's state on a session's second run)."""
    at.session_state["nw-outbox-tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def move(at: AppTest, page: str, dataset: str, item: str, *, i: int = 0, j: int = 0,
         cursor: int = 1, tab: str = TAB, who: str = "", actor: Any = None) -> None:
    """Send the key script's move to ``item`` (and comparison i, j), then redraw."""
    raw = {"id": f"move-{uuid.uuid4().hex}", "kind": "move", "tab": tab, "page": page,
           "dataset": dataset, "item": item, "annotator": who}
    raw.update({"i": i, "j": j} if page == "review" else {"cursor": cursor})
    db = store.connect()
    try:
        delivery = apply_actions(db, [raw], actor=actor)
    finally:
        db.conn.close()
    assert delivery.error is None and not delivery.rejected, delivery
    at.run()
    assert not at.exception, at.exception


def press(at: AppTest, page: str, seek: str, *, actor: Any = None) -> dict[str, Any] | None:
    """N / P / U (annotate) or J / K / N (review): where the page's data says the key
    leads, moved there as the key script does; ``None`` (and nothing sent) when it
    leads nowhere."""
    if "nw-outbox-tab" not in at.session_state:
        as_tab(at)
    data = key_data(at, page)
    target = data["moves"].get(seek)
    if target is None:
        return None
    move(at, page, data["dataset"], target["item"], i=target.get("i", 0), j=target.get("j", 0),
         cursor=target.get("cursor", 1), actor=actor)
    return target
