"""Seeding the built-in demo datasets (written by the project, see needlework.demo)."""

from __future__ import annotations

from sqlite_utils import Database

from needlework.datasets.transfer import ImportSummary, import_bytes
from needlework.formats import garage, lfrb, rewardbench2, rmbench
from store.datasets import get_dataset, list_datasets

DEMO_GROUNDING = "demo-grounding"
DEMO_PREFERENCE = "demo-preference"
DEMO_RMBENCH = "demo-rmbench"
DEMO_REWARDBENCH2 = "demo-rewardbench2"
DEMO_CREATOR = "demo"


def seed_demo(db: Database, *, if_empty: bool = False) -> list[ImportSummary]:
    """Import the demo grounding, preference, RM-Bench and RewardBench 2 sets through the
    normal import path, and store the demo model answers for the grounding set (:func:`seed_demo_answers`).

    With ``if_empty`` no dataset is imported when the database already has datasets;
    otherwise demo datasets that already exist are left as they are.
    """
    from needlework import demo  # noqa: PLC0415  (the generator is only needed here)

    existing = {row["name"] for row in list_datasets(db, archived=True)}
    done = []
    sets = (
        (DEMO_GROUNDING, "garage", "jsonl", lambda: garage.dump(demo.grounding_records())),
        (DEMO_PREFERENCE, "lfrb", "jsonl", lambda: lfrb.dump(demo.preference_records())),
        (DEMO_RMBENCH, "rmbench", "json", lambda: rmbench.dump(demo.rmbench_records())),
        (DEMO_REWARDBENCH2, "rewardbench2", "jsonl",
         lambda: rewardbench2.dump(demo.rewardbench2_records())),
    )
    for name, fmt, ext, build in sets:
        if name in existing or (if_empty and existing):
            continue
        done.append(
            import_bytes(db, build().encode("utf-8"), f"{name}.{ext}", format=fmt,
                         dataset=name, created_by=DEMO_CREATOR)
        )
    seed_demo_answers(db)
    return done


def seed_demo_answers(db: Database) -> int:
    """Store the demo model answers (``needlework.demo.rag_answers``) for the demo
    grounding set, when that set is the demo's own and has no stored answers yet;
    returns how many answer sets were stored."""
    from needlework.demo.rag_answers import demo_answer_sets  # noqa: PLC0415
    from needlework.rag.answers import AnswerSet  # noqa: PLC0415
    from store.rag import answer_sets, save_answer_set  # noqa: PLC0415

    row = get_dataset(db, DEMO_GROUNDING)
    if row is None or row.get("created_by") != DEMO_CREATOR or answer_sets(db, DEMO_GROUNDING):
        return 0
    stored = 0
    for model, answers in demo_answer_sets():
        digest = AnswerSet(model, answers, "demo").digest()
        save_answer_set(db, DEMO_GROUNDING, model, answers, source="demo", digest=digest,
                        created_by=DEMO_CREATOR)
        stored += 1
    return stored
