"""Review filters: subset, length range, review state, model disagrees."""

from __future__ import annotations

from needlework.formats.preference import Preference
from needlework.review.filters import Filters, apply_filters, disagreements
from needlework.review.lengths import ItemFacts, count, item_facts, length_rows, length_summary

ITEMS = [
    ItemFacts("q1", 0, "QA", "QA", (300,), (250, 4000, 500)),
    ItemFacts("r1", 1, "RAG", "RAG", (1200,), (900, 800, 700)),
    ItemFacts("m1", 2, "chat", "alpacaeval", (20, 200, 260), (22, 210, 270)),
]


def keys(items):
    return [f.key for f in items]


def test_subset_and_source_subset():
    assert keys(apply_filters(ITEMS, Filters(subsets=frozenset({"RAG", "chat"})))) == ["r1", "m1"]
    assert keys(apply_filters(ITEMS, Filters(source_subsets=frozenset({"alpacaeval"})))) == ["m1"]


def test_length_range_uses_the_longest_response():
    assert keys(apply_filters(ITEMS, Filters(min_tokens=1000))) == ["q1", "r1"]
    assert keys(apply_filters(ITEMS, Filters(max_tokens=1500))) == ["r1", "m1"]


def test_review_state_counts_the_comparisons_in_scope():
    mine = {("q1", 0, 0): "agree", ("q1", 0, 1): "flip", ("q1", 0, 2): "tie",
            ("m1", 0, 0): "agree", ("m1", 1, 1): "skip", ("m1", 2, 2): "agree"}
    assert keys(apply_filters(ITEMS, Filters(state="reviewed"), mine)) == ["q1"]
    assert keys(apply_filters(ITEMS, Filters(state="reviewed"), mine, scope="same-style")) == ["q1", "m1"]
    assert keys(apply_filters(ITEMS, Filters(state="unreviewed"), mine)) == ["r1", "m1"]
    assert keys(apply_filters(ITEMS, Filters(state="flipped"), mine)) == ["q1"]


def test_model_disagrees_counts_ties_and_ignores_unscored():
    scores = {
        "q1": {"chosen_scores": [1.0], "rejected_scores": [0.5, 1.0, None]},  # tie on rejected 2
        "r1": {"chosen_scores": [2.0], "rejected_scores": [1.0, 1.5, 1.9]},
        "m1": {"chosen_scores": [0.1, 0.2, 0.3], "rejected_scores": [0.0, 0.5, 0.0]},
    }
    assert disagreements(scores["q1"], [(0, 0), (0, 1), (0, 2)]) == [(0, 1)]
    assert disagreements(None, [(0, 0)]) == []
    f = Filters(model_disagrees=True)
    assert keys(apply_filters(ITEMS, f, scores=scores)) == ["q1", "m1"]
    assert keys(apply_filters(ITEMS, f, scores=scores, scope="same-style")) == ["q1", "m1"]
    assert keys(apply_filters(ITEMS, f, scores={})) == []


def test_lengths_say_how_they_were_counted():
    counted = count("Hello there, world.\n\nSecond paragraph.")
    assert counted.tokens > 0 and counted.method in ("o200k_base", "estimate")
    assert ("(estimate)" in str(counted)) == (counted.method == "estimate")
    with_model = count("one two three", fallback=lambda t: 42, fallback_name="tiny-rm")
    assert with_model.method in ("o200k_base", "tokenizer:tiny-rm")
    facts = item_facts("x", 0, "QA", Preference("x", "QA", "p", ["a b c"], ["a", "b c d e"]))
    assert facts.n_chosen == 1 and facts.n_rejected == 2 and facts.longest >= facts.chosen_tokens[0]
    rows = length_rows([facts])
    assert [r["side"] for r in rows] == ["chosen", "rejected", "rejected"]
    summary = {s["side"]: s for s in length_summary(rows)}
    assert summary["rejected"]["responses"] == 2
