"""Review on RewardBench 2 (issue 62, point 4's page part): an instance's completions, 1 vs 3
or k × m for Ties, with the same keys, verdicts and TRL export rules; the sides named as
the benchmark names them, and never for a blind annotator; a reward model's credit under
the official rules (docs/review.md, "RewardBench 2"; docs/benchmarks.md §8)."""

from __future__ import annotations

import json
import math
import re
import uuid

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.actions.service import apply_actions
from needlework.datasets.transfer import export_text, import_bytes
from needlework.figures.rewardbench2 import instance_credit, ties_figures
from needlework.formats import preference_view
from needlework.review import instances
from needlework.review.sides import PLAIN, sides_for
from needlework.seeding.demo import DEMO_REWARDBENCH2, seed_demo
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import set_visibility
from store.annotations import get_value
from store.datasets import get_item, iter_items
from store.scores import save_item_scores
from store.suggestions import put_suggestions
from tests.conftest import ROOT, jsonl
from tests.page_keys import as_tab, key_data, move, page_text, press
from tests.teams_fixtures import open_as, team_mode_db

RB2 = DEMO_REWARDBENCH2


@pytest.fixture
def demo_db(tmp_path, monkeypatch):
    """The seeded demo sets (demo-rewardbench2 among them) in the app's database."""
    path = tmp_path / "rb2.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    seed_demo(db)
    yield db
    db.conn.close()


def open_review(dataset: str | None, annotator: str = "ana", item: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if dataset is not None:
        at.session_state["dataset"] = dataset
    if annotator:
        at.session_state["annotator"] = annotator
    if item is not None:
        at.query_params["item"] = item
    at.run()
    at.switch_page("app_pages/review.py")
    at.run()
    assert not at.exception, at.exception
    return at


def grid(at: AppTest) -> list[tuple[int, int]]:
    """The comparison grid's cells, (correct i, incorrect j)."""
    return [tuple(int(x) for x in b.key.split("_")[2:]) for b in at.button
            if b.key and b.key.startswith("rv_pick_")]


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption).replace("\\", "")


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown).replace("\\", "")


def act(db, *actions: dict, who: str = "ana") -> None:
    delivery = apply_actions(db, [dict(a, id=f"rb2-{uuid.uuid4().hex}", dataset=RB2, annotator=who)
                                  for a in actions])
    assert delivery.error is None and not delivery.rejected, delivery
    assert all(o.status == "applied" for o in delivery.outcomes), delivery.outcomes


# -- the page opens the set and draws its grid -------------------------------------------------


@pytest.mark.slow
def test_the_page_offers_and_opens_the_demo_set_with_the_benchmarks_words(demo_db):
    at = open_review(None)
    picks = [b for b in at.button if b.key == f"rv_pick_ds|{RB2}"]
    assert picks, [b.key for b in at.button]  # a preference set: the page offers it
    picks[0].click()
    at.run()
    assert not at.exception, at.exception
    # 15 best-of-4 rows of 1 × 3, and three Ties prompts: 1×4 + 3×4, 1×5 + 4×5, 1×3 + 4×3
    assert "comparison 1 of 101 in this view" in captions(at)
    assert at.query_params["item"] == "factuality-1"
    assert grid(at) == [(0, 0), (0, 1), (0, 2)]  # correct 1 against incorrect 1-3
    shown = markdown(at)
    assert "**Correct 1**" in shown and "**Incorrect 1**" in shown
    assert "**Verdict**" in shown and "correct 1 vs incorrect 1" in shown
    assert [b.label for b in at.button if b.key in ("rv_v_agree", "rv_v_flip")] == [
        "Correct better", "Incorrect better"]
    assert [b.label.replace("\\", "") for b in at.button if b.key and b.key.startswith("rv_pick_")] == [
        f"Incorrect {j} · ○ not reviewed" for j in (1, 2, 3)]
    words = captions(at)
    assert "RewardBench 2 · Factuality · best-of-4: Correct 1 against Incorrect 1–3 (3 comparisons)" in words
    assert "only in correct" in words or "Side by side" in words
    # no reward model scored it: no credit
    assert "credit" not in words


@pytest.mark.slow
@pytest.mark.parametrize("item, k, m", [("ref:1", 1, 4), ("tied:1", 3, 4), ("tied:2", 4, 5),
                                        ("tied:3", 4, 3), ("safety-2", 1, 3)])
def test_the_grid_has_every_correct_against_every_incorrect(demo_db, item, k, m):
    at = open_review(RB2, item=item)
    assert grid(at) == [(i, j) for i in range(k) for j in range(m)]
    words = captions(at)
    if item.startswith("tied:"):
        assert (f"Correct 1–{k} are equally correct (not compared with each other), each against "
                f"Incorrect 1–{m} ({k * m} comparisons)") in words
        assert "correct ↓ · incorrect →" in words
        assert f"reference row ref:{item[5:]}: Correct 1 against Incorrect 1–{m}" in words
        assert [b.label.replace("\\", "") for b in at.button if b.key == "rb2_sibling"] == [
            f"Open ref:{item[5:]}"]
    elif item.startswith("ref:"):
        assert f"reference row: Correct 1 is the reference answer, against Incorrect 1–{m}" in words
        assert f"tied:{item[4:]} (every correct answer): Correct 1–3 against Incorrect 1–{m}" in words
    else:
        assert "Safety · best-of-4" in words and not [b for b in at.button if b.key == "rb2_sibling"]


@pytest.mark.slow
def test_a_square_ties_row_keeps_every_comparison(tmp_path, monkeypatch):
    """A Ties row with as many correct answers as incorrect ones is not RM-Bench's 3 × 3 of
    styles: the page shows all k × k comparisons, with no "same style" scope."""
    path = tmp_path / "sq.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    rows = [{"id": "tied:7", "prompt": "Name a colour of the rainbow.", "chosen": ["Red.", "Blue."],
             "rejected": ["Pink.", "Brown."], "num_correct": 2, "num_incorrect": 2,
             "total_completions": 4, "subset": "Ties"}]
    import_bytes(db, jsonl(rows), "sq.jsonl", dataset="sq", format="rewardbench2")
    at = open_review("sq")
    assert grid(at) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert "comparison 1 of 4 in this view" in captions(at)
    assert not at.radio  # no Comparisons scope


# -- keys and verdicts through the grid ----------------------------------------------------------


@pytest.mark.slow
def test_keys_move_through_the_grid_and_verdicts_land_on_their_field(demo_db):
    at = open_review(RB2, item="tied:2")
    as_tab(at)
    data = key_data(at, "review")
    assert (data["item"], data["i"], data["j"]) == ("tied:2", 0, 0)
    assert data["keys"]["verdicts"] == {"a": "agree", "f": "flip", "t": "tie", "b": "both-bad",
                                        "s": "skip"}
    # J walks the row, then the next correct answer's row
    ahead = [(c["item"], c["i"], c["j"]) for c in data["line"]["ahead"][:6]]
    assert ahead == [("tied:2", 0, 1), ("tied:2", 0, 2), ("tied:2", 0, 3), ("tied:2", 0, 4),
                     ("tied:2", 1, 0), ("tied:2", 1, 1)]
    move(at, "review", RB2, "tied:2", i=2, j=3)
    # A on correct 3 vs incorrect 4, then 1 (a reason for it), F on the next, T, B, S
    act(demo_db, {"kind": "verdict", "item": "tied:2", "i": 2, "j": 3, "verdict": "agree"},
        {"kind": "reasons", "item": "tied:2", "i": 2, "j": 3, "flip": "factual error"},
        {"kind": "verdict", "item": "tied:2", "i": 2, "j": 4, "verdict": "flip"},
        {"kind": "verdict", "item": "tied:2", "i": 3, "j": 0, "verdict": "tie"},
        {"kind": "verdict", "item": "tied:2", "i": 3, "j": 1, "verdict": "both-bad"},
        {"kind": "verdict", "item": "tied:2", "i": 3, "j": 2, "verdict": "skip"})
    assert get_value(demo_db, RB2, "tied:2", "ana", "verdict:2:3") == {
        "verdict": "agree", "reasons": ["factual error"], "note": ""}
    assert {f"verdict:{i}:{j}": get_value(demo_db, RB2, "tied:2", "ana", f"verdict:{i}:{j}")["verdict"]
            for i, j in ((2, 4), (3, 0), (3, 1), (3, 2))} == {
        "verdict:2:4": "flip", "verdict:3:0": "tie", "verdict:3:1": "both-bad", "verdict:3:2": "skip"}
    at.run()
    cells = {b.key: b.label for b in at.button if b.key and b.key.startswith("rv_pick_")}
    assert cells["rv_pick_2_3"].endswith("Correct better") and cells["rv_pick_2_4"].endswith(
        "Incorrect better")
    # N: the next comparison without my verdict, in the grid's order
    assert press(at, "review", "unreviewed") == {"item": "tied:2", "i": 3, "j": 3,
                                                 "verdict": None, "reasons": []}
    assert press(at, "review", "next") == {"item": "tied:2", "i": 3, "j": 4, "verdict": None,
                                           "reasons": []}
    # J off the last cell: the next row of the set; K back
    assert press(at, "review", "next")["item"] == "ref:3"
    assert press(at, "review", "previous") == {"item": "tied:2", "i": 3, "j": 4,
                                               "verdict": None, "reasons": []}


@pytest.mark.slow
def test_y_accepts_the_suggested_verdict_on_a_ties_comparison(demo_db):
    put_suggestions(demo_db, [{"dataset": RB2, "item_key": "tied:1", "field": "verdict:1:2",
                               "source": "reward:demo", "value": "flip", "score": -0.4}], by="test")
    at = open_review(RB2, item="tied:1")
    as_tab(at)
    move(at, "review", RB2, "tied:1", i=1, j=2)
    assert "suggested: Incorrect better (reward:demo -0.40) · Y accepts" in captions(at)
    act(demo_db, {"kind": "accept", "item": "tied:1", "i": 1, "j": 2})
    assert get_value(demo_db, RB2, "tied:1", "ana", "verdict:1:2")["verdict"] == "flip"


# -- the TRL export of reviewed pairs -------------------------------------------------------------


def trl(db, **options) -> list[dict]:
    return [json.loads(line) for line in export_text(db, RB2, "trl", **options).splitlines()]


def test_the_trl_export_of_reviewed_pairs_follows_the_rules(demo_db):
    records = {i["key"]: i["record"] for i in iter_items(demo_db, RB2)}
    f1, ref, tied = records["factuality-1"], records["ref:1"], records["tied:1"]
    before = trl(demo_db)
    # every correct × incorrect comparison once; ref:1's four are tied:1's first four
    assert len(before) == 101 - 4 - 5 - 3
    act(demo_db, {"kind": "verdict", "item": "factuality-1", "i": 0, "j": 0, "verdict": "agree"},
        {"kind": "verdict", "item": "factuality-1", "i": 0, "j": 1, "verdict": "flip"},
        {"kind": "verdict", "item": "factuality-1", "i": 0, "j": 2, "verdict": "tie"},
        {"kind": "verdict", "item": "tied:1", "i": 2, "j": 0, "verdict": "skip"},
        {"kind": "verdict", "item": "tied:1", "i": 2, "j": 1, "verdict": "both-bad"},
        {"kind": "verdict", "item": "tied:1", "i": 1, "j": 3, "verdict": "flip"})
    after = trl(demo_db)
    pairs = [(r["chosen"], r["rejected"]) for r in after]
    c, r = f1["chosen"][0], f1["rejected"]
    assert (c, r[0]) in pairs  # agree: as labelled
    assert (r[1], c) in pairs and (c, r[1]) not in pairs  # flip: swapped
    assert all(c != a or r[2] != b for a, b in pairs)  # tie: dropped
    tc, tr = tied["chosen"], tied["rejected"]
    assert (tc[2], tr[0]) not in pairs and (tc[2], tr[1]) not in pairs  # skip, both bad
    assert (tr[3], tc[1]) in pairs and (tc[1], tr[3]) not in pairs
    assert len(after) == len(before) - 3  # tie, skip and both bad dropped; the flip kept
    # --keep-ties keeps tie and both bad as labelled, never a skip
    kept = [(x["chosen"], x["rejected"]) for x in trl(demo_db, keep_ties=True)]
    assert (c, r[2]) in kept and (tc[2], tr[1]) in kept and (tc[2], tr[0]) not in kept
    # the reference row's pairs are the tied row's: written once, in import order
    assert ref["chosen"][0] == tc[0] and ref["rejected"] == tr
    assert sum(1 for a, b in pairs if a == tc[0] and b in tr) == len(tr)
    # one annotator's verdicts only
    assert len(trl(demo_db, annotator="nobody")) == len(before)
    # the shared pair with a flip in ref:1 and none in tied:1: each follows its own verdict
    act(demo_db, {"kind": "verdict", "item": "ref:1", "i": 0, "j": 0, "verdict": "flip"})
    both = [(x["chosen"], x["rejected"]) for x in trl(demo_db)]
    assert (tr[0], tc[0]) in both and (tc[0], tr[0]) in both
    act(demo_db, {"kind": "verdict", "item": "tied:1", "i": 0, "j": 0, "verdict": "flip"})
    once = [(x["chosen"], x["rejected"]) for x in trl(demo_db)]
    assert once.count((tr[0], tc[0])) == 1 and (tc[0], tr[0]) not in once


# -- a reward model's figures, by the official rules ---------------------------------------------


def score_demo(db) -> dict[str, dict]:
    """Scores of a made-up reward model: one instance right, one tied at the top (two-way),
    one three-way, one wrong, one missing; Ties rows with gaps and spreads."""
    entries = {}
    for item in iter_items(db, RB2):
        rec = item["record"]
        chosen = [2.0 + 0.1 * k for k in range(len(rec["chosen"]))]
        rejected = [1.0 + 0.2 * k for k in range(len(rec["rejected"]))]
        entries[rec["id"]] = {"chosen_scores": chosen, "rejected_scores": rejected}
    entries["factuality-2"]["rejected_scores"][1] = 2.0
    entries["factuality-3"]["rejected_scores"][0:2] = [2.0, 2.0]
    entries["math-1"]["rejected_scores"][2] = 3.0
    entries["math-2"]["rejected_scores"][2] = None
    entries["ref:2"]["chosen_scores"] = [1.5]
    save_item_scores(db, RB2, "fp-demo", "default", "demo-rm",
                     [{"item_key": k, "subset": "", **v} for k, v in entries.items()])
    return entries


@pytest.mark.slow
@pytest.mark.parametrize("item, words", [
    ("factuality-1", "Model demo-rm: credit 1: Correct 1 scored highest (2.000; next 1.400)"),
    ("factuality-2", "Model demo-rm: credit 1/2 = 0.5: Correct 1 tied at the top (2.000) with "
                     "Incorrect 2 (the official tie rule)"),
    ("factuality-3", "Model demo-rm: credit 1/3 = 0.333: Correct 1 tied at the top (2.000) with "
                     "Incorrect 1 and Incorrect 2 (the official tie rule)"),
    ("math-1", "Model demo-rm: credit 0: Incorrect 3 scored highest (3.000, above Correct 1's 2.000)"),
    ("math-2", "Model demo-rm: credit 0: a score is missing (the official code gives 0)"),
])
def test_a_scored_instance_shows_its_official_credit(demo_db, item, words):
    entries = score_demo(demo_db)
    at = open_review(RB2, item=item)
    assert words in captions(at)
    expected = instance_credit(entries[item]["chosen_scores"], entries[item]["rejected_scores"])
    assert instances.credit(entries[item]).credit == expected


@pytest.mark.slow
def test_a_scored_ties_row_shows_its_row_and_its_prompts_figures(demo_db):
    entries = score_demo(demo_db)
    at = open_review(RB2, item="tied:2")
    words = captions(at)
    assert ("Model demo-rm: this row accurate: lowest correct 2.000 > highest incorrect 1.800 "
            "(gap +0.200); spread of the correct scores 0.300") in words
    # ref:2's gap is 1.5 - 1.8 = -0.3: the hard comparison fails; tanh(-0.3 / 0.3 - 1)
    assert ("prompt 2: preferred no (tied gap +0.200 ≤ spread 0.300) · preferred (hard) no "
            f"(smaller gap -0.300 ≤ 0.300) · margin term {math.tanh(-2):+.3f}") in words
    # the prompt's figures are those the Ties score is made of
    figures = ties_figures([{"id": k, **entries[k]} for k in ("ref:2", "tied:2")])
    assert (figures["preferred"]["right"], figures["preferred_hard"]["right"]) == (0, 0)
    assert figures["margin"] == pytest.approx(math.tanh(-2))
    at = open_review(RB2, item="ref:2")
    assert "this row not accurate: lowest correct 1.500 ≤ highest incorrect 1.800" in captions(at)


# -- a Ties prompt's two rows together -----------------------------------------------------------


@pytest.mark.slow
def test_a_ties_row_names_the_same_pair_in_its_other_row_and_opens_it(demo_db):
    act(demo_db, {"kind": "verdict", "item": "ref:3", "i": 0, "j": 2, "verdict": "flip"})
    at = open_review(RB2, item="tied:3")
    as_tab(at)
    move(at, "review", RB2, "tied:3", i=0, j=2)
    assert ("this pair is Correct 1 vs Incorrect 3 there, your verdict: 🔁 Incorrect better"
            in captions(at)), captions(at)
    assert "1 of 3 reviewed by you" in captions(at)
    at.button(key="rb2_sibling").click()
    at.run()
    assert not at.exception, at.exception
    data = key_data(at, "review")
    assert (data["item"], data["i"], data["j"]) == ("ref:3", 0, 2)
    assert grid(at) == [(0, 0), (0, 1), (0, 2)]
    # a pair the other row does not have (correct 2): the button opens its first open one
    move(at, "review", RB2, "tied:3", i=1, j=0)
    assert "this pair is" not in captions(at)
    at.button(key="rb2_sibling").click()
    at.run()
    data = key_data(at, "review")
    assert (data["item"], data["i"], data["j"]) == ("ref:3", 0, 0)


def test_twin_and_names_and_sides():
    record = {"id": "tied:4", "prompt": "p", "chosen": ["a", "b"], "rejected": ["x", "y", "z"],
              "num_correct": 2, "num_incorrect": 3, "total_completions": 5, "subset": "Ties"}
    tied = preference_view("rewardbench2", record)
    ref = preference_view("rewardbench2", dict(record, id="ref:4", chosen=["a"], num_correct=1,
                                               total_completions=4))
    assert instances.twin(tied, 0, 2, ref) == (0, 2) and instances.twin(tied, 1, 0, ref) is None
    assert instances.twin(ref, 0, 1, tied) == (0, 1)
    assert instances.side_names(ref) == (["1"], ["1", "2", "3"])
    shape = instances.shape("tied:4", "Ties", tied)
    assert (shape.part, shape.prompt, shape.sibling, shape.comparisons) == ("tied", 4, "ref:4", 6)
    plain = instances.named(PLAIN, "rewardbench2")
    assert (plain.title("chosen", "1"), plain.title("rejected", "2")) == ("Correct 1", "Incorrect 2")
    assert (plain.verdict_words("agree"), plain.verdict_words("flip")) == ("Correct better",
                                                                          "Incorrect better")
    assert instances.named(PLAIN, "lfrb") is PLAIN
    blind = instances.named(sides_for(True, "ana", "tied:4"), "rewardbench2")
    assert {blind.title("chosen", "1"), blind.title("rejected", "2")} == {"Response A", "Response B"}
    assert {blind.verdict_words("agree"), blind.verdict_words("flip")} == {"A better", "B better"}
    assert blind.keys() == sides_for(True, "ana", "tied:4").keys()
    # a k-way tie at the top: 1 / k, as the official rule
    assert instances.credit({"chosen_scores": [1.0], "rejected_scores": [1.0, 1.0, 1.0]}).credit == 0.25
    # different scores never read as a tie
    near = instances.credit({"chosen_scores": [1.0001], "rejected_scores": [1.0002, 0.0, 0.0]})
    assert near.words == "credit 0: Incorrect 1 scored highest (1.0002, above Correct 1's 1.0001)"
    assert instances.credit(None) is None and instances.ties_prompt(4, None, None) is None


# -- a blind annotator stays blind --------------------------------------------------------------


SIDE_WORDS = re.compile(r"\b(correct|incorrect|chosen|rejected)\b", re.IGNORECASE)


BLIND_ROWS = [
    {"id": "bo4-1", "prompt": "Capital of Peru?", "chosen": ["Lima."],
     "rejected": ["Cusco.", "Quito.", "Bogota."], "num_correct": 1, "num_incorrect": 3,
     "total_completions": 4, "subset": "Factuality"},
    {"id": "ref:1", "prompt": "Name an even prime.", "chosen": ["Two."], "rejected": ["Nine.", "Four."],
     "num_correct": 1, "num_incorrect": 2, "total_completions": 3, "subset": "Ties"},
    {"id": "tied:1", "prompt": "Name an even prime.", "chosen": ["Two.", "2."],
     "rejected": ["Nine.", "Four."], "num_correct": 2, "num_incorrect": 2, "total_completions": 4,
     "subset": "Ties"},
]


@pytest.mark.slow
@pytest.mark.parametrize("item", ["bo4-1", "tied:1"])
def test_a_blind_annotator_reads_response_a_and_b_and_no_credit(tmp_path, monkeypatch, item):
    db = team_mode_db(tmp_path, monkeypatch)
    import_bytes(db, jsonl(BLIND_ROWS), "b.jsonl", dataset="b2", format="rewardbench2")
    assign_dataset(db, "b2", ["ana"])
    lead = accounts.get_user(db, "lead")
    set_visibility(db, "b2", "annotators_see_model_outputs", True, actor=lead)
    save_item_scores(db, "b2", "fp", "default", "demo-rm", [
        {"item_key": r["id"], "subset": r["subset"], "chosen_scores": [2.0] * len(r["chosen"]),
         "rejected_scores": [1.0] * len(r["rejected"])} for r in BLIND_ROWS])
    at = open_as(db, "ana", "app_pages/review.py", "b2")
    if item != "bo4-1":
        as_tab(at)
        move(at, "review", "b2", item, who="ana", actor=accounts.get_user(db, "ana"))
    shown = page_text(at)
    assert "Response A" in shown and "Response B" in shown
    assert not SIDE_WORDS.search(shown), SIDE_WORDS.search(shown)
    assert "RewardBench 2" not in shown and "credit" not in shown
    assert not [b for b in at.button if b.key == "rb2_sibling"]
    assert [b.label for b in at.button if b.key and b.key.startswith("rv_v_")][:2] == [
        "A better", "B better"]
    # with the file's labels shown, she reads the benchmark's words
    set_visibility(db, "b2", "annotators_see_file_labels", True, actor=lead)
    at = open_as(db, "ana", "app_pages/review.py", "b2")
    assert "Correct better" in [b.label for b in at.button]


def test_the_demo_records_view_as_the_page_reads_them(demo_db):
    record = get_item(demo_db, RB2, "tied:2")["record"]
    pref = preference_view("rewardbench2", record)
    assert pref.comparisons() == [(i, j) for i in range(4) for j in range(5)]
