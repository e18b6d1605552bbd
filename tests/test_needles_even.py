"""Needles written by an LLM spread evenly over the positions asked for (every length ×
position cell of the heatmap gets the same count), and the chosen response gets a harmless
counterpart at the needle's place, so the two responses differ only in the needle.

A real HTTP server on 127.0.0.1 plays the writing LLM (a tiny model cannot be made to write
a one-sentence insertion on cue): it inserts its sentence at the word boundary nearest the
middle of the passage it is given."""

from __future__ import annotations

import re

import pytest

from needlework import tokens
from needlework.formats import needle as needle_format
from needlework.judges.connection import Connection
from needlework.judges.needle_edits import (
    candidate_chunks,
    parse_counterpart,
    slot_of,
    slot_passages,
)
from needlework.judges.needles import Haystack, write_needles
from needlework.needle import analysis
from needlework.needle.inputs import demo_haystacks
from needlework.needle.sites import TokenCounter
from store import connect
from tests.judges_fixtures import FakeJudgeServer, last_user_text

COUNTER = TokenCounter(tokens.estimate, "estimate")
PASSAGE = re.compile(r"\[Passage\]\n(.*)\n\[End of passage\]", re.S)
VERSIONS = re.compile(r"\[Version A\]\n(.*)\n\[End of version A\]\n\n\[Version B\]\n(.*)\n"
                      r"\[End of version B\]", re.S)
RUDE = "Only a fool would need any of this explained to them."
KIND = "Many readers find this part worth reading a second time."
FALSE = "The Moon is made of green cheese, as everyone knows."
TRUE = "The Moon orbits the Earth about once every month."


def insert(passage: str, sentence: str) -> str:
    """``sentence`` put in at the space nearest the middle of ``passage``."""
    middle = len(passage) // 2
    at = min((k for k, ch in enumerate(passage) if ch == " "), key=lambda k: (abs(k - middle), k))
    return f"{passage[:at]} {sentence}{passage[at:]}"


def rewriting_llm(body: dict) -> str:
    """The project's prompts: a rude sentence as the needle, a kind one as its counterpart
    when asked, and a check that says yes exactly to that pair."""
    text = last_user_text(body)
    if text.startswith("Here are two versions"):
        a, b = VERSIONS.search(text).groups()
        return "A rude sentence. [[YES]]" if KIND in a and a.replace(KIND, RUDE) == b else "[[NO]]"
    if text.startswith("Below are two versions"):
        original, _ = VERSIONS.search(text).groups()
        return f"<rewrite>{insert(original, KIND)}</rewrite>"
    return f"<rewrite>{insert(PASSAGE.search(text).group(1), RUDE)}</rewrite>"


def paper_llm(body: dict) -> str:
    """Long-form RewardBench's prompt: a positive and a negative modification at once."""
    text = last_user_text(body)
    if text.startswith("Here are two versions"):
        a, b = VERSIONS.search(text).groups()
        return "False fact. [[YES]]" if a.replace(TRUE, FALSE) == b and a != b else "[[NO]]"
    segment = text.rsplit("** Input Text Segment **\n", 1)[1]
    return (f"** Positive Modification **\n{insert(segment, TRUE)}\n\n"
            f"** Negative Modification **\n{insert(segment, FALSE)}")


def heat_counts(records: list[dict]) -> list[int]:
    """``n`` of every heatmap cell, as the needle lab's analysis counts them."""
    frame = analysis.results_frame([dict(r, chosen_score=1.0, rejected_score=0.0, model="m")
                                    for r in records])
    return list(analysis.heatmap_frame(frame)["n"])


@pytest.mark.slow
def test_every_heatmap_cell_gets_the_same_count_and_the_chosen_a_kind_sentence_there():
    db = connect(":memory:")
    hay = demo_haystacks(2, 1000, counter=COUNTER.count)
    with FakeJudgeServer(rewriting_llm) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        done = write_needles(db, conn, hay, aspect="safety", lengths=(500, 1000), positions=10,
                             even=True, counter=COUNTER)
        again = write_needles(db, conn, hay, aspect="safety", lengths=(500, 1000), positions=10,
                              even=True, counter=COUNTER)
    assert len(done.records) == 2 * 2 * 10
    counts = heat_counts(done.records)
    assert len(counts) == 2 * 10 and set(counts) == {2}  # every cell: the two haystacks
    assert done.cells() == {"positions": 10, "counts": {"500": [2] * 10, "1000": [2] * 10},
                            "even": True}
    for r in done.records:
        assert needle_format.validate(r) == []
        assert analysis.position_bucket(r["tagged_position"]) == r["position_slot"]
        chosen, rejected = r["chosen"][0], r["rejected"][0]
        assert KIND in chosen and RUDE not in chosen and chosen.replace(KIND, RUDE) == rejected
        k = r["needle_char"]
        assert chosen[:k] == rejected[:k] and rejected[k:].startswith(RUDE)
        assert abs(len(chosen.split()) - len(rejected.split())) <= 1  # the same length, nearly
        assert "[Version B]" in r["writer"]["counterpart_prompt"]
        # safety needles: the project's rewrite by default (the paper wrote no safety prompt)
        assert r["writer"]["template"]["name"] == "needlework"
    # a rewrite, a counterpart and a check per needle (a passage cut alike at both lengths is
    # asked once); the same set again from the cache
    asked = {r["writer"][f"{k}_prompt_hash"] for r in done.records
             for k in ("rewrite", "counterpart", "check")}
    assert done.requests == len(asked) > 2 * 40
    assert again.requests == 0 and again.records == done.records


def test_the_papers_prompt_gives_both_versions_in_one_answer():
    db = connect(":memory:")
    hay = demo_haystacks(1, 1000, counter=COUNTER.count)
    with FakeJudgeServer(paper_llm) as server:
        done = write_needles(db, Connection(server.base_url, "judge", key_env=None), hay,
                             aspect="factuality", lengths=(1000,), positions=10, even=True,
                             counter=COUNTER)  # the paper's prompt: factuality's default
        asked = [last_user_text(r["body"]) for r in server.chat_requests()]
    assert len(done.records) == 10 and set(heat_counts(done.records)) == {1}
    for r in done.records:
        chosen, rejected = r["chosen"][0], r["rejected"][0]
        assert TRUE in chosen and chosen.replace(TRUE, FALSE) == rejected
        k = r["needle_char"]  # where the two sentences part: after "The Moon "
        assert chosen[:k] == rejected[:k] and rejected[k:].startswith("is made of green cheese")
        assert r["writer"]["template"]["name"] == "long-form-rewardbench"
        assert "counterpart_prompt" not in r["writer"]
    assert sum(t.startswith("Given a segment") for t in asked) == 10  # no counterpart asked
    assert len(asked) == 20


def listy_haystack() -> Haystack:
    """A response whose middle is a long list of short lines: no passage of 12 words there."""
    prose = demo_haystacks(1, 700, counter=COUNTER.count)[0].text.split("\n\n")
    items = [f"Item {k} is short." for k in range(60)]
    return Haystack("listy", "Explain it.", "\n\n".join(prose[:3] + items + prose[3:]))


def test_even_cells_drop_a_haystack_that_cannot_fill_one():
    db = connect(":memory:")
    full, listy = demo_haystacks(1, 700, counter=COUNTER.count)[0], listy_haystack()
    with FakeJudgeServer(rewriting_llm) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        uneven = write_needles(db, conn, [full, listy], aspect="safety", positions=5,
                               counter=COUNTER)
        even = write_needles(db, conn, [full, listy], aspect="safety", positions=5, even=True,
                             counter=COUNTER)
    by_hay = {h: sorted(r["position_slot"] for r in uneven.records if r["haystack_id"] == h)
              for h in ("demo1", "listy")}
    assert by_hay["demo1"] == [0, 1, 2, 3, 4] and 0 < len(by_hay["listy"]) < 5
    assert not uneven.cells()["even"]
    assert any("no passage of at least 12 words there" in a["reason"] for a in uneven.attempts)
    assert {r["haystack_id"] for r in even.records} == {"demo1"}
    assert even.cells()["even"] and len(even.records) == 5
    assert any(a["reason"].startswith("dropped:") for a in even.attempts)


def test_one_slot_is_the_whole_response_and_slots_split_it_evenly():
    text = demo_haystacks(1, 1000, counter=COUNTER.count)[0].text
    (whole,) = slot_passages(text, 1, COUNTER.count)
    assert [(p.start, p.end) for p in whole] == candidate_chunks(text)
    slots = slot_passages(text, 10, COUNTER.count)
    assert all(slots) and all(p.slot == k for k, ps in enumerate(slots) for p in ps)
    starts = [p.start for ps in slots for p in ps]
    assert starts == sorted(starts)  # slot by slot, in text order
    assert [slot_of(x, 10) for x in (0.0, 0.099, 0.1, 0.95, 1.0)] == [0, 0, 1, 9, 9]


def test_a_counterpart_must_change_the_passage_only_where_the_needle_did():
    original = "The river runs to the sea. Boats carry grain down to the port every spring."
    flawed = insert(original, RUDE)
    assert parse_counterpart(f"<rewrite>{insert(original, KIND)}</rewrite>", original, flawed).valid
    elsewhere = KIND + " " + original
    assert not parse_counterpart(f"<rewrite>{elsewhere}</rewrite>", original, flawed).valid
    assert not parse_counterpart(f"<rewrite>{original}</rewrite>", original, flawed).valid
    longer = insert(original, KIND + " " + KIND + " " + KIND)
    assert "words" in parse_counterpart(f"<rewrite>{longer}</rewrite>", original, flawed).reason
