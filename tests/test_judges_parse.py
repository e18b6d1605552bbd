"""Answer shapes a judge gives, parsed or marked invalid: never guessed."""

from __future__ import annotations

import pytest

from needlework.judges.parse import letters, parse_score, parse_selection, parse_yes_no

SELECTION = [
    # (answer, number of candidates, expected 0-based position or None for invalid)
    ("[[A]]", 2, 0),
    ("After comparing both, B is kinder.\n\n[[B]]", 2, 1),
    ("[[ b ]]", 2, 1),
    ("[[Response 2]]", 2, 1),
    ("[[Assistant C]]", 4, 2),
    ("[[D]]", 4, 3),
    ("Verdict: [[A]]. Response B insults the reader.", 2, 0),
    ('{"best": "B"}', 2, 1),
    ('```json\n{"choice": 2, "reason": "polite"}\n```', 2, 1),
    ('{"winner": "Response A"}', 4, 0),
    ('{"verdict": "[[C]]"}', 4, 2),
    ("Final verdict: B", 2, 1),
    ("Answer: Response 2", 2, 1),
    ("Verdict: B, because it stays polite.", 2, 1),
    ("My analysis...\nFinal answer: **A**", 2, 0),
    ("Response B is clearly better.", 2, 1),
    ("Assistant A is better", 2, 0),
    ("I choose A because it is polite.", 2, 0),
    ("The best response is B.", 2, 1),
    ("I would go with Response 3.", 4, 2),
    ("B", 2, 1),
    ("(b)", 2, 1),
    ("**Response 2**", 2, 1),
    ("Option D.", 4, 3),
    # invalid: contradictions, out of range, ties, no choice, ambiguous words
    ("[[A]] or [[B]]", 2, None),
    ("[[C]]", 2, None),
    ("[[Response 5]]", 4, None),
    ('{"best": "both"}', 2, None),
    ('{"best": true}', 2, None),
    ("It's a tie.", 2, None),
    ("[[tie]]", 2, None),
    ("Both are fine.", 2, None),
    ("", 2, None),
    ("   \n", 2, None),
    ("Answer: A good response needs more detail.", 2, None),
    ("I choose a response that is polite.", 2, None),
    ("2", 2, None),
    ("Response A is better in tone, but Response B is best overall.", 2, None),
    ("Final verdict: E", 4, None),
    ("T\ufffd\x1a\ufffdiz/ D\x1f", 2, None),
]


@pytest.mark.parametrize(("text", "n", "expected"), SELECTION)
def test_selection_shapes(text: str, n: int, expected: int | None) -> None:
    parsed = parse_selection(text, n)
    assert parsed.valid is (expected is not None), parsed
    assert parsed.value == expected
    if expected is None:
        assert parsed.reason, "an invalid answer says why"


SCORES = [
    ("[[7]]", 7),
    ("The response is thorough.\nRating: 8", 8),
    ("Score: 7.5/10", 7.5),
    ("I rate it 7 out of 10.", 7),
    ("6/10", 6),
    ('{"score": 9}', 9),
    ('{"rating": "7"}', 7),
    ("Overall: **6**", 6),
    ("The response is decent. 7", 7),
    ("so I give it 8.", 8),
    ("8", 8),
    ("10", 10),
    ("0", 0),
    ("Final rating: 3", 3),
    # invalid
    ("4/5", None),
    ("Rating: 7-8", None),
    ("Rating: 7 to 8", None),
    ("Score: 11", None),
    ("-3", None),
    ("It has 3 problems.", None),
    ("Rating: 7 ... Final rating: 8", None),
    ("7/10 and then 8/10", None),
    ('{"score": "high"}', None),
    ("[[4]] [[9]]", None),
    ("", None),
    ("Excellent work!", None),
]


@pytest.mark.parametrize(("text", "expected"), SCORES)
def test_score_shapes(text: str, expected: float | None) -> None:
    parsed = parse_score(text, 0, 10)
    assert parsed.valid is (expected is not None), parsed
    assert parsed.value == expected


YES_NO = [
    ("[[YES]]", True),
    ("The number changed from 1900 to 1901. [[NO]]", False),
    ("no", False),
    ("Verdict: yes", True),
    ('{"verified": true}', True),
    ("[[YES]] [[NO]]", None),
    ("maybe", None),
]


@pytest.mark.parametrize(("text", "expected"), YES_NO)
def test_yes_no_shapes(text: str, expected: bool | None) -> None:
    parsed = parse_yes_no(text)
    assert parsed.valid is (expected is not None), parsed
    assert parsed.value == expected


def test_shape_count_covers_the_brief() -> None:
    assert len(SELECTION) + len(SCORES) + len(YES_NO) >= 30


def test_letters_bounds() -> None:
    assert letters(4) == ["A", "B", "C", "D"]
    with pytest.raises(ValueError):
        letters(0)
    with pytest.raises(ValueError):
        parse_selection("[[A]]", 27)
