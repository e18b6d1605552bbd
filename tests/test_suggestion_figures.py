"""The suggestion figures (issue 30, point 6) on a scripted run checked by hand: a lead shows
the suggestions to ana only; bob labels without them; ana accepts most, overrides one and
types one; a reviewer adjudicates a few passages and one item is gold. Every figure of
``needlework.suggest.figures`` is compared with the arithmetic in the comments, then the
same report through ``progress --json``, the permission, and the two pages.

Labels in the comments: A = ANSWER-THE-QUESTION, I = irrelevant (IRR), R =
RELATED-INFORMATION, O = OUTDATED (OUT). Items s1..s4 are sample-1..sample-4, three passages
each; s4 is gold.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest

import store
from needlework.actions import writes
from needlework.actions.service import apply_actions
from needlework.datasets.transfer import import_bytes
from needlework.suggest.figures import (
    acceptance,
    anchoring,
    references,
    shown_how,
    source_accuracy,
    suggestion_report,
    time_with_without,
)
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import set_suggestion_timing, set_visibility
from needlework.teams.permissions import PermissionDenied
from needlework.teams.quality import mark_gold
from needlework.view.prefs import set_hides_suggestions
from store.suggestions import put_suggestions
from tests.cli_here import run
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import team

A, IRR, R, OUT = "ANSWER-THE-QUESTION", "irrelevant", "RELATED-INFORMATION", "OUTDATED"
S, T = "judge:rules", "file:t.jsonl"  # T sorts first: the accept key takes its value first
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SUGGESTED = {  # source -> item -> passage -> label
    S: {"sample-1": (A, IRR, R), "sample-2": (A, IRR, R), "sample-3": (OUT, IRR, R),
        "sample-4": (A, IRR, R)},
    T: {"sample-1": {1: A}, "sample-4": {2: R}},
}
BOB = {"sample-1": (A, IRR, R), "sample-2": (A, R, R), "sample-3": (IRR, IRR, R),
       "sample-4": (A, R, IRR)}


class Clock:
    """The time every write is stamped with (``store.annotations.now``), set by the test."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> str:
        return (T0 + timedelta(seconds=self.seconds)).isoformat(timespec="milliseconds")


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr("store.annotations.now", fake)
    monkeypatch.setattr("store.suggestions.now", fake)
    return fake


def act(db, who, at: float, clock: Clock, **action):
    """One action as the key route applies it, at ``at`` seconds."""
    clock.seconds = at
    delivery = apply_actions(db, [dict(action, id=f"t-{uuid.uuid4().hex}", dataset="g",
                                       annotator=who.name)], actor=who)
    assert delivery.error is None and not delivery.rejected, delivery
    return delivery.outcomes[0]


def scripted_run(db, clock: Clock, *, lead, reviewer, ana, bob) -> None:
    """The lead's scripted run (the module's docstring), with the clock set at each step."""
    import_bytes(db, jsonl(garage_records(4)), "g.jsonl", dataset="g")
    mark_gold(db, "g", "sample-4", {"label:1": A, "label:2": R, "label:3": R}, actor=reviewer)
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=lead)
    set_visibility(db, "g", "annotators_see_file_labels", True, actor=lead)
    set_suggestion_timing(db, "g", "always", ["ana"], actor=lead)  # bob sees none
    clock.seconds = 0
    rows = [{"dataset": "g", "item_key": key, "field": f"label:{n}", "source": source,
             "value": value, "score": 0.9}
            for source, items in SUGGESTED.items() for key, labels in items.items()
            for n, value in (labels.items() if isinstance(labels, dict)
                             else enumerate(labels, start=1))]
    assert put_suggestions(db, rows, by=lead.name) == 14
    # bob types every label, 10 s apart, from t = 100 s
    at = 100
    for key, labels in BOB.items():
        for n, value in enumerate(labels, start=1):
            act(db, bob, at, clock, kind="set", item=key, field=f"label:{n}", value=value)
            at += 10
    # ana: the gold item first, with H on (suggestions show on a gold item as on any other;
    # H hides them), typed A I R at 2000, 2010, 2020; then H off again
    set_hides_suggestions(db, "ana", True, actor=ana)
    for n, value in enumerate((A, IRR, R), start=1):
        act(db, ana, 2000 + 10 * (n - 1), clock, kind="set", item="sample-4",
            field=f"label:{n}", value=value)
    set_hides_suggestions(db, "ana", False, actor=ana)
    assert act(db, ana, 2060, clock, kind="accept", item="sample-1").message == (
        "3 suggestion(s) accepted")  # p1 from T (first by name), p2 p3 from S
    act(db, ana, 2100, clock, kind="set", item="sample-2", field="label:3", value=R)  # = S's R
    act(db, ana, 2110, clock, kind="accept", item="sample-2")  # p1, p2
    act(db, ana, 2200, clock, kind="set", item="sample-3", field="label:1", value=A)  # over O
    act(db, ana, 2215, clock, kind="accept", item="sample-3")  # p2, p3
    # the reviewer adjudicates four passages (s4 p2 against the gold answer R)
    clock.seconds = 3000
    for key, n, value in (("sample-2", 2, IRR), ("sample-2", 3, R), ("sample-3", 1, A),
                          ("sample-4", 2, IRR)):
        writes.adjudicate(db, "g", key, f"final:label:{n}", value, actor=reviewer)


@pytest.fixture
def scripted(tmp_path, clock):
    db = store.connect(tmp_path / "figures.db")
    people = team(db, annotators=("ana", "bob"))
    scripted_run(db, clock, lead=people["boss"], reviewer=people["rita"], ana=people["ana"],
                 bob=people["bob"])
    return db, people, tmp_path / "figures.db"


def test_what_was_recorded_is_what_the_figures_read(scripted):
    db, _, _ = scripted
    via = {(k, f): json.loads(v) if v else None for k, f, v in db.execute(
        "select item_key, field, via from annotations where annotator = 'ana'")}
    assert via[("sample-1", "label:1")] == {"how": "accepted", "source": T, "score": 0.9}
    # typed equal to the suggestion shown
    assert via[("sample-2", "label:3")] == {"how": "typed", "source": S, "suggested": R}
    assert via[("sample-3", "label:1")] == {"how": "changed", "source": S, "suggested": OUT}
    assert via[("sample-4", "label:1")] is None  # H on: no suggestion shown
    assert not any(db.execute("select via from annotations where annotator = 'bob' "
                              "and via is not null").fetchall())


def test_accuracy_per_source_against_adjudicated_else_gold_values(scripted):
    db, people, _ = scripted
    report = suggestion_report(db, "g", actor=people["rita"])
    assert (report["suggestions"], report["sources"], report["unit"]) == (14, [T, S],
                                                                          "passage label")
    t, s = report["accuracy"]
    # references: adjudicated s2p2 I, s2p3 R, s3p1 A, s4p2 I (over gold's R); gold s4p1 A, s4p3 R
    # S suggests s2p2 I ✓, s2p3 R ✓, s3p1 O ✗, s4p1 A ✓, s4p2 I ✓, s4p3 R ✓: 5 of 6
    assert s["source"] == S and (s["suggestions"], s["referenced"]) == (12, 6)
    assert s["reference"] == {"adjudicated": 4, "gold": 2}
    assert (s["accuracy"]["count"], s["accuracy"]["n"]) == (5, 6)
    assert s["accuracy"]["value"] == pytest.approx(5 / 6)
    # per reference label: I 2/2, A 1/2 (s3p1 was suggested O), R 2/2; O and U never a reference
    assert {k: (v["count"], v["n"]) for k, v in s["per_label"].items()} == {
        IRR: (2, 2), A: (1, 2), R: (2, 2), OUT: (0, 0), "UNKNOWN": (0, 0)}
    assert s["per_label"][A]["value"] == 0.5
    assert s["per_label"][OUT] == {"value": None, "count": 0, "n": 0,
                                 "note": "no field has this reference"}
    assert s["labels"] == [IRR, A, R, OUT]
    assert s["confusion"] == {A: {A: 1, OUT: 1}, IRR: {IRR: 2}, R: {R: 2}}
    # T: s1p1 has no reference; s4p2 suggested R, adjudicated I: 0 of 1
    assert (t["source"], t["suggestions"], t["referenced"]) == (T, 2, 1)
    assert t["accuracy"] == {"value": 0.0, "count": 0, "n": 1, "note": ""}
    assert t["reference"] == {"adjudicated": 1, "gold": 0}
    assert t["confusion"] == {IRR: {R: 1}}


def test_acceptance_and_override_per_annotator(scripted):
    db, people, _ = scripted
    ana, bob = suggestion_report(db, "g", actor=people["rita"])["acceptance"]
    # ana saved 12 labels; shown a suggestion on s1..s3 (9), not on the gold s4 (H on):
    # accepted s1 3 + s2 2 + s3 2 = 7; changed s3p1 = 1; typed S's value s2p3 = 1
    assert (ana["annotator"], ana["saved"], ana["shown"]) == ("ana", 12, 9)
    assert (ana["accepted"]["count"], ana["accepted"]["n"]) == (7, 9)
    assert ana["accepted"]["value"] == pytest.approx(7 / 9)
    assert ana["changed"]["value"] == pytest.approx(1 / 9)
    assert ana["typed"]["value"] == pytest.approx(1 / 9)
    # bob was shown none: rates undefined, with the reason
    assert (bob["annotator"], bob["saved"], bob["shown"]) == ("bob", 12, 0)
    assert bob["accepted"] == {"value": None, "count": 0, "n": 0,
                               "note": "no value saved with a suggestion shown"}


def test_active_time_per_item_with_and_without_suggestions(scripted):
    db, people, _ = scripted
    ana, bob = suggestion_report(db, "g", actor=people["rita"])["time"]
    # ana: s4 2000→2010→2020: 20 s; s1 (3 rows at 2060): 40 s; s2 2100, 2110: 40 + 10 = 50 s;
    # s3 2200, 2215: 90 + 15 = 105 s. With: 40, 50, 105 (median 50, mean 65); without: s4 20
    assert ana["with"] == {"median": 50.0, "mean": 65.0, "n": 3, "note": ""}
    assert ana["without"] == {"median": 20.0, "mean": 20.0, "n": 1, "note": ""}
    # bob: 10 s between labels from t = 100: s1 20 s (its first change counts nothing), s2 s3
    # s4 30 s each: median 30, mean 110 / 4 = 27.5; never with suggestions
    assert bob["without"] == {"median": 30.0, "mean": 27.5, "n": 4, "note": ""}
    assert bob["with"] == {"median": None, "mean": None, "n": 0,
                           "note": "no timed item with a suggestion shown"}


def test_anchoring_compares_kappa_with_the_source_and_with_each_other(scripted):
    db, people, _ = scripted
    rows = {(r["source"], r["annotator"]): r
            for r in suggestion_report(db, "g", actor=people["rita"])["anchoring"]}
    assert list(rows) == [(T, "ana"), (T, "bob"), (S, "ana"), (S, "bob")]
    # ana against S over 12 passages: ana is A I R on every item; S differs on s3p1 only
    # (O): p_o = 11/12. Marginals ana A4 I4 R4, S A3 I4 R4 O1: p_e = (12 + 16 + 16) / 144 =
    # 44/144. kappa = (132 - 44) / (144 - 44) = 0.88
    ana = rows[(S, "ana")]
    assert (ana["units"], ana["shown"]) == (12, 9)
    assert ana["with_source"]["value"] == pytest.approx(0.88)
    assert ana["with_source"]["agreement"] == pytest.approx(11 / 12)
    # ana against bob on the same 12: equal s1 3, s2 2, s3 2, s4 1 = 8/12; bob A3 I4 R5:
    # p_e = (12 + 16 + 20) / 144 = 1/3; kappa = (2/3 - 1/3) / (2/3) = 0.5
    assert ana["with_others"]["value"] == pytest.approx(0.5)
    assert ana["with_others"]["agreement"] == pytest.approx(8 / 12)
    assert (ana["with_others"]["n"], ana["with_others"]["partners"]) == (12, 1)
    assert ana["anchoring"] is True  # 0.88 >= 0.8 and 0.5 < 0.6, shown on 9
    # bob against S: equal 8/12; p_e = (3·3 + 4·4 + 5·4) / 144 = 45/144; kappa =
    # (96/144 - 45/144) / (99/144) = 51/99 = 17/33
    bob = rows[(S, "bob")]
    assert bob["with_source"]["value"] == pytest.approx(17 / 33)
    assert (bob["shown"], bob["anchoring"]) == (0, False)
    # T suggested s1p1 A and s4p2 R. ana (A, I): p_o 1/2, p_e = 1·1/4, kappa = (1/2 - 1/4) /
    # (3/4) = 1/3. bob (A, R) equals T: kappa 1, and 1/3 with ana, but he was never shown a
    # suggestion: no anchoring (high against low alone is not enough)
    assert rows[(T, "ana")]["with_source"]["value"] == pytest.approx(1 / 3)
    assert rows[(T, "ana")]["with_others"]["value"] == pytest.approx(1 / 3)
    tb = rows[(T, "bob")]
    assert (tb["units"], tb["shown"]) == (2, 0)
    assert tb["with_source"]["value"] == pytest.approx(1.0)
    assert tb["with_others"]["value"] == pytest.approx(1 / 3)
    assert tb["anchoring"] is False


def test_progress_json_carries_the_same_report(scripted):
    db, _, path = scripted
    done = run(["progress", "--json", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    [entry] = json.loads(done.stdout)
    assert entry["suggestions"] == json.loads(json.dumps(suggestion_report(db, "g")))
    text = run(["progress", "--db", str(path)])
    # one rounding rule: 5 of 6 is 83.3 % (half up, one decimal), as on the pages
    assert "  suggestions: 14 from 2 source(s); file:t.jsonl 0.0 % right of 1; judge:rules " \
           "83.3 % right of 6" in text.stdout


def test_an_annotator_cannot_get_the_report(scripted):
    db, people, _ = scripted
    with pytest.raises(PermissionDenied, match="ana is an annotator"):
        suggestion_report(db, "g", actor=people["ana"])
    assert suggestion_report(db, "g", actor=people["boss"])["suggestions"] == 14


def test_a_dataset_without_suggestions_and_an_unknown_one(db):
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    report = suggestion_report(db, "g")
    assert (report["suggestions"], report["accuracy"], report["anchoring"]) == (0, [], [])
    with pytest.raises(ValueError, match="no dataset named 'nope'"):
        suggestion_report(db, "nope")


# --- the pure functions on their own ------------------------------------------------------------

def test_shown_how_reads_only_what_was_recorded():
    assert shown_how({"how": "accepted", "source": S, "score": None}) == "accepted"
    assert shown_how({"how": "typed", "source": S, "suggested": A}) == "typed"
    assert shown_how({"how": "changed", "source": S, "suggested": A}) == "changed"
    # null: nothing shown, also for values saved before "typed" was recorded
    assert shown_how(None) is None and shown_how({}) is None
    assert shown_how({"how": "something else"}) is None


def test_verdicts_references_and_undefined_figures():
    rows = [{"item_key": "p1", "annotator": "rita", "field": "final:verdict:0:0",
             "value": {"verdict": "flip", "reasons": [], "note": ""}, "updated_at": "2"},
            {"item_key": "p1", "annotator": "rex", "field": "final:verdict:0:0",
             "value": {"verdict": "tie", "reasons": [], "note": ""}, "updated_at": "1"}]
    gold = {"p1": {"verdict:0:0": "agree", "verdict:0:1": "agree"},
            "p2": {"verdict:0:0": "skip"}}
    refs = references("preference", rows, gold)
    # the latest adjudication wins over gold; a skip is no reference
    assert refs == {("p1", "verdict:0:0"): ("flip", "adjudicated"),
                    ("p1", "verdict:0:1"): ("agree", "gold")}
    suggested = [{"item_key": "p1", "field": "verdict:0:0", "source": "rm", "value": "flip"},
                 {"item_key": "p1", "field": "verdict:0:1", "source": "rm", "value": "skip"},
                 {"item_key": "p3", "field": "verdict:0:0", "source": "rm", "value": "agree"}]
    [rm] = source_accuracy("preference", suggested, refs)
    assert (rm["suggestions"], rm["referenced"], rm["accuracy"]["value"]) == (2, 1, 1.0)
    assert list(rm["per_label"]) == ["agree", "flip", "tie", "both-bad"]
    assert acceptance([]) == [] and time_with_without({}, []) == []
    # one label only on both sides: kappa undefined, said so, never NaN
    same = [{"item_key": "p1", "annotator": "ana", "field": "verdict:0:0", "updated_at": "3",
             "value": {"verdict": "flip", "reasons": [], "note": ""}}]
    [row] = anchoring("preference", same, suggested[:1], [])
    assert row["with_source"] == {"value": None, "agreement": 1.0, "n": 1,
                                  "note": "one label only: kappa is undefined"}
    assert row["with_others"]["note"] == "no other annotator answered these units"
    assert row["anchoring"] is False


# --- the pages -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_quality_page_shows_the_suggestion_figures(tmp_path, monkeypatch, clock):
    from needlework.teams import accounts  # noqa: PLC0415
    from tests.teams_fixtures import open_as, team_mode_db  # noqa: PLC0415

    db = team_mode_db(tmp_path, monkeypatch)
    people = {n: accounts.get_user(db, n) for n in ("lead", "rita", "ana", "bob")}
    scripted_run(db, clock, lead=people["lead"], reviewer=people["rita"], ana=people["ana"],
                 bob=people["bob"])
    at = open_as(db, "rita", "app_pages/quality.py", "g")
    assert "Suggestions" in [s.value for s in at.subheader]
    tables = {tuple(d.value.columns)[:2]: d.value for d in at.dataframe}
    accuracy = tables[("source", "suggestions")]
    assert list(accuracy["source"]) == [T, S] and list(accuracy["accuracy %"]) == [0.0, 83.3]
    taken = tables[("annotator", "saved")]
    assert list(taken["annotator"]) == ["ana", "bob"] and list(taken["accepted"]) == [7, 0]
    # ana 7 of 9, 1 of 9; bob was shown none: his rates are "–", so the column is text
    assert taken["accepted %"][0] == "77.8" and taken["overridden %"][0] == "11.1"
    assert taken["accepted %"][1] == "–"  # never "None"
    anchored = tables[("annotator", "source")]
    assert list(anchored["anchoring?"]) == ["", "", "⚠ anchoring?", ""]
    assert any("Anchoring? flags" in c.value for c in at.caption)


@pytest.mark.slow
def test_agreement_page_shows_them_in_local_mode_or_says_there_are_none(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    from tests.conftest import ROOT  # noqa: PLC0415

    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")

    def agreement() -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.session_state["annotator"] = "ana"
        at.query_params["dataset"] = "g"
        at.run()
        at.switch_page("app_pages/agreement.py")
        at.query_params["dataset"] = "g"
        at.run()
        assert not at.exception, at.exception
        return at

    at = agreement()
    assert any("No model suggestions for this dataset" in c.value for c in at.caption)
    put_suggestions(db, [{"dataset": "g", "item_key": "sample-1", "field": "label:1",
                          "source": "<b>judge</b>", "value": OUT}], by="me")
    for who, label in (("ana", OUT), ("bob", A)):
        delivery = apply_actions(db, [{"id": f"t-{uuid.uuid4().hex}", "kind": "set",
                                       "dataset": "g", "item": "sample-1", "annotator": who,
                                       "field": "label:1", "value": label}])
        assert not delivery.rejected
    at = agreement()
    tables = {tuple(d.value.columns)[:2]: d.value for d in at.dataframe}
    assert list(tables[("source", "suggestions")]["source"]) == ["<b>judge</b>"]  # as text
    taken = tables[("annotator", "saved")]
    assert list(taken["typed the suggestion"]) == [1, 0]  # ana typed it, bob overrode it
    assert list(taken["overridden"]) == [0, 1]
