"""Blind by default (issue 26, point 2): in team mode an annotator sees neither the file's
labels and dimensions nor model scores, judge verdicts or other people's verdicts, unless
the lead turns a dataset's setting on; reviewers and admins see everything; local mode is
unchanged."""

from __future__ import annotations

import html
import re

import pytest
from streamlit.testing.v1 import AppTest

from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import set_visibility, settings, visibility
from needlework.teams.permissions import PermissionDenied
from store.datasets import rename_dataset
from store.scores import save_item_scores
from tests.teams_fixtures import grounding, open_as, preference, team_mode_db, verdict


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 2, "g")
    keys = preference(db, 2, "p")
    for name in ("g", "p"):
        assign_dataset(db, name, ["ana", "bob"], per_item=2)
    save_item_scores(db, "p", "fp-1", "fp32|full", "some-rm",
                     [{"item_key": k, "subset": "QA", "chosen_scores": [2.0],
                       "rejected_scores": [1.5, 0.5, 0.25]} for k in keys])
    from needlework.actions.writes import write_annotation  # noqa: PLC0415

    write_annotation(db, "p", keys[0], "verdict:0:0", verdict("agree"),
                     actor=accounts.get_user(db, "bob"))
    return db


page = open_as


def shown(at: AppTest) -> str:
    return html.unescape("\n".join([h.proto.body for h in at.get("html")]
                                    + [m.value for m in at.markdown] + [c.value for c in at.caption]))


@pytest.mark.slow
def test_annotators_label_blind_until_the_lead_shows_the_files_labels(team_db) -> None:
    """No suggestion in this dataset: without the file's labels there is nothing to hide."""
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert "file's label" not in shown(at) and "Blind labelling" in shown(at)
    assert not [t for t in at.toggle if t.key == "nw-hide-imported"]
    assert all("(in the file)" not in (s.placeholder or "") for s in at.selectbox)
    assert not re.search(r'<button[^>]*class="[^"]*nw-file', shown(at))  # no file's dimension
    reviewer = page(team_db, "rita", "app_pages/annotate.py", "g")
    assert "file's label" in shown(reviewer)
    set_visibility(team_db, "g", "annotators_see_file_labels", True,
                   actor=accounts.get_user(team_db, "lead"))
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert "file's label" in shown(at) and [t for t in at.toggle if t.key == "nw-hide-imported"]
    assert re.search(r'<button[^>]*class="[^"]*nw-file', shown(at))


@pytest.mark.slow
def test_review_hides_model_scores_and_others_verdicts_from_annotators(team_db) -> None:
    at = page(team_db, "ana", "app_pages/review.py", "p")
    text = shown(at)
    assert "score 2.000" not in text and "bob" not in text
    reviewer = shown(page(team_db, "rita", "app_pages/review.py", "p"))
    assert "score 2.000" in reviewer and "bob" in reviewer
    set_visibility(team_db, "p", "annotators_see_model_outputs", True,
                   actor=accounts.get_user(team_db, "lead"))
    text = shown(page(team_db, "ana", "app_pages/review.py", "p"))
    assert "score 2.000" in text
    assert "bob" not in text  # other annotators' verdicts stay hidden


@pytest.mark.slow
def test_the_dataset_overview_and_its_export_are_not_for_annotators(team_db) -> None:
    """The overview counts every annotator's verdicts and its TRL export takes anyone's:
    an annotator is offered neither; a reviewer sees the overview, an admin exports."""
    at = page(team_db, "ana", "app_pages/review.py", "p")
    assert not [b for b in at.get("button_group") if "Dataset overview" in str(b.proto)]

    def overview(who: str) -> AppTest:
        at = page(team_db, who, "app_pages/review.py", "p")
        [mode] = [b for b in at.get("button_group") if "Dataset overview" in str(b.proto)]
        at.session_state["rv_mode"] = "Dataset overview"
        return at.run(timeout=60)

    reviewer = overview("rita")
    assert "Verdicts per annotator" in shown(reviewer)
    assert "Export for TRL" not in shown(reviewer)
    assert "Export for TRL" in shown(overview("lead"))


@pytest.mark.slow
def test_review_offers_an_annotator_only_the_datasets_assigned_to_them(team_db) -> None:
    from tests.teams_fixtures import preference  # noqa: PLC0415

    preference(team_db, 2, "not-hers")
    at = page(team_db, "ana", "app_pages/review.py", "g")  # a grounding set: pick one here
    offered = {b.key for b in at.button if (b.key or "").startswith("rv_pick_ds|")}
    assert offered == {"rv_pick_ds|p"}
    reviewer = page(team_db, "rita", "app_pages/review.py", "g")
    assert {b.key for b in reviewer.button if (b.key or "").startswith("rv_pick_ds|")} == {
        "rv_pick_ds|p", "rv_pick_ds|not-hers"}


def test_only_admins_change_the_settings_and_they_follow_a_rename(team_db) -> None:
    with pytest.raises(PermissionDenied, match="rita is a reviewer"):
        set_visibility(team_db, "g", "annotators_see_file_labels", True,
                       actor=accounts.get_user(team_db, "rita"))
    assert settings(team_db, "g") == {"annotators_see_file_labels": False,
                                      "annotators_see_model_outputs": False}
    lead = accounts.get_user(team_db, "lead")
    assert set_visibility(team_db, "g", "annotators_see_file_labels", True, actor=lead) is False
    rename_dataset(team_db, "g", "g2")
    assert settings(team_db, "g2")["annotators_see_file_labels"] is True
    assert visibility(team_db, "g2", accounts.get_user(team_db, "ana")).file_labels is True
    assert visibility(team_db, "p", None).model_outputs is True  # local mode sees everything


def test_the_lead_switches_them_on_the_assignment_page(team_db) -> None:
    at = page(team_db, "lead", "app_pages/assign.py", "g")
    [toggle] = [t for t in at.toggle if "file came with" in t.label]
    assert toggle.value is False
    toggle.set_value(True).run()
    assert not at.exception, at.exception
    assert settings(team_db, "g")["annotators_see_file_labels"] is True


def test_a_reviewers_decision_reaches_the_annotator_but_not_on_a_dataset_with_gold(team_db) -> None:
    """On a gold item the final values would give the answers away; shown on the other items
    only, they would tell the gold items apart: with gold items, an annotator sees none."""
    from needlework.actions.writes import adjudicate, write_annotation  # noqa: PLC0415
    from needlework.teams.quality import mark_gold  # noqa: PLC0415

    ana, rita = accounts.get_user(team_db, "ana"), accounts.get_user(team_db, "rita")
    write_annotation(team_db, "g", "sample-1", "label:2", "OUTDATED", actor=ana)
    for field, value in (("final:label:2", "RELATED-INFORMATION"),
                         ("final:dim:question_complexity", "Set"),
                         ("final:note", "Passage 2 is from 2019: *related*, not outdated.")):
        adjudicate(team_db, "g", "sample-1", field, value, reviewer="rita", actor=rita)
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert at.query_params["item"] == "sample-1"
    text = shown(at).replace("\\", "")  # captions escape Markdown
    assert "Reviewer's decision" in text and "rita" in text
    assert "passage 2: Related (yours: Outdated)" in text
    assert "complexity: Set" in text
    assert "Passage 2 is from 2019: *related*, not outdated." in text  # as text, not Markdown
    mark_gold(team_db, "g", "sample-2", actor=accounts.get_user(team_db, "lead"))  # another item
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert at.query_params["item"] == "sample-1" and "Reviewer's decision" not in shown(at)
    at = page(team_db, "rita", "app_pages/annotate.py", "g")  # a reviewer still sees it
    assert "Reviewer's decision" in shown(at)


@pytest.mark.slow
def test_suggestions_are_apart_from_the_file_labels_and_show_on_gold_too(team_db) -> None:
    """Issue 47: suggestions follow their own setting (timing and test group), not the
    file's labels; a gold item shows them like any other, and never the file's labels."""
    from needlework.suggest.data import import_suggestions  # noqa: PLC0415
    from needlework.teams.blind import set_suggestion_timing  # noqa: PLC0415
    from needlework.teams.quality import mark_gold  # noqa: PLC0415

    rows = "".join(f'{{"item": "sample-{n}", "field": "label:1", "value": "OUTDATED", '
                   f'"source": "judge"}}\n' for n in (1, 2))
    import_suggestions(team_db, rows.encode(), "s.jsonl", "g", by="lead")
    lead = accounts.get_user(team_db, "lead")

    def text(at: AppTest) -> str:  # the page's words, without its tags and styles
        return re.sub(r"<[^>]+>", "", re.sub(r"<style>.*?</style>", "", shown(at), flags=re.S))

    def marked(at: AppTest) -> bool:  # a label button drawn as suggested
        return bool(re.search(r'<button[^>]*class="[^"]*nw-suggested', shown(at)))

    # the default: no suggestion and no file's label until the lead chooses
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert "suggested:" not in text(at) and not marked(at) and "file's label" not in text(at)
    # the lead shows every annotator the suggestions, not the file's labels
    set_suggestion_timing(team_db, "g", "always", [], actor=lead)
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert "suggested: Outdated (judge)" in text(at) and marked(at)
    assert "file's label" not in text(at)
    assert [t.label for t in at.toggle if t.key == "nw-hide-imported"] == [
        "Hide the model suggestions (H)"]
    # a test group (bob): ana is the control group and sees neither
    set_suggestion_timing(team_db, "g", "always", ["bob"], actor=lead)
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert "suggested:" not in text(at) and not marked(at) and "file's label" not in text(at)
    bob = page(team_db, "bob", "app_pages/annotate.py", "g")
    assert "suggested: Outdated (judge)" in text(bob) and "file's label" not in text(bob)
    # the file's labels for everyone: both groups see them, the suggestions stay bob's
    set_visibility(team_db, "g", "annotators_see_file_labels", True, actor=lead)
    at = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert "file's label" in text(at) and "suggested:" not in text(at)
    # a gold item: the suggestions show on it as on any other, the file's labels on none
    mark_gold(team_db, "g", "sample-1", actor=lead)
    bob = page(team_db, "bob", "app_pages/annotate.py", "g")
    assert bob.query_params["item"] == "sample-1"
    assert "suggested: Outdated (judge)" in text(bob) and marked(bob)
    assert "file's label" not in text(bob)
    assert "file's label" not in text(page(team_db, "ana", "app_pages/annotate.py", "g"))
    assert "suggested: Outdated (judge)" in text(page(team_db, "rita", "app_pages/annotate.py", "g"))


def test_the_assignment_page_says_the_switch_does_nothing_with_gold_items(team_db) -> None:
    from needlework.teams.blind import GOLD_KEEPS_FILE_LABELS  # noqa: PLC0415
    from needlework.teams.quality import mark_gold  # noqa: PLC0415

    at = page(team_db, "lead", "app_pages/assign.py", "g")
    assert GOLD_KEEPS_FILE_LABELS not in [i.value for i in at.info]
    mark_gold(team_db, "g", "sample-2", actor=accounts.get_user(team_db, "lead"))
    at = page(team_db, "lead", "app_pages/assign.py", "g")
    assert GOLD_KEEPS_FILE_LABELS in [i.value for i in at.info]
    assert GOLD_KEEPS_FILE_LABELS.count(". ") == 0  # one sentence


@pytest.mark.slow
def test_an_annotator_sees_no_disagreement_mark_in_the_question_list(team_db) -> None:
    """Where annotators disagree is the reviewers' (gold items, which everyone labels, would
    stand out by it): no ⚠ and no such filter for an annotator in team mode."""
    from needlework.actions.writes import write_annotation  # noqa: PLC0415

    for who, value in (("ana", "OUTDATED"), ("bob", "UNKNOWN")):
        write_annotation(team_db, "g", "sample-1", "label:1", value,
                         actor=accounts.get_user(team_db, who))

    def picker(at: AppTest) -> list[str]:
        [box] = [s for s in at.selectbox if (s.key or "").startswith("nw-nav-pick-")]
        return [str(o) for o in box.options]

    def states(at: AppTest) -> list[str]:
        return [o for m in at.multiselect if m.label == "Label state (yours)" for o in m.options]

    ana = page(team_db, "ana", "app_pages/annotate.py", "g")
    assert not any("⚠" in o for o in picker(ana)) and "annotators disagree" not in states(ana)
    rita = page(team_db, "rita", "app_pages/annotate.py", "g")
    assert any("⚠" in o for o in picker(rita)) and "annotators disagree" in states(rita)
