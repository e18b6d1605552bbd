"""Generating RAG answers (needlework/rag/generate.py) against real HTTP servers on
127.0.0.1: the prompt in GaRAGe's generation setting, the answers stored as an answer set,
cached and resumable, the ``rag-generate`` job and CLI, then ``rag-eval --stored`` with the
rules judge; the grounding-quality breakdown; ``answer-metrics``' words on missing
answers; the RAG failure's link to the annotate page (its cursor on the cited passage)."""

from __future__ import annotations

import json
import os

import pytest
from streamlit.testing.v1 import AppTest

import store
from components.rag.failures import annotate_params
from needlework.actions import positions
from needlework.datasets.transfer import import_bytes
from needlework.formats.garage import DEFLECTION
from needlework.jobs.runner import RUNNER
from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeCancelled
from needlework.judges.local import RULES_MODEL
from needlework.judges.serve import free_port
from needlework.rag.answers import AnswerSet, stored_set
from needlework.rag.failures import cited_passage
from needlework.rag.generate import (
    KIND,
    GenerateError,
    GenerateSpec,
    answer_form,
    generate,
    latest_generate_job,
    read_answer,
    start_generate_job,
)
from needlework.rag.generate_prompt import GENERATION_PROMPT_VERSION, generation_messages
from needlework.rag.metrics import breakdown
from needlework.rag.questions import (
    GROUNDING_BINS,
    NOT_SET,
    grounding_quality,
    load_questions,
)
from needlework.rag.run import RagEvalSpec, evaluate
from store import rag as rag_store
from tests.cli_here import run as cli
from tests.conftest import ROOT, garage_records, jsonl
from tests.judges_fixtures import FakeJudgeServer
from tests.page_keys import TAB, as_tab, key_data
from tests.rag_fixtures import ANSWERS_M, ANSWERS_M2, DEFLECT, RECORDS, answers_jsonl, dataset_bytes

LOW, MEDIUM, HIGH = GROUNDING_BINS
SECRET = "sk-test-GEN-SECRET-42"
#: what the fake model answers to each museum question (read from the prompt)
REPLIES = {
    "When does the museum open?": "The museum opens at 9 am [cite_1].",
    "What does a ticket cost?": "Tickets cost 12 euros [cite_1]. Children enter free [cite_2].",
    "What soup is on the menu today?": DEFLECT,
    "Which soup did the cafe serve yesterday?": "The cafe serves soup.",
    "Who won the race?": "Somebody won [cite_3].",  # q5 has one passage
    "When does the shop close?": "  ",
}
KEYS = {r["question"]: r["sample_id"] for r in RECORDS}


def model_reply(body: dict) -> str:
    """The fake model: reads the question from the generation prompt."""
    text = body["messages"][-1]["content"]
    question = text.split("[User question]\n", 1)[1].split("\n", 1)[0]
    return REPLIES[question]


@pytest.fixture
def museum(tmp_path):
    path = tmp_path / "nw.db"
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    return path, db


# -- the prompt, the bins, the pieces ---------------------------------------------------------


def test_the_prompt_gives_the_question_its_date_and_every_passage_with_its_date(museum) -> None:
    _, db = museum
    q1 = next(q for q in load_questions(db, "museum") if q.key == "q1")
    (message,) = generation_messages(q1)
    text = message["content"]
    assert message["role"] == "user"
    assert f"When does the museum open?\n(asked on {RECORDS[0]['question_date']})" in text
    for number, passage in enumerate(RECORDS[0]["grounding"], start=1):
        assert f"[cite_{number}] (dated {passage['date']}, web)\n{passage[f'cite_{number}']}" in text
    assert f"reply with exactly this sentence and nothing else: {DEFLECTION}" in text
    assert "[cite_2]" in text.split("[User question]")[0]  # the marker form asked for


@pytest.mark.parametrize(("labels", "expected"), [
    (["irrelevant", "irrelevant", "irrelevant"], LOW),
    (["ANSWER-THE-QUESTION", "irrelevant", "irrelevant", "irrelevant"], LOW),  # 25 %
    (["OUTDATED", "irrelevant", "irrelevant"], MEDIUM),  # 1 of 3: 33.3 %, OUTDATED is relevant
    (["UNKNOWN"] * 32 + ["irrelevant"] * 68, LOW),  # 32 %
    (["UNKNOWN"] * 33 + ["irrelevant"] * 67, MEDIUM),  # 33 %: the lower edge of medium
    (["RELATED-INFORMATION"] * 65 + ["irrelevant"] * 35, MEDIUM),  # 65 %
    (["RELATED-INFORMATION"] * 66 + ["irrelevant"] * 34, HIGH),  # 66 %
    (["ANSWER-THE-QUESTION", "RELATED-INFORMATION", "irrelevant"], HIGH),  # 2 of 3
    (["ANSWER-THE-QUESTION", None, None, None], HIGH),  # unlabelled passages not counted
    ([None, None], NOT_SET),
    ([], NOT_SET),
])
def test_grounding_quality_bins_the_share_of_relevant_passages(labels, expected) -> None:
    assert grounding_quality(dict(enumerate(labels, start=1))) == expected


def test_the_breakdown_by_grounding_quality_sits_beside_the_others(museum) -> None:
    """q1 (2 of 3 relevant), q2 (2 of 2), q4 (2 of 2), q6 (1 of 1): high; q3 (1 of 2): medium;
    q5 is not evaluated. Bins in GaRAGe's order, each with its n."""
    _, db = museum
    report = evaluate(db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),)))
    parts = report.summary["breakdowns"]["m"]["grounding"]
    assert list(parts) == [MEDIUM, HIGH]
    assert (parts[MEDIUM]["n"], parts[HIGH]["n"]) == (1, 4)
    assert parts[MEDIUM]["no_answer"] == 0 and parts[HIGH]["no_answer"] == 0
    rows = {r["item_key"]: r for r in report.rows}
    assert rows["q3"]["dims"]["grounding"] == MEDIUM
    by_hand = breakdown([rows[k] for k in ("q1", "q2", "q6")])["grounding"]
    assert list(by_hand) == [HIGH] and by_hand[HIGH]["n"] == 3


def test_answer_form_and_blank_answers() -> None:
    assert read_answer("  An answer [cite_1]. \n").value == "An answer [cite_1]."
    assert not read_answer(" \n").valid


# -- generate: answers stored, cached, resumable -----------------------------------------------


def _spec(server: FakeJudgeServer, **options) -> GenerateSpec:
    conn = Connection(server.base_url, options.pop("model", "judge"), key_env=options.pop("key_env", None),
                      concurrency=options.pop("concurrency", 2), max_tokens=256)
    return GenerateSpec("museum", conn, **options)


def test_generate_stores_the_answers_as_a_set_and_a_rerun_sends_nothing(museum) -> None:
    _, db = museum
    with FakeJudgeServer(model_reply) as server:
        report = generate(db, _spec(server))
        sent = len(server.chat_requests())
        again = generate(db, _spec(server))
        assert len(server.chat_requests()) == sent == 6  # the re-run: all from the cache
    assert report.answer_set.model == "judge"
    expected = {KEYS[q]: a.strip() for q, a in REPLIES.items()}
    assert report.answer_set.answers == expected == again.answer_set.answers
    (stored,) = rag_store.answer_sets(db, "museum")
    assert stored["model"] == "judge" and stored["answers"] == expected
    assert stored["source"].startswith("generated by judge at http://127.0.0.1:")
    assert GENERATION_PROMPT_VERSION in stored["source"]
    summary = report.summary
    assert summary["answered"] == 6 and summary["not_answered"] == []
    assert summary["form"] == {"deflections": ["q3"], "uncited": ["q4"],
                               "bad_citations": ["q5"], "blank": ["q6"], "non_answers": []}
    assert summary["non_answers"]["ids"] == ["q6"]  # blank: no claim
    assert summary["calls"]["sent"] == 6 and again.summary["calls"]["sent"] == 0
    assert again.summary["calls"]["cached"] == 6 and again.summary["replaced"] is True
    assert summary["generator"]["model"] == "judge"


def test_a_cancelled_run_stores_nothing_and_the_next_one_resumes(museum) -> None:
    _, db = museum
    with FakeJudgeServer(model_reply) as server:
        with pytest.raises(JudgeCancelled):
            generate(db, _spec(server, concurrency=1),
                     should_stop=lambda: len(server.chat_requests()) >= 2)
        assert len(server.chat_requests()) == 2
        assert rag_store.answer_sets(db, "museum") == []  # no half set
        seen: list[tuple[int, int]] = []
        report = generate(db, _spec(server, concurrency=1),
                          progress=lambda done, total: seen.append((done, total)))
        assert len(server.chat_requests()) == 6  # only the four not answered before
    assert report.summary["calls"] == {**report.summary["calls"], "cached": 2, "sent": 4}
    assert seen[0] == (2, 6) and seen[-1] == (6, 6)


def test_a_refused_question_gets_no_answer_and_is_listed(museum) -> None:
    """A 400 for one prompt: that question has no answer (listed with the endpoint's
    sentence, counted refused, stored with the set as failed), the others do; evaluated,
    it is left out of the model's figures, not counted as missing."""
    _, db = museum
    with FakeJudgeServer(model_reply, statuses=[400]) as server:
        report = generate(db, _spec(server, concurrency=1, name="refused", limit=3))
    assert [m["item_key"] for m in report.summary["not_answered"]] == ["q1"]
    assert report.summary["not_answered"][0]["reason"].startswith("no answer (refused): ")
    assert report.summary["failed"] == {"refused": 1, "timed_out": 0, "failed": 0}
    assert set(report.answer_set.answers) == {"q2", "q3"}
    assert report.summary["questions"] == {"total": 6, "asked": 3}
    stored = next(r for r in rag_store.answer_sets(db, "museum") if r["model"] == "refused")
    assert list(stored["marks"]["failed"]) == ["q1"]
    cov = evaluate(db, RagEvalSpec("museum", (stored_set(stored),)))
    assert cov.summary["coverage"]["refused"]["missing_ids"] == ["q4", "q6"]
    assert cov.summary["coverage"]["refused"]["failed_ids"] == ["q1"]
    assert cov.summary["overall"]["refused"]["n"] == 4  # q1 left out of the 5 evaluated


def test_the_rules_judge_and_a_bad_limit_are_refused(museum) -> None:
    _, db = museum
    rules = Connection("http://127.0.0.1:9/v1", RULES_MODEL, key_env=None)
    with pytest.raises(GenerateError, match="cannot write answers"):
        generate(db, GenerateSpec("museum", rules))
    other = Connection("http://127.0.0.1:9/v1", "m", key_env=None)
    with pytest.raises(GenerateError, match="at least 1"):
        generate(db, GenerateSpec("museum", other, limit=0))


def test_answer_form_counts_only_what_the_answers_say(museum) -> None:
    _, db = museum
    questions = load_questions(db, "museum")
    form = answer_form(questions, {"q1": "See [cite_2] and [cite_4].", "q2": DEFLECT.upper()})
    assert form == {"deflections": ["q2"], "uncited": [], "bad_citations": ["q1"], "blank": [],
                    "non_answers": []}


# -- the job ------------------------------------------------------------------------------------


def test_the_job_runs_in_the_runner_and_never_stores_the_key(museum, monkeypatch) -> None:
    path, db = museum
    monkeypatch.setenv("NW_GEN_KEY", SECRET)
    with FakeJudgeServer(model_reply, require_key=SECRET) as server:
        job_id = start_generate_job(db, path, _spec(server, key_env="NW_GEN_KEY"))
        RUNNER.join(job_id, timeout=60)
    job = RUNNER.get(db, job_id)
    assert job["kind"] == KIND and job["status"] == "done", job.get("error")
    assert job["result"]["answered"] == 6 and job["unit"] == "answers"
    assert latest_generate_job(db, "museum")["id"] == job_id
    assert job["options"]["generator"]["key_env"] == "NW_GEN_KEY"
    db.conn.close()
    for file in path.parent.iterdir():  # the database, its WAL and anything beside it
        assert SECRET.encode() not in file.read_bytes(), file.name


def test_a_job_without_its_connection_fails_in_one_line(museum) -> None:
    path, db = museum
    job = RUNNER.run(path, RUNNER.submit(db, KIND, "museum", "judge", {}))
    assert job["status"] == "failed" and "start it again from the page" in job["error"]


# -- the CLI: rag-generate, then rag-eval --stored ---------------------------------------------


def test_rag_generate_then_rag_eval_with_the_rules_judge(museum) -> None:
    path, _ = museum
    with FakeJudgeServer(model_reply) as server:
        done = cli(["rag-generate", "--dataset", "museum", "--base-url", server.base_url,
                    "--model", "judge", "--name", "fake", "--key-env", "", "--no-progress",
                    "--db", str(path)])
        assert done.returncode == 0, done.stderr
        again = cli(["rag-generate", "--dataset", "museum", "--base-url", server.base_url,
                     "--model", "judge", "--name", "fake", "--key-env", "", "--json",
                     "--no-progress", "--db", str(path)])
        assert len(server.chat_requests()) == 6
    lines = done.stdout.splitlines()
    assert lines[0].startswith("museum: 6 of 6 questions asked of judge at http://127.0.0.1:")
    assert lines[1] == ("answers: 6 of 6; 0 without one (listed on stderr), 1 blank, "
                        "1 deflections, 1 citing no passage, 1 citing a passage the question "
                        "does not have, 1 not answers (no claim, blank included)")
    assert lines[2].startswith('1 of 6 answers are not answers: ""')
    assert lines[3] == ("calls: 6 sent, 0 from the cache, 0 refused, 0 timed out, 0 failed "
                        "(no answer, not cached), 0 too long")
    assert json.loads(again.stdout)["calls"]["cached"] == 6
    evaluated = cli(["rag-eval", "--dataset", "museum", "--stored", "--rules-judge", "--json",
                     "--no-progress", "--db", str(path)])
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads(evaluated.stdout)
    figures = report["overall"]["fake"]
    assert figures["n"] == 5 and figures["judged"]
    assert all(figures[name] is not None for name in ("eligibility", "factuality", "uraf", "raf",
                                                      "deflection_tpr", "deflection_fpr"))
    assert figures["deflection_tpr"] == 0.5  # q3 deflects, q4 does not
    assert list(report["breakdowns"]["fake"]["grounding"]) == [MEDIUM, HIGH]


@pytest.mark.parametrize(("args", "message"), [
    (["--dataset", "museum"], "give --base-url URL and --model M"),
    (["--dataset", "museum", "--demo-judge", "--model", "m"], "not both"),
    (["--dataset", "museum", "--base-url", "http://x/v1", "--model", "m", "--max-tokens",
      "100000000"], "--max-tokens must be between 1 and 32768"),
    (["--dataset", "nope", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
     "no dataset 'nope'"),
])
def test_rag_generate_refuses_in_one_line(museum, args, message) -> None:
    path, _ = museum
    done = cli(["rag-generate", *args, "--db", str(path)])
    assert done.returncode in (1, 2) and message in done.stderr and done.stdout == ""


@pytest.mark.slow
def test_the_demo_grounding_set_with_the_demo_judge_then_the_rules_judge(tmp_path, monkeypatch,
                                                                        demo_models_dir) -> None:
    """Acceptance: rag-generate with the local demo judge (offline), rag-eval --stored with
    the rules judge: every figure of the demo judge's answers beside the demo's two sets;
    generating again sends no request."""
    from needlework.seeding.demo import seed_demo  # noqa: PLC0415

    path = tmp_path / "demo.db"
    db = store.connect(path)
    seed_demo(db)
    db.conn.close()
    monkeypatch.chdir(ROOT)  # data/demo-judge
    monkeypatch.setenv("NEEDLEWORK_DEMO_JUDGE_PORT", str(free_port()))
    args = ["rag-generate", "--dataset", "demo-grounding", "--demo-judge", "--json",
            "--no-progress", "--db", str(path)]
    first = cli(args)
    assert first.returncode == 0, first.stderr
    assert "its answers are poor" in first.stderr
    summary = json.loads(first.stdout)
    assert summary["model"] == "demo-judge" and summary["questions"]["asked"] == 16
    assert summary["answered"] + len(summary["not_answered"]) == 16
    second = json.loads(cli(args).stdout)
    assert second["calls"]["sent"] == 0 and second["calls"]["cached"] == 16
    done = cli(["rag-eval", "--dataset", "demo-grounding", "--stored", "--rules-judge", "--json",
                "--no-progress", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["overall"]) == {"demo-careful", "demo-hasty", "demo-judge"}
    for model, figures in report["overall"].items():
        assert figures["judged"] and figures["n"] == 13, model
        for name in ("eligibility", "unadjusted_factuality", "factuality", "uraf", "raf",
                     "deflection_tpr", "deflection_fpr", "llmeval"):
            assert figures[name] is not None, (model, name)
        assert set(report["breakdowns"][model]["grounding"]) <= set(GROUNDING_BINS)


# -- answer-metrics says how missing answers count ------------------------------------------------


def test_answer_metrics_text_says_how_missing_answers_are_scored(museum, tmp_path) -> None:
    path, _ = museum
    answers = tmp_path / "answers.jsonl"
    answers.write_text(answers_jsonl("m", ANSWERS_M) + answers_jsonl("m2", ANSWERS_M2))
    done = cli(["answer-metrics", str(answers), "--dataset", "museum", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "m: means over the 5 questions with a human answer; every one answered" in lines
    assert ("m2: means over the 5 questions with a human answer; 4 without an answer "
            "(q2, q3, q4, q6): each scored as the empty answer (0 on every metric) and counted "
            "in the means; 1 answer(s) for unknown ids ignored") in lines


# -- the failure's link to the annotate page ------------------------------------------------------


def test_the_link_names_the_passage_the_failing_sentence_cites() -> None:
    row = {"model": "m", "item_key": "q1", "labels": {"1": None, "2": None, "3": None},
           "answer": "A [cite_3]. B [cite_2]. C [cite_9].",
           "sentences": [{"text": "A [cite_3]."}, {"text": "B [cite_2]."}, {"text": "C [cite_9]."}]}
    assert cited_passage(row, 1) == 2
    assert cited_passage(row, 2) == 3  # cites no passage that exists: the answer's first
    assert cited_passage(row) == 3
    assert cited_passage({**row, "answer": "No citation.", "sentences": []}) is None
    params = annotate_params("museum", "RUN", row, 1)
    assert params == {"dataset": "museum", "item": "q1", "rag_run": "RUN", "model": "m",
                      "sentence": "2", "passage": "2"}


@pytest.fixture
def ground_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(3)), "ground.jsonl")
    return db


def test_the_annotate_page_opens_with_its_cursor_on_the_linked_passage(ground_db) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["annotator"] = "ana"
    query = {"dataset": "ground", "item": "sample-2", "passage": "3"}
    at.query_params.update(query)
    at.run()
    at.switch_page("app_pages/annotate.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    assert key_data(at, "annotate")["item"] == "sample-2"
    assert key_data(at, "annotate")["cursor"] == 3
    assert "passage" not in at.query_params  # read once
    as_tab(at)  # the browser says which tab it is: the tab is placed there, cursor and all
    held = positions.get(store.connect(os.environ["NEEDLEWORK_DB"]), "", TAB, "annotate", "ground")
    assert (held.item, held.cursor) == ("sample-2", 3)
    assert key_data(at, "annotate")["cursor"] == 3


# -- the page: Generate answers, then Evaluate these answers --------------------------------------


@pytest.fixture
def page_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    rag_store.save_answer_set(db, "museum", "m", ANSWERS_M, source="m.jsonl")
    db.conn.close()
    return path


@pytest.mark.slow
def test_the_page_generates_an_answer_set_then_evaluates_it(page_db) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.query_params.update({"dataset": "museum"})
    at.run()
    at.switch_page("app_pages/rag.py")
    at.query_params.update({"dataset": "museum"})
    at.run()
    assert not at.exception, at.exception
    at.segmented_control(key="rag_task").set_value("generate").run()
    assert not at.exception, at.exception
    assert at.button(key="rag_gen_button").disabled  # no model yet
    with FakeJudgeServer(model_reply) as server:
        at.text_input(key="jd_base_url").input(server.base_url).run()
        at.text_input(key="jd_model").input("judge").run()
        at.text_input(key="rag_gen_name").input("fake-model").run()
        at.button(key="rag_gen_button").click().run()
        db = store.connect(page_db)
        job = latest_generate_job(db, "museum")
        assert job is not None
        RUNNER.join(int(job["id"]), timeout=120)
        for _ in range(3):  # the page reruns once the fragment sees the job finished
            at.run()
        assert len(server.chat_requests()) == 6
    assert not at.exception, at.exception
    assert any("6 of 6 questions answered by judge, stored as the answer set fake-model"
               in s.value.replace("\\", "") for s in at.success)  # label() escapes Markdown
    answers = next(d.value for d in at.dataframe if "answer" in d.value.columns)
    assert dict(zip(answers["id"], answers["answer"], strict=True)) == \
        {KEYS[q]: a.strip() for q, a in REPLIES.items()}
    at.button(key="rag_gen_evaluate").click().run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="rag_task").value == "evaluate"
    assert set(at.multiselect(key="rag_stored").value) == {"m", "fake-model"}
    assert at.button(key="rag_run_button").label == "Evaluate 2 model(s)"


def test_a_refused_temperature_is_stored_as_the_providers_default(museum) -> None:
    """The answer set's source says what was sent: an endpoint that refused temperature
    answered with its own default, never "temperature 0" (issue 59, point 5)."""
    path, db = museum
    with FakeJudgeServer(model_reply, refuse="temperature") as server:
        report = generate(db, _spec(server, name="no-temp"))
        done = cli(["rag-generate", "--dataset", "museum", "--base-url", server.base_url,
                    "--model", "judge", "--name", "no-temp-cli", "--key-env", "", "--json",
                    "--no-progress", "--db", str(path)])
        assert done.returncode == 0, done.stderr
        sent = [r["body"] for r in server.chat_requests()]
    assert sent and "temperature" not in sent[-1]
    stored = {r["model"]: r["source"] for r in rag_store.answer_sets(db, "museum")}
    for source in (report.answer_set.source, report.summary["source"], stored["no-temp"],
                   stored["no-temp-cli"], json.loads(done.stdout)["source"]):
        assert "temperature: provider default (refused 0)" in source, source
        assert "temperature 0" not in source, source
    # one that takes it: what was sent (another model: refusals are remembered per
    # endpoint and model, and the new server may get the port the first one had)
    with FakeJudgeServer(model_reply, models=("judge-2",), model="judge-2") as server:
        plain = generate(db, _spec(server, name="plain", limit=1, model="judge-2"))
    assert "temperature 0, max tokens 256)" in plain.answer_set.source
