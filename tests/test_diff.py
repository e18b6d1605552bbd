"""Word-level diff of near-identical pairs (RM-Bench styles, needle pairs)."""

from __future__ import annotations

import json

import pytest

from components.text import marked_html
from needlework.review.diff import diff_texts, quick_similarity
from tests.conftest import RMBENCH_DIR


@pytest.fixture(scope="module")
def rmbench_chat():
    records = json.loads((RMBENCH_DIR / "chat_filtered.json").read_text(encoding="utf-8"))
    return {r["id"]: r for r in records}


def test_real_rmbench_pair_marks_exactly_the_changed_words(rmbench_chat):
    # RM-Bench chat id 95, concise style: the rejected answer swaps two plant kinds.
    record = rmbench_chat[95]
    diff = diff_texts(record["chosen"][0], record["rejected"][0])
    assert diff.changed_words("a") == ["root", "vegetables", "strawberries"]
    assert diff.changed_words("b") == ["orchids", "ferns"]
    assert [d.kind for d in diff.differences] == ["replace", "replace"]
    marked_a = [text for text, css, _ in diff.segments("a") if css]
    marked_b = [text for text, css, _ in diff.segments("b") if css]
    assert marked_a == ["root vegetables", "strawberries"]
    assert marked_b == ["orchids", "ferns"]
    assert 0.9 < diff.similarity < 1.0


def test_real_rmbench_insertion_is_marked_only_on_the_rejected_side(rmbench_chat):
    # id 8, concise: the rejected answer adds "shoes," to the list.
    record = rmbench_chat[8]
    diff = diff_texts(record["chosen"][0], record["rejected"][0])
    assert [d.kind for d in diff.differences] == ["insert"]
    assert diff.changed_words("a") == []
    assert diff.changed_words("b") == ["shoes", ","]
    assert [(t, c) for t, c, _ in diff.segments("b") if c] == [("shoes,", "nw-ins")]
    # the focused insertion leaves an empty nw-current mark where it would go on the chosen side
    assert ("", "nw-ins nw-current", None) in diff.segments("a", current=0)


def test_segments_cover_each_text_exactly_and_mark_the_current_difference():
    a = "The cat sat on the mat.\n\nIt was 6.0 feet long and very calm."
    b = "The dog sat on the mat.\n\nIt was 5.0 feet long and calm."
    diff = diff_texts(a, b)
    assert "".join(t for t, _, _ in diff.segments("a")) == a
    assert "".join(t for t, _, _ in diff.segments("b")) == b
    assert [diff.words("a", k) for k in range(len(diff.differences))] == [["cat"], ["6.0"], ["very"]]
    assert [diff.words("b", k) for k in range(len(diff.differences))] == [["dog"], ["5.0"], []]
    classes = [c for _, c, _ in diff.segments("a", current=1) if c]
    assert classes == ["nw-chg", "nw-chg nw-current", "nw-del"]


def test_marks_are_escaped_like_any_data_text():
    diff = diff_texts("Pay <b>$5</b> now", "Pay <script>x</script> now")
    html = marked_html(diff.segments("b", current=0))
    assert "<script" not in html and "<b>" not in html
    assert html.startswith("Pay &lt;") and "&lt;/" in html
    assert '<mark class="nw-chg nw-current">' in html


def test_identical_and_empty_texts():
    same = diff_texts("one two\nthree", "one two\nthree")
    assert same.differences == () and same.similarity == 1.0
    empty = diff_texts("", "")
    assert empty.differences == () and empty.similarity == 1.0
    one_sided = diff_texts("", "new words")
    assert [d.kind for d in one_sided.differences] == ["insert"]


def test_window_cuts_around_the_difference_in_a_long_text():
    filler = " ".join(f"word{k}" for k in range(3000))
    a = filler + " the answer is yes " + filler
    b = filler + " the answer is no " + filler
    diff = diff_texts(a, b)
    assert len(diff.differences) == 1
    start, end = diff.window("a", 0, context=300)
    s, e = diff.differences[0].a
    assert start <= s < e <= end and end - start < 800
    assert a[start:end].split()[0].startswith("word")  # cut at a word boundary


def test_quick_similarity_tells_near_identical_from_different(rmbench_chat):
    record = rmbench_chat[95]
    assert quick_similarity(record["chosen"][0], record["rejected"][0]) > 0.6
    # the detailed styles of one RM-Bench prompt are rewritten, not near-identical
    assert quick_similarity(record["chosen"][0], record["chosen"][2]) < 0.6
    assert quick_similarity("a b c d", "w x y z") == 0.0
    assert quick_similarity("same", "same") == 1.0
