"""When annotators see suggestions (issue 30, point 5, against anchoring): always, only after
their own value of the field, or never, per dataset and for the annotators named (the others
see none); the server's accept follows it; the lead's setting, its audit event and the CLI."""

from __future__ import annotations

import html
import json
import re
import uuid

import pytest

from needlework.actions.service import apply_actions
from needlework.datasets.transfer import import_bytes
from needlework.formats.pairs import dump as dump_pairs
from needlework.suggest.data import import_suggestions
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import (
    SuggestionSetting,
    against_yours,
    set_suggestion_timing,
    set_visibility,
    shows_suggestion,
    suggestion_setting,
    suggestion_timing,
)
from needlework.teams.permissions import PermissionDenied
from needlework.teams.quality import mark_gold
from store.audit import iter_events
from tests.cli_here import run
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import team

SUGGESTED = [{"item": "sample-1", "field": "label:1", "value": "OUTDATED", "source": "judge",
              "score": 0.8},
             {"item": "sample-1", "field": "label:2", "value": "UNKNOWN", "source": "judge"}]


def lines(*objects) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


@pytest.fixture
def grounding(db):
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")  # 3 passages each
    import_suggestions(db, lines(*SUGGESTED), "s.jsonl", "g", by="lead")
    return db


@pytest.fixture
def people(grounding):
    """Team accounts (boss the admin, rita the reviewer, ana, bob, cy), the dataset
    assigned to the three annotators, who see the file's labels."""
    users = team(grounding)
    assign_dataset(grounding, "g", ["ana", "bob", "cy"], per_item=3, actor=users["boss"])
    set_visibility(grounding, "g", "annotators_see_file_labels", True, actor=users["boss"])
    return users


def act(db, *actions, actor=None, who="ana"):
    delivery = apply_actions(db, [dict(a, id=f"t-{uuid.uuid4().hex}", dataset="g", annotator=who)
                                  for a in actions], actor=actor)
    assert delivery.error is None, delivery
    return delivery.outcomes


def send(db, dataset, **action) -> None:
    """One action of ana's, as the outbox delivers it; it must apply."""
    delivery = apply_actions(db, [dict(action, id=f"t-{uuid.uuid4().hex}", dataset=dataset,
                                       annotator="ana")])
    assert delivery.outcomes[0].status == "applied", delivery


def saved(db, field, who="ana"):
    row = db.execute("select value, via from annotations where item_key = 'sample-1' and "
                     "annotator = ? and field = ?", [who, field]).fetchone()
    return None if row is None else (json.loads(row[0]), row[1] and json.loads(row[1]))


def test_local_mode_follows_the_setting_by_annotator_name(grounding):
    assert suggestion_setting(grounding, "g") == SuggestionSetting("always", ())
    assert suggestion_timing(grounding, "g", "sample-1", None, "ana") == "always"
    set_suggestion_timing(grounding, "g", "after", ["ana", " bob ", "ana", ""], actor=None)
    assert suggestion_setting(grounding, "g") == SuggestionSetting("after", ("ana", "bob"))
    assert suggestion_timing(grounding, "g", "sample-1", None, "ana") == "after"
    assert suggestion_timing(grounding, "g", "sample-1", None, "bob") == "after"
    assert suggestion_timing(grounding, "g", "sample-1", None, "cy") == "never"  # the control group
    assert suggestion_timing(grounding, "g", "sample-1", None, "") == "never"
    set_suggestion_timing(grounding, "g", "never", [], actor=None)
    assert suggestion_timing(grounding, "g", "sample-1", None, "cy") == "never"
    with pytest.raises(ValueError, match="unknown timing 'later'"):
        set_suggestion_timing(grounding, "g", "later", [], actor=None)


def test_team_mode_annotators_in_and_out_of_the_list_reviewers_and_gold(grounding, people):
    ana, bob, rita, boss = people["ana"], people["bob"], people["rita"], people["boss"]
    set_suggestion_timing(grounding, "g", "after", ["ana"], actor=boss)
    assert suggestion_timing(grounding, "g", "sample-1", ana, "ana") == "after"
    assert suggestion_timing(grounding, "g", "sample-1", bob, "bob") == "never"
    # the signed-in name counts, not the one a request claims
    assert suggestion_timing(grounding, "g", "sample-1", bob, "ana") == "never"
    assert suggestion_timing(grounding, "g", "sample-1", rita, "rita") == "always"
    assert suggestion_timing(grounding, "g", "sample-1", boss, "boss") == "always"
    # a gold item gets the same timing as any other item
    mark_gold(grounding, "g", "sample-2", actor=rita)
    assert suggestion_timing(grounding, "g", "sample-2", ana, "ana") == "after"
    assert suggestion_timing(grounding, "g", "sample-2", bob, "bob") == "never"
    assert suggestion_timing(grounding, "g", "sample-2", rita, "rita") == "always"
    # the file's labels are a separate setting: hiding them leaves the suggestions
    set_visibility(grounding, "g", "annotators_see_file_labels", False, actor=boss)
    assert suggestion_timing(grounding, "g", "sample-1", ana, "ana") == "after"
    assert suggestion_timing(grounding, "g", "sample-1", bob, "bob") == "never"


def test_what_shows_and_how_it_compares():
    assert shows_suggestion("always", False) and shows_suggestion("always", True)
    assert not shows_suggestion("after", False) and shows_suggestion("after", True)
    assert not shows_suggestion("never", True)
    assert against_yours("OUTDATED", ["UNKNOWN"]) == "differs from yours"
    assert against_yours("OUTDATED", ["OUTDATED"]) == "same as yours"
    assert against_yours("OUTDATED", ["OUTDATED", "UNKNOWN"]) == "some differ from yours"


@pytest.mark.parametrize("when", ["after", "never"])
def test_accept_takes_nothing_unless_the_timing_allows_it(grounding, when):
    """An accept sent by hand for an unlabelled passage changes nothing; a first label is
    typed (no suggestion was shown), a label changed after seeing one is kept as changed."""
    set_suggestion_timing(grounding, "g", when, [], actor=None)
    [outcome] = act(grounding, {"kind": "accept", "item": "sample-1"})
    assert outcome.status == "unchanged"
    assert grounding.execute("select count(*) from annotations").fetchone()[0] == 0
    act(grounding, {"kind": "set", "item": "sample-1", "field": "label:1", "value": "UNKNOWN"})
    assert saved(grounding, "label:1") == ("UNKNOWN", None)
    [again] = act(grounding, {"kind": "accept", "item": "sample-1"})
    assert again.status == "unchanged"
    assert saved(grounding, "label:2") is None
    act(grounding, {"kind": "set", "item": "sample-1", "field": "label:1", "value": "irrelevant"})
    changed = {"how": "changed", "source": "judge", "suggested": "OUTDATED"}
    assert saved(grounding, "label:1") == ("irrelevant", changed if when == "after" else None)


def test_accept_follows_the_group(grounding):
    set_suggestion_timing(grounding, "g", "always", ["ana"], actor=None)
    act(grounding, {"kind": "accept", "item": "sample-1"}, who="bob")
    assert saved(grounding, "label:1", who="bob") is None  # not in the group: sees none
    act(grounding, {"kind": "accept", "item": "sample-1"})
    assert saved(grounding, "label:1") == ("OUTDATED", {"how": "accepted", "source": "judge",
                                                        "score": 0.8})


def test_team_mode_accept_under_after_is_refused_for_the_annotator_not_the_reviewer(
        grounding, people):
    set_suggestion_timing(grounding, "g", "after", [], actor=people["boss"])
    [outcome] = act(grounding, {"kind": "accept", "item": "sample-1"}, actor=people["ana"])
    assert (outcome.status, outcome.message) == (
        "unchanged", "suggestions show here only after your own label: nothing to accept")
    act(grounding, {"kind": "accept", "item": "sample-1"}, actor=people["rita"], who="rita")
    assert saved(grounding, "label:1", who="rita")[0] == "OUTDATED"


def test_review_accept_under_after_and_never(db):
    records = [{"id": "p1", "prompt": "q", "chosen": "good", "rejected": "bad"}]
    import_bytes(db, dump_pairs(records).encode(), "p.jsonl", dataset="p")
    import_suggestions(db, lines({"item": "p1", "field": "verdict:0:0", "value": "flip",
                                  "source": "rm"}), "v.jsonl", "p", by="x")

    def act_p(**action):
        delivery = apply_actions(db, [dict(action, id=f"t-{uuid.uuid4().hex}", dataset="p",
                                           item="p1", i=0, j=0, annotator="ana")])
        return delivery.outcomes[0]

    for when in ("never", "after"):
        set_suggestion_timing(db, "p", when, [], actor=None)
        outcome = act_p(kind="accept")
        assert outcome.status == "unchanged"
        assert outcome.message == ("no suggestion to accept on this comparison" if when == "never"
                                   else "suggestions show here only after your own verdict: "
                                   "nothing to accept")
        assert db.execute("select count(*) from annotations").fetchone()[0] == 0
    act_p(kind="verdict", verdict="agree")  # nothing was shown: typed
    row = db.execute("select via from annotations where annotator = 'ana'").fetchone()
    assert row[0] is None


def test_only_the_lead_sets_it_and_it_is_audited(grounding, people):
    with pytest.raises(PermissionDenied, match="rita is a reviewer and may not assign"):
        set_suggestion_timing(grounding, "g", "never", [], actor=people["rita"])
    with pytest.raises(PermissionDenied):
        set_suggestion_timing(grounding, "g", "never", [], actor=people["ana"])
    assert suggestion_setting(grounding, "g").when == "always"  # locally
    assert suggestion_setting(grounding, "g", team=True).when == "never"  # in team mode
    before = set_suggestion_timing(grounding, "g", "after", ["bob", "ana"], actor=people["boss"])
    assert before == SuggestionSetting("never", ())
    [event] = [e for e in iter_events(grounding, "g") if e["target"] == "suggestion_timing"]
    assert (event["by"], event["action"]) == ("boss", "dataset.setting")
    assert (json.loads(event["before"]), json.loads(event["after"])) == ({"when": "never", "for": []},
                                                 {"when": "after", "for": ["ana", "bob"]})


def test_the_cli_prints_and_sets_the_timing(db_path):
    import store  # noqa: PLC0415

    db = store.connect(db_path)
    import_bytes(db, jsonl(garage_records(1)), "g.jsonl", dataset="g")
    db.conn.close()
    shown = run(["suggestions", "timing", "--dataset", "g", "--db", str(db_path)])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == ("g: always: annotators see the suggestions at once, "
                                    "for every annotator")
    done = run(["suggestions", "timing", "--dataset", "g", "--when", "after", "--for", "ana",
                "bob", "--db", str(db_path)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("g: after: annotators see a field's suggestion only after "
                                   "their own value of it, for ana, bob (the other annotators "
                                   "see none)")
    db = store.connect(db_path)
    assert suggestion_setting(db, "g") == SuggestionSetting("after", ("ana", "bob"))
    [event] = [e for e in iter_events(db, "g") if e["target"] == "suggestion_timing"]
    assert event["by"] == "(local)"
    db.conn.close()
    assert run(["suggestions", "timing", "--dataset", "g", "--when", "soon", "--db",
                str(db_path)]).returncode == 2
    missing = run(["suggestions", "timing", "--dataset", "nope", "--db", str(db_path)])
    assert (missing.returncode, missing.stderr.strip()) == (
        1, "suggestions timing: no dataset 'nope'")
    lonely = run(["suggestions", "timing", "--dataset", "g", "--for", "ana", "--db", str(db_path)])
    assert lonely.returncode == 2


# -- the pages (AppTest, local mode) -----------------------------------------------------------


def _page_text(at) -> str:
    bodies = "\n".join(h.proto.body for h in at.get("html"))
    return html.unescape(re.sub(r"<[^>]+>", "", bodies))


@pytest.mark.slow
def test_annotate_shows_a_suggestion_after_the_own_label_with_the_difference(tmp_path,
                                                                            monkeypatch):
    import store  # noqa: PLC0415
    from tests.test_grounding_pages import open_page  # noqa: PLC0415

    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl")
    import_suggestions(db, lines(*[dict(r, source="judge <i>") for r in SUGGESTED]), "s.jsonl",
                       "ground", by="lead")
    set_suggestion_timing(db, "ground", "after", [], actor=None)
    at = open_page("app_pages/annotate.py", "ana", item="sample-1")
    text = _page_text(at)
    assert "Outdated (judge" not in text and "suggested:" not in text and "model:" not in text
    assert "once you have saved your own label" in " ".join(c.value for c in at.caption)
    assert not re.search(r'<button[^>]*class="[^"]*nw-suggested', "\n".join(
        h.proto.body for h in at.get("html")))
    from components.annotate.item import load_context  # noqa: PLC0415
    from components.annotate.keyboard import key_data  # noqa: PLC0415
    from store.datasets import get_item  # noqa: PLC0415

    send(db, "ground", kind="set", item="sample-1", field="label:1", value="UNKNOWN")
    send(db, "ground", kind="set", item="sample-1", field="label:2", value="UNKNOWN")
    at = open_page("app_pages/annotate.py", "ana", item="sample-1")
    text = _page_text(at)
    assert "model: Outdated (judge <i> 0.80) — differs from yours" in text
    assert "model: Unknown (judge <i>) — same as yours" in text
    assert "&lt;i&gt;" in "\n".join(h.proto.body for h in at.get("html"))  # text, never HTML
    # the key script's data: nothing Y could take (both are labelled, the rest hidden)
    ctx = load_context(db, "ground", get_item(db, "ground", "sample-1"), "ana")
    assert ctx.timing == "after"
    assert key_data(ctx, 1)["suggested"] == {}
    set_suggestion_timing(db, "ground", "never", [], actor=None)
    text = _page_text(open_page("app_pages/annotate.py", "ana", item="sample-1"))
    assert "model:" not in text and "suggested:" not in text and "judge" not in text


@pytest.mark.slow
def test_review_shows_the_verdict_suggestion_after_the_own_verdict(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    import store  # noqa: PLC0415
    from tests.conftest import ROOT  # noqa: PLC0415

    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    records = [{"id": "p1", "prompt": "q", "chosen": "good", "rejected": "bad"}]
    import_bytes(db, dump_pairs(records).encode(), "p.jsonl", dataset="p")
    import_suggestions(db, lines({"item": "p1", "field": "verdict:0:0", "value": "flip",
                                  "score": -1.3, "source": "rm"}), "v.jsonl", "p", by="x")
    set_suggestion_timing(db, "p", "after", [], actor=None)

    def review():
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
        at.session_state["annotator"] = "ana"
        at.query_params["dataset"] = "p"
        at.run()
        at.switch_page("app_pages/review.py")
        at.query_params["dataset"] = "p"
        at.run()
        assert not at.exception, at.exception
        return at, " ".join(c.value for c in at.caption).replace("\\", "")

    at, captions = review()
    assert "Rejected better" not in captions and "the model's verdict shows once you give yours" \
        in captions
    assert not next(b for b in at.button if b.key == "rv_v_flip").help
    send(db, "p", kind="verdict", item="p1", i=0, j=0, verdict="agree")
    at, captions = review()
    assert "model: Rejected better (rm -1.30)] — :orange-background[**differs from yours**]" \
        in captions
    assert next(b for b in at.button if b.key == "rv_v_flip").help == \
        "Suggested: Rejected better (rm -1.30)."
    set_suggestion_timing(db, "p", "never", [], actor=None)
    _, captions = review()
    assert "Rejected better" not in captions and "model" not in captions


@pytest.mark.slow
def test_the_lead_chooses_it_on_the_assignment_page(tmp_path, monkeypatch):
    from needlework.teams import accounts  # noqa: PLC0415
    from tests.teams_fixtures import grounding as team_grounding  # noqa: PLC0415
    from tests.teams_fixtures import open_as, team_mode_db  # noqa: PLC0415

    db = team_mode_db(tmp_path, monkeypatch)
    team_grounding(db, 2, "g")
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=accounts.get_user(db, "lead"))
    at = open_as(db, "lead", "app_pages/assign.py", "g")
    [when] = [r for r in at.radio if r.label == "When annotators see suggestions"]
    [names] = [m for m in at.multiselect if m.label.startswith("For these annotators")]
    assert when.value == "never" and names.value == [] and "ana" in names.options
    assert "the others see no suggestions" in names.help and "test group" in names.label
    assert "does not depend on the file's labels" in when.help
    assert any("Now: Every annotator sees no suggestions and no file's labels." in
               c.value.replace("\\", "") for c in at.caption)
    when.set_value("after")
    names.set_value(["ana"])
    next(b for b in at.button if b.label == "Save when suggestions show").click().run()
    assert not at.exception, at.exception
    assert suggestion_setting(db, "g") == SuggestionSetting("after", ("ana",))
    assert any("for ana (the others see none: the control group)" in s.value.replace("\\", "")
               for s in at.success)
    assert any("Test group (ana): suggestions only after their own label and no file's labels. "
               "Control group (every other annotator): no suggestions and no file's labels."
               in c.value.replace("\\", "") for c in at.caption)
    [when] = [r for r in at.radio if r.label == "When annotators see suggestions"]
    assert when.value == "after"
