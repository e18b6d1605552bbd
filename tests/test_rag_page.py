"""AppTest for the RAG answers page: answers stored and uploaded (several models, BERGEN
files, refused files with file/line/field), a run in the job runner without and with a
judge (a rule-following judge served over HTTP on 127.0.0.1), the same figures as
``python -m needlework rag-eval --json``, what was not evaluated listed by id, every
figure's definition, the failures, and the model answer panel on the annotate page."""

from __future__ import annotations

import html
import json
import math
import os
import subprocess
import sys
import time

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from needlework.rag.definitions import DEFINITIONS, TITLES
from needlework.rag.metrics import flat, text_row
from needlework.rag.questions import DIMENSIONS
from store import rag as rag_store
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer
from tests.rag_fixtures import ANSWERS_M, ANSWERS_M2, answers_jsonl, dataset_bytes, rule_judge

PAGE = "app_pages/rag.py"
SECRET = "sk-test-SECRET123"


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    """The museum set (tests/rag_fixtures.py) with models m and m2 stored with it."""
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    rag_store.save_answer_set(db, "museum", "m", ANSWERS_M, source="m.jsonl")
    rag_store.save_answer_set(db, "museum", "m2", ANSWERS_M2, source="m2.jsonl")
    db.conn.close()
    return path


def open_page(query: dict[str, str] | None = None) -> AppTest:
    return open_app(PAGE, {"dataset": "museum", **(query or {})})


def open_app(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(query)
    at.run()
    at.switch_page(page)
    at.query_params.update(query)  # switching pages drops them in AppTest
    at.run()
    assert not at.exception, at.exception
    return at


def evaluate(at: AppTest, dataset: str = "museum") -> dict:
    """Click Evaluate, wait for the job, rerun; the finished job row."""
    at.button(key="rag_run_button").click().run()
    db = store.connect(os.environ["NEEDLEWORK_DB"])
    job = RUNNER.latest(db, "rag", dataset)
    assert job is not None
    RUNNER.join(int(job["id"]), timeout=120)
    job = RUNNER.get(db, int(job["id"]))
    for _ in range(3):  # the page reruns once the fragment sees the job finished
        at.run()
    assert not at.exception, at.exception
    return job


def html_text(at: AppTest) -> str:
    """The text drawn with components.text (HTML-escaped there), unescaped."""
    return html.unescape("\n".join(h.value for h in at.get("html")))


def dataframes(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def table_with(at: AppTest, *columns: str):
    for value in dataframes(at):
        if all(c in value.columns for c in columns):
            return value
    raise AssertionError(f"no table with columns {columns}")


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "needlework", *args], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=300)


def same(a, b) -> bool:
    if b is None:
        return a is None or (isinstance(a, float) and math.isnan(a))
    return a == pytest.approx(b, abs=1e-12)


def assert_same_figures(at: AppTest, report: dict) -> None:
    """The page's overall table and every breakdown equal the CLI's figures."""
    overall = table_with(at, "model", "n", "F1")
    assert list(overall["model"]) == report["models"]
    for _, row in overall.iterrows():
        expected = shown(report["overall"][row["model"]], list(overall.columns[1:]))
        for name in overall.columns[1:]:
            assert row[name] == expected[name], (row["model"], name, row[name], expected[name])
    for dimension in DIMENSIONS:
        at.segmented_control(key="rag_dimension").set_value(dimension).run()
        table = table_with(at, "value", "model", "n", "F1")
        cells = {(r["value"], r["model"]): r for _, r in table.iterrows()}
        expected = {(value, model): shown(figures, list(table.columns[2:]))
                    for model, parts in report["breakdowns"].items()
                    for value, figures in parts[dimension].items()}
        assert set(cells) == set(expected), dimension
        for cell, row in cells.items():
            for name in table.columns[2:]:
                assert row[name] == expected[cell][name], (dimension, cell, name)
                assert "None" not in str(row[name]) and "nan" not in str(row[name])


def shown(figures: dict, names: list[str]) -> dict:
    """A row of figures as the page's tables show it: counts as numbers, each figure with
    its denominator and interval (or why it has none), from the CLI's JSON."""
    return {**flat(figures), **text_row(figures, [n for n in names if n not in ("n", "no_answer")])}


def test_no_grounding_dataset_offers_the_grounding_ones(app_db):
    db = store.connect(app_db)
    import_bytes(db, b'{"prompt": "p", "chosen": "a", "rejected": "b"}\n', "pairs.jsonl",
                 dataset="pairs")
    at = open_page({"dataset": "pairs"})
    assert any("Pick a grounding dataset" in i.value for i in at.info)
    at.button(key="rag_use_0").click().run()
    assert at.session_state["dataset"] == "museum"
    assert at.button(key="rag_run_button").label == "Evaluate 2 model(s)"


@pytest.mark.slow
def test_a_run_without_a_judge_gives_the_cli_figures(app_db):
    at = open_page()
    assert at.multiselect(key="rag_stored").value == ["m", "m2"]
    job = evaluate(at)
    assert job["status"] == "done" and job["options"]["judge"] is None
    assert any("no judge: BERGEN metrics and attribution only" in s.value for s in at.success)
    done = cli("rag-eval", "--dataset", "museum", "--stored", "--json", "--db", str(app_db))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["run_key"] == job["result"]["run_key"]  # the same evaluation
    assert_same_figures(at, report)
    overall = table_with(at, "model", "n", "F1")
    assert "eligibility" not in overall.columns  # judge figures need a judge
    # not evaluated, unknown and unanswered: by id
    scope = table_with(at, "model", "what", "ids")
    rows = {(r["model"], r["what"].split(":")[0]): r["ids"] for _, r in scope.iterrows()}
    assert rows[("(all)", "not annotated")] == "q5"
    assert rows[("m2", "answers for an unknown sample_id (ignored)")] == "nope"
    assert rows[("m2", "questions without an answer (failures)")] == "q2, q3, q4, q6"


@pytest.mark.slow
def test_a_run_with_a_judge_gives_the_cli_figures_and_keeps_no_key(app_db, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeJudgeServer(rule_judge) as server:
        at = open_page()
        at.segmented_control(key="rag_judge_mode").set_value("judge").run()
        assert at.button(key="rag_run_button").disabled  # no connection yet
        at.text_input(key="jd_base_url").input(server.base_url).run()
        at.text_input(key="jd_model").input("judge").run()
        at.selectbox(key="jd_key_from").select("env").run()
        assert not at.exception, at.exception
        assert not at.button(key="rag_run_button").disabled
        job = evaluate(at)
        assert job["status"] == "done", job["error"]
        assert all(r["headers"].get("authorization") == f"Bearer {SECRET}"
                   for r in server.chat_requests())
        sent = len(server.chat_requests())
        done = cli("rag-eval", "--dataset", "museum", "--stored", "--judge-base-url",
                   server.base_url, "--judge-model", "judge", "--max-tokens",
                   str(job["options"]["judge"]["max_tokens"]), "--concurrency",
                   str(job["options"]["judge"]["concurrency"]), "--json", "--db", str(app_db))
        assert done.returncode == 0, done.stderr
        assert len(server.chat_requests()) == sent  # the CLI found every answer cached
    report = json.loads(done.stdout)
    assert report["run_key"] == job["result"]["run_key"]
    assert report["overall"]["m"]["eligibility"] == 0.6  # hand-computed in test_rag_cli
    assert_same_figures(at, report)
    overall = table_with(at, "model", "eligibility", "raf")
    assert overall.loc[overall["model"] == "m", "raf"].item().startswith("20.0 % (1/5) CI ")
    assert SECRET.encode() not in app_db.read_bytes()
    assert SECRET not in json.dumps(job["options"]) + json.dumps(job["result"])


@pytest.mark.slow
def test_every_figure_has_its_definition_next_to_it(app_db):
    at = open_page()
    evaluate(at)
    shown = "\n".join(m.value for m in at.markdown)
    for name in ("M", "EM", "F1", "Precision", "Recall", "Recall_char3gram", "Rouge-1",
                 "Rouge-2", "Rouge-L", "attribution_precision", "attribution_recall",
                 "attribution_f1"):
        assert f"**{TITLES[name]}**: {DEFINITIONS[name]}" in shown, name
    assert "## 5. RAG answer evaluation" in shown  # docs/benchmarks.md §5 beside them
    help_texts = json.dumps([str(d.proto) for d in at.dataframe])
    assert json.dumps(DEFINITIONS["F1"])[1:-1][:60] in help_texts  # column tooltips


@pytest.mark.slow
def test_uploads_several_models_bergen_files_and_refusals(app_db):
    at = open_page()
    at.multiselect(key="rag_stored").set_value([]).run()
    assert at.button(key="rag_run_button").disabled
    several = answers_jsonl("a", {"q1": ANSWERS_M["q1"]}) + answers_jsonl("b", {"q2": "x"})
    plain = "".join(json.dumps({"sample_id": k, "answer": v}) + "\n" for k, v in ANSWERS_M.items())
    bergen = json.dumps([{"q_id": "1", "question": "?", "response": "Paris is the capital",
                          "label": ["Paris"]}, {"q_id": "2", "response": "x", "label": []}])
    at.file_uploader(key="rag_upload").upload("two.jsonl", several.encode(), "application/json")
    at.file_uploader(key="rag_upload").upload("qwen.jsonl", plain.encode(), "application/json")
    at.file_uploader(key="rag_upload").upload("eval_dev_out.json", bergen.encode(),
                                              "application/json")
    at.run()
    assert not at.exception, at.exception
    assert at.button(key="rag_run_button").label == "Evaluate 3 model(s)"
    files = table_with(at, "file", "questions", "scored")
    assert files["file"].tolist() == ["eval_dev_out.json"] and files["M"].item() == 1.0
    done = cli("answer-metrics", str(_write(app_db.parent / "eval_dev_out.json", bergen)), "--json")
    assert files["F1"].item() == pytest.approx(json.loads(done.stdout)["mean"]["F1"])
    job = evaluate(at)
    assert job["options"]["models"] == ["a", "b", "qwen"]
    assert job["options"]["sources"]["qwen"] == "qwen.jsonl"
    # a bad file: refused with file, line and field, and the run waits
    at.file_uploader(key="rag_upload").upload("bad.jsonl", b'{"sample_id": "q1", "answer": "x"}\n'
                                              b'{"sample_id": "q2"}\n', "application/json")
    at.run()
    assert any("Not used" in e.value for e in at.error)
    assert "bad.jsonl line 2: field 'answer' is missing" in html_text(at)
    assert at.button(key="rag_run_button").disabled
    runs_before = len(rag_store.list_runs(store.connect(app_db)))
    assert runs_before == 1


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
def test_failures_open_the_answer_beside_the_human_one(app_db):
    with FakeJudgeServer(rule_judge) as server:
        at = open_page()
        at.segmented_control(key="rag_judge_mode").set_value("judge").run()
        at.text_input(key="jd_base_url").input(server.base_url).run()
        at.text_input(key="jd_model").input("judge").run()
        job = evaluate(at)
    run_key = job["result"]["run_key"]
    sentences = table_with(at, "sentence", "all passages", "relevant passages", "open")
    dogs = sentences[sentences["sentence"] == "Dogs are welcome."]
    assert dogs["all passages"].item() == "unsupported"
    link = dogs["open"].item()
    assert link.startswith("annotate?") and f"rag_run={run_key}" in link
    assert "item=q2" in link and "model=m" in link and "sentence=2" in link
    failing = table_with(at, "model", "question", "failed", "open")
    q4 = failing[(failing["model"] == "m") & (failing["id"] == "q4")]
    assert "missed deflection" in q4["failed"].item() and "not eligible" in q4["failed"].item()
    m2 = failing[failing["model"] == "m2"]
    assert set(m2["id"]) >= {"q2", "q3", "q4", "q6"}  # unanswered: failures
    # the annotate page shows the answer beside the human one, the sentence marked
    ann = open_app("app_pages/annotate.py", {"dataset": "museum", "item": "q2", "rag_run": run_key,
                                         "model": "m", "sentence": "2"})
    drawn = "\n".join(h.value for h in ann.get("html"))
    assert '<mark class="nw-current" style="background:#ffe08a">Dogs are welcome.</mark>' in drawn
    assert "Tickets cost 12 euros " in drawn  # the human answer
    assert any("Minor Issue" in m.value for m in ann.markdown)
    panel = [e for e in ann.get("expander") if "RAG run answer" in e.label]
    assert panel and "model m" in panel[0].label
    sentence_rows = [d.value for d in ann.dataframe if "relevant passages" in d.value.columns][0]
    assert sentence_rows["all passages"].tolist() == ["supported", "unsupported"]
    # without rag_run the annotate page has no panel
    ann.query_params.pop("rag_run")
    ann.run()
    assert not [e for e in ann.get("expander") if "RAG run answer" in e.label]


@pytest.mark.slow
def test_cancel_keeps_the_answers_and_a_new_run_resumes(app_db):
    with FakeJudgeServer(rule_judge, delay=0.4) as server:
        at = open_page()
        at.segmented_control(key="rag_judge_mode").set_value("judge").run()
        at.text_input(key="jd_base_url").input(server.base_url).run()
        at.text_input(key="jd_model").input("judge").run()
        at.number_input(key="jd_concurrency").set_value(1).run()
        at.button(key="rag_run_button").click().run()
        db = store.connect(app_db)
        job = RUNNER.latest(db, "rag", "museum")
        deadline = time.time() + 30
        while not server.chat_requests() and time.time() < deadline:
            time.sleep(0.05)
        at.run()
        cancel = [b for b in at.button if b.label == "Cancel"]
        assert cancel, "no Cancel button while the job runs"
        cancel[0].click().run()
        RUNNER.join(int(job["id"]), timeout=60)
        stopped = RUNNER.get(db, int(job["id"]))
        assert stopped["status"] == "cancelled"
        answered = len(server.chat_requests())
        at.run()
        assert any("Cancelled after" in w.value for w in at.warning)
        server.delay = 0.0
        again = evaluate(at)
        assert again["status"] == "done"
        assert again["result"]["calls"]["cached"] >= answered - 1  # the first run's answers kept


@pytest.mark.slow
def test_the_failures_of_a_new_run_show_its_models(app_db):
    """A run of model m looked at, then a run of m and m2: the failures show both models
    (the Models picker kept the first run's choice, and m2's failures were not listed)."""
    from components.rag.inputs import STORED_KEY  # noqa: PLC0415

    with FakeJudgeServer(rule_judge) as server:
        at = open_page()
        at.segmented_control(key="rag_judge_mode").set_value("judge").run()
        at.text_input(key="jd_base_url").input(server.base_url).run()
        at.text_input(key="jd_model").input("judge").run()
        at.multiselect(key=STORED_KEY).set_value(["m"]).run()
        evaluate(at)
        assert set(table_with(at, "model", "question", "failed", "open")["model"]) == {"m"}
        at.multiselect(key=STORED_KEY).set_value(["m", "m2"]).run()
        evaluate(at)
    assert set(table_with(at, "model", "question", "failed", "open")["model"]) == {"m", "m2"}
