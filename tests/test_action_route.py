"""The action route (needlework.actions.route), called as an ASGI app: a batch of key
actions is committed and acknowledged in the response, once whatever the number of
sends; team mode acts as the session the cookie names and refuses without one; requests
not from the app's page, too large or too many change nothing."""

from __future__ import annotations

import json
import uuid
from functools import partial

import pytest
from starlette.routing import Router

import store
from needlework.actions import positions
from needlework.actions import route as action_route
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from tests.asgi_fixtures import call as asgi_call
from tests.conftest import garage_records, jsonl

call = partial(asgi_call, path=action_route.ROUTE)


def _label(who: str, number: int, value: str, item: str = "sample-1") -> dict:
    return {"id": f"t-{uuid.uuid4().hex}", "kind": "set", "dataset": "g", "item": item,
            "annotator": who, "field": f"label:{number}", "value": value}


def _stored(db, who: str) -> dict[str, str]:
    return {f: json.loads(v) for f, v in db.execute(
        "select field, value from annotations where dataset = 'g' and annotator = ?", [who])}


@pytest.fixture
def local(tmp_path):
    path = tmp_path / "n.db"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(3)), "g.jsonl", dataset="g")
    app = Router(routes=action_route.routes(lambda: store.connect(path, migrate=False),
                                            team=lambda: False))
    return db, app


def test_a_batch_is_committed_once_and_acknowledged(local):
    db, app = local
    batch = [_label("ana", 1, "OUTDATED"), _label("ana", 2, "UNKNOWN"),
             _label("ana", 9, "UNKNOWN")]  # passage 9 does not exist: refused, said
    status, headers, body = call(app, "POST", {"actions": batch})
    assert status == 200 and headers["cache-control"] == "no-store"
    assert body["acks"] == [a["id"] for a in batch] and body["error"] is None
    [refused] = body["rejected"]
    assert refused["id"] == batch[2]["id"] and "9" in refused["message"]
    assert _stored(db, "ana") == {"label:1": "OUTDATED", "label:2": "UNKNOWN"}
    history = db.execute("select count(*) from history where dataset = 'g'").fetchone()[0]
    status, _, again = call(app, "POST", {"actions": batch})  # the response was lost: resent
    assert status == 200 and again["acks"] == body["acks"]
    assert db.execute("select count(*) from history where dataset = 'g'").fetchone()[0] == history


@pytest.mark.parametrize(("origin", "headers"), [
    (None, {}), ("http://evil.example", {}), ("http://127.0.0.1:9999", {}),
    ("http://127.0.0.1:8501", {"sec-fetch-site": "cross-site"}),
    ("http://127.0.0.1:8501", {"content-type": "text/plain"}),
])
def test_requests_not_from_the_apps_page_change_nothing(local, origin, headers):
    db, app = local
    status, _, body = call(app, "POST", {"actions": [_label("ana", 1, "OUTDATED")]},
                           origin=origin, headers=headers)
    assert status == 403 and body["error"] == "refused"
    assert _stored(db, "ana") == {}


@pytest.mark.parametrize("body", ["not json", "[1]", '{"actions": 3}', "{}"])
def test_a_malformed_request_is_refused(local, body):
    _, app = local
    status, _, answer = call(app, "POST", body)
    assert status == 400 and answer["error"] == "refused"


def test_a_request_too_large_is_refused_unread(local):
    db, app = local
    padding = "x" * (action_route.MAX_BODY + 10)
    status, _, body = call(app, "POST", {"actions": [_label("ana", 1, "OUTDATED")],
                                         "pad": padding})
    assert status == 413 and _stored(db, "ana") == {}


def test_too_many_requests_from_one_client_wait(tmp_path):
    path = tmp_path / "n.db"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(1)), "g.jsonl", dataset="g")
    app = Router(routes=action_route.routes(lambda: store.connect(path, migrate=False),
                                            team=lambda: False, rate=3))
    codes = [call(app, "POST", {"actions": []})[0] for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert call(app, "POST", {"actions": []}, client="127.0.0.2")[0] == 200  # another client


def test_browsers_behind_one_address_are_counted_apart_up_to_the_addresses_bound(tmp_path):
    path = tmp_path / "n.db"
    store.connect(path)
    app = Router(routes=action_route.routes(lambda: store.connect(path, migrate=False),
                                            team=lambda: False, rate=2, host_rate=5))
    codes = [call(app, "POST", {"actions": []}, cookie=f"browser-{k % 3}")[0]
             for k in range(5)]
    assert codes == [200] * 5  # three browsers, under two each: one address, five requests
    assert call(app, "POST", {"actions": []}, cookie="browser-9")[0] == 429
    assert call(app, "POST", {"actions": []}, client="127.0.0.2",
                cookie="browser-5")[0] == 200  # another address has its own bound
    assert call(app, "POST", {"actions": []}, client="127.0.0.2",
                cookie="browser-0")[0] == 429  # a browser's own bound, from any address


@pytest.fixture
def team(tmp_path):
    path = tmp_path / "n.db"
    db = store.connect(path)
    lead = accounts.add_user(db, "lead", "admin", password="lead-passphrase-1")
    for name in ("ana", "bob"):
        accounts.add_user(db, name, "annotator", password=f"{name}-passphrase-1", actor=lead)
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    assign_dataset(db, "g", ["ana"], per_item=1, actor=lead)
    app = Router(routes=action_route.routes(lambda: store.connect(path, migrate=False),
                                            team=lambda: True))
    return db, app


def test_team_mode_acts_as_the_cookies_session(team):
    db, app = team
    batch = [_label("ana", 1, "OUTDATED")]
    status, _, body = call(app, "POST", {"actions": batch})  # no cookie
    assert status == 401 and body == {"error": "signin"} and _stored(db, "ana") == {}
    ana = accounts.sign_in(db, "ana", "ana-passphrase-1")
    status, _, body = call(app, "POST", {"actions": batch}, cookie=ana.token)
    assert status == 200 and body["acks"] == [batch[0]["id"]] and not body["rejected"]
    assert _stored(db, "ana") == {"label:1": "OUTDATED"}
    # bob's session may not write as ana, nor on an item not assigned to him
    bob = accounts.sign_in(db, "bob", "bob-passphrase-1")
    forged = [_label("ana", 2, "UNKNOWN"), _label("bob", 2, "UNKNOWN")]
    status, _, body = call(app, "POST", {"actions": forged}, cookie=bob.token)
    assert status == 200 and {r["id"] for r in body["rejected"]} == {a["id"] for a in forged}
    assert _stored(db, "ana") == {"label:1": "OUTDATED"} and _stored(db, "bob") == {}
    accounts.sign_out(db, ana.token)
    status, _, _ = call(app, "POST", {"actions": [_label("ana", 3, "UNKNOWN")]},
                        cookie=ana.token)
    assert status == 401 and "label:3" not in _stored(db, "ana")


def _move(tab: str, item: str, **extra) -> dict:
    return {"id": f"m-{uuid.uuid4().hex}", "kind": "move", "tab": tab, "page": "annotate",
            "dataset": "g", "item": item, "annotator": "", "cursor": 2, **extra}


def test_a_move_keeps_the_tabs_place_and_answers_its_seq(local):
    """Moves travel with the keys (in order, once): the answer carries each one's seq,
    a resend answers the same seq, and the place is kept per tab."""
    db, app = local
    first, label, second = _move("tab-a1", "sample-2"), _label("ana", 1, "OUTDATED", "sample-2"), \
        _move("tab-a1", "sample-3")
    status, _, body = call(app, "POST", {"actions": [first, label, second]})
    assert status == 200 and body["acks"] == [first["id"], label["id"], second["id"]]
    seqs = {m["id"]: m["seq"] for m in body["moved"]}
    assert list(seqs) == [first["id"], second["id"]] and seqs[second["id"]] > seqs[first["id"]]
    assert positions.get(db, "", "tab-a1", "annotate", "g") == positions.Position(
        "sample-3", seqs[second["id"]], 0, 0, 2)
    _, _, again = call(app, "POST", {"actions": [second]})  # its answer was lost: resent
    assert again["moved"] == [{"id": second["id"], "seq": seqs[second["id"]]}]
    assert positions.get(db, "", "tab-b2", "annotate", "g") is None  # another tab: its own
    # a move to nowhere is refused (seq 0: the page keeps its place) and changes nothing
    bad = [_move("tab-a1", "nope"), _move("tab-a1", "sample-1", page="elsewhere"),
           _move("../etc", "sample-1")]
    _, _, body = call(app, "POST", {"actions": bad})
    assert {r["id"] for r in body["rejected"]} == {m["id"] for m in bad}
    assert positions.get(db, "", "tab-a1", "annotate", "g").item == "sample-3"


def test_in_team_mode_a_tabs_place_is_its_users(team):
    """The same tab id under two users is two places: bob cannot move ana's tab."""
    db, app = team
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, replace=True,  # both may open both
                   actor=accounts.get_user(db, "lead"))
    ana = accounts.sign_in(db, "ana", "ana-passphrase-1")
    bob = accounts.sign_in(db, "bob", "bob-passphrase-1")
    call(app, "POST", {"actions": [_move("tab-shared", "sample-1")]}, cookie=ana.token)
    call(app, "POST", {"actions": [_move("tab-shared", "sample-2")]}, cookie=bob.token)
    assert positions.get(db, "ana", "tab-shared", "annotate", "g").item == "sample-1"
    assert positions.get(db, "bob", "tab-shared", "annotate", "g").item == "sample-2"
    assert positions.get(db, "", "tab-shared", "annotate", "g") is None
