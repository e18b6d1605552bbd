"""What the key scripts do, for page tests (AppTest): read the data a page gives its key
script, and move the way the script does, with a ``move`` action through the same
write service as the action route (tests/browser/ drives the scripts themselves); and
the messages a page's run sends."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from streamlit.testing.v1 import AppTest

import store
from needlework.actions.service import apply_actions

TAB = "apptest-tab-1"
SCRIPTS = {"annotate": "needlework.annotate_keys_data", "review": "needlework.review_keys_data"}


def messages(at: AppTest) -> Iterator[Any]:
    """Every node of the page's last run that carries a message (its ``proto``: an
    element, or a block of them), in page order."""
    def walk(node: Any) -> Iterator[Any]:
        if getattr(node, "proto", None) is not None:
            yield node
        children = getattr(node, "children", None)
        for child in (children.values() if isinstance(children, dict) else []):
            yield from walk(child)

    return walk(at._tree)


def page_text(at: AppTest) -> str:
    """Everything the page drew (every message, as text), but the key scripts' code."""
    return "\n".join(text for text in (str(node.proto) for node in messages(at))
                     if "<script" not in text and "=>" not in text)


def key_data(at: AppTest, page: str) -> dict[str, Any]:
    """The data the page's last run gave its key script (``page``: annotate or review)."""
    element = next((node for node in messages(at)
                    if getattr(node.proto, "component_name", "") == SCRIPTS[page]), None)
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
