"""AppTest for the reward-model page: model picker, scoring job, metrics, per-token view."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from needlework.rewards import registry, results
from store.scores import item_scores, list_jobs, save_item_scores
from tests.conftest import ROOT, jsonl
from tests.rewards_fixtures import save_tiny_model, tiny_model_dir  # noqa: F401

PAGE = "app_pages/rewards.py"
FP = "f" * 32


def lfrb_records() -> list[dict]:
    """Four short Long-form RewardBench items in two subsets."""
    return [
        {"id": f"q{k}", "subset": "QA" if k < 2 else "Chat", "prompt": f"Question {k}?",
         "chosen": [f"A careful answer number {k} that checks every fact."],
         "rejected": [f"A wrong answer {k}.", f"Another wrong answer {k}.", f"No answer {k}."]}
        for k in range(4)
    ]


@pytest.fixture(autouse=True)
def fresh_registry():
    """Each test starts with no model loaded in the process."""
    registry.MODELS.clear()
    yield
    registry.MODELS.clear()


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(lfrb_records()), "prefs.jsonl", dataset="prefs", format="lfrb")
    return db


def open_page(query: dict[str, str] | None = None) -> AppTest:
    """The reward page; ``?dataset=`` is given from the first run (the sidebar binds it),
    other query parameters (``item``) once on the page (home would redirect them)."""
    query = dict(query or {})
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if "dataset" in query:
        at.query_params["dataset"] = query.pop("dataset")
    at.run()
    at.switch_page(PAGE)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def load(at: AppTest, path, **fields) -> AppTest:
    at.text_input(key="rw_model").set_value(str(path))
    for key, value in fields.items():
        at.selectbox(key=key).set_value(value)
    at.button(key="rw_load").click()
    at.run()
    assert not at.exception, at.exception
    return at


def plain(markdown: str) -> str:
    """Text as shown: the backslash escapes of ``components.text.label`` removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def errors(at: AppTest) -> str:
    return "\n".join(plain(e.value) for e in at.error)


def frame(at: AppTest, column: str):
    """The first dataframe with ``column`` (only selectable dataframes report their key)."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column")


def metric_values(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_bad_folders_show_one_clear_error_each(app_db, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    at = load(open_page(), empty)
    assert len(at.error) == 1 and "no config.json" in errors(at)
    at = load(at, save_tiny_model(tmp_path / "two-labels", num_labels=2))
    assert len(at.error) == 1 and "num_labels=2" in errors(at)
    at = load(at, save_tiny_model(tmp_path / "lm", causal_lm=True))
    assert len(at.error) == 1 and "not a sequence classifier" in errors(at)
    at = load(at, tmp_path / "no-such-folder")
    assert len(at.error) == 1 and "no such folder" in errors(at)
    assert not registry.MODELS.loaded()


@pytest.mark.slow
def test_facts_of_a_tiny_model_and_the_cache_across_sessions(app_db, tiny_model_dir):  # noqa: F811
    at = load(open_page(), tiny_model_dir, rw_dtype="fp32", rw_device="cpu")
    assert not at.error
    facts = metric_values(at)
    assert facts["dtype"] == "fp32" and facts["Device"] == "cpu"
    assert facts["Context (tokens)"] == "256"
    described = " ".join(m.value for m in at.markdown)
    assert "**Architecture** `LlamaForSequenceClassification`" in described
    assert "**Chat template** the tokenizer's own (`chat:" in described
    assert "fingerprint" in described
    assert len(registry.MODELS.loaded()) == 1
    other = open_page()  # a second browser session reuses the loaded model
    assert metric_values(other)["Context (tokens)"] == "256"
    assert len(registry.MODELS.loaded()) == 1


@pytest.fixture
def served_on():
    """Set ``server.address`` as ``streamlit run --server.address`` would."""
    from streamlit import config  # noqa: PLC0415

    before = config.get_option("server.address")
    yield lambda address: config.set_option("server.address", address)
    config.set_option("server.address", before)


def test_trust_remote_code_is_off_by_default_and_warns_when_on(app_db, served_on):
    served_on("127.0.0.1")
    at = open_page()
    assert at.checkbox(key="rw_trust").value is False
    assert not at.checkbox(key="rw_trust").disabled
    assert not any("trust_remote_code" in w.value for w in at.warning)
    at.checkbox(key="rw_trust").check().run()
    assert any("trust_remote_code is on" in w.value for w in at.warning)


def test_trust_remote_code_is_not_offered_when_the_server_listens_beyond_this_machine(
        app_db, served_on):
    served_on("0.0.0.0")
    at = open_page()
    box = at.checkbox(key="rw_trust")
    assert box.disabled and "listens on 0.0.0.0" in box.help


def test_metrics_table_from_cached_scores(app_db):
    scores = [([2.0], [1.0, 0.5, 0.0]),  # correct
              ([1.0], [1.0, 0.0, 0.0]),  # tie: wrong
              ([3.0], [0.0, 1.0, 2.0]),  # correct
              ([0.0], [1.0, -1.0, -2.0])]  # wrong
    save_item_scores(app_db, "prefs", FP, "fp32|full", "some-rm",
                     [{"item_key": f"q{k}", "subset": "QA" if k < 2 else "Chat",
                       "chosen_scores": c, "rejected_scores": r} for k, (c, r) in enumerate(scores)])
    at = open_page()
    table = frame(at, "best-of-n accuracy").set_index("subset")
    assert table.loc["QA", "best-of-n accuracy"] == "50.0%"
    assert table.loc["Chat", "best-of-n accuracy"] == "50.0%"
    assert table.loc["overall", "items"] == 4 and table.loc["overall", "best-of-n correct"] == 2
    assert table.loc["overall", "pairwise accuracy"] == f"{100 * 10 / 12:.1f}%"  # 3 + 2 (tie wrong) + 3 + 2
    assert any("Ties count as wrong" in c.value for c in at.caption)
    assert metric_values(at)["items with a missing score"] == "0"
    assert "best-of-n, scored items only" not in metric_values(at)
    fails = at.dataframe(key="rw_failures").value
    assert list(fails["item"]) == ["q3", "q1"]  # worst margin first; the tie is a failure
    assert not any("Partial results" in w.value for w in at.warning)
    assert at.selectbox(key="rw_item").value == "q3"  # the worst failure opens first
    assert any("Load a model" in i.value for i in at.info)


def test_missing_scores_count_wrong_beside_the_headline(app_db):
    """Long-form RewardBench's rule on the page: an item with a missing score is wrong and in
    the denominator; the count stands beside the headline, the scored-only figure is labelled."""
    scores = [([2.0], [1.0, 0.5, 0.0]),  # correct
              ([None], [1.0, 0.0, 0.0]),  # skipped as too long: wrong, kept
              ([3.0], [0.0, None, 2.0]),  # one rejected missing: wrong, 2 pairs counted
              ([0.0], [1.0, -1.0, -2.0])]  # wrong
    save_item_scores(app_db, "prefs", FP, "fp32|skip:256", "some-rm",
                     [{"item_key": f"q{k}", "subset": "QA" if k < 2 else "Chat",
                       "chosen_scores": c, "rejected_scores": r} for k, (c, r) in enumerate(scores)])
    at = open_page()
    metrics = metric_values(at)
    assert metrics["best-of-n accuracy"] == "25.0%"  # 1 of 4, not 1 of 2
    assert metrics["items with a missing score"] == "2"
    assert metrics["best-of-n, scored items only"] == "50.0%"
    assert metrics["pairwise accuracy"] == f"{100 * 7 / 8:.1f}%"  # 3 + 2 + 2 of 3 + 3 + 2
    table = frame(at, "best-of-n accuracy").set_index("subset")
    assert table.loc["overall", "items"] == 4 and table.loc["overall", "missing"] == 2
    assert any("counts as **wrong** in best-of-n" in c.value for c in at.caption)
    fails = at.dataframe(key="rw_failures").value
    assert list(fails["item"]) == ["q3", "q1", "q2"]  # scored failures first, then the missing
    assert fails.set_index("item").loc["q1", "failing comparison"] == "1 missing score(s): counted wrong"
    # one numbering: the Review page's (from 1), with the scores beside the responses
    assert fails.set_index("item").loc["q3", "failing comparison"] == \
        "chosen 1 (0.000) ≤ rejected 1 (1.000)"


def test_a_partial_run_says_so(app_db):
    save_item_scores(app_db, "prefs", FP, "fp32|full", "some-rm",
                     [{"item_key": f"q{k}", "subset": "QA", "chosen_scores": [1.0],
                       "rejected_scores": [0.0, 0.0, 0.0]} for k in range(2)])
    at = open_page()
    assert any("Partial results: 2 of 4 items" in w.value for w in at.warning)
    assert any("Demo model" in c.value for c in at.caption)  # the default, said before loading
    assert frame(at, "best-of-n accuracy").set_index("subset").loc["overall", "items"] == 2


def test_rmbench_matrix_per_domain(tmp_path, monkeypatch):
    path = tmp_path / "rm.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    records = [{"id": k, "subset": "alpacaeval" if k < 2 else "math-prm", "prompt": f"P{k}",
                "chosen": [f"c{k}{s}" for s in range(3)], "rejected": [f"r{k}{s}" for s in range(3)]}
               for k in range(4)]
    import_bytes(db, json.dumps(records).encode(), "rm.json", dataset="rm", format="rmbench")
    save_item_scores(db, "rm", FP, "fp32|full", "some-rm",
                     [{"item_key": str(k), "subset": r["subset"], "chosen_scores": [3.0, 2.0, 1.0],
                       "rejected_scores": [2.5, 1.5, 0.5]} for k, r in enumerate(records)])
    at = open_page({"dataset": "rm"})
    table = frame(at, "hard").set_index("domain")
    # chosen [3, 2, 1] vs rejected [2.5, 1.5, .5]: M = [[1,1,1],[0,1,1],[0,0,1]]; each
    # figure with its comparisons won (2 prompts × 3) and its interval (issue 59)
    assert table.loc["chat", "hard"].startswith("100.0% (6/6; ")
    assert table.loc["chat", "easy"].startswith("0.0% (0/6; ")
    # code and safety are absent: the overall row and headline say so (issue 10, point 6)
    overall = "mean over chat, math (not comparable)"
    assert table.loc[overall, "normal"].startswith("100.0% (12/12; ")
    assert "overall" not in table.index
    assert "RM-Bench mean over chat, math" in metric_values(at)
    assert any("Not comparable to RM-Bench's total" in w.value and "code, safety absent" in w.value
               for w in at.warning)
    matrix = frame(at, "rejected concise")  # the first tab: all domains (issue 59)
    assert matrix.loc["chosen concise", "rejected detailed markdown"] == "100.0% (4/4)"
    assert matrix.loc["chosen detailed markdown", "rejected concise"] == "0.0% (0/4)"


@pytest.mark.slow
def test_too_long_inputs_are_reported_before_scoring(app_db, tmp_path):
    long = {"id": "long", "subset": "QA", "prompt": "Tell me everything.",
            "chosen": ["word " * 400], "rejected": ["short", "also short", "brief"]}
    import_bytes(app_db, jsonl([long]), "long.jsonl", dataset="long", format="lfrb")
    model = save_tiny_model(tmp_path / "m", max_positions=64)
    at = load(open_page({"dataset": "long"}), model, rw_device="cpu")
    assert any("1 of 4 responses, in 1 item, are longer" in w.value for w in at.warning)
    long_inputs = frame(at, "over the window by")
    assert list(long_inputs["response"]) == ["chosen 1"]
    assert at.radio(key="rw_truncation").options == [
        f"{p}: {d}" for p, d in __import__("components.rewards.scoring").rewards.scoring.POLICIES.items()]


@pytest.mark.slow
def test_scoring_job_then_metrics_and_per_token_deep_link(app_db, tiny_model_dir):  # noqa: F811
    at = load(open_page(), tiny_model_dir, rw_device="cpu")
    at.button(key="rw_score").click()
    at.run()
    job = list_jobs(app_db)[0]
    RUNNER.join(int(job["id"]), timeout=120)
    at.run()
    assert not at.exception, at.exception
    job = list_jobs(app_db)[0]
    assert job["status"] == "done", job
    assert any("Scored 4 items" in s.value for s in at.success)
    assert len(item_scores(app_db, "prefs", job["result"]["fingerprint"])) == 4
    assert frame(at, "best-of-n accuracy").iloc[-1]["subset"] == "overall"

    linked = open_page({"dataset": "prefs", "item": "q2"})
    assert linked.selectbox(key="rw_item").value == "q2"
    assert len(linked.get("vega_lite_chart")) == 2  # curves and their difference
    assert metric_values(linked)["score chosen 1"] != ""
    linked.selectbox(key="rw_item").set_value("q1").run()
    assert linked.query_params["item"] == "q1"


def test_failures_count_ties_and_sort_by_margin():
    entries = [{"id": "ok", "subset": "A", "chosen_scores": [2.0], "rejected_scores": [1.0, 0.0]},
               {"id": "tie", "subset": "A", "chosen_scores": [1.0], "rejected_scores": [1.0, 0.0]},
               {"id": "bad", "subset": "B", "chosen_scores": [0.0, 3.0], "rejected_scores": [1.0]},
               {"id": "skipped", "subset": "B", "chosen_scores": [None], "rejected_scores": [9.0]}]
    found = results.failures(entries)
    assert [(f.item, f.margin, f.worst, f.beaten, f.pairs, f.missing) for f in found] == [
        ("bad", -1.0, (0, 0), 1, 2, 0), ("tie", 0.0, (0, 0), 1, 2, 0),
        ("skipped", None, (0, 0), 0, 0, 1)]  # a missing score is wrong (Long-form RewardBench)


def test_text_segments_are_the_text_exactly():
    from components.models.per_token import aligned_segments, segments  # noqa: PLC0415
    from needlework.rewards.curves import PerTokenResult  # noqa: PLC0415

    text = "Hi 😀 there<end>"
    tokens = ["Hi", " ", "😀", "😀", " there", "<end>"]  # a split emoji repeats its character
    result = PerTokenResult(tokens, list(range(6)), [0.0, 0.0, 1.0, 1.0, -1.0, -1.0], -1.0, 3, 9)
    parts = segments(result, text, changed={4}, scale=2.0)
    assert "".join(p[0] for p in parts) == text
    assert [p for p in parts if p[1] == "nw-chg"][0][0] == " there"
    assert all("background" in p[2] for p in parts if p[0] in ("😀",))
    assert aligned_segments([(0, 0, 0.0), (1, 1, 0.0), (5, 2, 1.0), (6, 3, 1.0)]) == [0, 0, 1, 1]
    # texts that differ almost everywhere: only the first differing token that is not blank
    first = segments(result, text, changed={1, 2, 3, 4, 5}, scale=2.0, first_only=True)
    assert [p[0] for p in first if p[1] == "nw-chg"] == ["😀"]


@pytest.mark.slow
def test_job_outcomes_cancelled_failed_and_interrupted(app_db):
    from store.scores import create_job, finish_job, start_job, update_job_progress  # noqa: PLC0415

    job = create_job(app_db, "score", "prefs", "some-rm")
    start_job(app_db, job, 10)
    update_job_progress(app_db, job, 4, 10)
    finish_job(app_db, job, "cancelled", error="cancelled after 4 of 10 texts")
    at = open_page()
    assert any("Cancelled after 4 of 10 texts" in w.value and "cached" in w.value for w in at.warning)

    job = create_job(app_db, "score", "prefs", "some-rm")
    finish_job(app_db, job, "failed", error="out of memory while scoring one text")
    at = open_page()
    assert "Scoring failed: out of memory while scoring one text" in errors(at)

    job = create_job(app_db, "score", "prefs", "some-rm")
    start_job(app_db, job, 10)  # running, but no thread of this process runs it
    at = open_page()
    assert any("was interrupted" in w.value for w in at.warning)


@pytest.mark.slow
def test_an_encoders_per_token_view_plans_prefix_passes_then_says_which_method(app_db, tmp_path):
    """A BERT reward model: the page shows the plan (passes, estimate), a stride and a cap,
    runs the passes on a click, and the chart caption names the method and the check."""
    from tests.rewards_fixtures import save_encoder  # noqa: PLC0415

    save_item_scores(app_db, "prefs", FP, "fp32|full", "some-rm",
                     [{"item_key": "q0", "subset": "QA", "chosen_scores": [0.0],
                       "rejected_scores": [1.0, 0.0, 0.0]}])
    at = load(open_page({"dataset": "prefs", "item": "q0"}), save_encoder(tmp_path / "bert", "bert"),
              rw_device="cpu")
    assert any("need one forward pass per prefix" in i.value and "bidirectional" in i.value
               for i in at.info)
    assert any("prefix passes over" in c.value and "about" in c.value for c in at.caption)
    go = next(b for b in at.button if b.key and b.key.startswith("rw_prefix_go|"))
    assert "passes" in go.label and not at.get("vega_lite_chart")
    go.click()
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("vega_lite_chart")) == 2
    captions = " ".join(c.value for c in at.caption)
    assert "Curves drawn by: one forward pass per prefix" in captions
    assert "= the model's score" in captions
    at.number_input(key="rw_cap|q0|0|0").set_value(2)
    at.select_slider(key="rw_stride|q0|0|0").set_value(2).run()  # not computed yet at stride 2
    assert any("More than the cap of 2 passes" in w.value for w in at.warning)
    assert next(b for b in at.button if b.key and b.key.startswith("rw_prefix_go|")).disabled
