"""Whether a suggestion was on screen when a value was saved (issue 47, point 2): decided
when it is saved, by what the page showed (the lead's timing for that person, their H),
recorded in ``via`` and never recomputed from today's settings; the rules of who sees what
(file's labels apart from suggestions, gold items like any other); and a scripted case
whose figures are counted by hand.

The scripted case: suggestions of one source S for the three passages of four items; the
lead first shows them to bob only (the test group), then adds ana midway. Labels in the
comments: A = ANSWER-THE-QUESTION, I = irrelevant, R = RELATED-INFORMATION, O = OUTDATED.
"""

from __future__ import annotations

import json
import uuid

import pytest

from needlework.actions.service import apply_actions
from needlework.datasets.transfer import import_bytes
from needlework.suggest.figures import suggestion_report
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import (
    GOLD_KEEPS_FILE_LABELS,
    file_labels_blocked,
    groups_in_words,
    set_suggestion_timing,
    set_visibility,
    suggestion_timing,
    visibility,
)
from needlework.teams.permissions import PermissionDenied
from needlework.teams.quality import mark_gold
from needlework.view.prefs import hides_suggestions, set_hides_suggestions
from store.audit import iter_events
from store.suggestions import put_suggestions
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import lfrb_records, team

A, IRR, R, OUT = "ANSWER-THE-QUESTION", "irrelevant", "RELATED-INFORMATION", "OUTDATED"
S = "judge:rules"
SUGGESTED = {"sample-1": (A, IRR, R), "sample-2": (A, IRR, R), "sample-3": (OUT, IRR, R),
             "sample-4": (A, IRR, R)}


@pytest.fixture
def people(db):
    """Four three-passage items with S's suggestion on every passage, assigned to ana and
    bob; boss the admin, rita the reviewer."""
    import_bytes(db, jsonl(garage_records(4)), "g.jsonl", dataset="g")
    users = team(db, annotators=("ana", "bob"))
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=users["boss"])
    put_suggestions(db, [{"dataset": "g", "item_key": key, "field": f"label:{n}", "source": S,
                          "value": value, "score": 0.9}
                         for key, labels in SUGGESTED.items()
                         for n, value in enumerate(labels, start=1)], by="boss")
    # team mode shows annotators no suggestion until the lead chooses: here, everyone at once
    set_suggestion_timing(db, "g", "always", [], actor=users["boss"])
    return users


def test_team_mode_shows_annotators_no_suggestion_until_the_lead_chooses(db):
    """Blind by default: where the lead never chose, an annotator in team mode sees no
    suggestion (the experiment starts with nobody shown one), a reviewer sees them, and
    local mode (one person, who asked for them) sees them at once."""
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    users = team(db, annotators=("ana",))
    assert suggestion_timing(db, "g", "sample-1", users["ana"], "ana") == "never"
    assert suggestion_timing(db, "g", "sample-1", users["rita"], "rita") == "always"
    assert suggestion_timing(db, "g", "sample-1", None, "ana") == "always"
    assert groups_in_words(db, "g") == "Every annotator sees no suggestions and no file's labels."
    set_suggestion_timing(db, "g", "after", ["ana"], actor=users["boss"])
    assert suggestion_timing(db, "g", "sample-1", users["ana"], "ana") == "after"


def act(db, who, **action):
    """One action of ``who`` as the key route applies it; it must not be rejected."""
    delivery = apply_actions(db, [dict(action, id=f"t-{uuid.uuid4().hex}",
                                       dataset=action.pop("dataset", "g"), annotator=who.name)],
                             actor=who)
    assert delivery.error is None and not delivery.rejected, delivery
    return delivery.outcomes[0]


def via(db, who: str, item: str, field: str, dataset: str = "g"):
    row = db.execute("select via from annotations where dataset = ? and annotator = ? and "
                     "item_key = ? and field = ?", [dataset, who, item, field]).fetchone()
    assert row is not None, (who, item, field)
    return row[0] and json.loads(row[0])


# --- the rules ----------------------------------------------------------------------------------

def test_file_labels_and_suggestions_are_separate_settings(db, people):
    ana, bob, rita, boss = people["ana"], people["bob"], people["rita"], people["boss"]
    # file's labels off (the default), suggestions for everyone (the fixture's choice)
    assert visibility(db, "g", ana).file_labels is False
    assert suggestion_timing(db, "g", "sample-1", ana, "ana") == "always"
    assert groups_in_words(db, "g") == "Every annotator sees suggestions at once and no file's labels."
    # a test group: bob sees suggestions without the file's labels, ana (control) neither
    set_suggestion_timing(db, "g", "after", ["bob"], actor=boss)
    assert suggestion_timing(db, "g", "sample-1", bob, "bob") == "after"
    assert suggestion_timing(db, "g", "sample-1", ana, "ana") == "never"
    assert visibility(db, "g", bob).file_labels is False
    assert groups_in_words(db, "g") == (
        "Test group (bob): suggestions only after their own label and no file's labels. "
        "Control group (every other annotator): no suggestions and no file's labels.")
    # the file's labels for everyone: the suggestions do not change
    set_visibility(db, "g", "annotators_see_file_labels", True, actor=boss)
    assert visibility(db, "g", ana).file_labels is True
    assert suggestion_timing(db, "g", "sample-1", ana, "ana") == "never"
    assert groups_in_words(db, "g").endswith("Control group (every other annotator): "
                                             "no suggestions and the file's labels.")
    # a gold item: the file's labels go from every item, the timing stays on every item
    assert file_labels_blocked(db, "g") is False
    mark_gold(db, "g", "sample-3", actor=rita)
    assert file_labels_blocked(db, "g") is True
    assert visibility(db, "g", ana).file_labels is False
    assert visibility(db, "g", rita).file_labels is True  # reviewers see everything
    assert visibility(db, "g", None).file_labels is True  # local mode too
    assert "no file's labels" in groups_in_words(db, "g")
    # local mode: one person sees everything of the file, the words leave it out
    assert groups_in_words(db, "g", team=False) == (
        "Test group (bob): suggestions only after their own label. "
        "Control group (every other annotator): no suggestions.")
    for key in ("sample-1", "sample-3"):
        assert suggestion_timing(db, "g", key, bob, "bob") == "after"
        assert suggestion_timing(db, "g", key, ana, "ana") == "never"
        assert suggestion_timing(db, "g", key, rita, "rita") == "always"
    assert GOLD_KEEPS_FILE_LABELS.count(". ") == 0 and "gold" in GOLD_KEEPS_FILE_LABELS


def test_typed_equal_to_a_suggestion_shown_is_recorded(db, people):
    ana = people["ana"]
    act(db, ana, kind="set", item="sample-1", field="label:1", value=A)  # S says A
    act(db, ana, kind="set", item="sample-1", field="label:2", value=R)  # S says I
    act(db, ana, kind="set", item="sample-1", field="flag", value="flagged")  # no suggestion
    assert via(db, "ana", "sample-1", "label:1") == {"how": "typed", "source": S, "suggested": A}
    assert via(db, "ana", "sample-1", "label:2") == {"how": "changed", "source": S,
                                                      "suggested": IRR}
    assert via(db, "ana", "sample-1", "flag") is None


def test_h_hides_the_suggestions_from_the_page_and_the_server(db, people):
    ana, bob = people["ana"], people["bob"]
    assert hides_suggestions(db, "ana") is False
    assert set_hides_suggestions(db, "ana", True, actor=ana) is False
    assert hides_suggestions(db, "ana") is True and hides_suggestions(db, "bob") is False
    act(db, ana, kind="set", item="sample-1", field="label:1", value=A)  # S says A: not shown
    act(db, ana, kind="set", item="sample-1", field="label:2", value=R)  # S says I: not changed
    act(db, ana, kind="rest", item="sample-1")
    assert [via(db, "ana", "sample-1", f"label:{n}") for n in (1, 2, 3)] == [None, None, None]
    [held] = [act(db, ana, kind="accept", item="sample-2")]
    assert held.message == "no suggestions to accept on this question"
    act(db, ana, kind="set", item="sample-1", field="dim:question_complexity", value="Simple")
    assert via(db, "ana", "sample-1", "dim:question_complexity") is None
    # bob's own H is off: his values meet the suggestions
    act(db, bob, kind="set", item="sample-1", field="label:1", value=A)
    assert via(db, "bob", "sample-1", "label:1")["how"] == "typed"
    # H off again: shown
    assert set_hides_suggestions(db, "ana", False, actor=ana) is True
    act(db, ana, kind="set", item="sample-2", field="label:1", value=A)
    assert via(db, "ana", "sample-2", "label:1")["how"] == "typed"
    # each change is one audit event, a repeat none
    set_hides_suggestions(db, "ana", False, actor=ana)
    events = [e for e in iter_events(db) if e["action"] == "view.setting"]
    assert [(e["by"], json.loads(e["before"]), json.loads(e["after"])) for e in events] == [
        ("ana", {"hide_suggestions": False}, {"hide_suggestions": True}),
        ("ana", {"hide_suggestions": True}, {"hide_suggestions": False})]


def test_h_pressed_between_labels_counts_in_order(db, people):
    """H is an action on the key route: in one batch, a label before it meets the
    suggestion, one after it is typed with nothing shown, and H again shows them."""
    ana = people["ana"]
    mk = lambda **a: dict(a, id=f"h-{uuid.uuid4().hex}", dataset="g", annotator="ana")  # noqa: E731
    delivery = apply_actions(db, [
        mk(kind="set", item="sample-1", field="label:1", value=A),
        mk(kind="view", item="sample-1", field="hide_suggestions", value=True),
        mk(kind="set", item="sample-1", field="label:3", value=R),
        mk(kind="view", item="sample-1", field="hide_suggestions", value=True),
        mk(kind="view", item="sample-2", field="hide_suggestions", value=False),
        mk(kind="set", item="sample-2", field="label:1", value=A)], actor=ana)
    assert delivery.error is None and not delivery.rejected, delivery
    assert [o.status for o in delivery.outcomes] == [
        "applied", "applied", "applied", "unchanged", "applied", "applied"]
    assert via(db, "ana", "sample-1", "label:1")["how"] == "typed"
    assert via(db, "ana", "sample-1", "label:3") is None
    assert via(db, "ana", "sample-2", "label:1")["how"] == "typed"
    assert hides_suggestions(db, "ana") is False
    # another person's H, a value that is no choice, a field that is no view: refused
    # with the reason, nothing changed
    bad = apply_actions(db, [
        mk(kind="view", item="sample-1", field="hide_suggestions", value=True) | {"annotator": "bob"},
        mk(kind="view", item="sample-1", field="hide_suggestions", value="yes"),
        mk(kind="view", item="sample-1", field="compact_annotate", value=True)], actor=ana)
    assert [(o.status, o.message) for o in bad.outcomes] == [
        ("rejected", "ana is signed in: changes are saved under that name, not 'bob'"),
        ("rejected", "value: expected true or false"),
        ("rejected", "field: expected one of hide_suggestions")]
    assert hides_suggestions(db, "bob") is False and hides_suggestions(db, "ana") is False


def test_h_is_the_persons_own(db, people):
    with pytest.raises(PermissionDenied, match="ana is signed in: only bob sets their own view"):
        set_hides_suggestions(db, "bob", True, actor=people["ana"])
    with pytest.raises(ValueError, match="a name is needed"):
        set_hides_suggestions(db, " ", True, actor=None)
    assert set_hides_suggestions(db, "local-name", True, actor=None) is False  # local mode
    assert hides_suggestions(db, "local-name") is True
    assert hides_suggestions(db, "") is False and hides_suggestions(db, "bob") is False


def test_h_is_an_annotate_key_review_shows_suggestions_whatever_it_says(db, people):
    """Review has no H: a verdict typed there with H on (on Annotate) met the suggestion."""
    import_bytes(db, jsonl(lfrb_records(1)), "p.jsonl", dataset="p", format="lfrb")
    assign_dataset(db, "p", ["ana"], per_item=1, actor=people["boss"])
    set_suggestion_timing(db, "p", "always", [], actor=people["boss"])
    put_suggestions(db, [{"dataset": "p", "item_key": "q0", "field": "verdict:0:0",
                          "source": "rm", "value": "agree"}], by="boss")
    set_hides_suggestions(db, "ana", True, actor=people["ana"])
    act(db, people["ana"], dataset="p", kind="verdict", item="q0", i=0, j=0, verdict="agree")
    assert via(db, "ana", "q0", "verdict:0:0", "p") == {"how": "typed", "source": "rm",
                                                         "suggested": "agree"}


def test_a_value_saved_before_typed_was_recorded_counts_as_not_shown(db, people):
    """A null ``via`` is "nothing shown", also for values saved before this change (when a
    null also meant "typed equal to a suggestion shown"): the figures never guess."""
    act(db, people["ana"], kind="set", item="sample-1", field="label:1", value=A)
    db.execute("update annotations set via = null where annotator = 'ana'")  # an older value
    [ana] = suggestion_report(db, "g")["acceptance"]
    assert (ana["saved"], ana["shown"], ana["typed"]["count"]) == (1, 0, 0)


# --- the scripted case, counted by hand ---------------------------------------------------------

def test_suggestions_turned_on_midway_count_only_what_was_on_screen(db, people):
    ana, bob, boss = people["ana"], people["bob"], people["boss"]
    set_suggestion_timing(db, "g", "always", ["bob"], actor=boss)  # ana: control group
    # before: ana types sample-1 (A I R: S's values on all three), nothing on her screen
    for n, value in enumerate((A, IRR, R), start=1):
        act(db, ana, kind="set", item="sample-1", field=f"label:{n}", value=value)
    # bob, in the test group from the start, types S's A I R on sample-1: typed 3
    for n, value in enumerate((A, IRR, R), start=1):
        act(db, bob, kind="set", item="sample-1", field=f"label:{n}", value=value)
    # midway the lead adds ana to the test group
    set_suggestion_timing(db, "g", "always", ["ana", "bob"], actor=boss)
    # sample-2: p1 S's A typed, p2 R over S's I (changed), p3 accepted (Y)
    act(db, ana, kind="set", item="sample-2", field="label:1", value=A)
    act(db, ana, kind="set", item="sample-2", field="label:2", value=R)
    assert act(db, ana, kind="accept", item="sample-2").message == "1 suggestion(s) accepted"
    # sample-3 with H on: p1 S's O typed, p2 A over S's I, p3 by R: nothing shown, 3 not shown
    set_hides_suggestions(db, "ana", True, actor=ana)
    act(db, ana, kind="set", item="sample-3", field="label:1", value=OUT)
    act(db, ana, kind="set", item="sample-3", field="label:2", value=A)
    act(db, ana, kind="rest", item="sample-3")
    set_hides_suggestions(db, "ana", False, actor=ana)
    # sample-4: Y accepts all three, then p1 is overridden with O (changed)
    assert act(db, ana, kind="accept", item="sample-4").message == "3 suggestion(s) accepted"
    act(db, ana, kind="set", item="sample-4", field="label:1", value=OUT)

    report = suggestion_report(db, "g", actor=people["rita"])
    figures = {r["annotator"]: r for r in report["acceptance"]}
    # ana by hand: saved 12; shown: sample-2 (3) + sample-4 (3) = 6; not shown: sample-1 (3,
    # before the switch) + sample-3 (3, H on). Accepted: s2p3, s4p2, s4p3 = 3; overridden:
    # s2p2, s4p1 = 2; typed the suggestion: s2p1 = 1
    a = figures["ana"]
    assert (a["saved"], a["shown"]) == (12, 6)
    assert [(a[h]["count"], a[h]["n"]) for h in ("accepted", "changed", "typed")] == [
        (3, 6), (2, 6), (1, 6)]
    assert a["accepted"]["value"] == pytest.approx(0.5)
    # bob: saved 3, all shown, all typed the suggestion
    b = figures["bob"]
    assert (b["saved"], b["shown"]) == (3, 3)
    assert [b[h]["count"] for h in ("accepted", "changed", "typed")] == [0, 0, 3]
    # anchoring counts the same 6 units of ana's as shown (of 12 she and S share)
    [anchored] = [r for r in report["anchoring"] if r["annotator"] == "ana"]
    assert (anchored["units"], anchored["shown"]) == (12, 6)
    # today's settings show ana every suggestion: the figures do not recount from them
    assert suggestion_timing(db, "g", "sample-1", ana, "ana") == "always"
    # the audit says when the group changed (the fixture's choice, then twice here) and
    # when H went on and off
    actions = [(e["action"], e["target"]) for e in iter_events(db)
               if e["action"] in ("dataset.setting", "view.setting")]
    assert actions == [("dataset.setting", "suggestion_timing")] * 3 + [
        ("view.setting", "hide_suggestions")] * 2


def test_the_question_filters_never_read_the_files_values_for_a_blind_annotator(db, people):
    """A dimension filter compares the annotator's own value, else the file's: for a person
    kept from the file's values (:func:`visibility`), their own only, so filtering cannot
    read the file's dimensions (nor a gold item's answers taken from them) off the list."""
    from needlework.grounding.progress import ItemFilter  # noqa: PLC0415
    from store.grounding import matching_items  # noqa: PLC0415

    act(db, people["ana"], kind="set", item="sample-2", field="dim:question_complexity",
        value="Set")

    def kept(file_values: bool, value: str) -> list[str]:
        flt = ItemFilter(dims={"question_complexity": {value}}, file_values=file_values)
        return [k for _, k in matching_items(db, "g", flt.query("ana"))]

    # every record says Simple; ana says Set on sample-2
    assert kept(True, "Simple") == ["sample-1", "sample-3", "sample-4"]
    assert kept(False, "Simple") == []
    assert kept(True, "Set") == kept(False, "Set") == ["sample-2"]
    assert kept(False, "") == ["sample-1", "sample-3", "sample-4"]  # not set by her


def test_a_time_sensitivity_suggestion_counts_only_where_annotate_draws_it(db, people):
    """Time sensitivity is one row of options over two fields: a source's values show as an
    option only when both amount to one, and only then does a value meet them."""
    ana = people["ana"]
    put_suggestions(db, [{"dataset": "g", "item_key": "sample-1", "field": "dim:question_type",
                          "source": "x", "value": "FAST-CHANGING"}], by="boss")
    act(db, ana, kind="set", item="sample-1", field="dim:question_type", value="FAST-CHANGING")
    assert via(db, "ana", "sample-1", "dim:question_type") is None  # half an option: not drawn
    put_suggestions(db, [{"dataset": "g", "item_key": "sample-1", "field": "dim:question_sensitive",
                          "source": "x", "value": "YES"}], by="boss")
    act(db, ana, kind="set", item="sample-1", field="dim:question_type", value="SLOW-CHANGING")
    assert via(db, "ana", "sample-1", "dim:question_type") == {
        "how": "changed", "source": "x", "suggested": "FAST-CHANGING"}


def test_the_needs_deflection_filter_never_reads_the_files_labels_for_a_blind_annotator(db, people):
    """"Needs deflection" leaves out a question whose file marks a passage ANSWER that the
    annotator has not labelled yet; for a person kept from the file's labels it goes by their
    own labels only, so the list cannot tell them which passages the file (or a gold item
    taken from it) says answer the question."""
    from needlework.grounding.progress import DEFLECTION_FILTERS, ItemFilter  # noqa: PLC0415
    from store.grounding import matching_items  # noqa: PLC0415

    def kept(file_values: bool) -> list[str]:
        flt = ItemFilter(deflection=DEFLECTION_FILTERS[-1], file_values=file_values)
        return [k for _, k in matching_items(db, "g", flt.query("ana"))]

    everything = [k for _, k in db.execute(
        "select position, key from grounding_items where dataset = 'g' order by position")]
    with_answer = [k for (k,) in db.execute(
        "select key from grounding_items g where dataset = 'g' and exists (select 1 from "
        "json_each(g.evidence) e where e.value = 'ANSWER-THE-QUESTION') order by position")]
    assert with_answer, "the sample has questions the file answers"
    assert kept(True) == [k for k in everything if k not in with_answer]
    assert kept(False) == everything  # ana has labelled nothing: none of hers is ANSWER
    act(db, people["ana"], kind="set", item=everything[0], field="label:1",
        value="ANSWER-THE-QUESTION")
    assert kept(False) == everything[1:]
