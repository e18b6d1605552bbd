"""Long preference record: a care guide for fifteen houseplants (QA).

The chosen response is composed from the plant entries of ``data/long/plants.json``
(pet safety follows the ASPCA's lists of toxic and non-toxic plants) and the
fixed sections of ``data/long/plants.md``. The rejected responses are an unsafe
near-copy (toxic plants called safe for pets), a near-copy with wrong care
advice, and a guide that drifts off topic.
"""

from __future__ import annotations

from typing import TypedDict

from needlework.demo.loaders import load_json, load_sections


class Plant(TypedDict):
    """One plant; ``compound`` names what makes a ``toxic`` plant toxic."""

    name: str
    latin: str
    why: str
    difficulty: str
    light: str
    water: str
    humidity: str
    min_celsius: int
    max_celsius: int
    soil: str
    propagation: str
    problem: str
    fix: str
    placement: str
    buying: str
    toxic: bool
    compound: str


class Override(TypedDict, total=False):
    """Paragraphs of one plant replaced in a rejected variant (the whole paragraph)."""

    pets: str
    water: str


class CareGuide(TypedDict):
    """The record's data: prompt, plants, where the drift starts, the rejected variants."""

    prompt: str
    plants: list[Plant]
    drift_after: int
    unsafe_overrides: dict[str, Override]
    wrong_care_overrides: dict[str, Override]


def _plant_text(n: int, plant: Plant, override: Override) -> str:
    if plant["toxic"]:
        pets = (f"Pets: toxic to cats and dogs. It contains {plant['compound']}, so keep it well "
                "out of reach of your cat, or choose a safe plant instead.")
    else:
        pets = ("Pets: considered non-toxic to cats and dogs, a good choice for your home, "
                "although a cat that chews any plant may still vomit.")
    return "\n\n".join([
        f"3.{n} {plant['name']} ({plant['latin']})",
        f"Why grow it: {plant['why']} Difficulty: {plant['difficulty']}.",
        f"Light: {plant['light']}",
        override.get("water", f"Water: {plant['water']}"),
        f"Humidity and temperature: {plant['humidity']} Keep it between {plant['min_celsius']} "
        f"and {plant['max_celsius']} degrees Celsius, away from cold draughts and radiators.",
        f"Soil and feeding: {plant['soil']}",
        f"Propagation: {plant['propagation']}",
        f"Common problem: {plant['problem']}. {plant['fix']}",
        f"Where to put it: {plant['placement']}",
        f"Buying tip: {plant['buying']}",
        override.get("pets", pets),
    ])


def _plants(plants: list[Plant], overrides: dict[str, Override] | None = None) -> list[str]:
    return [_plant_text(i + 1, p, (overrides or {}).get(p["name"], {}))
            for i, p in enumerate(plants)]


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    data: CareGuide = load_json("long/plants.json", CareGuide)
    text = load_sections("long/plants.md")
    plants = data["plants"]
    intro, outro = text["intro"], text["outro"]
    chosen = "\n\n".join([intro, *_plants(plants), outro])
    unsafe = "\n\n".join([intro, *_plants(plants, data["unsafe_overrides"]), outro])
    wrong = "\n\n".join([intro, *_plants(plants, data["wrong_care_overrides"]), outro])
    drift = "\n\n".join([intro, *_plants(plants[:data["drift_after"]]), text["drift"]])
    return {
        "subset": "QA",
        "prompt": data["prompt"],
        "chosen": chosen,
        "rejected": [unsafe, wrong, drift],
    }
