"""Review names the responses Response A / B for an annotator who does not see the file's
labels (issue 47, point 1): "chosen" and "rejected" would give every preference gold answer
("chosen is better") away. The order is fixed per item and annotator, the stored verdicts
keep their meaning, and reviewers, admins and local mode read chosen / rejected as before."""

from __future__ import annotations

import re

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.review.sides import PLAIN, Sides, sides_for
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import set_visibility
from needlework.teams.gold import mark_gold
from tests.conftest import jsonl
from tests.page_keys import messages, page_text
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
    # the page names positions, the same on every item: a-better / b-better, A and F
    for sides in (straight, swapped):
        assert sides.order() == ["a-better", "b-better", "tie", "both-bad", "skip"]
        assert sides.keys()["verdicts"] == {"a": "a-better", "f": "b-better", "t": "tie",
                                            "b": "both-bad", "s": "skip"}
        assert sides.icon("agree") in ("🅰️", "🅱️") and sides.icon("tie") == "🟰"
    # what is stored keeps its meaning: the server turns a position into agree or flip
    assert (straight.stored("a-better"), straight.stored("b-better")) == ("agree", "flip")
    assert (swapped.stored("a-better"), swapped.stored("b-better")) == ("flip", "agree")
    assert (straight.shown("agree"), swapped.shown("agree")) == ("a-better", "b-better")
    for sides in (straight, swapped):
        for verdict in ("agree", "flip", "tie", "both-bad", "skip"):
            assert sides.stored(str(sides.shown(verdict))) == verdict
            assert sides.keys()["verdicts"][sides.shortcut(verdict).lower()] == sides.shown(verdict)
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


def everything(at) -> str:
    """Every element's message the page sends, the key scripts' data included."""
    return "\n".join(text.split("js_content", 1)[0]
                     for text in (str(node.proto) for node in messages(at)))


@pytest.mark.slow
@pytest.mark.parametrize("labels", [False, True])
def test_an_annotator_reads_response_a_and_b_while_the_file_labels_are_hidden(review_db, labels):
    lead = accounts.get_user(review_db, "lead")
    mark_gold(review_db, "pp", "p2", actor=lead)  # chosen is better, by default
    set_visibility(review_db, "pp", "annotators_see_file_labels", labels, actor=lead)
    at = open_as(review_db, "ana", "app_pages/review.py", "pp")
    shown = page_text(at)
    assert "Response A" in shown and "Response B" in shown, shown
    assert not SIDE_WORDS.search(shown), SIDE_WORDS.search(shown)
    words = [b.label for b in at.button if b.key and b.key.startswith("rv_v_")]
    assert words[:2] == ["A better", "B better"] and "Chosen better" not in words
    assert not [e for e in at.expander if "several comparisons" in e.label]
    item = at.query_params["item"][0] if isinstance(at.query_params["item"], list) \
        else at.query_params["item"]
    # the buttons are keyed by position, whichever side the file chose (the keys are in
    # the page's classes and element ids); nothing the page sends says agree or flip
    keys = [b.key for b in at.button if b.key and b.key.startswith("rv_v_")]
    assert keys[:2] == ["rv_v_a-better", "rv_v_b-better"], (keys, sides_for(True, "ana", item))
    assert not re.search(r"\b(agree|flip)\b", everything(at)), item


@pytest.mark.slow
@pytest.mark.parametrize("who", ["rita", "lead"])
def test_reviewers_and_admins_still_read_chosen_and_rejected(review_db, who):
    mark_gold(review_db, "pp", "p2", actor=accounts.get_user(review_db, "lead"))
    at = open_as(review_db, who, "app_pages/review.py", "pp")
    shown = page_text(at)
    assert "**Chosen**" in shown and "**Rejected**" in shown and "Response A" not in shown
    assert "The careful answer" in shown  # the responses themselves are in what is read
    words = [b.label for b in at.button if b.key and b.key.startswith("rv_v_")]
    assert words[:2] == ["Chosen better", "Rejected better"]


@pytest.mark.slow
def test_an_annotator_who_sees_the_file_labels_reads_chosen_and_rejected(review_db):
    lead = accounts.get_user(review_db, "lead")
    set_visibility(review_db, "pp", "annotators_see_file_labels", True, actor=lead)
    at = open_as(review_db, "ana", "app_pages/review.py", "pp")
    assert "**Chosen**" in page_text(at)


def test_the_server_turns_a_blind_annotators_position_into_the_verdict(review_db):
    """A blind annotator's page sends ``a-better`` / ``b-better``: the server stores agree
    or flip by where that person's page shows the chosen response; a reviewer's position
    is read with the file's sides (A is the chosen one)."""
    from uuid import uuid4  # noqa: PLC0415

    from needlework.actions.service import apply_actions  # noqa: PLC0415
    from needlework.view.changes import describe  # noqa: PLC0415
    from store.annotations import get_value  # noqa: PLC0415

    import_bytes(review_db, jsonl(pairs(8)), "pq.jsonl", dataset="pq", format="pairs")
    assign_dataset(review_db, "pq", ["ana"])
    ana = accounts.get_user(review_db, "ana")
    stored = {}
    for k in range(8):
        sides = sides_for(True, "ana", f"p{k}")
        done = apply_actions(review_db, [{"id": f"pos-{k}-{uuid4().hex}", "kind": "verdict", "dataset": "pq",
                                          "item": f"p{k}", "i": 0, "j": 0, "annotator": "ana",
                                          "verdict": "a-better"}], actor=ana)
        assert done.error is None and done.outcomes[0].status == "applied", done
        stored[k] = get_value(review_db, "pq", f"p{k}", "ana", "verdict:0:0")["verdict"]
        assert stored[k] == ("flip" if sides.swap else "agree"), k
    assert set(stored.values()) == {"agree", "flip"}  # both sides occur among eight items
    rita = accounts.get_user(review_db, "rita")
    apply_actions(review_db, [{"id": f"pos-r-{uuid4().hex}", "kind": "verdict", "dataset": "pp", "item": "p0",
                               "i": 0, "j": 0, "annotator": "rita", "verdict": "b-better"}],
                  actor=rita)
    assert get_value(review_db, "pp", "p0", "rita", "verdict:0:0")["verdict"] == "flip"
    # Home's activity line for the blind annotator names no side, as her page did
    entry = {"field": "verdict:0:0", "new_value": {"verdict": stored[1]}, "annotator": "ana",
             "item_key": "p1"}
    assert describe(entry, neutral=True) == "judged a pair: A better"
    assert describe(entry).startswith("judged chosen 1 vs rejected 1")
