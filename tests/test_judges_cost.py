"""Tokens and cost (needlework.judges.cost): estimated before a run, counted after it, on
the demo sets, against real local HTTP servers that report usage as OpenAI counts it
(tests.judges_fixtures.FakeJudgeServer), through the engine, the RAG evaluation, the CLI
and the Reward model page."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.judges import cost
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge
from needlework.judges.plan import load_items, select_items
from needlework.rag import rules_judge
from needlework.rag.answers import AnswerSet
from needlework.rag.rules_server import start_rules_server
from needlework.rag.run import RagEvalSpec, evaluate
from needlework.seeding.demo import DEMO_GROUNDING, DEMO_PREFERENCE, seed_demo
from store import judges as store_judges
from store.rag import answer_sets
from tests import cli_here
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer, last_user_text, text_tokens

# a response as the paper's selection prompt shows it, or as the project's wording does
BLOCK = re.compile(r"\[(?:The Start of Assistant ([A-Z])'s Answer|Response ([A-Z]))\]\n(.*?)\n"
                   r"\[(?:The End of Assistant \1's Answer|End of Response \2)\]", re.S)
PRICE = {"input_price": 2.5, "output_price": 10.0}  # per million tokens


def explains(body: dict) -> str:
    """A judge that explains itself at a length that varies with the responses: it quotes
    the start of the shortest one and names it (a verdict for every trial)."""
    blocks = [(a or b, text) for a, b, text in BLOCK.findall(last_user_text(body))]
    if not blocks:
        return "[[A]]"
    mark, text = min(blocks, key=lambda b: len(b[1]))
    words = text.split()
    quoted = " ".join(words[: 5 + len(words) % 17])
    return f"Response {mark} says it best: \"{quoted}\". The others wander. [[{mark}]]"


def rules(body: dict) -> str:
    """The rules judge's answer to any RAG or suggestion prompt (word-overlap rules)."""
    return rules_judge.reply(body["messages"])


def within(estimated: float, actual: float, share: float = 0.10) -> bool:
    return abs(estimated - actual) <= share * actual


@pytest.fixture
def demo_db():
    db = store.connect(":memory:")
    seed_demo(db)
    yield db
    db.conn.close()


def test_price_and_the_cost_of_tokens() -> None:
    conn = Connection("http://127.0.0.1:9/v1", "m", key_env=None, **PRICE)
    price = cost.price_of(conn)
    assert price == cost.Price(2.5, 10.0)
    assert price.of(1_000_000, 0) == 2.5 and price.of(200_000, 50_000) == pytest.approx(1.0)
    assert cost.price_of(conn.with_options(input_price=None, output_price=None)) is None
    assert cost.price_of(conn.with_options(output_price=None)) == cost.Price(2.5, 0.0)
    assert cost.money(0.00421) == "$0.0042" and cost.money(12.5) == "$12.50"
    assert cost.money(0.0) == "$0.00" and cost.money(None) == "n/a"
    with pytest.raises(ValueError, match="input price must be a number of 0 or more"):
        conn.with_options(input_price=-1.0)
    assert "input_price" not in conn.params()  # a price never changes a cache key
    assert conn.describe()["input_price"] == 2.5


def test_prompt_tokens_count_the_messages_and_the_chat_format() -> None:
    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Which is better?"}]
    counted, method = cost.prompt_tokens(messages)
    bare = text_tokens("Be brief.\nWhich is better?")
    assert counted == bare + 2 * cost.MESSAGE_OVERHEAD + cost.REPLY_OVERHEAD
    assert method in ("o200k_base", "estimate")
    assert cost.method_words(method).startswith("approximate: ")


def test_without_cached_answers_completion_is_max_tokens_for_each(demo_db) -> None:
    row, items = load_items(demo_db, DEMO_PREFERENCE)
    conn = Connection("http://127.0.0.1:9/v1", "judge", key_env=None, max_tokens=300, **PRICE)
    estimate = cost.estimate(demo_db, conn, cost.judge_requests(conn, items, "selection"))
    assert (estimate.requests, estimate.cached, estimate.skipped) == (28, 0, 0)
    assert estimate.basis == "max_tokens" and estimate.completion_tokens == 28 * 300
    assert estimate.completion_max == estimate.completion_tokens
    assert estimate.cost == estimate.cost_max == pytest.approx(
        (estimate.prompt_tokens * 2.5 + 28 * 300 * 10.0) / 1e6)
    words = estimate.words()
    assert "28 request(s) to send" in words and "max tokens (300) for each, as if" in words
    assert words.endswith(f"; an estimated {cost.money(estimate.cost)}.")
    assert "at most" not in words and "upper bound" not in words
    scoring = cost.estimate(demo_db, conn, cost.judge_requests(conn, items, "scoring"))
    assert scoring.requests == 100  # one request per response
    window = conn.with_options(context_window=1000, max_tokens=300)
    tight = cost.estimate(demo_db, window, cost.judge_requests(window, items, "selection"))
    assert tight.skipped > 0 and tight.requests == 28 - tight.skipped  # too long: not sent


@pytest.mark.slow
def test_estimate_within_ten_percent_of_the_reported_tokens_on_the_demo_set(demo_db) -> None:
    """The acceptance test: a judge tried on one item per subset first, then the whole
    demo preference set estimated and run; the estimate (prompt tokens counted, completion
    from the judge's cached answers) is within 10 % of the usage the server reported, in
    tokens and in cost. A re-run is answered from the cache and costs nothing."""
    row, items = load_items(demo_db, DEMO_PREFERENCE)
    with FakeJudgeServer(explains) as server:
        conn = Connection(server.base_url, "judge", key_env=None, **PRICE)
        first = select_items(items, per_subset=1)
        tried = run_judge(demo_db, conn, first, "selection", dataset=DEMO_PREFERENCE,
                          format_name=row["format"], selection={"per_subset": 1})
        estimate = cost.estimate(demo_db, conn, cost.judge_requests(conn, items, "selection"))
        run = run_judge(demo_db, conn, items, "selection", dataset=DEMO_PREFERENCE,
                        format_name=row["format"])
        again = cost.estimate(demo_db, conn, cost.judge_requests(conn, items, "selection"))
        rerun = run_judge(demo_db, conn, items, "selection", dataset=DEMO_PREFERENCE,
                          format_name=row["format"])
        sent = len(server.chat_requests())
    spent = run.summary["cost"]
    assert tried.summary["cost"]["sent"] == 5 and spent["sent"] == estimate.requests == 23
    assert spent["cached"] == estimate.cached == 5 and spent["unreported"] == 0
    assert estimate.basis == "cache" and estimate.basis_answers == 5
    completions = [r["completion_tokens"] for r in store_judges.cached_calls(
        demo_db, [k for k in (r["call_key"] for r in run.results) if k]).values()]
    assert len(set(completions)) > 3  # the answers' lengths vary
    assert within(estimate.prompt_tokens, spent["prompt_tokens"])
    assert within(estimate.completion_tokens, spent["completion_tokens"], 0.5)
    assert within(estimate.tokens, spent["tokens"]), (estimate.as_dict(), spent)
    assert within(estimate.cost, spent["cost"]), (estimate.cost, spent["cost"])
    assert spent["completion_tokens"] <= estimate.completion_max
    assert spent["cost"] == pytest.approx((spent["prompt_tokens"] * 2.5
                                           + spent["completion_tokens"] * 10.0) / 1e6)
    # the re-run: nothing to send, nothing spent, and both say so
    assert again.requests == 0 and again.cost == 0 and again.cached == 28
    assert again.words() == "Nothing to send: all 28 answers are in the cache, so this run " \
                            "costs nothing."
    assert rerun.summary["cost"] == {**spent, "sent": 0, "cached": 28, "prompt_tokens": 0,
                                     "completion_tokens": 0, "tokens": 0, "cost": 0.0}
    assert cost.Actual.from_dict(rerun.summary["cost"]).words() == \
        "Nothing sent: 28 answer(s) from the cache, no cost."
    assert sent == 28  # 5 tried, 23 then, none on the re-run


@pytest.mark.slow
def test_a_rag_evaluation_estimated_within_ten_percent_on_the_demo_set(demo_db) -> None:
    """RAG runs add theirs up too: the demo grounding set's two stored answer sets, the
    careful model's evaluated first, then both estimated and evaluated."""
    sets = [AnswerSet(r["model"], r["answers"], "demo") for r in answer_sets(demo_db, DEMO_GROUNDING)]
    careful = [s for s in sets if s.model == "demo-careful"]
    with FakeJudgeServer(rules) as server:
        conn = Connection(server.base_url, "judge", key_env=None, max_tokens=1024, **PRICE)
        evaluate(demo_db, RagEvalSpec(DEMO_GROUNDING, tuple(careful), conn))
        spec = RagEvalSpec(DEMO_GROUNDING, tuple(sets), conn)
        estimate = cost.estimate(demo_db, conn, cost.rag_requests(demo_db, spec))
        report = evaluate(demo_db, spec)
    calls = report.summary["calls"]
    spent = cost.actual_of_calls(calls, cost.price_of(conn))
    assert estimate.requests == calls["sent"] > 0 and estimate.cached == calls["cached"] > 0
    assert estimate.basis == "cache" and calls["unreported"] == 0
    assert within(estimate.prompt_tokens, spent.prompt_tokens)
    assert within(estimate.tokens, spent.tokens), (estimate.as_dict(), spent.as_dict())
    assert within(estimate.cost, spent.cost)


@pytest.mark.slow
def test_the_rules_judge_reports_tokens_as_the_estimate_counts_them(demo_db) -> None:
    """The rules judge has no tokenizer: its usage is the project's count, so a RAG run
    against it is estimated exactly for its prompts."""
    sets = [AnswerSet(r["model"], r["answers"], "demo") for r in answer_sets(demo_db, DEMO_GROUNDING)]
    server = start_rules_server(port=0)
    try:
        conn = Connection(server.base_url, server.model, key_env=None, max_tokens=1024)
        spec = RagEvalSpec(DEMO_GROUNDING, tuple(sets), conn)
        estimate = cost.estimate(demo_db, conn, cost.rag_requests(demo_db, spec))
        report = evaluate(demo_db, spec)
    finally:
        server.stop()
    spent = cost.actual_of_calls(report.summary["calls"], None)
    assert estimate.requests == report.summary["calls"]["sent"] > 100
    assert estimate.prompt_tokens == spent.prompt_tokens  # the same counter, the same prompts
    assert spent.completion_tokens > 0 and spent.completion_tokens <= estimate.completion_max


@pytest.mark.slow
def test_the_cli_estimates_before_and_reports_after_in_json(tmp_path) -> None:
    path = tmp_path / "nw.db"
    db = store.connect(path)
    seed_demo(db)
    db.conn.close()
    base = ["judge", "--dataset", DEMO_PREFERENCE, "--mode", "selection", "--model", "judge",
            "--key-env", "", "--input-price", "2.5", "--output-price", "10", "--per-subset", "1",
            "--db", str(path)]
    with FakeJudgeServer(explains) as server:
        dry = cli_here.run([*base, "--base-url", server.base_url, "--estimate", "--json"])
        assert dry.returncode == 0, dry.stderr
        assert server.chat_requests() == []  # --estimate sends nothing
        done = cli_here.run([*base, "--base-url", server.base_url, "--json"])
        again = cli_here.run([*base, "--base-url", server.base_url])
    estimate = json.loads(dry.stdout)["estimate"]
    assert estimate["requests"] == 5 and estimate["basis"] == "max_tokens"
    assert estimate["price"] == {"input": 2.5, "output": 10.0} and estimate["cost"] > 0
    assert done.returncode == 0, done.stderr
    assert "estimate: 5 request(s) to send" in done.stderr
    summary = json.loads(done.stdout)
    assert summary["estimate"] == estimate
    spent = summary["cost"]
    assert spent["sent"] == 5 and spent["cost"] == pytest.approx(
        (spent["prompt_tokens"] * 2.5 + spent["completion_tokens"] * 10.0) / 1e6)
    assert within(estimate["prompt_tokens"], spent["prompt_tokens"])
    assert again.returncode == 0 and "estimate: Nothing to send: all 5 answers" in again.stderr
    assert "cost: Nothing sent: 5 answer(s) from the cache, no cost." in again.stdout


def test_the_cli_refuses_a_negative_price(tmp_path) -> None:
    done = cli_here.run(["judge-check", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                         "--input-price", "-1"])
    assert done.returncode == 2 and "input price must be a number of 0 or more" in done.stderr


# -- on the page ---------------------------------------------------------------------------


def open_rewards() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = DEMO_PREFERENCE
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    return at


def captions(at: AppTest) -> list[str]:
    """The captions' text (the Markdown escapes of components.text.label taken out)."""
    return [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]


@pytest.mark.slow
def test_the_reward_page_shows_the_estimate_then_what_the_run_spent(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    seed_demo(db)
    from needlework.jobs.runner import RUNNER  # noqa: PLC0415
    from store.scores import list_jobs  # noqa: PLC0415

    at = open_rewards()
    with FakeJudgeServer(explains) as server:
        at.text_input(key="jd_base_url").set_value(server.base_url)
        at.text_input(key="jd_model").set_value("judge")
        at.number_input(key="jd_input_price").set_value(2.5)
        at.number_input(key="jd_output_price").set_value(10.0)
        at.number_input(key="rj_per").set_value(1)
        at.run()
        before = [c for c in captions(at) if c.startswith("💰 Before judging")]
        assert len(before) == 1 and "5 request(s) to send" in before[0], captions(at)
        assert "an estimated $" in before[0] and "at most" not in before[0]
        at.button(key="rj_run").click().run()
        job = next(j for j in list_jobs(db) if j["kind"] == "judge")
        RUNNER.join(int(job["id"]), timeout=60)
        at.run()
        assert not at.exception, at.exception
        spent = [c for c in captions(at) if c.startswith("💰 5 request(s) sent")]
        assert len(spent) == 1 and "answer(s) from the cache" not in spent[0], captions(at)
        assert re.search(r"\$\d", spent[0])
        after = [c for c in captions(at) if c.startswith("💰 Before judging")]
        assert after and "Nothing to send: all 5 answers are in the cache" in after[0]


def test_a_named_judge_carries_its_price_and_is_held_to_the_limits() -> None:
    from needlework.judge_settings import NamedJudgeError, parse_named_judges  # noqa: PLC0415
    from needlework.judges.connection import named_connection  # noqa: PLC0415

    judges = parse_named_judges({"mini": {"base_url": "https://api.openai.com/v1",
                                          "model": "gpt-4o-mini", "input_price": 0.15,
                                          "output_price": 0.6}}, "needlework.toml")
    conn = named_connection(judges[0], max_tokens=64)
    assert cost.price_of(conn) == cost.Price(0.15, 0.6) and conn.max_tokens == 64
    free = parse_named_judges({"free": {"base_url": "http://127.0.0.1:8000/v1", "model": "m"}}, "t")
    assert named_connection(free[0]).input_price is None
    for table, words in (({"input_price": -1}, "input_price must be a number 0 or more"),
                         ({"output_price": "cheap"}, "output_price must be a number 0 or more"),
                         ({"max_tokens": 100_000}, "max_tokens must be at most 32,768")):
        with pytest.raises(NamedJudgeError, match=words):
            parse_named_judges({"x": {"base_url": "https://h/v1", "model": "m", **table}}, "t")


@pytest.mark.slow
def test_rag_eval_and_suggestions_ask_report_their_cost(tmp_path) -> None:
    path = tmp_path / "nw.db"
    db = store.connect(path)
    seed_demo(db)
    price = ["--input-price", "1", "--output-price", "4"]
    with FakeJudgeServer(rules) as server:
        rag = cli_here.run(["rag-eval", "--dataset", DEMO_GROUNDING, "--stored",
                            "--judge-base-url", server.base_url, "--judge-model", "judge",
                            "--judge-key-env", "", *price, "--db", str(path), "--no-progress",
                            "--json"])
        dry = cli_here.run(["suggestions", "ask", "--dataset", DEMO_GROUNDING,
                            "--judge-base-url", server.base_url, "--judge-model", "judge",
                            "--judge-key-env", "", *price, "--db", str(path), "--estimate"])
        asked_before = len(server.chat_requests())
    assert rag.returncode == 0, rag.stderr
    report = json.loads(rag.stdout)
    spent = report["cost"]["actual"]
    assert spent["sent"] == report["calls"]["sent"] == report["cost"]["estimate"]["requests"] > 0
    assert spent["prompt_tokens"] == report["calls"]["prompt_tokens"] > 0
    assert spent["cost"] == pytest.approx((spent["prompt_tokens"] + 4 * spent["completion_tokens"])
                                          / 1e6)
    assert dry.returncode == 0, dry.stderr
    assert re.match(r"\d+ request\(s\) to send: about [\d,]+ prompt tokens", dry.stdout)
    assert asked_before == spent["sent"]  # --estimate asked nothing
    with FakeJudgeServer(rules) as server:
        done = cli_here.run(["suggestions", "ask", "--dataset", DEMO_GROUNDING,
                             "--judge-base-url", server.base_url, "--judge-model", "judge",
                             "--judge-key-env", "", *price, "--db", str(path), "--json"])
        asked = len(server.chat_requests())
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["cost"]["estimate"]["requests"] == result["sent"] == asked > 0
    assert result["cost"]["actual"]["prompt_tokens"] == result["prompt_tokens"] > 0
    assert within(result["cost"]["estimate"]["prompt_tokens"], result["prompt_tokens"])
