"""Hosted reasoning models with their defaults (issue 48, point 2): the ``judge`` and
``judge-check`` verbs against real local servers (the real ``openai`` client over HTTP)
that refuse ``temperature`` 0 with OpenAI's own HTTP 400 body, refuse ``max_tokens``,
refuse ``reasoning_effort``, or cut every answer off at the length limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import store
from needlework.cli import main
from needlework.judges.cache import connection_key
from needlework.judges.client import JudgeClient
from needlework.judges.connection import REASONING_MAX_TOKENS, Connection
from needlework.judges.engine import run_judge
from tests.judges_fixtures import last_user_text
from tests.judges_hosted_fixtures import HostedJudgeServer
from tests.test_judges_engine import pairs
from tests.test_judges_failures import (
    good_letter,
    item_of,
    judge_args,
    make_pairs,
    right_unless_third,
)
from tests.test_judges_page import app_db, connect, frame, judge_all, open_page  # noqa: F401
from tests.test_judges_page import judge as page_judge


def run_json(server: HostedJudgeServer, db: Path, capsys, *more: str) -> tuple[int, dict]:
    code = main(judge_args(server, db, "--json", *more))
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


@pytest.mark.slow
def test_a_server_refusing_temperature_0_gives_the_same_accuracy_with_no_flag(
        tmp_path: Path, capsys) -> None:
    make_pairs(tmp_path / "plain.db")
    make_pairs(tmp_path / "hosted.db")
    with HostedJudgeServer(right_unless_third) as plain:
        code, takes = run_json(plain, tmp_path / "plain.db", capsys)
    assert code == 0 and takes["provider_defaults"] == []
    with HostedJudgeServer(right_unless_third, reasoning=True) as hosted:
        code, refused = run_json(hosted, tmp_path / "hosted.db", capsys)
        statuses = [r["status"] for r in hosted.requests]
        bodies = [r["body"] for r in hosted.answered()]
        # by hand: 10 items in both orders, items 0, 3, 6 and 9 answered wrong
        right = sum(1 for b in bodies if item_of(last_user_text(b)) % 3 != 0)
        # the same run again: nothing sent (the refusal is remembered, the keys are honest)
        code_again = main(judge_args(hosted, tmp_path / "hosted.db"))
        text = capsys.readouterr().out
        again = len(hosted.requests)
    assert code == 0 and code_again == 0
    assert right == 12 and len(bodies) == 20
    assert refused["accuracy"] == takes["accuracy"] == right / 20
    assert refused["invalid"] == 0 and refused["failed"] == 0
    # one refusal of max_tokens, one of temperature 0, then every prompt once
    assert statuses == [400, 400] + [200] * 20 and again == 22
    assert all("temperature" not in b and b["max_completion_tokens"] == 512 for b in bodies)
    assert refused["provider_defaults"] == [{
        "param": "temperature", "refused": 0.0,
        "words": "temperature: provider default (refused 0)",
        "message": "Unsupported value: 'temperature' does not support 0 with this model. "
                   "Only the default (1) value is supported."}]
    assert refused["params"] == {"temperature": 0.0, "max_tokens": 512}  # as asked
    assert refused["sent_params"] == {"max_tokens": 512}  # as sent
    assert takes["sent_params"] == takes["params"]
    assert "0 requests, 20 from cache" in text
    assert "  temperature: provider default (refused 0)" in text
    # the cached answers are keyed by what was sent (no temperature), not by what was asked
    db = store.connect(tmp_path / "hosted.db")
    params = {r[0] for r in db.execute("select params from judge_calls")}
    assert params == {json.dumps({"max_tokens": 512}, sort_keys=True)}
    assert store.judges.refusals(db, hosted.base_url, "judge") == {"temperature": 0.0}
    db.conn.close()


def test_effective_params_make_an_honest_cache_key() -> None:
    conn = Connection("http://127.0.0.1:9/v1", "m", key_env=None)
    client = JudgeClient(conn, dropped={"temperature": 0.0})
    messages = [{"role": "user", "content": "hi"}]
    assert client.effective_params() == {"max_tokens": 512}
    assert connection_key(conn, messages, client.effective_params()) != \
        connection_key(conn, messages)
    assert client.provider_defaults()[0]["words"] == "temperature: provider default (refused 0)"
    client.close()


def test_judge_check_names_the_parameter_left_to_the_provider(capsys) -> None:
    with HostedJudgeServer(lambda body: "ready", reasoning=True) as hosted:
        code = main(["judge-check", "--base-url", hosted.base_url, "--model", "judge",
                     "--key-env", ""])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("ok: 'judge' at ")
    assert out.rstrip().endswith("; temperature: provider default (refused 0)")


@pytest.mark.slow
def test_reasoning_effort_is_sent_only_when_set_with_room_to_think(tmp_path: Path,
                                                                   capsys) -> None:
    make_pairs(tmp_path / "a.db", n=2)
    make_pairs(tmp_path / "b.db", n=2)
    with HostedJudgeServer(right_unless_third, reasoning=True) as hosted:
        code, summary = run_json(hosted, tmp_path / "a.db", capsys, "--reasoning-effort", "low")
        sent = [r["body"] for r in hosted.answered()]
    assert code == 0 and summary["accuracy"] == 0.5  # item 0 wrong, item 1 right
    assert all(b["reasoning_effort"] == "low" for b in sent)
    assert all(b["max_completion_tokens"] == REASONING_MAX_TOKENS for b in sent)
    assert summary["params"]["reasoning_effort"] == "low"
    assert summary["usage"]["reasoning_tokens"] == 64 * 4
    # an endpoint that does not know the parameter: dropped at once, and said so
    with HostedJudgeServer(right_unless_third, unsupported=("reasoning_effort",)) as plain:
        code, summary = run_json(plain, tmp_path / "b.db", capsys, "--reasoning-effort", "high")
        statuses = [r["status"] for r in plain.requests]
        sent = [r["body"] for r in plain.answered()]
    assert code == 0 and statuses == [400] + [200] * 4
    assert all("reasoning_effort" not in b for b in sent)
    assert [d["words"] for d in summary["provider_defaults"]] == [
        "reasoning_effort: provider default (refused high)"]
    # without the flag nothing is sent
    with HostedJudgeServer(right_unless_third) as plain:
        run_json(plain, tmp_path / "b.db", capsys, "--seed", "1")
        assert all("reasoning_effort" not in r["body"] for r in plain.requests)


def test_an_answer_cut_off_at_the_length_limit_says_so(capsys, tmp_path: Path) -> None:
    db = store.connect(":memory:")
    with HostedJudgeServer(right_unless_third, cut_off=True) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=1, max_tokens=300)
        run = run_judge(db, conn, pairs(2), "selection", dataset="t")
    s = run.summary
    assert s["answered"] == 2 and s["invalid"] == 2 and s["failed"] == 0 and s["cut_off"] == 2
    assert s["accuracy"] == 0.0
    for r in run.results:
        assert r["reason"].startswith("cut off at 300 tokens (64 of them reasoning): raise max "
                                      f"tokens (a reasoning model needs room to think, e.g. "
                                      f"{REASONING_MAX_TOKENS})")
    db.conn.close()
    make_pairs(tmp_path / "c.db", n=2)
    with HostedJudgeServer(right_unless_third, cut_off=True) as server:
        code = main(judge_args(server, tmp_path / "c.db", "--max-tokens", "300"))
    text = capsys.readouterr().out
    assert code == 0
    assert "4 answers cut off at the length limit (300 tokens): raise --max-tokens" in text


def test_a_refusal_read_from_another_thread_is_not_a_failure(tmp_path: Path) -> None:
    """Many requests in flight when temperature is refused: each is sent again without it,
    none is counted as failed, and the accuracy is the full run's."""
    db = store.connect(":memory:")

    def picks_good(body: dict) -> str:
        return f"[[{good_letter(last_user_text(body))}]]"

    with HostedJudgeServer(picks_good, reasoning=True) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=4)
        run = run_judge(db, conn, pairs(12), "selection", dataset="t", order="rotations")
        answered = len(server.answered())
    assert run.summary["failed"] == 0 and run.summary["accuracy"] == 1.0
    assert answered == 24 and run.summary["answered"] == 24
    db.conn.close()


@pytest.mark.slow
def test_the_page_shows_failures_and_provider_defaults_beside_the_figures(app_db):  # noqa: F811
    """The Reward model page against a server that refuses temperature 0 and answers HTTP
    500 to its 4th prompt every time: figures over the 3 answered trials, recounted here."""
    at = open_page()
    with HostedJudgeServer(page_judge, reasoning=True, fail_every=4) as server:
        connect(at, server)
        job = judge_all(at, app_db)
        answered = [last_user_text(r["body"]) for r in server.answered()]
    assert job["status"] == "done", job
    # by hand: q0 and q2 right, q1 wrong (names 'bad … two'), q3 unreadable (wrong)
    right = sum(1 for p in answered if "Question 0?" in p or "Question 2?" in p)
    assert len(answered) == 3
    table = frame(at, "failed (no answer)").set_index("subset")
    assert table.loc["overall", "failed (no answer)"] == 1
    assert table.loc["overall", "accuracy"] == f"{100 * right / 3:.1f}%"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["accuracy (per trial)"] == f"{100 * right / 3:.1f}%"
    warnings = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert "answered 3 of 4 trials, failed 1 (1 server error: no answer (server error)" in warnings
    assert "HTTP 500" in warnings
    infos = [i.value.replace("\\", "") for i in at.info]  # shown escaped (components.text.label)
    assert any(i.startswith("temperature: provider default (refused 0): ") for i in infos)
    lost = next(f.value for f in at.dataframe
                if {"item", "kind", "reason"} <= set(f.value.columns))
    assert len(lost) == 1 and lost.iloc[0]["kind"] == "server_error"
    assert lost.iloc[0]["item"] not in {p for p in answered}


def test_a_model_cut_off_while_reasoning_gets_room_to_think_next_time(tmp_path: Path,
                                                                   capsys) -> None:
    make_pairs(tmp_path / "r.db", n=2)
    with HostedJudgeServer(right_unless_third, reasoning=True, cut_off=True) as hosted:
        code, first = run_json(hosted, tmp_path / "r.db", capsys)
        before = [r["body"]["max_completion_tokens"] for r in hosted.answered()]
        hosted.cut_off = False  # with room to think it answers
        code_again = main(judge_args(hosted, tmp_path / "r.db", "--json"))
        captured = capsys.readouterr()
        after = [r["body"]["max_completion_tokens"] for r in hosted.answered()][len(before):]
        # an explicit --max-tokens wins
        main(judge_args(hosted, tmp_path / "r.db", "--max-tokens", "512"))
        capsys.readouterr()
        last = len(hosted.answered())
    assert code == code_again == 0
    assert before == [512] * 4 and after == [REASONING_MAX_TOKENS] * 4
    assert last == 8  # the 512 run was all from the cache
    assert f"max tokens {REASONING_MAX_TOKENS} (room to think" in captured.err
    second = json.loads(captured.out)
    assert second["params"]["max_tokens"] == REASONING_MAX_TOKENS
    assert first["usage"]["reasoning_tokens"] == 64 * 4 and first["cut_off"] == 4
    assert first["accuracy"] == 0.0 and second["cut_off"] == 0 and second["accuracy"] == 0.5
