"""``transformers serve`` on 127.0.0.1 with a tiny local model, through the real openai client."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from needlework.demo import haystack_paragraphs
from needlework.formats.preference import Preference
from needlework.judges.client import check_connection
from needlework.judges.engine import run_judge
from needlework.judges.parse import parse_selection
from needlework.judges.serve import ServerError, start_server
from needlework.phrases import SAFETY_HELDOUT
from needlework.rewards.demo_model import split_paragraphs
from store import connect
from tests.judges_fixtures import build_tiny_causal_lm

# every test here talks to `transformers serve` started as a process (make check leaves them out)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def tiny_server(tmp_path_factory):
    folder = build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-judge"))
    server = start_server(folder, threads=1)
    yield server
    server.stop()
    assert not server.alive()


@pytest.mark.slow
def test_connection_check_uses_a_chat_completion_not_models(tiny_server) -> None:
    try:
        with urllib.request.urlopen(f"{tiny_server.base_url}/models", timeout=30) as reply:
            status, listing = reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        status, listing = exc.code, ""
    check = check_connection(tiny_server.connection())
    assert check.ok, check.message
    # transformers serve lists the hub cache, not the pinned folder: /models does not help
    assert status == 500 or tiny_server.model not in listing


def test_wrong_model_name_against_transformers_serve(tiny_server) -> None:
    check = check_connection(tiny_server.connection().with_options(model="no-such-model"))
    assert check.kind == "wrong_model" and check.message.startswith("wrong model name:")
    assert "pinned" in check.message


def test_a_selection_run_keeps_answers_that_do_not_parse(tiny_server) -> None:
    items = [(f"p{k}", Preference(f"p{k}", "safety", "Say something nice.",
                                  [f"Thanks for reading, friend {k}."], [f"Shut up, fool {k}."]))
             for k in range(2)]
    db = connect(":memory:")
    run = run_judge(db, tiny_server.connection(max_tokens=8, concurrency=2), items, "selection",
                    dataset="t", order="rotations")
    assert run.summary["requests"] == 4 and run.summary["trials"] == 4
    from store.judges import run_results  # noqa: PLC0415

    for row in run_results(db, run.run_key):
        parsed = parse_selection(row["raw"], 2)  # a random model: almost surely invalid
        assert row["entry"]["valid"] is parsed.valid
        if not parsed.valid:
            assert row["entry"]["correct"] is False and row["entry"]["reason"]
    assert run.summary["invalid"] == sum(1 for r in run.results if not r["valid"])
    assert run.summary["usage"]["prompt_tokens"] > 0


def test_a_folder_that_is_not_a_model_is_refused(tmp_path) -> None:
    with pytest.raises(ServerError, match="not a model folder"):
        start_server(tmp_path)


@pytest.mark.slow
def test_demo_judge_answers_needle_pairs_validly(demo_models_dir) -> None:
    """Relies on one property of the shipped judge, which its build checks
    (needlework.seeding.demo_models: heldout_selection.invalid_rate at most 0): every answer to a
    held-out needle pair parses, in both orders. Here the same kind of pairs (held-out
    paragraphs and phrases) go through transformers serve and the engine at max_tokens=16."""
    heldout = split_paragraphs(haystack_paragraphs())[1]
    items = []
    for k, (good, bad) in enumerate(SAFETY_HELDOUT[:4]):
        text = "\n\n".join(heldout[3 * k: 3 * k + 3])
        items.append((f"n{k}", Preference(f"n{k}", "safety", "Write about everyday things.",
                                          [f"{good} {text}"], [f"{bad} {text}"])))
    with start_server(demo_models_dir / "demo-judge", threads=1) as server:
        run = run_judge(connect(":memory:"), server.connection(max_tokens=16), items, "selection",
                        dataset="needles", order="rotations")
    assert run.summary["invalid"] == 0, run.results
    assert run.summary["accuracy"] is not None
