"""A judge run's figures on the Reward model page: the headline says it is per trial and
gives its interval; Compare is per item, says why it differs from the headline, and tests
the difference (McNemar); the position-bias table of groups of 2 and 3 responses has no
``nan%``. A real judge run (the engine against a local HTTP server), real AppTest."""

from __future__ import annotations

import html
import re

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.figures.stats import bootstrap_mean
from needlework.figures.stats_text import percent_range
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge
from needlework.judges.evaluate import accuracy_intervals
from needlework.judges.plan import load_items
from needlework.rewards import registry
from store.scores import save_item_scores
from tests.conftest import ROOT, jsonl
from tests.judges_fixtures import FakeJudgeServer

PAGE = "app_pages/rewards.py"


def records() -> list[dict]:
    """Groups of 2 (q0, q1; q4's two chosen, each against its one rejected) and of 3 (q2, q3)."""
    out = [{"id": f"q{k}", "subset": "QA", "prompt": f"Question {k}?", "chosen": [f"good {k}"],
            "rejected": [f"bad {k}"]} for k in range(2)]
    out += [{"id": f"q{k}", "subset": "QA", "prompt": f"Question {k}?", "chosen": [f"good {k}"],
             "rejected": [f"bad {k} one", f"bad {k} two"]} for k in (2, 3)]
    out.append({"id": "q4", "subset": "QA", "prompt": "Question 4?",
                "chosen": ["good 4 a", "good 4 b"], "rejected": ["bad 4"]})
    return out


@pytest.fixture(autouse=True)
def fresh_registry():
    registry.MODELS.clear()
    yield
    registry.MODELS.clear()


@pytest.fixture
def judged(tmp_path, monkeypatch):
    """The dataset scored by a reward model that is always right, then judged in every
    rotation by a judge that always names A: right on 1 of 2 rotations of a pair, 1 of 3
    of a triple, so 6 of 14 trials (42.9 %) but 43.3 % as a mean per item."""
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(records()), "prefs.jsonl", dataset="prefs", format="lfrb")
    save_item_scores(db, "prefs", "f" * 32, "fp32|full", "/models/some-rm",
                     [{"item_key": r["id"], "subset": "QA", "chosen_scores": [1.0] * len(r["chosen"]),
                       "rejected_scores": [0.0] * len(r["rejected"])} for r in records()])
    row, items = load_items(db, "prefs")
    with FakeJudgeServer(lambda body: "Verdict: [[A]]") as server:
        run = run_judge(db, Connection(server.base_url, "judge", key_env=None), items,
                        "selection", dataset="prefs", format_name=row["format"], order="rotations")
    db.conn.close()
    return run


def table(at: AppTest, *columns: str):
    """The first table with ``columns`` (only selectable tables report their key)."""
    for frame in at.dataframe:
        if all(c in frame.value.columns for c in columns):
            return frame.value
    raise AssertionError(f"no table with columns {columns}")


def open_page(run) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page(PAGE)
    at.run()
    at.selectbox(key="rw_run").set_value(f"judge:{run.run_key}").run()
    assert not at.exception, at.exception
    return at


def test_the_summary_stores_the_interval_of_its_headline(judged) -> None:
    s = judged.summary
    assert s["accuracy"] == pytest.approx(6 / 14) and s["trials"] == 14
    overall = s["intervals"]["overall"]
    # by hand: per item the share of its trials right, weighted by its trials
    hand = bootstrap_mean([1 / 2, 1 / 2, 1 / 3, 1 / 3, 2 / 4], weights=[2, 2, 3, 3, 4])
    assert (overall["estimate"], overall["low"], overall["high"], overall["n"]) == \
        pytest.approx((6 / 14, hand.low, hand.high, 5))
    assert s["intervals"]["trials_per_item"] == "unequal"
    assert accuracy_intervals(judged.results, "selection") == s["intervals"]


@pytest.mark.slow
def test_headline_is_labelled_per_trial_with_its_interval(judged) -> None:
    at = open_page(judged)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["accuracy (per trial)"] == "42.9%"  # 6 of 14 trials
    hand = bootstrap_mean([1 / 2, 1 / 2, 1 / 3, 1 / 3, 2 / 4], weights=[2, 2, 3, 3, 4])
    captions = " ".join(c.value for c in at.caption)
    assert f"6 of 14 trials right; 95 % interval {percent_range(hand)}" in captions
    assert "1,000 resamples, seed 0" in captions
    subsets = table(at, "subset", "95 % interval", "invalid rate").set_index("subset")
    assert subsets.loc["overall", "95 % interval"] == percent_range(hand)


@pytest.mark.slow
def test_position_bias_of_groups_of_two_and_three_has_no_nan(judged) -> None:
    at = open_page(judged)
    bias = table(at, "responses", "spread").set_index("responses")
    assert sorted(bias.index) == [2, 3]
    cells = [str(v) for v in bias.to_numpy().ravel()]
    assert not [c for c in cells if "nan" in c.lower() or c == "None"], cells
    assert bias.loc[2, "accuracy, chosen shown as C"] == "n/a: 2 responses, no C"
    assert bias.loc[2, "answers naming C"] == "n/a: 2 responses, no C"
    # always A: right whenever shown there, with its count and interval in the cell
    # (Wilson's interval: n of n right is not certainty, its low end is under 100 %)
    got = re.fullmatch(r"100\.0% \((\d+) trials, CI (\d+\.\d)–100\.0 %\)",
                       bias.loc[3, "accuracy, chosen shown as A"])
    assert got, bias.loc[3, "accuracy, chosen shown as A"]
    n = int(got.group(1))
    z2 = 1.959963984540054 ** 2
    assert got.group(2) == f"{100 * n / (n + z2):.1f}"  # Wilson's low end at n of n: n / (n + z²)
    assert bias.loc[3, "accuracy, chosen shown as C"].startswith("0.0% (")


@pytest.mark.slow
def test_compare_is_per_item_says_why_it_differs_and_tests_the_difference(judged) -> None:
    at = open_page(judged)
    options = at.selectbox(key="rw_compare").options  # as shown: the model's name first
    at.selectbox(key="rw_compare").select_index(
        next(k for k, o in enumerate(options) if o.startswith("some-rm"))).run()
    assert not at.exception, at.exception
    both = table(at, "subset", "test").set_index("subset")
    assert both.loc["overall", "judge judge"] == "43.3%"  # (½ + ½ + ⅓ + ⅓ + ½) / 5
    assert both.loc["overall", "some-rm"] == "100.0%"
    per_item = bootstrap_mean([1 / 2, 1 / 2, 1 / 3, 1 / 3, 1 / 2])
    assert both.loc["overall", "judge judge 95 % interval"] == percent_range(per_item)
    # the judge's outcomes are shares of trials, so the test is Wilcoxon's signed-rank test
    # on the differences -1/2, -1/2, -2/3, -2/3, -1/2: ranks 2, 2, 2 (1..3 tied) and 4.5, 4.5
    # (4..5 tied), all negative: W+ = 0, P(W+ <= 0) = 1 / 2**5, p = 2 / 32 = 0.0625
    assert both.loc["overall", "test"] == "Wilcoxon signed-rank test"
    assert both.loc["overall", "p"] == "0.0625"
    assert both.loc["overall", "significant at 5 %"] == "no"
    # the counts agree with the list below and with the sign of the difference
    assert (both.loc["overall", "some-rm better"], both.loc["overall", "judge judge better"],
            both.loc["overall", "tied"]) == (5, 0, 0)
    assert [e.label for e in at.expander if e.label.startswith("Items where they differ")] == \
        ["Items where they differ (5)"]
    text = html.unescape(" ".join(h.value for h in at.get("html")))
    assert ("judge judge: 43.3% here is the mean per item on the 5 items compared (every item "
            "weighs the same); its headline accuracy, 42.9%, is per trial") in text
    assert "some-rm is ahead of judge judge by 56.7 points" in text  # 100 % − 43.3 %
    assert ("judge judge better on 0 items, some-rm better on 5 items, tied on 0 items. "
            "Wilcoxon signed-rank test p = 0.0625: not significant at 5 %") in text
