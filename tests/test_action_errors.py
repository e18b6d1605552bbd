"""Errors are errors: a programming error while an action applies is logged with its
traceback, answered by the action route as a server error (500: the browser keeps the
action and sends it again) and never recorded as applied; the actions before it in the
batch stay saved, the ones after it wait. A true refusal (bad input, a permission, an
item that is not there) stays a refusal, acknowledged and recorded."""

from __future__ import annotations

import json
import logging
import uuid
from functools import partial

import pytest
from starlette.routing import Router

import store
from needlework.actions import grounding as action_grounding
from needlework.actions import route as action_route
from needlework.actions import service as actions
from needlework.datasets.transfer import import_bytes
from tests.asgi_fixtures import call as asgi_call
from tests.conftest import garage_records, jsonl

call = partial(asgi_call, path=action_route.ROUTE)
BROKEN = "UNKNOWN"  # the value whose write hits the injected bug


def _label(number: int, value: str) -> dict:
    return {"id": f"t-{uuid.uuid4().hex}", "kind": "set", "dataset": "g", "item": "sample-1",
            "annotator": "ana", "field": f"label:{number}", "value": value}


def _stored(db) -> dict[str, str]:
    return {f: json.loads(v) for f, v in db.execute(
        "select field, value from annotations where dataset = 'g' and annotator = 'ana'")}


def _recorded(db, ids: list[str]) -> dict[str, str]:
    marks = ", ".join("?" * len(ids))
    return dict(db.execute(f"select id, outcome from applied_actions where id in ({marks})", ids))


@pytest.fixture
def local(tmp_path):
    path = tmp_path / "n.db"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    app = Router(routes=action_route.routes(lambda: store.connect(path, migrate=False),
                                            team=lambda: False))
    return db, app


@pytest.fixture
def bug(monkeypatch):
    """A programming error where the apply path meets the store: writing ``BROKEN``
    raises ``KeyError`` (as a wrong key in a record would); the fixture's ``fix()``
    takes the bug away, as a deployed fix would."""
    real = action_grounding.set_annotation

    def broken(db, dataset, item, annotator, field, value, **kw):
        if value == BROKEN:
            raise KeyError("passages")
        return real(db, dataset, item, annotator, field, value, **kw)

    monkeypatch.setattr(action_grounding, "set_annotation", broken)
    return lambda: monkeypatch.setattr(action_grounding, "set_annotation", real)


def test_a_programming_error_is_a_server_error_and_the_action_is_sent_again(local, bug, caplog):
    db, app = local
    batch = [_label(1, "OUTDATED"), _label(2, BROKEN), _label(3, "RELATED-INFORMATION")]
    ids = [a["id"] for a in batch]
    with caplog.at_level(logging.ERROR, logger="needlework.actions.service"):
        status, headers, body = call(app, "POST", {"actions": batch})
    assert status == 500 and headers["cache-control"] == "no-store"
    assert body["error"] == "internal" and "acks" not in body
    # logged with its traceback, the action named
    [logged] = [r for r in caplog.records if r.exc_info]
    assert logged.exc_info[0] is KeyError and ids[1] in logged.getMessage()
    # the action before it is saved; it and the one after it are not, nor recorded
    assert _stored(db) == {"label:1": "OUTDATED"}
    assert _recorded(db, ids) == {ids[0]: "applied"}
    # the browser sends all three again (a 5xx acknowledges nothing); once fixed, they apply
    bug()
    status, _, body = call(app, "POST", {"actions": batch})
    assert status == 200 and body["error"] is None and body["acks"] == ids
    assert not body["rejected"]
    assert _stored(db) == {"label:1": "OUTDATED", "label:2": BROKEN, "label:3": "RELATED-INFORMATION"}
    assert set(_recorded(db, ids).values()) == {"applied"}


def test_a_true_refusal_stays_a_refusal_recorded_as_applied(local, bug):
    db, app = local
    batch = [_label(9, "OUTDATED"), _label(1, "MAYBE"),  # no passage 9; no such label
             {**_label(1, "OUTDATED"), "item": "nowhere"}]  # no such item
    status, _, body = call(app, "POST", {"actions": batch})
    ids = [a["id"] for a in batch]
    assert status == 200 and body["acks"] == ids and body["error"] is None
    assert [r["id"] for r in body["rejected"]] == ids
    assert all(v.startswith("rejected: ") for v in _recorded(db, ids).values())
    assert _stored(db) == {}


def test_a_widget_write_meeting_a_programming_error_raises_it(local, bug):
    db, _ = local
    with pytest.raises(KeyError, match="passages"):
        actions.submit(db, {k: v for k, v in _label(2, BROKEN).items() if k != "id"})
    assert _stored(db) == {}
    assert db.execute("select count(*) from applied_actions").fetchone()[0] == 0
    with pytest.raises(ValueError, match="not a passage label"):  # a refusal stays one
        actions.submit(db, {k: v for k, v in _label(2, "MAYBE").items() if k != "id"})
