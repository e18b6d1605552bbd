"""Needles written by an LLM: rewrite a chunk, verify it, keep only what was verified."""

from __future__ import annotations

import re

import pytest

from needlework.formats import needle as needle_format
from needlework.judges.connection import Connection
from needlework.judges.needle_edits import parse_rewrite
from needlework.judges.needles import Haystack, write_needles
from needlework.judges.prompts import template
from store import connect
from tests.judges_fixtures import FakeJudgeServer, last_user_text

PARAS = [
    "The Gregorian calendar skips three leap days every four hundred years, which is why the "
    "year 1900 was not a leap year although it is divisible by four.",
    "Bakers let dough rest in a warm place so that the yeast can produce gas and the loaf can "
    "rise before it goes into the oven for baking.",
    "Rivers slow down where they meet the sea, and the sand they carry settles there to form "
    "wide deltas over many centuries of quiet work.",
]
TEXT = "\n\n".join(PARAS)


def writer(body: dict) -> str:
    text = last_user_text(body)
    if text.startswith("Here are two versions"):
        return "The year changed. [[YES]]" if "1901" in text else "Nothing wrong. [[NO]]"
    passage = re.search(r"\[Passage\]\n(.*)\n\[End of passage\]", text, re.S).group(1)
    if "1900" in passage:
        return f"<rewrite>{passage.replace('1900', '1901')}</rewrite>"
    if "Bakers" in passage:
        return "Sure! Here is something completely different."
    return f"<rewrite>{passage.replace('sea', 'ocean')}</rewrite>"


def test_only_verified_rewrites_are_kept_with_their_prompts() -> None:
    db = connect(":memory:")
    hay = [Haystack("h1", "Tell me about calendars, bread and rivers.", TEXT)]
    with FakeJudgeServer(writer) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        ours = template("needle", "needlework")  # the project's rewrite, asked for by name
        done = write_needles(db, conn, hay, aspect="factuality", per_haystack=3, seed=1,
                             template=ours)
        again = write_needles(db, conn, hay, aspect="factuality", per_haystack=3, seed=1,
                              template=ours)
    assert len(done.records) == 1
    record = done.records[0]
    assert needle_format.validate(record) == []
    assert record["chosen"] == [TEXT] and "1901" in record["rejected"][0]
    assert 0.0 < record["tagged_position"] < 0.5  # the change is in the first paragraph
    assert record["writer"]["rewrite_prompt"].startswith("Below is a passage")
    assert "[[YES]]" in record["writer"]["check_answer"]
    reasons = sorted(a["reason"] for a in done.attempts)
    assert any(r.startswith("rewrite refused: no <rewrite>") for r in reasons)
    assert "check said no" in reasons and "verified" in reasons
    assert any(r.startswith("only 1 of 3 needles") for r in reasons)
    assert done.summary()["kept"] == 1 and done.requests == 5  # 3 rewrites, 2 checks
    assert again.requests == 0 and again.records == done.records


@pytest.mark.parametrize(("answer", "valid"), [
    ("<rewrite>The year 1901 was special.</rewrite>", True),
    ("no tags here", False),
    ("<rewrite></rewrite>", False),
    ("<rewrite>The year 1900 was special.</rewrite>", False),  # unchanged
    ("<rewrite>Completely unrelated words about cats and dogs everywhere.</rewrite>", False),
    ("<rewrite>a</rewrite><rewrite>b</rewrite>", False),
])
def test_rewrite_parse(answer: str, valid: bool) -> None:
    assert parse_rewrite(answer, "The year 1900 was special.").valid is valid


def test_unknown_aspect_is_refused() -> None:
    with pytest.raises(ValueError, match="aspect"):
        write_needles(connect(":memory:"), Connection("http://127.0.0.1:9/v1", "m", key_env=None),
                      [], aspect="style")
