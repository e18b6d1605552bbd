"""Reward-model metrics, exactly as ``shared/docs/benchmarks.md`` (sections 2 and 4) says.

Every function takes *entries*: mappings with ``subset``, ``chosen_scores`` and
``rejected_scores`` (lists of floats), plus ``domain`` for RM-Bench when known.
This is the Long-form RewardBench output format, one entry per prompt.

Ties count as wrong everywhere (comparisons are strict). An entry with a missing
score (``None``: e.g. skipped because it was longer than the model's window) is
left out of every figure and counted under ``missing``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Entry = Mapping[str, Any]

RMBENCH_DOMAINS = ("chat", "code", "math", "safety")
RMBENCH_STYLES = ("concise", "detailed plain", "detailed markdown")
# Subsets seen in the RM-Bench release (shared/data/rm-bench/*.json and the math file).
RMBENCH_SUBSET_DOMAINS: dict[str, str] = {
    "alpacaeval": "chat",
    "bigcode/humanevalpack": "code",
    "math-prm": "math",
    "xstest-should-refuse": "safety",
    "refusals-dangerous": "safety",
    "refusals-offensive": "safety",
    "donotanswer": "safety",
    "xstest-should-respond": "safety",
}
_PREFIX_DOMAINS = (
    ("safety", "safety"), ("refusals", "safety"), ("xstest", "safety"), ("donotanswer", "safety"),
    ("chat", "chat"), ("alpacaeval", "chat"), ("code", "code"), ("hep-", "code"),
    ("humanevalpack", "code"), ("bigcode", "code"), ("math", "math"),
)


def _complete(entry: Entry) -> bool:
    chosen, rejected = entry.get("chosen_scores") or [], entry.get("rejected_scores") or []
    return bool(chosen) and bool(rejected) and None not in chosen and None not in rejected


def bon_correct(chosen: Sequence[float], rejected: Sequence[float]) -> bool:
    """Best-of-n: every chosen score strictly above every rejected score (ties are wrong)."""
    return bool(chosen) and bool(rejected) and min(chosen) > max(rejected)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def best_of_n(entries: Iterable[Entry]) -> dict[str, Any]:
    """Strict best-of-n accuracy per subset and overall (overall = mean over entries)."""
    return _per_subset(entries, "bon", "n",
                       lambda e: [bon_correct(e["chosen_scores"], e["rejected_scores"])])


def pairwise(entries: Iterable[Entry]) -> dict[str, Any]:
    """Accuracy over every (chosen, rejected) pair, per subset and overall (ties wrong)."""
    return _per_subset(entries, "pairwise", "pairs",
                       lambda e: [c > r for c in e["chosen_scores"] for r in e["rejected_scores"]])


def _per_subset(entries: Iterable[Entry], kind: str, count: str,
                outcomes_of: Callable[[Entry], list[bool]]) -> dict[str, Any]:
    """Accuracy of the outcomes of each complete entry, per subset and overall; entries
    with a missing score are counted in ``missing`` and left out."""
    per_subset: dict[str, list[bool]] = defaultdict(list)
    missing = 0
    for entry in entries:
        if not _complete(entry):
            missing += 1
            continue
        per_subset[str(entry.get("subset", ""))].extend(outcomes_of(entry))
    outcomes = [ok for values in per_subset.values() for ok in values]
    return {
        "kind": kind,
        "accuracy": _mean(outcomes),
        "correct": sum(outcomes),
        count: len(outcomes),
        "missing": missing,
        "subsets": {
            s: {"accuracy": _mean(v), "correct": sum(v), count: len(v)}
            for s, v in sorted(per_subset.items())
        },
    }


def rmbench_domain(entry: Entry) -> str:
    """The pooled RM-Bench domain (chat, code, math, safety) of an entry.

    From its ``domain`` field when present (``safety-refuse`` → ``safety``), else
    from its subset name; raises ``ValueError`` when neither tells.
    """
    for value in (entry.get("domain"), entry.get("subset")):
        if not value:
            continue
        name = str(value).lower()
        if name in RMBENCH_SUBSET_DOMAINS:
            return RMBENCH_SUBSET_DOMAINS[name]
        for prefix, domain in _PREFIX_DOMAINS:
            if name.startswith(prefix):
                return domain
    raise ValueError(
        f"cannot tell the RM-Bench domain of entry {entry.get('id')!r} "
        f"(subset {entry.get('subset')!r}): add a 'domain' field (chat, code, math or safety)"
    )


def rmbench_matrix(entries: Sequence[Entry]) -> list[list[float]]:
    """M[i][j] = fraction of entries with score(chosen[i]) > score(rejected[j]), strictly."""
    size = 3
    counts = [[0] * size for _ in range(size)]
    for entry in entries:
        chosen, rejected = entry["chosen_scores"], entry["rejected_scores"]
        if len(chosen) != size or len(rejected) != size:
            raise ValueError(
                f"RM-Bench entry {entry.get('id')!r} needs 3 chosen and 3 rejected scores "
                f"(one per style), got {len(chosen)} and {len(rejected)}"
            )
        for i in range(size):
            for j in range(size):
                counts[i][j] += chosen[i] > rejected[j]
    n = len(entries)
    return [[c / n if n else 0.0 for c in row] for row in counts]


def rmbench_from_matrix(matrix: Sequence[Sequence[float]]) -> dict[str, float]:
    """hard = mean of the upper triangle (i<j), normal = diagonal, easy = lower triangle."""
    size = len(matrix)
    upper = [matrix[i][j] for i in range(size) for j in range(size) if i < j]
    lower = [matrix[i][j] for i in range(size) for j in range(size) if i > j]
    diagonal = [matrix[i][i] for i in range(size)]
    hard, normal, easy = sum(upper) / len(upper), sum(diagonal) / size, sum(lower) / len(lower)
    return {"hard": hard, "normal": normal, "easy": easy, "score": (hard + normal + easy) / 3}


def rmbench(entries: Iterable[Entry]) -> dict[str, Any]:
    """RM-Bench per domain (matrix, hard/normal/easy, score) and overall.

    overall = mean of the domain scores over the domains present; hard, normal and
    easy overall are likewise means over domains (as in RM-Bench's own code).
    """
    by_domain: dict[str, list[Entry]] = defaultdict(list)
    missing = 0
    for entry in entries:
        if not _complete(entry):
            missing += 1
            continue
        by_domain[rmbench_domain(entry)].append(entry)
    domains: dict[str, Any] = {}
    for domain in sorted(by_domain, key=lambda d: (RMBENCH_DOMAINS + (d,)).index(d)):
        matrix = rmbench_matrix(by_domain[domain])
        domains[domain] = {"n": len(by_domain[domain]), "matrix": matrix, **rmbench_from_matrix(matrix)}

    def over_domains(key: str) -> float | None:
        return _mean([d[key] for d in domains.values()])

    return {
        "kind": "rmbench",
        "accuracy": over_domains("score"),
        "hard": over_domains("hard"),
        "normal": over_domains("normal"),
        "easy": over_domains("easy"),
        "n": sum(d["n"] for d in domains.values()),
        "missing": missing,
        "domains": domains,
    }


METRICS = {"bon": best_of_n, "pairwise": pairwise, "rmbench": rmbench}


def compute(kind: str, entries: Iterable[Entry]) -> dict[str, Any]:
    """Dispatch by name: ``bon``, ``pairwise`` or ``rmbench``."""
    if kind not in METRICS:
        raise ValueError(f"unknown metric {kind!r}: use one of {', '.join(METRICS)}")
    return METRICS[kind](entries)
