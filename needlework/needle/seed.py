"""The needle lab's seeded demo result: a finished needle run the lab opens with.

The demo needle set (:data:`DEMO_NEEDLES`) is built from the demo haystacks by the needle
builder and scored by the project's own needle run (:func:`needlework.needle.run.run_needles`,
the code the lab's ``needle`` job runs) with a demo model variant whose limitation is real
and stated (:data:`needlework.rewards.demo_model.VARIANTS`, e.g. ``short``: trained only on
responses of a paragraph or two). Nothing is drawn or written by hand: the heatmap is what
that model scored. The grid is smaller than the default (:data:`SEED_LENGTHS`, 10 positions,
:data:`SEED_HAYSTACKS` haystacks) so that it scores in about a minute on two CPU cores.

Seeding is idempotent: a set that is already fully scored by the model is left as it is, a
partly scored one is finished from the score cache, and a needle set of that name that the
demo did not create is never touched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

DEMO_NEEDLES = "demo-needles"
DEMO_CREATOR = "demo"
SEED_LENGTHS: tuple[int, ...] = (250, 500, 1000, 2000)
SEED_HAYSTACKS = 10
DEMO_NOTE = "demo_result"  # the key in the needle dataset's ``meta``
REPORT_FILE = "needlework_demo.json"  # needlework.rewards.demo_model.REPORT_FILE


@dataclass
class SeedOutcome:
    """What :func:`seed_demo_needles` did: ``status`` is ``seeded``, ``kept`` (already
    scored) or ``skipped`` (with ``reason``)."""

    status: str
    dataset: str = DEMO_NEEDLES
    records: int = 0
    scored: int = 0
    build_seconds: float = 0.0
    run_seconds: float = 0.0
    model: str = ""
    reason: str = ""

    def line(self) -> str:
        """One line for the terminal."""
        if self.status == "seeded":
            return (f"{self.dataset}: {self.records} needle pairs built in {self.build_seconds:.1f} s "
                    f"and scored by {self.model} in {self.run_seconds:.1f} s (the needle lab's "
                    "demo result)")
        if self.status == "kept":
            return f"{self.dataset}: already scored by {self.model}, kept"
        return f"{self.dataset}: not seeded: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def demo_note(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    """The seeded result's note kept in a needle dataset's ``meta`` (model, limitation,
    grid, seconds), or ``None`` for a set the demo did not score."""
    note = (meta or {}).get(DEMO_NOTE)
    return note if isinstance(note, dict) else None


def _limitation(model_dir: Path) -> tuple[str, str]:
    """(variant, limitation) from the demo model's report (read here, without importing the
    engine: a seeded result is kept at start-up in a fraction of a second); a folder without
    one is refused."""
    path = model_dir / REPORT_FILE
    report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    if not isinstance(report, dict):
        raise ValueError(f"{model_dir}: no demo model here (install the shipped ones with "
                         "'python -m needlework demo-models install')")
    return str(report.get("variant") or ""), str(report.get("limitation") or "")


def _build(db: Database, log: Callable[[str], None]) -> tuple[int, float]:
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415
    from needlework.needle.builder import BuildOptions, build_from_source  # noqa: PLC0415

    started = time.perf_counter()
    result = build_from_source("demo", BuildOptions(lengths=SEED_LENGTHS), demo_count=SEED_HAYSTACKS)
    import_bytes(db, result.jsonl().encode("utf-8"), f"{DEMO_NEEDLES}.jsonl", format="needle",
                 dataset=DEMO_NEEDLES, created_by=DEMO_CREATOR)
    seconds = time.perf_counter() - started
    log(f"built {DEMO_NEEDLES}: {result.summary.records} pairs in {seconds:.1f} s")
    return result.summary.records, seconds


def seed_demo_needles(db: Database, model_dir: str | Path, *,
                      log: Callable[[str], None] | None = None) -> SeedOutcome:
    """Build :data:`DEMO_NEEDLES` (when missing) and score it with the demo model variant in
    ``model_dir`` through :func:`~needlework.needle.run.run_needles`, saving the scores as the
    dataset's item scores (the lab's stored result) and a note in the dataset's ``meta``.

    Raises ``ValueError`` when ``model_dir`` holds no demo model or it does not load."""
    from store.datasets import get_dataset, iter_items, set_dataset_meta  # noqa: PLC0415
    from store.scores import scored_models  # noqa: PLC0415

    log = log or (lambda _line: None)
    model_dir = Path(model_dir)
    variant, limitation = _limitation(model_dir)
    row = get_dataset(db, DEMO_NEEDLES)
    if row is not None and row.get("created_by") != DEMO_CREATOR:
        return SeedOutcome("skipped", reason="a needle set of that name not made by the demo exists")
    build_seconds = 0.0
    if row is None:
        _, build_seconds = _build(db, log)
        row = get_dataset(db, DEMO_NEEDLES)
        assert row is not None
    records = [item["record"] for item in iter_items(db, DEMO_NEEDLES)]
    note = demo_note(row["meta"])
    if note and note.get("model") == model_dir.name and any(  # kept: no model load at start-up
            Path(r["model"]).name == model_dir.name and r["items"] >= len(records)
            for r in scored_models(db, DEMO_NEEDLES)):
        return SeedOutcome("kept", records=len(records), model=model_dir.name)
    from needlework.needle.run import run_needles  # noqa: PLC0415  (the engine: only to score)
    from needlework.rewards.errors import RewardModelError  # noqa: PLC0415
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415
    from needlework.rewards.pipeline import RewardPipeline  # noqa: PLC0415

    try:
        rm = load_reward_model(str(model_dir), dtype="fp32", device="cpu")
    except RewardModelError as exc:
        raise ValueError(f"{model_dir}: {exc}") from None
    pipe = RewardPipeline(rm, db=db, truncation="skip")
    log(f"scoring {len(records)} needle pairs with {model_dir.name} (the lab's needle run)")
    started = time.perf_counter()
    result = run_needles(pipe, records, reuse_prefix="auto", dataset=DEMO_NEEDLES)
    run_seconds = time.perf_counter() - started
    note = {"model": model_dir.name, "variant": variant, "limitation": limitation,
            "lengths": list(SEED_LENGTHS), "haystacks": SEED_HAYSTACKS, "pairs": len(records),
            "run_seconds": round(run_seconds, 1),
            "at": datetime.now(UTC).isoformat(timespec="seconds")}
    set_dataset_meta(db, DEMO_NEEDLES, dict(row["meta"]) | {DEMO_NOTE: note})
    return SeedOutcome("seeded", records=len(records), scored=result.stats.scored,
                       build_seconds=round(build_seconds, 1), run_seconds=round(run_seconds, 1),
                       model=model_dir.name)
