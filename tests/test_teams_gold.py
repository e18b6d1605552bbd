"""Gold items in bulk (issue 47): answers imported from a CSV or JSONL file, all or nothing,
each bad row named by file, line and field; "k % of every annotator's queue" as gold,
picked with a seed; marking gold without answers refused in one sentence; the CLI."""

from __future__ import annotations

import json
import re
import shutil

import pytest

import store
from needlework.actions import writes
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.formats.errors import FormatError
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset, queue
from needlework.teams.gold import (
    GoldError,
    all_default_answers,
    mark_gold,
    no_answers_sentence,
    sample_gold,
)
from needlework.teams.gold_import import import_gold
from needlework.teams.permissions import PermissionDenied
from store import gold as store_gold
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import grounding, open_as, preference, team, team_mode_db

IMPORTED = {"label:1": "ANSWER-THE-QUESTION", "label:2": "irrelevant",
            "label:3": "RELATED-INFORMATION"}  # what tests.conftest's record says


def unlabelled(db, n: int, name: str = "u", labelled: tuple[int, ...] = ()) -> list[str]:
    """A grounding dataset whose items carry no labels, except those numbered in
    ``labelled`` (1-based)."""
    records = garage_records(n)
    for number, r in enumerate(records, start=1):
        if number not in labelled:
            r["evidence_relevant"] = ["", "", ""]
            r["evidence_correct"] = ["", "", ""]
    import_bytes(db, jsonl(records), f"{name}.jsonl", dataset=name)
    return [f"sample-{i + 1}" for i in range(n)]


def events(db, action: str) -> list[dict]:
    return db.execute_returning_dicts(
        "select by, target, about_dataset, after from audit_events where action = ? order by id",
        [action])


def snapshot(db) -> tuple:
    """Everything a gold import or sample may change."""
    return (db.execute("select * from gold_items order by dataset, item_key").fetchall(),
            db.execute("select dataset, item_key, annotator, gold, source from assignments "
                       "order by 1, 2, 3").fetchall(),
            db.execute("select count(*) from audit_events").fetchone()[0])


def shares(db, dataset: str) -> dict[str, tuple[int, int]]:
    """Each annotator's (gold items, items) counted by hand from the tables."""
    out: dict[str, tuple[int, int]] = {}
    gold = set(store_gold.gold_items(db, dataset))
    for who, key in db.execute("select annotator, item_key from assignments where dataset = ?",
                               [dataset]):
        g, n = out.get(who, (0, 0))
        out[who] = (g + (key in gold), n + 1)
    return out


# --- import -------------------------------------------------------------------------------

def test_a_csv_file_records_each_items_answers_and_queues_them(db):
    people = team(db)
    grounding(db, 6)
    assign_dataset(db, "g", ["ana", "bob", "cy"], actor=people["boss"])
    writes.adjudicate(db, "g", "sample-1", "final:label:1", "OUTDATED", actor=people["rita"])
    mark_gold(db, "g", "sample-4", actor=people["rita"])
    data = (b"item,field,value\n"
            b"sample-2,label:1,Outdated\n"  # the button's word
            b"sample-2,label:3,UNKNOWN\n"  # the stored value
            b" sample-2 , dim:question_type , slow-changing \n"
            b"\n"
            b"sample-4,label:2,answer\n"  # any case; replaces sample-4's answers
            b"sample-5,label:1,irrelevant\n")
    done = import_gold(db, "g", data, "gold.csv", actor=people["rita"])
    assert (done.items, done.answers, done.replaced) == (("sample-2", "sample-4", "sample-5"), 5,
                                                         ("sample-4",))
    assert store_gold.gold_items(db, "g") == {
        "sample-2": {"label:1": "OUTDATED", "label:3": "UNKNOWN",
                     "dim:question_type": "SLOW-CHANGING"},
        "sample-4": {"label:2": "ANSWER-THE-QUESTION"},
        "sample-5": {"label:1": "irrelevant"}}
    for who in ("ana", "bob", "cy"):  # in every queue, unannounced
        keys = [e.key for e in queue(db, "g", who, actor=people[who])]
        assert {"sample-2", "sample-4", "sample-5"} <= set(keys)
    [event] = events(db, "gold.imported")
    assert (event["by"], event["target"], event["about_dataset"]) == ("rita", "gold.csv", "g")
    assert json.loads(event["after"]) == {"items": ["sample-2", "sample-4", "sample-5"],
                                          "answers": 5, "replaced": ["sample-4"]}
    assert events(db, "gold.marked") == [events(db, "gold.marked")[0]]  # sample-4's own only


def test_a_jsonl_file_records_verdicts_by_value_or_word(db):
    people = team(db)
    preference(db, 3)
    data = (json.dumps({"item": "q1", "field": "verdict:0:1", "value": "flip"}) + "\n"
            + json.dumps({"item": "q1", "field": "verdict:0:2", "value": "Chosen better"}) + "\n"
            + json.dumps({"item": "q2", "field": "verdict:0:0", "value": "both-bad",
                          "note": "extra keys are ignored"}) + "\n").encode()
    done = import_gold(db, "p", data, "gold.jsonl", actor=people["boss"])
    assert done.answers == 3
    assert store_gold.gold_items(db, "p") == {
        "q1": {"verdict:0:1": "flip", "verdict:0:2": "agree"}, "q2": {"verdict:0:0": "both-bad"}}


BAD_CSV = [
    ("item,field,value\nsample-1,label:1,irrelevant\nnope,label:1,irrelevant\n",
     "gold.csv line 3: item: 'nope' is not an item of 'g'"),
    ("item,field,value\nsample-1,label:4,irrelevant\n",
     "gold.csv line 2: label:4: the item has 3 passages"),
    ("item,field,value\nsample-1,label:1,maybe\n",
     "gold.csv line 2: label:1: 'maybe' is not a passage label"),
    ("item,field,value\nsample-1,label:1,Skip\n",
     "gold.csv line 2: label:1: 'Skip' is not a passage label"),
    ("item,field,value\nsample-1,dim:question_type,SOMETIMES\n",
     "gold.csv line 2: dim:question_type: 'SOMETIMES' is not a value of question_type"),
    ("item,field,value\nsample-1,verdict:0:0,agree\n",
     "gold.csv line 2: verdict:0:0: gold answers of a grounding item are label:N and dim:FIELD"),
    ("item,field,value\nsample-1,label:1,\n", "gold.csv line 2: label:1: value missing"),
    ("item,field,value\nsample-1,,irrelevant\n", "gold.csv line 2: field: missing"),
    ("item,field,value\n,label:1,irrelevant\n", "gold.csv line 2: item: missing"),
    ("item,field,value\nsample-1,label:1,irrelevant\nsample-1,label:1,OUTDATED\n",
     "gold.csv line 3: label:1: given twice for item 'sample-1' (first on line 2)"),
    ("item,answer,value\nsample-1,label:1,irrelevant\n",
     "gold.csv line 1: field: the header has no field column"),
    ("item,field,value\n", "gold.csv line 1: the file holds no answer"),
    ("", "gold.csv line 1: the file is empty"),
    ('item,field,value\nsample-1,label:1,"irrelevant\n', "gold.csv line 2: not CSV"),
]


@pytest.mark.parametrize(("text", "message"), BAD_CSV)
def test_each_bad_csv_row_names_file_line_and_field_and_nothing_changes(db, text, message):
    people = team(db)
    grounding(db, 3)
    assign_dataset(db, "g", ["ana", "bob"], actor=people["boss"])
    mark_gold(db, "g", "sample-3", actor=people["rita"])
    before = snapshot(db)
    with pytest.raises(FormatError) as caught:
        import_gold(db, "g", text.encode(), "gold.csv", actor=people["rita"])
    assert str(caught.value).startswith(message), str(caught.value)
    assert snapshot(db) == before


BAD_JSONL = [
    ('{"item": "q0", "field": "verdict:0:0", "value": "agree"}\n{"item": "q0", "field"\n',
     "gold.jsonl line 2: "),
    ('["q0", "verdict:0:0", "agree"]\n', "gold.jsonl line 1: not an answer"),
    ('{"item": "q0", "field": "verdict:1:0", "value": "flip"}\n',
     "gold.jsonl line 1: verdict:1:0: not a comparison of this item"),
    ('{"item": "q0", "field": "verdict:0:0", "value": "skip"}\n',
     "gold.jsonl line 1: verdict:0:0: 'skip' is not a verdict (skip is no answer)"),
    ('{"item": "q0", "field": "verdict:0:0", "value": "Tie"}\n'
     '{"item": "q0", "field": "label:1", "value": "irrelevant"}\n',
     "gold.jsonl line 2: label:1: not a comparison of this item"),
    ('{"item": "q0", "field": "verdict:0:0", "value": 3}\n',
     "gold.jsonl line 1: verdict:0:0: 3 is not a verdict"),
    ('{"item": true, "field": "verdict:0:0", "value": "tie"}\n', "gold.jsonl line 1: item: missing"),
]


@pytest.mark.parametrize(("text", "message"), BAD_JSONL)
def test_each_bad_jsonl_row_names_file_line_and_field_and_nothing_changes(db, text, message):
    people = team(db)
    preference(db, 2)
    before = snapshot(db)
    with pytest.raises(FormatError) as caught:
        import_gold(db, "p", text.encode(), "gold.jsonl", actor=people["rita"])
    assert str(caught.value).startswith(message), str(caught.value)
    assert snapshot(db) == before


def test_one_bad_row_among_many_imports_nothing_and_every_bad_row_is_named(db):
    people = team(db)
    grounding(db, 6)
    assign_dataset(db, "g", ["ana", "bob", "cy"], actor=people["boss"])
    good = "".join(f"sample-{n},label:{p},irrelevant\n" for n in range(1, 7) for p in (1, 2, 3))
    text = "item,field,value\n" + good + "sample-2,label:9,irrelevant\nsample-7,label:1,irrelevant\n"
    before = snapshot(db)
    with pytest.raises(FormatError) as caught:
        import_gold(db, "g", text.encode(), "big.csv", actor=people["rita"])
    assert [str(p) for p in caught.value.problems] == [
        "big.csv line 20: label:9: the item has 3 passages",
        "big.csv line 21: item: 'sample-7' is not an item of 'g'"]
    assert snapshot(db) == before
    with pytest.raises(FormatError, match="gold answers are read from a .csv or .jsonl"):
        import_gold(db, "g", text.encode(), "gold.txt", actor=people["rita"])
    with pytest.raises(FormatError, match="gold.csv line 2: bytes are not UTF-8"):
        import_gold(db, "g", b"item,field,value\n\xff,label:1,x\n", "gold.csv", actor=people["rita"])
    assert snapshot(db) == before


def test_only_reviewers_and_admins_import_or_sample(db):
    people = team(db)
    grounding(db, 2)
    before = snapshot(db)
    with pytest.raises(PermissionDenied, match="ana is an annotator and may not mark gold items"):
        import_gold(db, "g", b"item,field,value\nsample-1,label:1,irrelevant\n", "gold.csv",
                    actor=people["ana"])
    with pytest.raises(PermissionDenied, match="ana is an annotator"):
        sample_gold(db, "g", 50, actor=people["ana"])
    assert snapshot(db) == before
    with pytest.raises(GoldError, match="no dataset named 'nope'"):
        import_gold(db, "nope", b"item,field,value\n", "gold.csv", actor=people["rita"])


# --- k % of every queue -------------------------------------------------------------------

def setup_plan(db, path=None):
    people = team(db, annotators=("ana", "bob", "cy", "dee"))
    grounding(db, 40)
    assign_dataset(db, "g", ["ana", "bob", "cy", "dee"], double_share=0.3, seed=3,
                   actor=people["boss"])
    mark_gold(db, "g", "sample-7", actor=people["rita"])
    return people


@pytest.mark.parametrize("percent", [10, 12.5, 30, 100])
def test_sampling_makes_every_queue_at_least_k_percent_gold_and_no_more_than_needed(db, percent):
    people = setup_plan(db)
    before = shares(db, "g")
    assert min(g / n for g, n in before.values()) < percent / 100
    done = sample_gold(db, "g", percent, seed=11, actor=people["rita"])
    after = shares(db, "g")
    assert done.basis == "queues" and done.shares == after
    assert set(after) == {"ana", "bob", "cy", "dee"}
    for who, (gold, items) in after.items():
        assert gold * 100 >= percent * items, (who, gold, items)
    # each added item is gold with its default answers, in every queue
    defaults = all_default_answers(db, "g")
    gold = store_gold.gold_items(db, "g")
    assert all(gold[k] == defaults[k] for k in done.added)
    assert len(gold) == 1 + len(done.added)
    # just enough: without the last item picked, some queue falls short
    last = done.added[-1]
    holders = {w for (w,) in db.execute("select annotator from assignments where item_key = ? "
                                        "and source != 'gold'", [last])}
    short = [w for w, (g, n) in after.items()
             if (g - 1) * 100 < percent * (n - (w not in holders))]
    assert short, "the last item was not needed"
    [event] = events(db, "gold.sampled")
    assert json.loads(event["after"]) == {"percent": float(percent), "seed": 11,
                                          "basis": "queues", "items": list(done.added)}
    assert events(db, "gold.marked") == events(db, "gold.marked")[:1]  # sample-7's only
    # asked again: the rule holds, nothing changes
    again = snapshot(db)
    assert sample_gold(db, "g", percent, seed=99, actor=people["rita"]).added == ()
    assert snapshot(db) == again


def test_sampling_is_the_same_with_the_same_seed(tmp_path):
    first = store.connect(tmp_path / "a.db")
    people = setup_plan(first)
    first.conn.close()
    shutil.copy(tmp_path / "a.db", tmp_path / "b.db")
    a, b = store.connect(tmp_path / "a.db"), store.connect(tmp_path / "b.db")
    picked_a = sample_gold(a, "g", 20, seed=5, actor=accounts.get_user(a, "rita")).added
    picked_b = sample_gold(b, "g", 20, seed=5, actor=accounts.get_user(b, "rita")).added
    assert picked_a == picked_b and picked_a
    other = store.connect(tmp_path / "c.db")
    setup_plan(other)
    assert sample_gold(other, "g", 20, seed=6, actor=accounts.get_user(other, "rita")).added \
        != picked_a
    assert people["rita"].name == "rita"


def test_sampling_without_a_plan_makes_k_percent_of_items_gold_which_every_later_queue_keeps(db):
    people = team(db, annotators=("ana", "bob", "cy"))
    grounding(db, 30)
    done = sample_gold(db, "g", 20, seed=2, actor=people["rita"])
    assert done.basis == "items" and done.shares == {"": (6, 30)} and len(done.added) == 6
    assign_dataset(db, "g", ["ana", "bob", "cy"], double_share=0.5, actor=people["boss"])
    for who, (gold, items) in shares(db, "g").items():
        assert gold * 5 >= items, who


def test_sampling_picks_only_items_with_default_answers_and_refuses_when_too_few(db):
    people = team(db, annotators=("ana", "bob"))
    unlabelled(db, 10, labelled=(2, 5))
    writes.adjudicate(db, "u", "sample-8", "final:label:1", "OUTDATED", actor=people["rita"])
    assign_dataset(db, "u", ["ana", "bob"], actor=people["boss"])
    assert set(all_default_answers(db, "u")) == {"sample-2", "sample-5", "sample-8"}
    before = snapshot(db)
    with pytest.raises(GoldError, match="only 3 items that are not gold have file labels or "
                                        "adjudicated values"):
        sample_gold(db, "u", 50, actor=people["rita"])
    assert snapshot(db) == before
    done = sample_gold(db, "u", 30, seed=1, actor=people["rita"])
    assert len(done.added) == 2 and set(done.added) <= {"sample-2", "sample-5", "sample-8"}
    assert all(g * 10 >= 3 * n for g, n in shares(db, "u").values())
    done = sample_gold(db, "u", 42, seed=1, actor=people["rita"])  # the third is needed too
    assert len(done.added) == 1
    assert store_gold.gold_items(db, "u")["sample-8"] == {"label:1": "OUTDATED"}
    for bad in (0, -5, 101, "ten"):
        with pytest.raises(GoldError, match="percentage above 0 and at most 100"):
            sample_gold(db, "u", bad, actor=people["rita"])


# --- the refusal --------------------------------------------------------------------------

def test_marking_an_item_without_answers_says_why_in_one_sentence(db):
    people = team(db)
    unlabelled(db, 3, labelled=(2,))
    before = snapshot(db)
    with pytest.raises(GoldError) as caught:
        mark_gold(db, "u", "sample-1", actor=people["rita"])
    assert str(caught.value) == no_answers_sentence("sample-1") == (
        "item sample-1 has no answers to mark as gold: it has no file labels and no "
        "adjudicated values; give the answers or import them from a file")
    assert snapshot(db) == before
    assert mark_gold(db, "u", "sample-2", actor=people["rita"]) == IMPORTED
    assert mark_gold(db, "u", "sample-1", {"label:2": "UNKNOWN"}, actor=people["rita"]) == {
        "label:2": "UNKNOWN"}


# --- the command line ---------------------------------------------------------------------

def test_cli_imports_samples_and_lists(tmp_path, capsys):
    path = tmp_path / "team.db"
    db = store.connect(path)
    people = team(db)
    grounding(db, 10)
    assign_dataset(db, "g", ["ana", "bob", "cy"], actor=people["boss"])
    db.conn.close()
    good = tmp_path / "gold.csv"
    good.write_text("item,field,value\nsample-1,label:1,Outdated\nsample-1,label:2,irrelevant\n")
    assert main(["gold", "import", "--dataset", "g", str(good), "--db", str(path)]) == 0
    assert "imported 2 gold answers of 1 item into 'g'" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "sample-2", "field": "label:7", "value": "irrelevant"}\n')
    assert main(["gold", "import", "--dataset", "g", str(bad), "--db", str(path)]) == 1
    assert capsys.readouterr().err == ("gold import: nothing imported:\n"
                                       "bad.jsonl line 1: label:7: the item has 3 passages\n")
    assert main(["gold", "import", "--dataset", "g", str(tmp_path / "none.csv"),
                 "--db", str(path)]) == 1
    assert "No such file" in capsys.readouterr().err
    assert main(["gold", "sample", "--dataset", "g", "--percent", "40", "--seed", "3", "--json",
                 "--db", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["basis"] == "queues" and out["seed"] == 3
    assert all(q["gold"] * 100 >= 40 * q["items"] for q in out["shares"].values())
    assert main(["gold", "list", "--dataset", "g", "--json", "--db", str(path)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["item_key"] for r in listed["items"]] == sorted(["sample-1", *out["added"]])
    assert listed["items"][0]["answers"] == {"label:1": "OUTDATED", "label:2": "irrelevant"}
    assert main(["gold", "list", "--dataset", "nope", "--db", str(path)]) == 1
    assert capsys.readouterr().err == "gold list: no dataset named 'nope'\n"
    db = store.connect(path)
    assert [e["by"] for e in events(db, "gold.imported") + events(db, "gold.sampled")] == [
        "(local)", "(local)"]


# --- the Quality page (AppTest, team mode) --------------------------------------------------

@pytest.fixture
def page_db(tmp_path, monkeypatch):
    """Team mode over a database with ``g`` (labelled, assigned to ana and bob) and ``u``
    (no file labels but on sample-2)."""
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 12, "g")
    unlabelled(db, 3, labelled=(2,))
    assign_dataset(db, "g", ["ana", "bob"], double_share=0.5)
    return db


def plain(text: str) -> str:
    """A message as read on screen (labels escape Markdown's characters)."""
    return re.sub(r"\\(.)", r"\1", text)


def flashes(at) -> tuple[list[str], list[str]]:
    return [plain(s.value) for s in at.success], [plain(e.value) for e in at.error]


@pytest.mark.slow
def test_quality_page_imports_a_file_and_names_a_bad_row(page_db):
    at = open_as(page_db, "rita", "app_pages/quality.py", "g")
    at.file_uploader(key="nw-gold-file").set_value(
        ("gold.csv", b"item,field,value\nsample-3,label:1,Outdated\nsample-4,label:2,related\n",
         "text/csv")).run()
    at.button(key="nw-gold-import").click().run()
    assert not at.exception, at.exception
    ok, bad = flashes(at)
    assert ok == ["Imported 2 gold answers of 2 items from gold.csv; they join every "
                  "annotator's queue unannounced."] and not bad
    assert store_gold.gold_items(page_db, "g") == {"sample-3": {"label:1": "OUTDATED"},
                                                  "sample-4": {"label:2": "RELATED-INFORMATION"}}
    before = snapshot(page_db)
    at.file_uploader(key="nw-gold-file").set_value(
        ("more.jsonl", b'{"item": "sample-5", "field": "label:1", "value": "irrelevant"}\n'
                       b'{"item": "sample-6", "field": "label:1", "value": "nonsense"}\n',
         "application/jsonl")).run()
    at.button(key="nw-gold-import").click().run()
    ok, bad = flashes(at)
    assert not ok and bad == ["more.jsonl line 2: label:1: 'nonsense' is not a passage label "
                              "· nothing was imported."]
    assert snapshot(page_db) == before


@pytest.mark.slow
def test_quality_page_makes_k_percent_of_every_queue_gold(page_db):
    at = open_as(page_db, "rita", "app_pages/quality.py", "g")
    at.number_input(key="nw-gold-percent").set_value(25).run()
    at.number_input(key="nw-gold-seed").set_value(4).run()
    at.button(key="nw-gold-sample").click().run()
    assert not at.exception, at.exception
    ok, bad = flashes(at)
    added = len(store_gold.gold_items(page_db, "g"))
    assert not bad and ok == [f"{added} items are gold now (seed 4): at least 25 % of every "
                              "annotator's queue."]
    counted = shares(page_db, "g")
    assert set(counted) == {"ana", "bob"} and all(4 * g >= n for g, n in counted.values())
    [event] = events(page_db, "gold.sampled")
    assert event["by"] == "rita" and json.loads(event["after"])["seed"] == 4
    # the page says where each queue stands now
    assert any(f"ana {counted['ana'][0]} of {counted['ana'][1]}" in plain(c.value)
               for c in at.caption)


@pytest.mark.slow
def test_quality_page_says_why_an_item_without_answers_cannot_be_gold(page_db):
    at = open_as(page_db, "rita", "app_pages/quality.py", "u")
    at.selectbox(key="nw-gold-item").set_value("sample-1").run()
    assert any("This item has no file labels and no adjudicated values" in plain(c.value)
               for c in at.caption)
    at.button(key="nw-gold-mark").click().run()
    assert not at.exception, at.exception
    ok, bad = flashes(at)
    assert not ok and bad == [no_answers_sentence("sample-1")]
    assert store_gold.gold_items(page_db, "u") == {}
    # picked answers are marked
    pickers = {s.label: s for s in at.get("button_group")}
    pickers["Passage 3"].set_value("UNKNOWN").run()
    at.button(key="nw-gold-mark").click().run()
    assert store_gold.gold_items(page_db, "u") == {"sample-1": {"label:3": "UNKNOWN"}}
