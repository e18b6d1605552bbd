"""Review names the responses Response A / B for an annotator who does not see the file's
labels (issue 47, point 1): "chosen" and "rejected" would give every preference gold answer
("chosen is better") away. The order is fixed per item and annotator, the stored verdicts
keep their meaning, and reviewers, admins and local mode read chosen / rejected as before."""

from __future__ import annotations

import re

import pytest

from needlework.datasets import import_bytes
from needlework.review.sides import PLAIN, Sides, sides_for
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import set_visibility
from needlework.teams.gold import mark_gold
from tests.conftest import jsonl
from tests.teams_fixtures import open_as, team_mode_db

SIDE_WORDS = re.compile(r"\b(chosen|rejected)\b", re.IGNORECASE)


def test_neutral_sides_keep_the_verdicts_meaning():
    straight, swapped = Sides(True, False), Sides(True, True)
    assert (straight.title("chosen"), straight.title("rejected")) == ("Response A", "Response B")
    assert (swapped.title("chosen"), swapped.title("rejected")) == ("Response B", "Response A")
    assert swapped.title("rejected", "concise") == "Response A · concise"
    assert straight.title("rejected", "2") == "Response B"  # a number would tell the side
    # "A better" is the verdict that the left response (Response A) is better
    assert (straight.verdict_words("agree"), straight.verdict_words("flip")) == ("A better",
                                                                               "B better")
    assert (swapped.verdict_words("agree"), swapped.verdict_words("flip")) == ("B better",
                                                                             "A better")
    assert straight.order()[:2] == ["agree", "flip"] and swapped.order()[:2] == ["flip", "agree"]
    assert straight.keys()["verdicts"]["a"] == "agree" and swapped.keys()["verdicts"]["a"] == "flip"
    assert swapped.keys()["verdicts"]["f"] == "agree"
    assert {k: v for k, v in swapped.keys()["verdicts"].items() if k not in "af"} == {
        "t": "tie", "b": "both-bad", "s": "skip"}
    for verdict in ("agree", "flip", "tie", "both-bad", "skip"):  # the bar's key is A / F
        words = swapped.verdict_words(verdict)
        assert swapped.keys()["verdicts"][swapped.shortcut(verdict).lower()] == verdict, words
    # plain: the file's words, as before
    assert (PLAIN.title("chosen"), PLAIN.title("rejected", "2")) == ("Chosen", "Rejected 2")
    assert PLAIN.verdict_words("agree") == "Chosen better" and PLAIN.order()[0] == "agree"


def test_the_order_is_fixed_per_item_and_annotator_and_varies():
    assert sides_for(False, "ana", "q1") is PLAIN
    assert sides_for(True, "ana", "q1") == sides_for(True, "ana", "q1")
    swaps = [sides_for(True, "ana", f"q{k}").swap for k in range(200)]
    assert 70 < sum(swaps) < 130  # about half of the items show the rejected one first
    assert [sides_for(True, "bob", f"q{k}").swap for k in range(200)] != swaps


def pairs(n: int) -> list[dict]:
    return [{"id": f"p{k}", "prompt": f"Question {k}?", "chosen": f"The careful answer {k}.",
             "rejected": f"A sloppy answer {k}."} for k in range(n)]


@pytest.fixture
def review_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    import_bytes(db, jsonl(pairs(6)), "pairs.jsonl", dataset="pp", format="pairs")
    assign_dataset(db, "pp", ["ana", "bob"])
    return db


def texts(at) -> str:
    """Everything the page drew (every element's message), but the key scripts' code."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            text = str(proto)
            if "<script" not in text and "=>" not in text:
                out.append(text)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


@pytest.mark.slow
@pytest.mark.parametrize("labels", [False, True])
def test_an_annotator_reads_response_a_and_b_while_the_file_labels_are_hidden(review_db, labels):
    lead = accounts.get_user(review_db, "lead")
    mark_gold(review_db, "pp", "p2", actor=lead)  # chosen is better, by default
    set_visibility(review_db, "pp", "annotators_see_file_labels", labels, actor=lead)
    at = open_as(review_db, "ana", "app_pages/review.py", "pp")
    shown = texts(at)
    assert "Response A" in shown and "Response B" in shown, shown
    assert not SIDE_WORDS.search(shown), SIDE_WORDS.search(shown)
    words = [b.label for b in at.button if b.key and b.key.startswith("rv_v_")]
    assert words[:2] == ["A better", "B better"] and "Chosen better" not in words
    assert not [e for e in at.expander if "several comparisons" in e.label]
    item = at.query_params["item"][0] if isinstance(at.query_params["item"], list) \
        else at.query_params["item"]
    sides = sides_for(True, "ana", item)
    first = next(b for b in at.button if b.key in ("rv_v_agree", "rv_v_flip"))
    assert first.key == ("rv_v_flip" if sides.swap else "rv_v_agree")


@pytest.mark.slow
@pytest.mark.parametrize("who", ["rita", "lead"])
def test_reviewers_and_admins_still_read_chosen_and_rejected(review_db, who):
    mark_gold(review_db, "pp", "p2", actor=accounts.get_user(review_db, "lead"))
    at = open_as(review_db, who, "app_pages/review.py", "pp")
    shown = texts(at)
    assert "**Chosen**" in shown and "**Rejected**" in shown and "Response A" not in shown
    assert "The careful answer" in shown  # the responses themselves are in what is read
    words = [b.label for b in at.button if b.key and b.key.startswith("rv_v_")]
    assert words[:2] == ["Chosen better", "Rejected better"]


@pytest.mark.slow
def test_an_annotator_who_sees_the_file_labels_reads_chosen_and_rejected(review_db):
    lead = accounts.get_user(review_db, "lead")
    set_visibility(review_db, "pp", "annotators_see_file_labels", True, actor=lead)
    at = open_as(review_db, "ana", "app_pages/review.py", "pp")
    assert "**Chosen**" in texts(at)
