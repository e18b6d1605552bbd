"""Judges for today's models (issue 31, point 1): an endpoint that refuses ``max_tokens``
(OpenAI's reasoning models take ``max_completion_tokens``) and one that reasons first,
in ``<think>`` blocks or a ``reasoning_content`` field. Both give valid verdicts through
the real ``openai`` client against servers on 127.0.0.1, and the reasoning is kept apart
from the answer, stored, and never parsed."""

from __future__ import annotations

import json

import pytest

from needlework.judges.client import JudgeClient, check_connection, split_reasoning
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge
from needlework.judges.errors import JudgeError
from store import connect
from tests.judges_fixtures import FakeJudgeServer, last_user_text
from tests.test_judges_engine import BLOCK, pairs, picks_good


@pytest.fixture
def db():
    database = connect(":memory:")
    yield database
    database.conn.close()


def _conn(server, **kw) -> Connection:
    return Connection(server.base_url, "judge", key_env=None, max_retries=0, **kw)


def test_an_endpoint_refusing_max_tokens_is_asked_with_max_completion_tokens(db):
    with FakeJudgeServer(picks_good, refuse="max_tokens") as server:
        run = run_judge(db, _conn(server, concurrency=1), pairs(), "selection", dataset="t")
        bodies = [r["body"] for r in server.chat_requests()]
    assert run.summary["accuracy"] == 1.0 and run.summary["invalid_rate"] == 0.0
    # the first request is refused once; every later one goes under the other name
    assert "max_tokens" in bodies[0] and all("max_completion_tokens" in b for b in bodies[1:])
    assert sum("max_tokens" in b for b in bodies) == 1
    assert all(b.get("max_completion_tokens") == 512 for b in bodies[1:])


def test_the_name_can_be_set_per_connection_and_a_refusal_then_says_why(db):
    with FakeJudgeServer(picks_good, refuse="max_tokens") as server:
        client = JudgeClient(_conn(server, token_param="max_completion_tokens"))
        assert "[[" in client.complete([{"role": "user", "content": "hi"}]).text
        assert "max_tokens" not in server.chat_requests()[0]["body"]
        fixed = JudgeClient(_conn(server, token_param="max_tokens"))
        with pytest.raises(JudgeError, match="max_tokens") as refused:
            fixed.complete([{"role": "user", "content": "hi"}])
        assert refused.value.kind == "bad_request"
        assert check_connection(_conn(server)).ok  # auto: the probe switches too
    with pytest.raises(ValueError, match="token parameter"):
        _conn(server, token_param="max_new_tokens")


def _thinking(body: dict) -> str | dict:
    """A reasoning model: thinks aloud (naming the wrong response on the way), then answers."""
    good = next(label for label, text in BLOCK.findall(last_user_text(body)) if "good" in text)
    wrong = "B" if good == "A" else "A"
    if "Question 1?" in last_user_text(body):  # reasoning in its own field, as vLLM sends it
        return {"content": f"[[{good}]]",
                "reasoning_content": f"Maybe [[{wrong}]]? No: the kind one is {good}."}
    return f"<think>\nFirst guess [[{wrong}]]. Reading again, {good} is kind.\n</think>\n\n[[{good}]]"


def test_reasoning_in_think_blocks_or_its_own_field_is_kept_apart_and_never_parsed(db):
    with FakeJudgeServer(_thinking) as server:
        run = run_judge(db, _conn(server), pairs(), "selection", dataset="t", order="rotations")
    # the wrong label named while thinking is never read as the verdict
    assert run.summary["accuracy"] == 1.0 and run.summary["invalid_rate"] == 0.0
    rows = db.execute("select raw, reasoning from judge_calls").fetchall()
    assert len(rows) == 6
    for raw, reasoning in rows:
        assert "<think>" not in raw and raw.startswith("[[") and raw.endswith("]]")
        assert reasoning and ("First guess" in reasoning or "Maybe" in reasoning)
    # a re-run reads the cache (the server is gone: a request would fail), same verdicts
    rerun = run_judge(db, _conn(server), pairs(), "selection", dataset="t", order="rotations")
    assert rerun.summary["accuracy"] == 1.0 and rerun.summary["invalid_rate"] == 0.0


@pytest.mark.parametrize(("text", "answer", "reasoning"), [
    ("[[A]]", "[[A]]", None),
    ("<think>a</think>[[B]]", "[[B]]", "a"),
    ("<THINK>\n one \n</THINK> x <think>two</think> [[A]] ", "x  [[A]]", "one\n\ntwo"),
    ("<think>cut off by the length limit, [[A]] maybe", "", "cut off by the length limit, [[A]] maybe"),
])
def test_split_reasoning(text, answer, reasoning):
    assert split_reasoning(text) == (answer, reasoning)


def _json_only(body: dict) -> str:
    """An endpoint with structured output: answers exactly the schema it was sent."""
    schema = body["response_format"]["json_schema"]["schema"]
    good = next(label for label, text in BLOCK.findall(last_user_text(body)) if "good" in text)
    assert good in schema["properties"]["verdict"]["enum"]
    return json.dumps({"verdict": good})


def test_structured_output_sends_the_schema_and_a_refusing_endpoint_is_asked_in_words(db):
    with FakeJudgeServer(_json_only) as server:
        run = run_judge(db, _conn(server, structured=True), pairs(), "selection", dataset="t")
        bodies = [r["body"] for r in server.chat_requests()]
    assert run.summary["accuracy"] == 1.0 and run.summary["invalid_rate"] == 0.0
    assert all(b["response_format"]["type"] == "json_schema" and
               b["response_format"]["json_schema"]["strict"] is True for b in bodies)
    with FakeJudgeServer(picks_good, refuse="response_format") as words:
        run = run_judge(db, _conn(words, structured=True, concurrency=1), pairs(), "selection",
                        dataset="t2")
        bodies = [r["body"] for r in words.chat_requests()]
    assert run.summary["accuracy"] == 1.0
    assert "response_format" in bodies[0] and not any("response_format" in b for b in bodies[1:])
    # structured output changes answers: its calls are cached apart from the plain ones
    assert _conn(words, structured=True).params() != _conn(words).params()
    assert "structured" not in _conn(words).params()  # earlier cache keys stay valid
