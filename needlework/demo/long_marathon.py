"""Long preference record: a 16-week first-marathon training plan (Writing).

The chosen response is composed from the weekly schedule of ``data/long/marathon.json``
(mileage, key workout, focus note and check-in per week) and the fixed sections
of ``data/long/marathon.md``. The rejected responses are an unsafe near-copy, a
near-copy with factual errors, and an incomplete plan that stops after week 11.
"""

from __future__ import annotations

from typing import TypedDict

from needlework.demo._util import near_copy_record
from needlework.demo.loaders import load_json, load_sections


class Week(TypedDict):
    """One week: phase, miles in total, on the long run and on Wednesday, the key workout."""

    phase: str
    total: int
    long_run: int
    wednesday: int
    workout: str
    focus: str
    check_in: str


class TrainingPlan(TypedDict):
    """The record's data: prompt, weeks 1 to 15 (race week is fixed text), the incomplete
    plan's length and closing line, the edits."""

    prompt: str
    weeks: list[Week]
    incomplete_after: int
    incomplete_tail: str
    unsafe_edits: list[list[str]]
    factual_edits: list[list[str]]


def _week_text(n: int, week: Week, prev: Week | None, longest: int) -> str:
    phase, total, long_run = week["phase"], week["total"], week["long_run"]
    work, workout = week["wednesday"], week["workout"]
    rest = total - long_run - work
    easy_a = int(rest * 0.4 + 0.5)
    easy_b = int(rest * 0.35 + 0.5)
    short = rest - easy_a - easy_b
    lines = [f"Week {n} ({phase}): {total} miles"]
    days = (f"{easy_a} easy miles on Tuesday, {work} on Wednesday including the workout, "
            f"{easy_b} on Thursday and {short} on Saturday")
    if phase == "Taper":
        assert prev is not None  # a plan starts with base weeks, never with a taper
        lines.append(
            f"Taper week: mileage drops from {prev['total']} to {total} miles and the long run to "
            f"{long_run} miles. Run {days}, with Monday and Friday as rest days.")
    elif prev is not None and total < prev["total"]:
        lines.append(
            f"This is a cutback week: mileage drops from {prev['total']} to {total} miles and the "
            f"long run shortens to {long_run} miles. Run {days}, with Monday and Friday as "
            "rest days.")
    elif n % 2:
        lines.append(
            f"This week totals {total} miles. Monday and Friday are rest days. Run {days}, "
            f"then finish with the long run of {long_run} miles on Sunday.")
    else:
        lines.append(
            f"The week adds up to {total} miles: {easy_a} easy on Tuesday, {work} on "
            f"Wednesday with the workout, {easy_b} easy on Thursday, {short} on Saturday and "
            f"{long_run} for the long run on Sunday. Keep Monday and Friday free of running; "
            "an easy swim or bike ride on Friday is fine.")
    low, high = long_run * 11, long_run * 12
    change = ""
    if prev is not None and long_run > longest:
        gain = long_run - longest
        change = (f"It is your longest run so far, {gain} mile{'s' if gain > 1 else ''} more "
                  "than the previous longest. ")
    warm_up = "" if phase == "Base" else (
        "Warm up with a mile of easy running and cool down with another. ")
    lines.append(
        f"Wednesday's key workout: {workout}. {warm_up}Sunday's long run of {long_run} miles "
        f"should stay easy from start to finish. {change}At an easy pace of 11 to 12 minutes "
        f"per mile it will take roughly {low // 60} h {low % 60:02d} min to {high // 60} h "
        f"{high % 60:02d} min.")
    lines.append(week["focus"])
    lines.append("Check-in: " + week["check_in"])
    return "\n\n".join(lines)


def _weeks(weeks: list[Week]) -> list[str]:
    out, longest = [], 0
    for i, week in enumerate(weeks):
        out.append(_week_text(i + 1, week, weeks[i - 1] if i else None, longest))
        longest = max(longest, week["long_run"])
    return out


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    data: TrainingPlan = load_json("long/marathon.json", TrainingPlan)
    text = load_sections("long/marathon.md")
    weeks = _weeks(data["weeks"])
    chosen = "\n\n".join([text["intro"], *weeks, text["race_week"], text["outro"]])
    incomplete = "\n\n".join([text["intro"], *weeks[:data["incomplete_after"]],
                              data["incomplete_tail"]])
    return near_copy_record("Writing", data["prompt"], chosen,
                            [data["unsafe_edits"], data["factual_edits"]], incomplete,
                            "long/marathon.json")
