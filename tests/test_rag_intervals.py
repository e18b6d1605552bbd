"""RAG figures with their denominators and 95 % intervals: every cell of the overall table
and of every breakdown carries them (no raw ``None``), an undefined cell says why, the
rules judge is named at the figures it graded, and ``rag-eval --json`` and its text carry
the same. The museum set (tests/rag_fixtures.py), the real rules judge served on 127.0.0.1
and the rule-following judge of the fixtures, real AppTest."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.figures.stats import bootstrap_mean
from needlework.figures.stats_text import percent_range
from needlework.judges.connection import Connection
from needlework.rag import metrics
from needlework.rag.answers import AnswerSet
from needlework.rag.questions import DIMENSIONS
from needlework.rag.rules_server import start_rules_server
from needlework.rag.run import RagEvalSpec, evaluate
from store import rag as rag_store
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer
from tests.rag_fixtures import ANSWERS_M, ANSWERS_M2, dataset_bytes, rule_judge

PAGE = "app_pages/rag.py"


@pytest.fixture
def museum(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    rag_store.save_answer_set(db, "museum", "m", ANSWERS_M, source="m.jsonl")
    rag_store.save_answer_set(db, "museum", "m2", ANSWERS_M2, source="m2.jsonl")
    return path, db


def sets() -> tuple[AnswerSet, ...]:
    return (AnswerSet("m", ANSWERS_M, "m.jsonl"), AnswerSet("m2", ANSWERS_M2, "m2.jsonl"))


def judged(db) -> dict:
    """The museum answers judged by the fixtures' rule-following judge (an LLM's place)."""
    with FakeJudgeServer(rule_judge) as server:
        report = evaluate(db, RagEvalSpec("museum", sets(),
                                          Connection(server.base_url, "judge", key_env=None)))
    return report.summary


def table(at: AppTest, *columns: str):
    """The first table with ``columns`` (only selectable tables report their key)."""
    for frame in at.dataframe:
        if all(c in frame.value.columns for c in columns):
            return frame
    raise AssertionError(f"no table with columns {columns}")


def open_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["dataset"] = "museum"
    at.run()
    at.switch_page(PAGE)
    at.query_params["dataset"] = "museum"
    at.run()
    assert not at.exception, at.exception
    return at


def test_every_figure_has_its_interval_over_its_own_denominator(museum) -> None:
    m = judged(museum[1])["overall"]["m"]
    assert m["deflection_n"] == {"needs deflection": 2, "answerable": 3}
    tpr = m["intervals"]["deflection_tpr"]
    # a share of 0/1 outcomes: Wilson's interval, which resamples nothing (issue 59)
    assert (tpr["n"], tpr["unit"], tpr["method"], tpr["resamples"], tpr["seed"]) == \
        (2, "question", "wilson", None, None)
    assert m["intervals"]["eligibility"]["n"] == 5
    # eligible: q1, q2, q3 of q1, q2, q3, q4, q6 (tests/test_rag_cli.py) in question order
    hand = bootstrap_mean([1, 1, 1, 0, 0], unit="question")
    assert (m["intervals"]["eligibility"]["low"], m["intervals"]["eligibility"]["high"]) == \
        (hand.low, hand.high)
    assert metrics.cell_text(m, "eligibility") == f"60.0 % (3/5) CI {percent_range(hand)}"
    assert metrics.cell_text(m, "deflection_tpr").startswith("50.0 % (1/2 needing deflection) CI ")
    assert metrics.cell_text(m, "deflection_fpr").startswith("33.3 % (1/3 answerable) CI ")
    cites = m["attribution"]["n"]
    assert f"({cites} of 5 cite) CI " in metrics.cell_text(m, "attribution_f1")
    assert m["intervals"]["F1"]["n"] == 5 and " (n=5) CI " in metrics.cell_text(m, "F1")


def test_an_undefined_figure_says_why(museum) -> None:
    summary = judged(museum[1])
    cells = summary["breakdowns"]["m"]["deflection"]
    answerable, needs = cells["answerable"], cells["needs deflection"]
    assert answerable["deflection_tpr"] is None  # no question there needs a deflection
    assert metrics.cell_text(answerable, "deflection_tpr") == "n/a: no question here needs a deflection"
    assert metrics.cell_text(needs, "deflection_fpr") == "n/a: every question here needs a deflection"
    no_judge = metrics.summarize([])
    assert metrics.cell_text(no_judge, "F1") == "n/a: no question here"


@pytest.mark.slow
def test_the_page_shows_denominators_and_intervals_and_no_raw_none(museum) -> None:
    path, db = museum
    summary = judged(db)
    at = open_page()
    for dimension in DIMENSIONS:
        at.segmented_control(key="rag_dimension").set_value(dimension).run()
        cells = table(at, "value", "model", "F1").value
        assert not cells.isna().to_numpy().any(), (dimension, cells)
        texts = [str(v) for v in cells.to_numpy().ravel()]
        assert not [t for t in texts if t in ("None", "nan")], (dimension, texts)
    overall = table(at, "model", "F1").value.set_index("model")
    m = summary["overall"]["m"]
    assert overall.loc["m", "deflection_tpr"] == metrics.cell_text(m, "deflection_tpr")
    assert "needing deflection" in overall.loc["m", "deflection_tpr"]
    assert "cite) CI " in overall.loc["m", "attribution_f1"]
    at.segmented_control(key="rag_dimension").set_value("deflection").run()
    cells = table(at, "value", "model", "F1").value.set_index(["value", "model"])
    assert cells.loc[("answerable", "m"), "deflection_tpr"] == "n/a: no question here needs a deflection"
    assert not [w for w in at.warning if "rules judge" in w.value]  # an LLM's place: no caveat


@pytest.mark.slow
def test_figures_from_the_rules_judge_say_so_at_the_figures(museum) -> None:
    path, db = museum
    with start_rules_server(port=0) as rules:
        summary = evaluate(db, RagEvalSpec("museum", sets(),
                                           Connection(rules.base_url, rules.model,
                                                      key_env=None))).summary
    at = open_page()
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("The judge figures in this table and chart (Eligibility")
               and "from the rules judge: fixed word-overlap rules, not an LLM" in w
               for w in warnings), warnings
    assert any(w.startswith("The judge figures in this breakdown") for w in warnings), warnings
    # the column titles say it (the column config, as JSON)
    columns = json.dumps(json.loads(table(at, "model", "F1").proto.columns), ensure_ascii=False)
    assert "Eligibility · rules judge" in columns and "F1 · rules judge" not in columns
    assert summary["judge_note"].startswith("Judge figures from the rules judge: fixed "
                                            "word-overlap rules, not an LLM.")
    # and above the failures the rules judge found
    assert any(c.value.startswith("Judge verdicts here are from the rules judge")
               for c in at.caption), [c.value for c in at.caption]


def test_rag_eval_json_and_text_carry_denominators_and_intervals(museum, tmp_path, capsys) -> None:
    path, db = museum
    db.conn.close()
    assert main(["rag-eval", "--dataset", "museum", "--stored", "--json", "--no-progress",
                 "--db", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    f1 = report["overall"]["m"]["intervals"]["F1"]
    assert f1["n"] == 5 and f1["low"] <= report["overall"]["m"]["bergen"]["F1"] <= f1["high"]
    attribution = report["overall"]["m"]["intervals"]["attribution_f1"]
    assert attribution["n"] == report["overall"]["m"]["attribution"]["n"]
    assert report["judge_note"] is None
    assert main(["rag-eval", "--dataset", "museum", "--stored", "--no-progress",
                 "--db", str(path)]) == 0
    text = capsys.readouterr().out
    assert ("with denominators and 95 % intervals (95 % Wilson score interval for a share of "
            "0/1 outcomes, else 95 % percentile bootstrap, 1,000 resamples") in text
    assert "  m\tF1\t" in text and " (n=5) CI " in text
    assert "DeflTPR" not in text.split("with denominators")[1]  # no judge: no judge figure listed
