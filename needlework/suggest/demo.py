"""Suggestions on the demo data, offline, so that ``make run`` shows them with no key.

- **demo-grounding**: the rules judge (:mod:`needlework.rag.rules_judge`, served on
  127.0.0.1 for the run) suggests every passage's label and the question dimensions,
  through the same ``suggest`` job the app runs;
- **demo-preference**: the demo reward model scores the set (once: a scored set is
  not scored again) and its margins become suggested verdicts.

Idempotent: a dataset that already has suggestions from the demo's source is left as
it is; a dataset that is missing (renamed, deleted) is skipped with a reason.
"""

from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database

from needlework.rag.rules_server import start_rules_server
from needlework.suggest.job import DIMS, LABELS, SuggestSpec, run_suggest_here
from needlework.suggest.verdicts import suggest_verdicts
from store.datasets import get_dataset
from store.review import scored_runs
from store.suggestions import suggestion_sources

GROUNDING, PREFERENCE = "demo-grounding", "demo-preference"


def seed_demo_suggestions(db: Database, db_path: str | Path, reward_model: str | Path
                          ) -> list[str]:
    """Seed the demo suggestions (see the module docstring); returns one line per dataset
    saying what was done."""
    lines = []
    row = get_dataset(db, GROUNDING)
    if row is None or row["kind"] != "grounding":
        lines.append(f"{GROUNDING}: not here, no suggestions")
    elif any(s["source"].startswith("judge:") for s in suggestion_sources(db, GROUNDING)):
        lines.append(f"{GROUNDING}: suggestions already there")
    else:
        with start_rules_server() as rules:
            job = run_suggest_here(db, db_path, SuggestSpec(GROUNDING, rules.connection(),
                                                            (LABELS, DIMS)))
        result = job.get("result") or {}
        lines.append(f"{GROUNDING}: {job['status']}, {result.get('suggestions', 0)} suggestion(s) "
                     f"from the rules judge" + (f" ({job['error']})" if job.get("error") else ""))
    row = get_dataset(db, PREFERENCE)
    if row is None or row["kind"] != "preference":
        lines.append(f"{PREFERENCE}: not here, no suggestions")
    elif any(s["source"].startswith("reward:") for s in suggestion_sources(db, PREFERENCE)):
        lines.append(f"{PREFERENCE}: suggestions already there")
    else:
        runs = [r for r in scored_runs(db, PREFERENCE) if not r["fingerprint"].startswith("judge:")]
        if not runs:
            from needlework.rewards.loading import load_reward_model  # noqa: PLC0415
            from needlework.rewards.runs import score_dataset  # noqa: PLC0415

            score_dataset(db, load_reward_model(reward_model), PREFERENCE)
            runs = [r for r in scored_runs(db, PREFERENCE)
                    if not r["fingerprint"].startswith("judge:")]
        done = suggest_verdicts(db, PREFERENCE, runs[0]["fingerprint"], runs[0]["variant"],
                                who="demo")
        lines.append(f"{PREFERENCE}: {done['suggestions']} suggested verdict(s) from "
                     f"{done['source']}")
    return lines
