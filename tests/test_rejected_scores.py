"""The selection ``--out`` file names responses by their index in the dataset: a scripted
judge, a shuffle that reorders the candidates, and every line recounted by hand from the
order shown and the letter the judge named."""

from __future__ import annotations

import json

from needlework.formats.preference import Preference
from needlework.judges.engine import run_judge, write_output
from needlework.judges.evaluate import selection_entry
from store import connect
from tests.judges_fixtures import FakeJudgeServer, last_user_text
from tests.test_judges_engine import BLOCK

# the response the scripted judge names in each item: the one that carries the word
TARGET = {"q0": ("rejected", 2), "q1": ("rejected", 0), "q2": ("rejected", 1),
          "q3": ("chosen", 0), "q4": ("rejected", 2), "q5": ("rejected", 1)}


def items() -> list[tuple[str, Preference]]:
    out = []
    for key, (side, index) in TARGET.items():
        chosen = [f"Chosen answer of {key}."]
        rejected = [f"Rejected answer {j} of {key}." for j in range(3)]
        (chosen if side == "chosen" else rejected)[index] += " PICKME"
        out.append((key, Preference(key, "chat", f"Question {key}?", chosen, rejected)))
    return out


def scripted(body: dict) -> str:
    """Names the response that carries PICKME, by the letter it was shown under."""
    for letter, text in BLOCK.findall(last_user_text(body)):
        if "PICKME" in text:
            return f"[[{letter}]]"
    return "no verdict"


def test_rejected_scores_follow_the_response_index_not_the_order_shown(tmp_path) -> None:
    db = connect(":memory:")
    with FakeJudgeServer(scripted) as server:
        from needlework.judges.connection import Connection  # noqa: PLC0415

        conn = Connection(server.base_url, "judge", key_env=None, max_tokens=16)
        run = run_judge(db, conn, items(), "selection", dataset="t", order="shuffle", seed=3)
    out = tmp_path / "out.jsonl"
    write_output(out, run)
    lines = [json.loads(s) for s in out.read_text().splitlines()]
    assert len(lines) == len(TARGET)
    identity = ["chosen[0]", "rejected[0]", "rejected[1]", "rejected[2]"]
    reordered = [line for line in lines if line["order"] != identity]
    # the shuffle really reorders: rejected ones shown out of their index order
    rejected_moved = [line for line in lines
                      if [m for m in line["order"] if m.startswith("rejected")]
                      != identity[1:]]
    assert len(reordered) >= 3 and len(rejected_moved) >= 2, [line["order"] for line in lines]
    for line in lines:
        side, index = TARGET[line["id"]]
        # by hand: the letter the judge named is a position in the order shown, and the
        # label at that position is the response the judge picked
        shown = line["order"][line["selected_idx"]]
        assert shown == f"{side}[{index}]"
        want_rejected = [1.0 if (side, j) == ("rejected", index) else 0.0 for j in range(3)]
        want_chosen = [1.0 if side == "chosen" else 0.0]
        assert line["rejected_scores"] == want_rejected, line
        assert line["chosen_scores"] == want_chosen, line
    # the figures: right only where the judge named the chosen response (q3)
    assert run.summary["accuracy"] == 1 / 6


def test_selection_entry_of_an_rmbench_pair_and_a_skipped_trial() -> None:
    """A pair of one chosen and one rejected response (RM-Bench's 3 × 3): one score each
    side, whatever the order; a skipped trial has no scores, by index too."""
    pair = {"item_key": "k", "subset": "s", "members": ["rejected[2]", "chosen[1]"],
            "valid": True, "picked": 0}
    assert selection_entry(pair) == {"id": "k", "subset": "s", "chosen_scores": [0.0],
                                     "rejected_scores": [1.0]}
    shown = {"item_key": "k", "subset": "s", "valid": True, "picked": 1,
             "members": ["rejected[1]", "rejected[2]", "chosen[0]", "rejected[0]"]}
    assert selection_entry(shown)["rejected_scores"] == [0.0, 0.0, 1.0]
    assert selection_entry({**shown, "skipped": True})["rejected_scores"] == [None] * 3
    assert selection_entry({**shown, "valid": False})["rejected_scores"] == [0.0] * 3
