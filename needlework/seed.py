"""Seeding the built-in demo datasets (written by the project, see needlework.demo)."""

from __future__ import annotations

from sqlite_utils import Database

from needlework.datasets import ImportSummary, import_bytes
from needlework.formats import garage, lfrb
from store.datasets import list_datasets

DEMO_GROUNDING = "demo-grounding"
DEMO_PREFERENCE = "demo-preference"


def seed_demo(db: Database, *, if_empty: bool = False) -> list[ImportSummary]:
    """Import the demo grounding and preference sets through the normal import path.

    With ``if_empty`` nothing happens when the database already has datasets;
    otherwise demo datasets that already exist are left as they are.
    """
    from needlework import demo  # noqa: PLC0415  (the generator is only needed here)

    existing = {row["name"] for row in list_datasets(db)}
    if if_empty and existing:
        return []
    done = []
    sets = (
        (DEMO_GROUNDING, "garage", lambda: garage.dump(demo.grounding_records())),
        (DEMO_PREFERENCE, "lfrb", lambda: lfrb.dump(demo.preference_records())),
    )
    for name, fmt, build in sets:
        if name in existing:
            continue
        done.append(
            import_bytes(db, build().encode("utf-8"), f"{name}.jsonl", format=fmt,
                         dataset=name, created_by="demo")
        )
    return done
