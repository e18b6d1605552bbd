"""Reading the RAG judges' answers: a verdict, or *invalid* with a reason. Never a guess.

Each parser tries the answer shapes from the most explicit (the JSON the prompt asks
for) to the least, and stops at the first shape that finds anything; two different
verdicts in that shape make the answer invalid ("contradictory"). The raw answer is
always kept by the caller. Shapes:

- **eligibility**: JSON ``{"verdict": "Major Issue(s)"}`` (also the paper's key
  ``"Instruction Following"``), then a line ``Verdict: Minor Issue(s)``. The label is
  read ignoring case, quotes and ``(s)``: ``No Issues``, ``Minor Issue(s)``,
  ``Major Issue(s)``.
- **factuality**: JSON ``{"grounding_quality": [{"sentence": 1, "label": ...}, ...]}``
  where ``sentence`` is the sentence number or its text (as GaRAGe's prompt asks; white
  space, case and ``[cite_N]`` markers aside, which judges often drop), then lines
  ``1: supported``. Every sentence must get exactly one label of ``supported``,
  ``unsupported``, ``contradictory``, ``no_rad`` (``no rad`` / ``no-rad`` accepted);
  a sentence left without one, a number that is no sentence or an unknown label make
  the whole answer invalid.
- **deflection**: JSON ``{"grade": "missing"}``, then ``Grade: attempted`` (also inside
  JSON that does not parse, such as the paper's own format with its trailing comma), then
  an answer that is just the word.
- **LLMeval**: BERGEN's rule for API judges (``models/evaluators/openai.py``): correct
  (1) when ``"yes"`` occurs in the lower-cased answer, else 0; an answer with neither
  ``yes`` nor ``no`` is counted as *weird*, as BERGEN does, and scores 0.
"""

from __future__ import annotations

import re
from typing import Any

from needlework.judges.parse import Parsed, invalid, json_objects
from needlework.rag.prompts import DEFLECTION_LABELS, ELIGIBILITY_LABELS, FACTUALITY_LABELS

ELIGIBILITY_KEYS = ("verdict", "instruction following", "eligibility", "final verdict")
_ELIGIBILITY_WORDS = r"(?:no|minor|major)\s+issues?(?:\s*\(s\))?"
_ELIGIBILITY_LINE = re.compile(
    rf"(?:final\s+)?(?:verdict|instruction\s+following)[\"']?\s*[:=]\s*[*_`\"'{{\[]*\s*({_ELIGIBILITY_WORDS})",
    re.I)
_FACT_LINE = re.compile(
    r"^\s*[*_]*(?:sentence\s*)?(\d+)\s*[*_]*\s*[.:)\-–]\s*[*_`\"']*\s*"
    r"(supported|unsupported|contradictory|no[\s_-]?rad)\b", re.I | re.M)
_GRADE_LINE = re.compile(r"\bgrade[\"']?\s*[:=]\s*[*_`\"']*\s*(missing|attempted)\b", re.I)
_GRADE_WHOLE = re.compile(r"^\W*(missing|attempted)\W*$", re.I)
_SPACE = re.compile(r"\s+")
_CITATION = re.compile(r"\s*\[cite_\d+\]", re.I)


def eligibility_label(value: str) -> str | None:
    """The canonical eligibility label of ``value`` (``None`` when it is none)."""
    text = _SPACE.sub(" ", value.strip().strip("\"'*`{}[] ").lower()).replace("(s)", "").strip()
    match = re.fullmatch(r"(no|minor|major) issues?", text)
    if match is None:
        return None
    return dict(zip(("no", "minor", "major"), ELIGIBILITY_LABELS, strict=True))[match.group(1)]


def _decide(values: list[str], rule: str) -> Parsed:
    distinct = list(dict.fromkeys(values))
    if len(distinct) > 1:
        return invalid(f"contradictory: {', '.join(distinct)}", rule)
    return Parsed(True, distinct[0], rule)


def _json_values(text: str, keys: tuple[str, ...]) -> list[Any]:
    values = []
    for obj in json_objects(text):
        lowered = {str(k).strip().lower(): v for k, v in obj.items()}
        values += [lowered[k] for k in keys if k in lowered]
    return values


def parse_eligibility(text: str) -> Parsed:
    """``No Issues`` / ``Minor Issue(s)`` / ``Major Issue(s)``, or invalid."""
    if not text or not text.strip():
        return invalid("empty answer")
    values = _json_values(text, ELIGIBILITY_KEYS)
    if values:
        labels = []
        for value in values:
            label = eligibility_label(value) if isinstance(value, str) else None
            if label is None:
                return invalid(f"JSON verdict {value!r} is not one of {', '.join(ELIGIBILITY_LABELS)}",
                               "json")
            labels.append(label)
        return _decide(labels, "json")
    found = [eligibility_label(m.group(1)) for m in _ELIGIBILITY_LINE.finditer(text)]
    if found:
        return _decide([f for f in found if f is not None], "verdict")
    return invalid("no verdict found")


def factuality_label(value: Any) -> str | None:
    """The canonical factuality label of ``value`` (``None`` when it is none)."""
    if not isinstance(value, str):
        return None
    text = re.sub(r"[\s-]+", "_", value.strip().strip("\"'*`").lower())
    return text if text in FACTUALITY_LABELS else ("no_rad" if text == "norad" else None)


def _sentence_number(value: Any, sentences: list[str], taken: set[int]) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if value.strip().isdigit():
            return int(value.strip())
        for plain in (_plain, _uncited):  # the exact text first, then without citation markers
            wanted = plain(value)
            for k, sentence in enumerate(sentences, start=1):
                if k not in taken and plain(sentence) == wanted:
                    return k
    return None


def _plain(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _uncited(text: str) -> str:
    return _plain(_CITATION.sub("", text))


def _verdicts(entries: list[tuple[int, str, Any, Any]], n: int, rule: str) -> Parsed:
    by_number: dict[int, dict[str, Any]] = {}
    for number, label, rationale, excerpt in entries:
        if not 1 <= number <= n:
            return invalid(f"a verdict for sentence {number}, but the answer has {n}", rule)
        if number in by_number and by_number[number]["label"] != label:
            return invalid(f"contradictory: sentence {number} is both "
                           f"{by_number[number]['label']} and {label}", rule)
        by_number.setdefault(number, {
            "label": label,
            "rationale": rationale if isinstance(rationale, str) else None,
            "excerpt": excerpt if isinstance(excerpt, str) else None})
    missing = [k for k in range(1, n + 1) if k not in by_number]
    if missing:
        return invalid(f"no label for sentence {', '.join(map(str, missing))}", rule)
    return Parsed(True, [by_number[k] for k in range(1, n + 1)], rule)


def parse_factuality(text: str, sentences: list[str]) -> Parsed:
    """One verdict per sentence (``{"label", "rationale", "excerpt"}``, in order), or invalid."""
    n = len(sentences)
    if not text or not text.strip():
        return invalid("empty answer")
    lists = [v for v in _json_values(text, ("grounding_quality",)) if isinstance(v, list)]
    if lists:
        if any(v != lists[0] for v in lists[1:]):
            return invalid("contradictory: several different verdict lists", "json")
        entries: list[tuple[int, str, Any, Any]] = []
        taken: set[int] = set()
        for position, entry in enumerate(lists[0], start=1):
            if not isinstance(entry, dict):
                return invalid(f"verdict {position} is not an object", "json")
            fields = {str(k).strip().lower(): v for k, v in entry.items()}
            label = factuality_label(fields.get("label"))
            if label is None:
                return invalid(f"verdict {position}: label {fields.get('label')!r} is not one of "
                               f"{', '.join(FACTUALITY_LABELS)}", "json")
            number = _sentence_number(fields.get("sentence", fields.get("id")), sentences, taken)
            if number is None:
                return invalid(f"verdict {position} does not say which sentence it is for", "json")
            taken.add(number)
            entries.append((number, label, fields.get("rationale"), fields.get("excerpt")))
        return _verdicts(entries, n, "json")
    lines = [(int(m.group(1)), factuality_label(m.group(2)) or "", None, None)
             for m in _FACT_LINE.finditer(text)]
    if lines:
        return _verdicts(lines, n, "lines")
    return invalid("no sentence verdicts found")


def parse_deflection(text: str) -> Parsed:
    """``missing`` or ``attempted``, or invalid."""
    if not text or not text.strip():
        return invalid("empty answer")
    values = _json_values(text, ("grade", "category"))
    if values:
        grades = []
        for value in values:
            grade = value.strip().lower() if isinstance(value, str) else None
            if grade not in DEFLECTION_LABELS:
                return invalid(f"JSON grade {value!r} is not missing or attempted", "json")
            grades.append(grade)
        return _decide(grades, "json")
    for rule, found in (("grade", [m.group(1).lower() for m in _GRADE_LINE.finditer(text)]),
                        ("whole", [m.group(1).lower() for m in [_GRADE_WHOLE.match(text)] if m])):
        if found:
            return _decide(found, rule)
    return invalid("no grade found")


def parse_llmeval(text: str) -> Parsed:
    """BERGEN's API-judge rule: ``{"score": 1 if "yes" in the answer else 0, "weird": ...}``;
    always valid (BERGEN has no invalid answer, only weird ones, which score 0)."""
    low = (text or "").lower()
    return Parsed(True, {"score": int("yes" in low), "weird": "yes" not in low and "no" not in low},
                  "bergen")
