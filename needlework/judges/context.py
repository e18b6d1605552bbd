"""Fitting a judge prompt into the judge's context window, never silently.

A selection prompt carries every candidate; four 36K-token responses do not fit most
windows. The run's *context policy* decides, as for classifiers:

- ``skip``: the trial is not sent; it is reported and counts as missing;
- ``keep-start`` / ``keep-end``: every response over its fair share of the room is
  cut to that share, keeping its start (or its end), and a ``[... N tokens cut ...]``
  marker stands where text was removed, so the judge knows too.

The room is the window less the answer's ``max_tokens`` and a small margin for the
chat template. Shares are fair by *water-filling*: short responses keep all their
text and leave their unused room to the long ones. Token counts come from
:mod:`needlework.tokens` (``o200k_base`` when available, else an estimate): not the
judge's own tokenizer, so the margin matters; the method is recorded with the fit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from needlework import tokens

POLICIES = ("skip", "keep-start", "keep-end")
TEMPLATE_MARGIN = 32
CUT_MARKER = "[... {n} tokens cut ...]"
_WORDISH = re.compile(r"\w+|[^\w\s]", re.UNICODE)

Render = Callable[[Sequence[str]], list[dict[str, str]]]


@dataclass(frozen=True)
class Fit:
    """How the responses of one prompt were fitted: the texts to send, or ``skipped``."""

    responses: tuple[str, ...]
    prompt_tokens: int
    method: str
    skipped: bool = False
    cut: tuple[dict[str, int], ...] = field(default_factory=tuple)  # {response, tokens, kept}

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["responses"]
        return out


def count(text: str) -> tuple[int, str]:
    """(tokens, method) of ``text`` with the project's counter."""
    c = tokens.count_tokens(text)
    return c.tokens, c.method


def cut_text(text: str, keep: int, side: str) -> str:
    """``text`` cut to about ``keep`` tokens, keeping its start (``keep-start``) or end."""
    if side not in ("keep-start", "keep-end"):
        raise ValueError(f"side must be keep-start or keep-end, not {side!r}")
    keep = max(0, keep)
    enc = tokens.encoding(timeout=0)
    if enc is not None:
        ids = enc.encode(text, disallowed_special=())
        if len(ids) <= keep:
            return text
        part = ids[:keep] if side == "keep-start" else ids[len(ids) - keep:]
        return enc.decode(part)
    spans = [m.span() for m in _WORDISH.finditer(text)]
    if len(spans) <= keep:
        return text
    if keep == 0:
        return ""
    if side == "keep-start":
        return text[: spans[keep - 1][1]]
    return text[spans[len(spans) - keep][0]:]


def shares(lengths: Sequence[int], room: int) -> list[int]:
    """Water-filling: the most tokens each response may keep so that they sum to ``room``."""
    left, order, out = max(0, room), sorted(range(len(lengths)), key=lambda k: lengths[k]), list(lengths)
    remaining = len(lengths)
    for k in order:
        share = left // remaining if remaining else 0
        out[k] = min(lengths[k], share)
        left -= out[k]
        remaining -= 1
    return out


def fit_prompt(render: Render, responses: Sequence[str], *, window: int | None, reserve: int,
               policy: str) -> Fit:
    """Fit ``responses`` into ``render(responses)`` for a ``window``-token judge.

    ``reserve`` is the room kept for the answer (``max_tokens``). ``window=None``
    means the window is unknown: nothing is cut or skipped, and the fit says so
    (``method`` ends in ``, unchecked``).
    """
    if policy not in POLICIES:
        raise ValueError(f"context policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    full = "\n".join(m["content"] for m in render(responses))
    total, method = count(full)
    if window is None:
        return Fit(tuple(responses), total, method + ", unchecked")
    limit = window - reserve - TEMPLATE_MARGIN
    if total <= limit:
        return Fit(tuple(responses), total, method)
    if policy == "skip":
        return Fit(tuple(responses), total, method, skipped=True)
    overhead, _ = count("\n".join(m["content"] for m in render([""] * len(responses))))
    lengths = [count(r)[0] for r in responses]
    marker, _ = count(CUT_MARKER.format(n=10**6))
    room = limit - overhead - marker * len(responses)
    for _ in range(4):  # the recount can overshoot a little: shrink and try again
        kept = shares(lengths, room)
        texts, cut = [], []
        for k, (text, n, keep) in enumerate(zip(responses, lengths, kept, strict=True)):
            if keep >= n:
                texts.append(text)
                continue
            part = cut_text(text, keep, policy)
            mark = CUT_MARKER.format(n=n - keep)
            texts.append(f"{part}\n{mark}" if policy == "keep-start" else f"{mark}\n{part}")
            cut.append({"response": k, "tokens": n, "kept": keep})
        total, _ = count("\n".join(m["content"] for m in render(texts)))
        if total <= limit or room <= 0:
            break
        room -= total - limit
    if total > limit:  # cannot fit even with empty responses: skip, and say so
        return Fit(tuple(responses), total, method, skipped=True, cut=tuple(cut))
    return Fit(tuple(texts), total, method, cut=tuple(cut))
