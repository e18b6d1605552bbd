"""The reward page's per-token view: "Review this pair" opens the comparison on screen, a run
that finishes moves the view to its worst failure (and each item to its worst pair), the
mean gap after the first difference is undefined when one response is a prefix of the other,
and the view counts a response's tokens as the Review page does with the same tokenizer.

The demo reward model (models/, installed into data/) and AppTest on the real page."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.review.lengths import count
from needlework.rewards import registry
from needlework.rewards.curves import compare_curves
from needlework.rewards.loading import load_reward_model
from needlework.rewards.per_token import per_token_rewards
from needlework.rewards.registry import ModelKey, newest_token_counter
from store.scores import save_item_scores
from tests.conftest import ROOT, jsonl

PAGE = "app_pages/rewards.py"
FP = "f" * 32
RESPONSES = [
    "A careful answer number 1 that checks every fact.",
    "Hello world.\n\nSecond paragraph, with a list:\n- one\n- two",
    "  Leading spaces, then a sentence that ends without a full stop",
    "Ünïcödé, emoji 🧵 and numbers 12,345.67 in one line.",
]


def records() -> list[dict]:
    return [{"id": f"q{k}", "subset": "QA", "prompt": f"Question {k}?",
             "chosen": [f"A careful answer number {k}."],
             "rejected": [f"Wrong {k}.", f"Also wrong {k}.", f"No answer {k}."]} for k in range(4)]


@pytest.fixture(autouse=True)
def fresh_registry():
    registry.MODELS.clear()
    yield
    registry.MODELS.clear()


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(records()), "prefs.jsonl", dataset="prefs", format="lfrb")
    return db


def save(db, scores: dict[str, tuple[list[float], list[float]]]) -> None:
    """A finished scoring run's results, as the score job saves them."""
    save_item_scores(db, "prefs", FP, "fp32|full", "some-rm",
                     [{"item_key": key, "subset": "QA", "chosen_scores": c, "rejected_scores": r}
                      for key, (c, r) in scores.items()])


def open_page(item: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page(PAGE)
    if item is not None:
        at.query_params["item"] = item
    at.run()
    assert not at.exception, at.exception
    return at


def picker(at: AppTest, name: str):
    (box,) = [s for s in at.selectbox if s.label == name]
    return box


def review_query(at: AppTest) -> dict[str, str]:
    (link,) = [x for x in at.get("page_link") if x.proto.label == "Review this pair"]
    return {k: v[0] for k, v in parse_qs(link.proto.query_string).items()}


ALL_CORRECT = {f"q{k}": ([1.0], [0.0, 0.0, 0.0]) for k in range(4)}


def test_review_this_pair_opens_the_comparison_on_screen(app_db):
    save(app_db, ALL_CORRECT | {"q1": ([0.5], [0.1, 0.2, 0.9])})  # worst: chosen 1, rejected 3
    at = open_page("q1")
    assert (picker(at, "Chosen response").value, picker(at, "Rejected response").value) == (0, 2)
    assert review_query(at) == {"dataset": "prefs", "item": "q1", "i": "1", "j": "3"}
    picker(at, "Rejected response").set_value(0).run()
    assert review_query(at)["j"] == "1"


def test_a_finished_run_moves_the_view_to_its_worst_failure(app_db):
    at = open_page()
    assert at.selectbox(key="rw_item").value == "q0"  # no results yet: the first item
    save(app_db, ALL_CORRECT | {"q3": ([0.5], [0.1, 0.9, 0.2]), "q2": ([0.7], [0.6, 0.1, 0.1])})
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="rw_item").value == "q3"  # the worst failure, as a fresh page opens
    assert picker(at, "Rejected response").value == 1 and review_query(at)["j"] == "2"
    assert at.query_params["item"] == "q3"  # a reload opens what is on screen


def test_an_item_the_user_picked_stays_and_opens_its_new_worst_pair(app_db):
    at = open_page()
    at.selectbox(key="rw_item").set_value("q2").run()
    assert picker(at, "Rejected response").value == 0
    save(app_db, ALL_CORRECT | {"q3": ([0.5], [0.1, 0.9, 0.2]), "q2": ([0.7], [0.6, 0.1, 0.8])})
    at.run()
    assert at.selectbox(key="rw_item").value == "q2"
    assert picker(at, "Rejected response").value == 2  # q2's worst pair after the run


@pytest.fixture(scope="module")
def demo_rm(demo_models_dir):
    return load_reward_model(demo_models_dir / "demo-model", device="cpu")


def test_mean_gap_after_the_first_difference_is_undefined_for_a_prefix(demo_rm):
    base = "The answer checks every fact of the question, one by one, and says so."
    short = per_token_rewards(demo_rm, "Why?", base)
    longer = per_token_rewards(demo_rm, "Why?", base + " Then it adds a long closing remark.")
    cmp = compare_curves(short, longer)
    assert cmp.first_difference is not None
    assert cmp.gap_after_difference() is None
    assert "one response is a prefix of the other" in cmp.gap_undefined()
    # a difference in the middle: the gap covers the shared response text after it, not the
    # template's ending
    middle = compare_curves(per_token_rewards(demo_rm, "Why?", base),
                            per_token_rewards(demo_rm, "Why?", base.replace("every", "no")))
    i0 = middle.first_difference[0]
    shared = [d for i, _, d in middle.aligned if i0 <= i < short.response_tokens]
    assert shared and middle.gap_after_difference() == pytest.approx(sum(shared) / len(shared))
    assert middle.gap_undefined() is None


def test_the_per_token_view_counts_tokens_as_review_does(demo_rm, demo_models_dir):
    path = str(demo_models_dir / "demo-model")
    models = registry.ModelRegistry()
    models.load(ModelKey.of(path, device="cpu"), lambda *_, **__: demo_rm)
    fallback, name = newest_token_counter(models)
    for response in RESPONSES:
        result = per_token_rewards(demo_rm, "A question?", response)
        review = count(response, fallback, name)
        if review.method.startswith("tokenizer:"):  # o200k_base counts another tokenizer's tokens
            assert result.response_tokens == review.tokens, response
        assert result.response_tokens == len(demo_rm.tokenizer.encode(response, add_special_tokens=False))
        assert result.closing_tokens >= 1 and "".join(result.tokens[result.response_tokens:]) == "<|end|>"


def test_the_page_shows_the_same_token_count_as_review(app_db, demo_rm, demo_models_dir):
    """Issue 31: the per-token view's caption and the Review page's header count the same
    response with the same tokenizer and give the same number (the view counted the
    template's ending, ``<|end|>``, as a response token: one more than Review)."""
    registry.MODELS.load(ModelKey.of(str(demo_models_dir / "demo-model"), device="cpu"),
                         lambda *_, **__: demo_rm)
    chosen = records()[0]["chosen"][0]
    own = len(demo_rm.tokenizer.encode(chosen, add_special_tokens=False))
    at = open_page("q0")
    (caption,) = [c.value for c in at.caption if c.value.startswith("chosen 1: score")]
    shown = int(re.search(r" · ([\d,]+) response tokens", caption)[1].replace(",", ""))
    review = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    review.query_params["dataset"] = "prefs"
    review.run()
    review.switch_page("app_pages/review.py")
    review.query_params.update({"item": "q0", "i": "1", "j": "1"})
    review.run()
    assert not review.exception, review.exception
    (header,) = [m.value for m in review.markdown if m.value.startswith("**Chosen")]
    counted = int(re.search(r" · ([\d,]+) tokens", header)[1].replace(",", ""))
    assert shown == counted == own, (caption, header)


def view_shown(at: AppTest, demo_rm) -> tuple[str, str, str]:
    """``(item in the header, item in the Item box, item whose chosen 1 the per-token scores
    are of)``: the last found by scoring each item's first chosen response with the model
    and matching the score the view prints."""
    (header,) = [c.value for c in at.caption if c.value.startswith("Item ")]
    named = re.match(r"Item (\S+) · subset", header)[1].replace("\\", "")
    (caption,) = [c.value for c in at.caption if c.value.startswith("chosen 1: score")]
    shown = float(re.search(r"score (-?[\d.]+)", caption)[1])
    by_score = {r["id"]: per_token_rewards(demo_rm, r["prompt"], r["chosen"][0]).score
                for r in records()}
    (scored,) = [k for k, v in by_score.items() if abs(v - shown) < 5e-5]
    return named, at.selectbox(key="rw_item").value, scored


@pytest.mark.slow
def test_the_per_token_header_names_the_item_its_scores_are_of(app_db, demo_rm, demo_models_dir):
    """The header, the Item box and the per-token scores name one item after a run finishes,
    after the judge run is picked in Results (no failures: the first item) and after the user
    picks another item; each item's chosen response scores differently, so a view that drew
    one item's scores under another's header is caught."""
    from needlework.judges.connection import Connection  # noqa: PLC0415
    from needlework.judges.engine import run_judge  # noqa: PLC0415
    from needlework.judges.plan import load_items  # noqa: PLC0415
    from tests.judges_fixtures import FakeJudgeServer  # noqa: PLC0415

    registry.MODELS.load(ModelKey.of(str(demo_models_dir / "demo-model"), device="cpu"),
                         lambda *_, **__: demo_rm)
    scores = {r["id"]: per_token_rewards(demo_rm, r["prompt"], r["chosen"][0]).score
              for r in records()}
    assert len({round(v, 4) for v in scores.values()}) == 4  # the check below can tell them apart
    at = open_page()
    assert view_shown(at, demo_rm) == ("q0", "q0", "q0")
    save(app_db, ALL_CORRECT | {"q3": ([0.5], [0.1, 0.9, 0.2])})
    at.run()
    assert not at.exception, at.exception
    assert view_shown(at, demo_rm) == ("q3", "q3", "q3")  # the finished run's worst failure
    _, items = load_items(app_db, "prefs")
    with FakeJudgeServer(lambda body: "[[A]]") as server:
        run_judge(app_db, Connection(server.base_url, "judge", key_env=None, max_tokens=16),
                  items, "selection", dataset="prefs")
    at.run()
    judge = [k for k in at.selectbox(key="rw_run").options if k.startswith("judge")]
    at.selectbox(key="rw_run").set_value(judge[0]).run()
    assert not at.exception, at.exception
    assert view_shown(at, demo_rm) == ("q0", "q0", "q0")  # a judge run: no failures here
    at.selectbox(key="rw_item").set_value("q2").run()
    assert view_shown(at, demo_rm) == ("q2", "q2", "q2")
    assert at.session_state["rw_view_shown"] == ("prefs", "q2")
