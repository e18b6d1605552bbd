"""Model suggestions as data (issue 30, point 1 and the file import of point 2): the three
file shapes, all-or-nothing imports naming file, line and field, sources side by side,
never an annotation."""

from __future__ import annotations

import json
import re

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.formats import FormatError
from needlework.formats.pairs import dump as dump_pairs
from needlework.suggest.data import field_name, import_suggestions, read_suggestions
from store.datasets import delete_dataset, rename_dataset
from store.suggestions import (
    dataset_suggestions,
    delete_source,
    item_suggestions,
    suggestion_sources,
)
from tests.cli_here import run
from tests.conftest import garage_records, jsonl


def lines(*objects) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


@pytest.fixture
def grounding(db):
    import_bytes(db, jsonl(garage_records(3)), "g.jsonl", dataset="g")  # 3 passages each
    return db


def test_ours_label_studio_and_argilla_shapes_store_the_same_kind_of_row(grounding):
    data = lines(
        {"item": "sample-1", "field": "label:1", "value": "OUTDATED", "score": 0.8,
         "source": "gpt-4o-mini", "detail": {"prompt": "garage-v1"}},
        {"item": "sample-1", "field": "dim:question_complexity", "value": "Simple"},
        {"data": {"id": "sample-2", "question": "…"}, "predictions": [
            {"model_version": "ls-v3", "score": 0.5, "result": [
                {"from_name": "label:2", "to_name": "text", "type": "choices",
                 "value": {"choices": ["ANSWER-THE-QUESTION"]}, "score": 0.9},
                {"from_name": "label_3", "type": "choices", "value": {"choices": ["irrelevant"]}}]}]},
        {"id": "sample-3", "suggestions": {"label_1": {"value": "UNKNOWN", "score": 0.4,
                                                      "agent": "argilla-bot"}}},
        {"id": "sample-3", "suggestions": [{"question_name": "dim_question_valid",
                                            "value": "YES", "agent": "argilla-v1"}]},
    )
    done = import_suggestions(grounding, data, "s.jsonl", "g", by="lena")
    assert (done.suggestions, done.items) == (6, 3)
    assert done.sources == {"gpt-4o-mini": 1, "file:s.jsonl": 1, "ls-v3": 2, "argilla-bot": 1,
                            "argilla-v1": 1}
    rows = {(r["item_key"], r["field"]): r for r in dataset_suggestions(grounding, "g")}
    assert rows[("sample-1", "label:1")]["score"] == 0.8
    assert rows[("sample-1", "label:1")]["detail"] == {"prompt": "garage-v1"}
    assert rows[("sample-1", "label:1")]["created_by"] == "lena"
    assert rows[("sample-2", "label:2")]["score"] == 0.9  # the result's own score first
    assert rows[("sample-2", "label:3")]["score"] == 0.5  # else the prediction's
    assert rows[("sample-2", "label:3")]["value"] == "irrelevant"
    assert rows[("sample-3", "label:1")]["source"] == "argilla-bot"
    assert rows[("sample-3", "dim:question_valid")]["value"] == "YES"
    # a suggestion is never an annotation, nor in the history
    assert grounding.execute("select count(*) from annotations").fetchone()[0] == 0
    assert grounding.execute("select count(*) from history").fetchone()[0] == 0


def test_a_bad_file_names_file_line_and_field_and_stores_nothing(grounding):
    data = lines(
        {"item": "sample-1", "field": "label:1", "value": "OUTDATED"},  # fine
        {"item": "sample-1", "field": "label:1", "value": "RELEVANT"},  # no such label
        {"item": "nope", "field": "label:1", "value": "OUTDATED"},  # no such item
        {"item": "sample-2", "field": "label:4", "value": "OUTDATED"},  # 3 passages
        {"item": "sample-2", "field": "answer", "value": "x"},  # not a suggestion field
        {"item": "sample-2", "field": "label:2", "value": "OUTDATED", "score": "high"},
        {"item": "sample-2", "field": "verdict:0:0", "value": "agree"},  # a grounding set
        {"hello": 1},
    ) + b"{not json\n"
    with pytest.raises(FormatError) as caught:
        import_suggestions(grounding, data, "bad.jsonl", "g", by="lena")
    said = [str(p) for p in caught.value.problems]
    assert said[0].startswith("bad.jsonl line 2: label:1: value must be one of irrelevant,")
    assert any(s.startswith("bad.jsonl line 5: field: 'answer' is not a field") for s in said)
    assert any(s.startswith("bad.jsonl line 6: score must be a finite number") for s in said)
    assert any(s.startswith("bad.jsonl line 7: verdict:0:0: verdicts are suggested for "
                            "preference datasets") for s in said)
    assert any(s.startswith("bad.jsonl line 8: not a suggestion") for s in said)
    assert any(s.startswith("bad.jsonl line 9:") for s in said)  # not JSON
    assert grounding.execute("select count(*) from suggestions").fetchone()[0] == 0
    # the item checks come once every line reads
    with pytest.raises(FormatError) as caught:
        import_suggestions(grounding, lines(
            {"item": "sample-1", "field": "label:1", "value": "OUTDATED"},
            {"item": "nope", "field": "label:1", "value": "OUTDATED"},
            {"item": "sample-2", "field": "label:4", "value": "OUTDATED"}), "b.jsonl", "g", by="x")
    assert [str(p) for p in caught.value.problems] == [
        "b.jsonl line 2: item: 'nope' is not an item of g",
        "b.jsonl line 3: label:4: the item has 3 passage(s)"]
    assert grounding.execute("select count(*) from suggestions").fetchone()[0] == 0


def test_verdicts_for_a_preference_dataset_within_its_comparisons(db):
    records = [{"id": "p1", "prompt": "q", "chosen": "good", "rejected": "bad"}]
    import_bytes(db, dump_pairs(records).encode(), "p.jsonl", dataset="p")
    done = import_suggestions(db, lines({"item": "p1", "field": "verdict_0_0", "value": "flip",
                                         "score": -1.5, "source": "reward:demo-model"}),
                              "v.jsonl", "p", by="x")
    assert done.suggestions == 1
    [row] = item_suggestions(db, "p", "p1")
    assert (row["field"], row["value"], row["score"]) == ("verdict:0:0", "flip", -1.5)
    with pytest.raises(FormatError, match=r"v\.jsonl line 1: verdict:0:1: the item has 1 chosen"):
        import_suggestions(db, lines({"item": "p1", "field": "verdict:0:1", "value": "tie"}),
                           "v.jsonl", "p", by="x")
    with pytest.raises(FormatError, match="labels and dimensions are suggested for grounding"):
        import_suggestions(db, lines({"item": "p1", "field": "label:1", "value": "OUTDATED"}),
                           "v.jsonl", "p", by="x")
    with pytest.raises(ValueError, match="no dataset named 'zzz'"):
        import_suggestions(db, b"", "v.jsonl", "zzz", by="x")


def test_several_sources_side_by_side_a_source_again_replaces_its_own(grounding):
    one = {"item": "sample-1", "field": "label:1", "value": "OUTDATED", "source": "a"}
    import_suggestions(grounding, lines(one), "1.jsonl", "g", by="x")
    import_suggestions(grounding, lines(dict(one, source="b", value="UNKNOWN")), "2.jsonl", "g", by="x")
    import_suggestions(grounding, lines(dict(one, value="irrelevant")), "3.jsonl", "g", by="x")
    got = {(r["source"], r["value"]) for r in item_suggestions(grounding, "g", "sample-1")}
    assert got == {("a", "irrelevant"), ("b", "UNKNOWN")}
    assert [(r["source"], r["suggestions"]) for r in suggestion_sources(grounding, "g")] == [
        ("a", 1), ("b", 1)]
    assert delete_source(grounding, "g", "a") == 1
    assert [r["source"] for r in item_suggestions(grounding, "g", "sample-1")] == ["b"]
    # they follow a renamed dataset and go with a deleted one
    rename_dataset(grounding, "g", "g2")
    assert [r["source"] for r in item_suggestions(grounding, "g2", "sample-1")] == ["b"]
    delete_dataset(grounding, "g2")
    assert grounding.execute("select count(*) from suggestions").fetchone()[0] == 0


def test_field_names_and_the_shapes_reader():
    assert field_name("label_12") == "label:12" and field_name("label:0") is None
    assert field_name("verdict_1_2") == "verdict:1:2"
    assert field_name("dim_question_type") == "dim:question_type"
    assert field_name("dim:shoe_size") is None and field_name("final:label:1") is None
    got = read_suggestions(json.dumps({"item": "q", "field": "dim:question_category",
                                       "value": "Finance"}), "c.jsonl", "grounding", "file:c")
    assert got[0].value == "Finance" and got[0].source == "file:c"
    with pytest.raises(FormatError, match="holds no suggestion"):
        read_suggestions(json.dumps({"id": "q", "suggestions": {}}), "e.jsonl", "grounding", "x")


def test_the_cli_imports_lists_and_deletes(tmp_path, db_path):
    import store  # noqa: PLC0415

    db = store.connect(db_path)
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    db.conn.close()
    good = tmp_path / "s.jsonl"
    good.write_bytes(lines({"item": "sample-1", "field": "label:1", "value": "OUTDATED"},
                           {"item": "sample-2", "field": "label:2", "value": "UNKNOWN"}))
    done = run(["suggestions", "import", str(good), "--dataset", "g", "--db", str(db_path)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported 2 suggestion(s) for 2 item(s) of g: file:s.jsonl (2)"
    listed = run(["suggestions", "list", "--dataset", "g", "--json", "--db", str(db_path)])
    # --json: the suggestions themselves (issue 59), not counts
    assert [(r["source"], r["item"]) for r in json.loads(listed.stdout)] == [
        ("file:s.jsonl", "sample-1"), ("file:s.jsonl", "sample-2")]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(lines({"item": "sample-9", "field": "label:1", "value": "OUTDATED"}))
    refused = run(["suggestions", "import", str(bad), "--dataset", "g", "--db", str(db_path)])
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == ["bad.jsonl line 1: item: 'sample-9' is not an item of g",
                                           "nothing imported: 1 problem(s)"]
    gone = run(["suggestions", "delete", "--dataset", "g", "--source", "file:s.jsonl",
                "--db", str(db_path)])
    assert gone.stdout.strip() == "deleted 2 suggestion(s) of file:s.jsonl in g"


# -- shown on Annotate (issue 30, point 3: set apart from saved labels) -----------------------


@pytest.mark.slow
def test_annotate_shows_suggestions_apart_from_the_saved_label(tmp_path, monkeypatch):
    import html  # noqa: PLC0415

    import store  # noqa: PLC0415
    from tests.test_grounding_pages import open_page  # noqa: PLC0415

    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl")
    import_suggestions(db, lines(
        {"item": "sample-1", "field": "label:2", "value": "OUTDATED", "score": 0.81,
         "source": "judge <b>x</b>"},
        {"item": "sample-1", "field": "label:2", "value": "UNKNOWN", "source": "rm"},
        {"item": "sample-1", "field": "dim:question_complexity", "value": "Multi-hop",
         "source": "judge <b>x</b>", "score": 0.5}),
        "s.jsonl", "ground", by="lena")
    at = open_page("app_pages/annotate.py", "ana", item="sample-1")
    bodies = "\n".join(h.proto.body for h in at.get("html"))
    shown = html.unescape(re.sub(r"<[^>]+>", "", bodies))  # the text the page shows
    assert "suggested: Outdated (judge <b>x</b> 0.81), Unknown (rm)" in shown  # as text
    assert "&lt;b&gt;x" in "\n".join(h.proto.body for h in at.get("html"))  # escaped, never HTML
    buttons = re.findall(r'<button[^>]*data-nw-passage="2"[^>]*>', "\n".join(
        h.proto.body for h in at.get("html")))
    suggested = [b for b in buttons if "nw-suggested" in b]
    assert len(suggested) == 2 and all("Suggested by" in b for b in suggested)
    assert not [b for b in buttons if "nw-chosen" in b]  # a suggestion is not a saved label
    # a suggested dimension: its option marked, its source on hover, as text
    options = re.findall(r'<button[^>]*class="nw-dim-option[^"]*nw-sugg[^>]*>', "\n".join(
        h.proto.body for h in at.get("html")))
    assert len(options) == 1 and "Multi-hop" not in options[0]
    assert 'title="Suggested by judge &lt;b&gt;x&lt;/b&gt; (0.50). Q 5 6"' in options[0]
    assert db.execute("select count(*) from annotations").fetchone()[0] == 0


# -- accepting, and where each value came from (issue 30, points 3 and 4) ----------------------


def _act(db, *actions, actor=None):
    import uuid  # noqa: PLC0415

    from needlework.actions.service import apply_actions  # noqa: PLC0415

    delivery = apply_actions(db, [dict(a, id=f"t-{uuid.uuid4().hex}", dataset="g", annotator="ana")
                                  for a in actions], actor=actor)
    assert delivery.error is None, delivery
    return delivery.outcomes


def _via(db, field):
    row = db.execute("select value, via from annotations where item_key = 'sample-1' and "
                     "annotator = 'ana' and field = ?", [field]).fetchone()
    return None if row is None else (json.loads(row[0]), row[1] and json.loads(row[1]))


def test_accept_labels_the_unlabelled_passages_and_every_value_says_where_it_came_from(grounding):
    import_suggestions(grounding, lines(
        {"item": "sample-1", "field": "label:1", "value": "OUTDATED", "source": "a", "score": 0.9},
        {"item": "sample-1", "field": "label:2", "value": "UNKNOWN", "source": "a", "score": 0.7},
        {"item": "sample-1", "field": "label:2", "value": "irrelevant", "source": "b"}),
        "s.jsonl", "g", by="lena")
    # typed over a suggestion shown: kept as changed, naming it
    _act(grounding, {"kind": "set", "item": "sample-1", "field": "label:1",
                     "value": "ANSWER-THE-QUESTION"})
    assert _via(grounding, "label:1") == ("ANSWER-THE-QUESTION", {
        "how": "changed", "source": "a", "suggested": "OUTDATED"})
    [outcome] = _act(grounding, {"kind": "accept", "item": "sample-1"})
    assert (outcome.status, outcome.message) == ("applied", "1 suggestion(s) accepted")
    assert _via(grounding, "label:1")[0] == "ANSWER-THE-QUESTION"  # a label of theirs stays
    assert _via(grounding, "label:2") == ("UNKNOWN", {"how": "accepted", "source": "a", "score": 0.7})
    assert _via(grounding, "label:3") is None  # no suggestion there: still to label
    history = grounding.execute("select field, new_value, via from history where item_key = "
                                "'sample-1' order by id").fetchall()
    assert [(f, json.loads(v)["how"]) for f, _, v in history] == [("label:1", "changed"),
                                                                 ("label:2", "accepted")]
    # the history export keeps where each value came from (issue 30, point 4)
    from needlework.teams.audit import history_records  # noqa: PLC0415

    exported = [(r["field"], r["via"] and json.loads(r["via"])["how"])
                for r in history_records(grounding, "g")]
    assert exported == [("label:1", "changed"), ("label:2", "accepted")]
    [again] = _act(grounding, {"kind": "accept", "item": "sample-1"})
    assert (again.status, again.message) == ("unchanged", "every suggested passage and dimension has your value")
    # undo takes the accepted label back; redo brings it back with where it came from
    _act(grounding, {"kind": "undo", "scope": "annotate"})
    assert _via(grounding, "label:2") is None
    _act(grounding, {"kind": "redo", "scope": "annotate"})
    assert _via(grounding, "label:2") == ("UNKNOWN", {"how": "accepted", "source": "a", "score": 0.7})
    # one source's suggestions; a typed label equal to a suggestion shown is typed, with the
    # source that suggested it: shown, not accepted
    _act(grounding, {"kind": "set", "item": "sample-1", "field": "label:2", "value": None})
    _act(grounding, {"kind": "accept", "item": "sample-1", "source": "b"})
    assert _via(grounding, "label:2") == ("irrelevant", {"how": "accepted", "source": "b", "score": None})
    _act(grounding, {"kind": "set", "item": "sample-1", "field": "label:2", "value": "UNKNOWN"})
    assert _via(grounding, "label:2") == ("UNKNOWN", {"how": "typed", "source": "a",
                                                      "suggested": "UNKNOWN"})
    [bad] = _act(grounding, {"kind": "accept", "item": "sample-1", "source": 7})
    assert bad.status == "rejected"


@pytest.mark.slow
def test_accept_follows_what_the_annotator_may_see(tmp_path, monkeypatch):
    """Team mode: an annotator whose lead shows no suggestions (never, or not in the test
    group) has none to accept, and a typed label is typed with nothing shown; one in the
    test group accepts them without the file's labels, on a gold item as on any other."""
    from needlework.teams import accounts  # noqa: PLC0415
    from needlework.teams.assignment import assign_dataset  # noqa: PLC0415
    from needlework.teams.blind import set_suggestion_timing, visibility  # noqa: PLC0415
    from needlework.teams.quality import mark_gold  # noqa: PLC0415
    from tests.teams_fixtures import grounding as team_grounding  # noqa: PLC0415
    from tests.teams_fixtures import team_mode_db  # noqa: PLC0415

    db = team_mode_db(tmp_path, monkeypatch)
    team_grounding(db, 2, "g")
    assign_dataset(db, "g", ["ana"], per_item=1)
    import_suggestions(db, lines({"item": "sample-1", "field": "label:1", "value": "OUTDATED",
                                  "source": "a"}), "s.jsonl", "g", by="lead")
    ana, lead = accounts.get_user(db, "ana"), accounts.get_user(db, "lead")
    for when, names in (("never", []), ("always", ["bob"])):  # none, or ana in the control group
        set_suggestion_timing(db, "g", when, names, actor=lead)
        [blind] = _act(db, {"kind": "accept", "item": "sample-1"}, actor=ana)
        assert (blind.status, blind.message) == ("unchanged",
                                                 "no suggestions to accept on this question")
    _act(db, {"kind": "set", "item": "sample-1", "field": "label:1", "value": "OUTDATED"}, actor=ana)
    assert _via(db, "label:1") == ("OUTDATED", None)  # the suggested value, but nothing shown
    _act(db, {"kind": "set", "item": "sample-1", "field": "label:1", "value": None}, actor=ana)
    set_suggestion_timing(db, "g", "always", ["ana"], actor=lead)  # the test group
    mark_gold(db, "g", "sample-1", actor=lead)
    assert visibility(db, "g", ana).file_labels is False
    [gold] = _act(db, {"kind": "accept", "item": "sample-1"}, actor=ana)
    assert gold.message == "1 suggestion(s) accepted"
    assert _via(db, "label:1") == ("OUTDATED", {"how": "accepted", "source": "a", "score": None})


def test_review_accept_gives_the_comparison_its_suggested_verdict(db):
    import uuid  # noqa: PLC0415

    from needlework.actions.service import apply_actions  # noqa: PLC0415

    records = [{"id": "p1", "prompt": "q", "chosen": "good", "rejected": "bad"},
               {"id": "p2", "prompt": "q2", "chosen": "fine", "rejected": "worse"}]
    import_bytes(db, dump_pairs(records).encode(), "p.jsonl", dataset="p")
    import_suggestions(db, lines({"item": "p1", "field": "verdict:0:0", "value": "flip",
                                  "score": -1.3, "source": "rm"},
                                 {"item": "p2", "field": "verdict:0:0", "value": "agree",
                                  "source": "rm"}), "v.jsonl", "p", by="x")

    def act(**action):
        delivery = apply_actions(db, [dict(action, id=f"t-{uuid.uuid4().hex}", dataset="p",
                                           annotator="ana")])
        assert delivery.error is None
        return delivery.outcomes[0]

    def saved(item):
        row = db.execute("select value, via from annotations where item_key = ? and annotator "
                         "= 'ana'", [item]).fetchone()
        return json.loads(row[0])["verdict"], row[1] and json.loads(row[1])

    assert act(kind="accept", item="p1", i=0, j=0).message == "the suggested verdict accepted"
    assert saved("p1") == ("flip", {"how": "accepted", "source": "rm", "score": -1.3})
    again = act(kind="accept", item="p1", i=0, j=0)
    assert (again.status, again.message) == ("unchanged", "this comparison has your verdict")
    act(kind="verdict", item="p2", i=0, j=0, verdict="tie")  # typed over the suggestion
    assert saved("p2") == ("tie", {"how": "changed", "source": "rm", "suggested": "agree"})
    assert act(kind="accept", item="p2", i=0, j=1).status == "rejected"  # no such comparison
    # a reason or a note added later keeps where the verdict came from
    act(kind="reasons", item="p1", i=0, j=0, flip="factual error")
    assert saved("p1") == ("flip", {"how": "accepted", "source": "rm", "score": -1.3})
    assert json.loads(db.execute("select value from annotations where item_key = 'p1'")
                      .fetchone()[0])["reasons"] == ["factual error"]
    act(kind="note", item="p2", i=0, j=0, note="close call")
    assert saved("p2") == ("tie", {"how": "changed", "source": "rm", "suggested": "agree"})


def test_rest_marks_irrelevant_as_changed_where_a_suggestion_shown_said_otherwise(grounding):
    import_suggestions(grounding, lines(
        {"item": "sample-1", "field": "label:1", "value": "OUTDATED", "source": "a"},
        {"item": "sample-1", "field": "label:2", "value": "irrelevant", "source": "a"}),
        "s.jsonl", "g", by="lena")
    _act(grounding, {"kind": "rest", "item": "sample-1"})
    assert _via(grounding, "label:1") == ("irrelevant", {"how": "changed", "source": "a",
                                                         "suggested": "OUTDATED"})
    assert _via(grounding, "label:2") == ("irrelevant", {"how": "typed", "source": "a",
                                                         "suggested": "irrelevant"})
    assert _via(grounding, "label:3") == ("irrelevant", None)  # no suggestion there


@pytest.mark.slow
def test_review_shows_the_suggested_verdict(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    import store  # noqa: PLC0415
    from tests.conftest import ROOT  # noqa: PLC0415

    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    records = [{"id": "p1", "prompt": "q", "chosen": "good", "rejected": "bad"}]
    import_bytes(db, dump_pairs(records).encode(), "p.jsonl", dataset="p")
    import_suggestions(db, lines({"item": "p1", "field": "verdict:0:0", "value": "flip",
                                  "score": -1.3, "source": "rm [v2]"}), "v.jsonl", "p", by="x")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state["annotator"] = "ana"
    at.query_params["dataset"] = "p"
    at.run()
    at.switch_page("app_pages/review.py")
    at.query_params["dataset"] = "p"
    at.run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "suggested: Rejected better (rm [v2] -1.30) · Y accepts" in captions
    flip = next(b for b in at.button if b.key == "rv_v_flip")
    assert flip.help == "Suggested: Rejected better (rm \\[v2\\] -1.30). Y accepts."
    assert not next(b for b in at.button if b.key == "rv_v_agree").help
