"""The logic under the RAG answers page: which checks an answer failed and which of its
sentences fail (needlework/rag/failures.py), the answer as marked segments
(needlework/rag/marks.py), uploads told apart by content (needlework/rag/uploads.py),
and the ``rag`` job kind run by the job runner (needlework/rag/job.py)."""

from __future__ import annotations

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.formats.errors import FormatError
from needlework.jobs.kinds import KINDS
from needlework.jobs.runner import RUNNER
from needlework.judges.connection import Connection
from needlework.rag import failures as rf
from needlework.rag.answers import AnswerSet
from needlework.rag.job import job_options, latest_rag_job, start_rag_job
from needlework.rag.marks import LABEL_STYLES, answer_segments, citation_segments
from needlework.rag.run import RagEvalSpec
from needlework.rag.sentences import split_sentences
from needlework.rag.uploads import read_upload
from store import rag as rag_store
from tests.judges_fixtures import FakeJudgeServer
from tests.rag_fixtures import ANSWERS_M, dataset_bytes, rule_judge


def verdict(label: str | None) -> dict | None:
    return None if label is None else {"label": label, "rationale": "r", "excerpt": None}


def row(**changes) -> dict:
    base = {"model": "m", "item_key": "q", "question": "Q?", "answered": True, "judged": True,
            "eligible": True, "factual": True, "relevant_factual": True,
            "needs_deflection": False, "deflected": False, "llmeval": 1,
            "sentences": [{"text": "A.", "start": 0, "end": 2, "all": verdict("supported"),
                           "relevant": verdict("supported")}]}
    base.update(changes)
    return base


@pytest.mark.parametrize(("changes", "expected"), [
    ({}, []),
    ({"answered": False}, ["no answer"]),
    ({"answered": False, "judged": False}, ["no answer"]),
    ({"judged": False, "eligible": None}, []),
    ({"eligible": False, "llmeval": 0}, ["not eligible", "LLMeval no"]),
    ({"relevant_factual": False}, ["not factual (relevant)"]),
    ({"needs_deflection": True, "deflected": False}, ["missed deflection"]),
    ({"needs_deflection": True, "deflected": None}, ["missed deflection"]),  # unreadable grade
    ({"needs_deflection": True, "deflected": True}, []),
    ({"deflected": True}, ["false deflection"]),
    ({"deflected": None}, ["false deflection"]),  # unreadable grade on an answerable question
    ({"factual": False, "relevant_factual": False}, ["not factual", "not factual (relevant)"]),
])
def test_answer_failures_follow_the_figures_rules(changes, expected):
    assert rf.answer_failures(row(**changes)) == expected


def test_failing_sentences_include_the_unlabelled_ones():
    sentences = [
        {"text": "A.", "start": 0, "end": 2, "all": verdict("supported"), "relevant": verdict("no_rad")},
        {"text": "B.", "start": 3, "end": 5, "all": verdict("supported"),
         "relevant": verdict("unsupported")},
        {"text": "C.", "start": 6, "end": 8, "all": None, "relevant": None},  # invalid judge answer
        {"text": "D.", "start": 9, "end": 11, "all": verdict("contradictory"),
         "relevant": verdict("contradictory")},
    ]
    r = row(sentences=sentences, factual=False, relevant_factual=False)
    assert rf.failing_sentences(r) == [1, 2, 3]
    assert rf.failing_sentences(row(sentences=sentences, judged=False)) == []
    table = rf.sentence_table([r])
    assert [(s["index"], s["all"], s["relevant"]) for s in table] == [
        (1, "supported", "unsupported"), (2, None, None), (3, "contradictory", "contradictory")]
    assert [e["failures"] for e in rf.failure_table([r, row()])] == [
        ["not factual", "not factual (relevant)"]]


def test_answer_segments_shade_sentences_and_mark_citations():
    answer = "Tickets cost 12 euros [cite_1]. Dogs are welcome [cite_9].\nBye."
    spans = split_sentences(answer)
    sentences = [{"text": s.text, "start": s.start, "end": s.end, "all": verdict(label),
                  "relevant": verdict(label)}
                 for s, label in zip(spans, ["supported", "unsupported", None], strict=True)]
    segments = answer_segments(answer, sentences, "all", n_passages=2, current=1)
    assert "".join(text for text, _, _ in segments) == answer  # nothing lost, nothing added
    assert segments[0] == ("Tickets cost 12 euros ", None, LABEL_STYLES["supported"])
    assert ("[cite_1]", "nw-cite", None) in segments
    assert ("Dogs are welcome ", "nw-current", LABEL_STYLES["unsupported"]) in segments
    assert ("[cite_9]", "nw-current", "background:#ffc9c9") in segments  # no passage 9, outlined
    assert ("Bye.", None, LABEL_STYLES[None]) in segments  # no label: a failure, shown so
    plain = answer_segments(answer, sentences, "all", judged=False)
    assert {style for _, _, style in plain} == {None}
    assert citation_segments("x [cite_3]", None) == [("x ", None, None), ("[cite_3]", "nw-cite", None)]


def test_uploads_are_told_apart_by_content():
    answers = read_upload(b'{"sample_id": "q1", "answer": "a"}\n{"sample_id": "q1", "answer": "b", '
                          b'"model": "other"}\n', "base.jsonl")
    assert answers.kind == "answers" and [s.model for s in answers.sets] == ["base", "other"]
    bergen = read_upload(b'[{"q_id": 1, "response": "Paris", "label": ["Paris"]}]', "out.json")
    assert bergen.kind == "bergen" and bergen.bergen["mean"]["EM"] == 1.0
    with pytest.raises(FormatError, match=r"out\.json record 0 \(line 1\): field 'label' is missing"):
        read_upload(b'[{"q_id": 1, "response": "Paris"}]', "out.json")
    with pytest.raises(FormatError, match="not UTF-8|UTF-8"):
        read_upload(b'{"sample_id": "\xff"}', "bad.jsonl")


@pytest.fixture
def museum(tmp_path):
    path = tmp_path / "rag.db"
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    return path, db


def test_the_rag_kind_runs_in_the_job_runner_and_stores_no_key(museum):
    path, db = museum
    assert KINDS["rag"].unit == "judge calls"
    with FakeJudgeServer(rule_judge) as server:
        from needlework.judges.connection import Secret  # noqa: PLC0415

        conn = Connection(server.base_url, "judge", key_env=None, key=Secret("sk-test-SECRET123"))
        spec = RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M, "m.jsonl"),), conn)
        job_id = start_rag_job(db, path, spec)
        RUNNER.join(job_id, timeout=60)
    job = latest_rag_job(db, "museum")
    assert job["id"] == job_id and job["status"] == "done", job.get("error")
    assert job["done"] == job["total"] == 25  # 5 answers x 5 checks
    assert job["result"]["calls"]["sent"] == 23  # q2 and q6: every passage is relevant, one prompt
    assert job["options"] == job_options(spec)
    assert job["options"]["judge"]["key_in_memory"] is True
    assert job["result"]["overall"]["m"]["eligibility"] == 0.6
    assert rag_store.get_run(db, job["result"]["run_key"])["status"] == "done"
    assert b"sk-test-SECRET123" not in path.read_bytes()


def test_a_judge_that_is_down_fails_the_job_in_one_line(museum):
    path, db = museum
    from tests.judges_fixtures import free_port  # noqa: PLC0415

    conn = Connection(f"http://127.0.0.1:{free_port()}/v1", "judge", key_env=None, max_retries=0)
    job_id = start_rag_job(db, path, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), conn))
    RUNNER.join(job_id, timeout=60)
    job = RUNNER.get(db, job_id)
    assert job["status"] == "failed" and job["error"].startswith("server down")
    assert "\n" not in job["error"]
    with pytest.raises(ValueError, match="no answer sets"):
        start_rag_job(db, path, RagEvalSpec("museum", ()))
