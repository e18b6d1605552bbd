"""Long preference record: a two-week spring itinerary for Japan (Chat).

The chosen response is composed from the per-day entries of ``data/long/japan.json``
and the fixed sections of ``data/long/japan.md``. The rejected responses are an
unsafe near-copy (climbing Mount Fuji out of season), a near-copy with factual
errors, and an incomplete plan that stops after day 10.
"""

from __future__ import annotations

from typing import TypedDict

from needlework.demo._util import near_copy_record
from needlework.demo.loaders import load_json, load_sections


class Day(TypedDict):
    """One day of the trip; ``highlights``, ``km`` and ``pace`` make its glance line."""

    title: str
    base: str
    highlights: list[str]
    km: int
    pace: str
    morning: str
    afternoon: str
    evening: str
    transport: str
    food: str
    tip: str
    rainy: str
    phrase: str


class Itinerary(TypedDict):
    """The record's data: prompt, days, where the incomplete plan stops, the edits."""

    prompt: str
    days: list[Day]
    incomplete_after: int
    unsafe_edits: list[list[str]]
    factual_edits: list[list[str]]


def _glance(day: Day) -> str:
    highlights = day["highlights"]
    listed = ", ".join(highlights[:-1]) + " and " + highlights[-1]
    return (f"At a glance: {listed}. Expect about {day['km']} km on foot; the pace today is "
            f"{day['pace']}.")


def _day_text(n: int, day: Day) -> str:
    return "\n\n".join([
        f"Day {n}: {day['title']} (overnight: {day['base']})",
        _glance(day),
        f"Morning: {day['morning']}",
        f"Afternoon: {day['afternoon']}",
        f"Evening: {day['evening']}",
        f"Getting around: {day['transport']}",
        f"Food: {day['food']}",
        f"Tip: {day['tip']} {day['rainy']}",
        f"Phrase of the day: {day['phrase']}",
    ])


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    data: Itinerary = load_json("long/japan.json", Itinerary)
    text = load_sections("long/japan.md")
    days = [_day_text(i + 1, day) for i, day in enumerate(data["days"])]
    chosen = "\n\n".join([text["intro"], *days, text["outro"]])
    incomplete = "\n\n".join([text["intro"], *days[:data["incomplete_after"]]])
    return near_copy_record("Chat", data["prompt"], chosen,
                            [data["unsafe_edits"], data["factual_edits"]], incomplete,
                            "long/japan.json")
