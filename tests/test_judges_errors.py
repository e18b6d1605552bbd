"""Error paths against real servers on 127.0.0.1: nothing listening, wrong model, slow,
500, 429, bad key; each named in one line, and the key never shown."""

from __future__ import annotations

import pickle

import pytest

from needlework.judges.client import JudgeClient, check_connection
from needlework.judges.connection import Connection, Secret, clean_endpoint, redact
from needlework.judges.errors import JudgeError
from needlework.judges.prompts import DEMO_REPORT
from tests.judges_fixtures import FakeJudgeServer, free_port

SECRET = "sk-test-SECRET123"
MESSAGES = [{"role": "user", "content": "Which is better? [[A]] or [[B]]"}]


def fast_client(conn: Connection) -> JudgeClient:
    return JudgeClient(conn, backoff_base=0.01, backoff_cap=0.05, seed=0)


def test_nothing_listening_is_server_down() -> None:
    conn = Connection(f"http://127.0.0.1:{free_port()}/v1", "judge", key_env=None)
    check = check_connection(conn)
    assert not check.ok and check.kind == "server_down"
    assert check.message.startswith("server down: nothing answers at http://127.0.0.1:")
    assert "\n" not in check.message


def test_wrong_model_name() -> None:
    with FakeJudgeServer(model="judge", models=("judge",)) as server:
        check = check_connection(Connection(server.base_url, "jugde", key_env=None))
    assert check.kind == "wrong_model"
    assert check.message.startswith("wrong model name:") and "'jugde'" in check.message


def test_wrong_model_behind_a_bare_500_is_found_through_models() -> None:
    """A server that answers 500 for an unknown model: /models tells the truth."""
    with FakeJudgeServer(statuses=[500] * 5, model=None, models=("judge", "other"),
                         error_body=lambda status, body: {"detail": "Internal Server Error"}) as server:
        check = check_connection(Connection(server.base_url, "jugde", key_env=None))
    assert check.kind == "wrong_model" and "it lists: judge, other" in check.message


def test_models_endpoint_failing_does_not_fail_a_working_chat() -> None:
    """transformers serve answers /models with 500 for a local folder; chat works."""
    with FakeJudgeServer(models=()) as server:
        check = check_connection(Connection(server.base_url, "judge", key_env=None))
    assert check.ok and check.message.startswith("ok:")


@pytest.mark.slow
def test_slow_server_is_a_timeout() -> None:
    with FakeJudgeServer(delay=1.5) as server:
        check = check_connection(Connection(server.base_url, "judge", key_env=None, timeout=0.3))
        assert check.kind == "timeout" and check.message.startswith("timeout:")
        with pytest.raises(JudgeError) as err:
            fast_client(Connection(server.base_url, "judge", key_env=None, timeout=0.3,
                                   max_retries=2)).complete(MESSAGES)
        assert err.value.kind == "timeout" and "after 3 attempts" in str(err.value)


@pytest.mark.slow
def test_a_timed_out_request_to_a_judge_served_here_is_not_sent_again(tmp_path) -> None:
    """A demo judge (a folder with its report, on a loopback /v1) goes on generating for a
    request its client gave up on: the client fails at once instead of adding more."""
    folder = tmp_path / "demo-judge"
    folder.mkdir()
    (folder / DEMO_REPORT).write_text("{}", encoding="utf-8")
    with FakeJudgeServer(delay=1.5, model=str(folder), models=(str(folder),)) as server:
        client = fast_client(Connection(server.base_url, str(folder), key_env=None, timeout=0.3,
                                        max_retries=2))
        with pytest.raises(JudgeError) as err:
            client.complete(MESSAGES)
        assert err.value.kind == "timeout" and "Not sent again" in str(err.value)
        assert client.requests == 1 and len(server.chat_requests()) <= 1


def test_500_is_retried_then_answered() -> None:
    with FakeJudgeServer(statuses=[500, 503]) as server:
        client = fast_client(Connection(server.base_url, "judge", key_env=None, max_retries=3))
        answer = client.complete(MESSAGES)
        assert answer.text == "[[A]]" and answer.attempts == 3
        assert client.requests == 3 and client.retries == 2
        assert len(server.chat_requests()) == 3


def test_500_after_the_last_retry_is_a_server_error() -> None:
    with FakeJudgeServer(statuses=[500] * 10) as server:
        client = fast_client(Connection(server.base_url, "judge", key_env=None, max_retries=2))
        with pytest.raises(JudgeError) as err:
            client.complete(MESSAGES)
        assert len(server.chat_requests()) == 3
    assert err.value.kind == "server_error" and "HTTP 500 after 3 attempts" in str(err.value)


@pytest.mark.slow
def test_429_is_retried_with_retry_after() -> None:
    with FakeJudgeServer(statuses=[429, 429], retry_after="0.05") as server:
        client = fast_client(Connection(server.base_url, "judge", key_env=None, max_retries=3))
        assert client.complete(MESSAGES).attempts == 3
    with FakeJudgeServer(statuses=[429] * 5) as server:
        check = check_connection(Connection(server.base_url, "judge", key_env=None))
    assert check.kind == "rate_limited" and check.message.startswith("rate limited:")


def test_backoff_grows_with_jitter() -> None:
    client = JudgeClient(Connection("http://127.0.0.1:9/v1", "m", key_env=None),
                         backoff_base=1.0, backoff_cap=8.0, seed=1)
    waits = [client.delay(k, RuntimeError()) for k in range(6)]
    for k, w in enumerate(waits):
        top = min(8.0, 2.0 ** k)
        assert top * 0.5 <= w <= top
    assert len(set(waits)) == len(waits)


def test_bad_key_names_its_source_not_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEEDLEWORK_TEST_KEY", SECRET)

    def echo(status: int, body: dict) -> dict:  # a server that echoes what it got, key included
        return {"error": {"message": f"Incorrect API key provided: {SECRET}"}}

    with FakeJudgeServer(statuses=[401], error_body=echo) as server:
        conn = Connection(server.base_url, "judge", key_env="NEEDLEWORK_TEST_KEY")
        check = check_connection(conn)
    assert check.kind == "bad_key" and check.message.startswith("bad key:")
    assert "$NEEDLEWORK_TEST_KEY (set)" in check.message
    assert SECRET not in check.message and "***" in check.message
    with FakeJudgeServer(require_key="the-right-one") as server:
        check = check_connection(Connection(server.base_url, "judge", key=Secret(SECRET)))
        assert check.kind == "bad_key" and "a key held in memory" in check.message
        sent = server.chat_requests()[0]["headers"]
        assert sent.get("Authorization", sent.get("authorization")) == f"Bearer {SECRET}"


def test_unparsable_answers_are_reported_not_raised() -> None:
    with FakeJudgeServer(lambda body: "\x00\x1fgarbage") as server:
        answer = fast_client(Connection(server.base_url, "judge", key_env=None)).complete(MESSAGES)
    assert answer.text == "\x00\x1fgarbage"


def test_secret_never_prints() -> None:
    secret = Secret(SECRET)
    conn = Connection("https://user:pw@example.invalid/v1/?q=1", "m", key=secret)
    for text in (repr(secret), str(secret), f"{secret}", repr(conn), str(conn.describe()),
                 repr(JudgeClient(conn))):
        assert SECRET not in text
    assert conn.api_key() == SECRET
    assert conn.endpoint == "https://example.invalid/v1"
    with pytest.raises(TypeError):
        pickle.dumps(secret)
    with pytest.raises(TypeError):
        Connection("http://x/v1", "m", key=SECRET)  # plain text is refused
    assert redact(f"echo {SECRET} echo", [SECRET]) == "echo *** echo"
    assert clean_endpoint("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"base_url": "", "model": "m"}, "base URL is empty"),
    ({"base_url": "ftp://x", "model": "m"}, "must start with http"),
    ({"base_url": "http://x/v1", "model": " "}, "model name is empty"),
    ({"base_url": "http://x/v1", "model": "m", "concurrency": 0}, "concurrency"),
    ({"base_url": "http://x/v1", "model": "m", "context_window": 100, "max_tokens": 200},
     "context window"),
])
def test_bad_connection_settings_say_what_is_wrong(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Connection(**kwargs)
