"""Names of a needle set's LLM-judge runs in the lab, telling apart what differs.

Two runs of the same judge model on the same needle set differ in what they were asked
with: the endpoint, the model, the temperature, the answer's length limit, the part of the
set, the prompt. :func:`judge_run_labels` names each run ``judge SHORT-NAME`` and, where
several runs share that name, adds the settings whose values differ between them
(``judge demo-judge · temperature 0.7 · max tokens 16``); :func:`judge_run_details` gives
every setting of one run, for the picker's description.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from needlework.figures.stats_text import percent
from needlework.words import short_name

__all__ = ["demo_judge_words", "demo_limitation", "judge_run_details", "judge_run_labels", "run_settings"]


def _endpoint(endpoint: str) -> str:
    """``host:port/path`` of an endpoint (no scheme), as people tell servers apart."""
    parts = urlsplit(endpoint)
    return (parts.netloc + parts.path.rstrip("/")) if parts.netloc else endpoint


def run_settings(run: Mapping[str, Any]) -> dict[str, str]:
    """The settings that tell one judge run from another, in words, in a fixed order:
    ``endpoint``, ``model``, ``temperature``, ``max tokens``, ``part`` (pairs per length
    when not the whole set), ``prompt`` (the template's name and digest)."""
    options = run.get("options") or {}
    connection = options.get("connection") or {}
    summary = run.get("summary") or {}
    out = {"endpoint": _endpoint(str(run.get("endpoint") or connection.get("endpoint") or "")),
           "model": str(run.get("model") or connection.get("model") or "")}
    if connection.get("temperature") is not None:
        out["temperature"] = f"{float(connection['temperature']):g}"
    if connection.get("max_tokens") is not None:
        out["max tokens"] = str(int(connection["max_tokens"]))
    per = (summary.get("selection") or {}).get("per_subset") or options.get("per_subset")
    out["part"] = f"{int(per)} pairs per length" if per else "every pair"
    template = summary.get("template") or options.get("template") or {}
    if template.get("digest"):
        out["prompt"] = f"{template.get('name')} ({str(template['digest'])[:8]})"
    return out


def judge_run_details(run: Mapping[str, Any]) -> str:
    """Every setting of one run: ``endpoint 127.0.0.1:8000/v1 · temperature 0 · max
    tokens 16 · every pair`` (the model is in its name)."""
    settings = run_settings(run)
    settings.pop("model", None)
    return " · ".join(v if k == "part" else f"{k} {v}" for k, v in settings.items())


def judge_run_labels(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One name per run, in order: ``judge SHORT-NAME``, plus ``· setting value`` for each
    setting (:func:`run_settings`) whose value differs among the runs of that short name.
    Runs with the same settings keep the same name (the page numbers them)."""
    shorts = [f"judge {short_name(str(r.get('model') or ''))}" for r in runs]
    settings = [run_settings(r) for r in runs]
    out = []
    for k, name in enumerate(shorts):
        group = [settings[j] for j, other in enumerate(shorts) if other == name]
        keys = list(dict.fromkeys(key for s in group for key in s))
        differ = [key for key in keys if len({s.get(key) for s in group}) > 1]
        parts = [settings[k].get(key, "—") if key == "part" else f"{key} {settings[k].get(key, '—')}"
                 for key in differ]
        out.append(" · ".join([name, *parts]))
    return out


def demo_limitation(report: Mapping[str, Any] | None, lengths: Sequence[int]) -> str:
    """Why the demo judge is at chance on a needle set of ``lengths`` (tokens), from its
    report (its training lengths and held-out figures): one or two sentences."""
    settings = (report or {}).get("settings") or {}
    heldout = (report or {}).get("heldout_selection") or {}
    low, high = settings.get("min_tokens"), settings.get("max_tokens")
    trained = (f"responses of {low}–{high} tokens" if low and high else "short responses")
    text = (f"Why: the demo judge is a tiny model ({(report or {}).get('parameters', 0):,} "
            f"parameters) trained for a few minutes on {trained}")
    if heldout.get("accuracy_chosen_first") is not None:
        text += (f", where it is right {percent(heldout['accuracy_chosen_first'], digits=0)} with "
                 f"the chosen first and {percent(heldout['accuracy_chosen_second'], digits=0)} with it "
                 f"second (held-out pairs of {heldout.get('response_tokens', '?')} tokens)")
    if lengths and high and max(lengths) > int(high):
        span = (f"{min(lengths):,}–{max(lengths):,}" if len(lengths) > 1 else f"{lengths[0]:,}")
        text += (f"; these needles sit in responses of {span} tokens, longer than it was trained "
                 "on, where it loses the needle and falls back on one letter")
    return text + "."


def demo_judge_words(report: Mapping[str, Any] | None) -> str:
    """What the needle lab says next to *Judge* when the judge is the demo judge: that it is
    at chance on the lab's needles, and why (its training lengths, from its report)."""
    settings = (report or {}).get("settings") or {}
    low, high = settings.get("min_tokens"), settings.get("max_tokens")
    trained = f"{low}–{high}-token responses" if low and high else "short responses"
    return ("**The demo judge is at chance on these needles.** It is a tiny model trained for a "
            f"few minutes on {trained}; in longer ones it loses the needle and names A almost "
            "every time, so it is right with the chosen response shown first and wrong with it "
            "shown second (`python -m needlework demo-models probe` measures both on the lab's "
            "demo needles). Its heatmap shows a guessing judge, not where a judge finds the "
            "needle, and the findings say so; for a real comparison, judge with an "
            "OpenAI-compatible endpoint. Each long prompt takes it a few seconds.")
