"""Reading a judge's answer: a choice, a score, a yes/no, or *invalid*. Never a guess.

Each parser tries the answer shapes in a fixed order of *tiers*, from the most
explicit to the least, and stops at the first tier that finds anything:

selection (``parse_selection(text, n)``, candidates labelled A, B, ... or 1, 2, ...)
  1. double brackets: ``[[B]]``, ``[[Response 2]]`` (the format the prompt asks for)
  2. JSON: ``{"best": "B"}``, ``{"choice": 2}`` (keys: best, choice, winner, verdict, ...)
  3. a verdict line: ``Final verdict: B``, ``Answer: Response 2``
  4. a decisive phrase: ``Response B is better``, ``I choose A``, ``The best response is B``
  5. the whole answer is a reference: ``B``, ``(b)``, ``**Response 2**``

scoring (``parse_score(text, low, high)``)
  1. ``[[7]]``  2. JSON ``{"score": 7}``  3. ``Rating: 7``, ``Score: 7.5/10``
  4. ``7/10``, ``7 out of 10``  5. a number ending the answer (``... so I give it 8``;
  Long-form RewardBench's own rule)  6. the whole answer is a number

A label or a score in brackets that do not pair up (``[A]]``, ``[A]]]``, ``A]]``, ``[[A]``,
``[[A]]]``, ``[7]]``) is *invalid* ("malformed brackets") before any tier is tried: it is not the
format asked for, and reading an A into it would be a guess.
Within the tier that matched, one distinct value is an answer; two or more (``[[A]]``
... ``[[B]]``) make the answer *invalid* ("contradictory"), as does a label that is not
one of the candidates, a score outside the scale, a fraction on another scale
(``4/5`` when the scale is 0-10) or a range (``7-8``). A bare letter counts only where
it cannot be the English word "A" or "I" (end of line, punctuation, or the whole
answer); a bare number is never a choice. Everything else is invalid with a reason,
and the raw text is always kept by the caller.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

NOUNS = r"(?:response|assistant|answer|option|candidate|output|model)"
REF = rf"(?:(?P<noun>{NOUNS})\s*)?(?P<ref>[A-Za-z]|\d+)"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_BRACKETS = re.compile(rf"(?<!\[)\[\[\s*{REF}\s*\]\](?!\])", re.I)
# a label between square brackets, two or more on a side: ``[[A]]``, or malformed (``[A]]``)
_ANY_BRACKETS = re.compile(rf"(?<![\w\[])(?P<open>\[*)[ \t]*{REF}[ \t]*(?P<close>\]*)(?!\])", re.I)
_AFTER_BARE = r"(?=\s*(?:[.,;:!)\]*]|$))"  # a bare letter must end the line or meet punctuation
_VERDICT = re.compile(
    r"(?:final\s+)?(?:verdict|answer|choice|decision|winner|selection|preference"
    r"|best\s+response|better\s+response|best)\s*(?:is)?\s*[:=\-–]\s*[*_`\"'(\[]*\s*" + REF,
    re.I | re.M)
_PHRASES = (
    re.compile(rf"\b{NOUNS}\s*(?P<ref>[A-Za-z]|\d+)\s+(?:is|was)\s+(?:clearly\s+|definitely\s+|"
               r"the\s+|much\s+)*(?:best|better|superior|preferred|preferable|winner|stronger)\b",
               re.I),
    re.compile(rf"\b(?:I\s+(?:would\s+)?(?:choose|pick|select|prefer)|the\s+best\s+(?:response|"
               rf"answer|one)\s+is|my\s+(?:choice|pick)\s+is|I\s+(?:would\s+)?go\s+with)\s+"
               rf"[*_\"'(\[]*{REF}", re.I),
)
_WHOLE = re.compile(rf"^\s*[*_`\"'(\[{{]*\s*{REF}\s*[*_`\"')\]}}.!]*\s*$", re.I)
_TIE = re.compile(r"\[\[\s*tie\s*\]\]|\bit'?s\s+a\s+tie\b|\bboth\s+are\s+equally\b", re.I)
SELECTION_KEYS = ("best", "choice", "winner", "verdict", "answer", "selection", "selected",
                  "preferred", "better", "best_response", "final_verdict", "final_answer")
SCORE_KEYS = ("score", "rating", "grade", "final_score", "final_rating", "overall")
NUMBER = r"(?P<num>-?\d+(?:\.\d+)?)"
_SCORE_BRACKETS = re.compile(rf"(?<!\[)\[\[\s*{NUMBER}\s*\]\](?!\])")
_ANY_SCORE_BRACKETS = re.compile(rf"(?<![\w\[.])(?P<open>\[*)[ \t]*{NUMBER}[ \t]*(?P<close>\]*)(?!\])")
_SCORE_MARKER = re.compile(
    rf"\b(?:final\s+)?(?:rating|score|grade|overall)\s*(?:is|of)?\s*[:=]?\s*[*_`\"'(\[]*\s*{NUMBER}"
    r"(?P<range>\s*(?:-|–|to)\s*\d+(?:\.\d+)?)?(?P<scale>\s*(?:/|out\s+of)\s*\d+(?:\.\d+)?)?",
    re.I)
_FRACTION = re.compile(rf"{NUMBER}\s*(?:/|out\s+of)\s*(?P<den>\d+(?:\.\d+)?)", re.I)
_TRAILING = re.compile(rf"(?<![\w./-]){NUMBER}[*_`\"')\]]*\.?\s*$")
_WHOLE_NUMBER = re.compile(rf"^\s*[*_`\"'(\[]*\s*{NUMBER}\s*[*_`\"')\]]*\.?\s*$")
_YES_NO_BRACKETS = re.compile(r"\[\[\s*(yes|no)\s*\]\]", re.I)
_YES_NO_WHOLE = re.compile(r"^\s*[*_\"'(\[]*\s*(yes|no)\s*[*_\"')\].!]*\s*$", re.I)
_YES_NO_VERDICT = re.compile(r"(?:verdict|answer|verified|decision)\s*[:=]\s*[*_\"'(\[]*\s*(yes|no)\b",
                             re.I)


@dataclass(frozen=True)
class Parsed:
    """A parse result. ``value``: a 0-based candidate position (selection), a number
    (scoring) or ``True``/``False`` (yes/no); ``None`` when invalid. ``rule`` names the
    tier that matched; ``reason`` says why an answer is invalid."""

    valid: bool
    value: Any
    rule: str
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def invalid(reason: str, rule: str = "none") -> Parsed:
    return Parsed(False, None, rule, reason)


def letters(n: int) -> list[str]:
    """The labels of ``n`` candidates: A, B, C, ..."""
    if not 1 <= n <= 26:
        raise ValueError(f"between 1 and 26 candidates, not {n}")
    return [chr(ord("A") + k) for k in range(n)]


def _position(ref: str, n: int) -> int | None:
    """0-based position named by a letter or a 1-based number, or None when out of range."""
    if ref.isdigit():
        k = int(ref) - 1
    else:
        k = ord(ref.upper()) - ord("A")
    return k if 0 <= k < n else None


def _decide(refs: list[str], n: int, rule: str) -> Parsed:
    positions = []
    for ref in refs:
        k = _position(ref, n)
        if k is None:
            return invalid(f"names {ref!r}, which is not one of the {n} responses", rule)
        positions.append(k)
    distinct = sorted(set(positions))
    if len(distinct) > 1:
        names = ", ".join(letters(n)[k] for k in distinct)
        return invalid(f"contradictory: names {names}", rule)
    return Parsed(True, distinct[0], rule)


def _bare_ok(match: re.Match[str], text: str) -> bool:
    """A reference without a noun must be unambiguous: a digit is never a bare choice,
    and a letter must be followed by punctuation or the end of the line."""
    if match.group("noun"):
        return True
    ref = match.group("ref")
    if ref.isdigit():
        return False
    return re.match(_AFTER_BARE, text[match.end("ref"):]) is not None


def json_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects found in ``text`` (in code fences or bare), outermost first."""
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    for source in sources:
        start = source.find("{")
        while start != -1:
            try:
                obj, end = decoder.raw_decode(source, start)
            except json.JSONDecodeError:
                start = source.find("{", start + 1)
                continue
            if isinstance(obj, dict):
                found.append(obj)
            start = source.find("{", end)
        if found:
            break
    return found


def _json_values(text: str, keys: tuple[str, ...]) -> list[Any]:
    values = []
    for obj in json_objects(text):
        lowered = {str(k).lower(): v for k, v in obj.items()}
        values += [lowered[k] for k in keys if k in lowered]
    return values


def _malformed(text: str, pattern: re.Pattern[str] = _ANY_BRACKETS) -> str | None:
    """A label (or a score) in brackets that do not pair up, two or more on one side
    (``[A]]``, ``[A]]]``, ``A]]``, ``[[A]``, ``[[A]]]``, ``[7]]``): not the ``[[A]]`` the
    prompt asks for, and no other tier may read a choice into it."""
    for m in pattern.finditer(text):
        opened, closed = len(m.group("open")), len(m.group("close"))
        if max(opened, closed) >= 2 and opened != closed:
            return m.group(0).strip()
    return None


def parse_selection(text: str, n: int) -> Parsed:
    """Which of ``n`` candidates (0-based position) the answer names, or invalid."""
    letters(n)  # validates n
    if not text or not text.strip():
        return invalid("empty answer")
    bad = _malformed(text)
    if bad is not None:
        return invalid(f"malformed brackets {bad!r}: not the [[X]] asked for", "brackets")
    refs = [m.group("ref") for m in _BRACKETS.finditer(text)]
    if refs:
        return _decide(refs, n, "brackets")
    values = _json_values(text, SELECTION_KEYS)
    if values:
        refs = []
        for value in values:
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                return invalid(f"JSON choice {value!r} is not a label", "json")
            if isinstance(value, int):
                refs.append(str(value))
                continue
            inner = _WHOLE.match(value) or _BRACKETS.search(value)
            if inner is None:
                return invalid(f"JSON choice {value!r} is not a label", "json")
            refs.append(inner.group("ref"))
        return _decide(refs, n, "json")
    if _TIE.search(text):
        return invalid("a tie: no single response named", "tie")
    refs = [m.group("ref") for m in _VERDICT.finditer(text) if _bare_ok(m, text)]
    if refs:
        return _decide(refs, n, "verdict")
    refs = []
    for pattern in _PHRASES:
        for m in pattern.finditer(text):
            ref = m.group("ref")
            noun = "noun" in m.groupdict() and m.group("noun")
            if ref.isdigit() and not noun and pattern is _PHRASES[1]:
                continue  # "I choose 2 ..." is not a label
            if not ref.isdigit() and not ref.isupper() and not noun:
                continue  # "I choose a ..." is the article
            refs.append(ref)
    if refs:
        return _decide(refs, n, "phrase")
    whole = _WHOLE.match(text)
    if whole and (whole.group("noun") or not whole.group("ref").isdigit()):
        return _decide([whole.group("ref")], n, "whole")
    if whole:
        return invalid("a bare number is not a choice: the prompt asks for a letter", "whole")
    return invalid("no choice found")


def _number(raw: str, low: float, high: float, rule: str) -> Parsed:
    value = float(raw)
    if not low <= value <= high:
        return invalid(f"score {raw} is outside the scale {low:g}-{high:g}", rule)
    return Parsed(True, int(value) if value.is_integer() and "." not in raw else value, rule)


def _decide_numbers(raws: list[str], low: float, high: float, rule: str) -> Parsed:
    if len({float(r) for r in raws}) > 1:
        return invalid(f"contradictory: scores {', '.join(dict.fromkeys(raws))}", rule)
    return _number(raws[0], low, high, rule)


def parse_score(text: str, low: float = 0, high: float = 10) -> Parsed:
    """The score the answer gives on the ``low``-``high`` scale, or invalid."""
    if not text or not text.strip():
        return invalid("empty answer")
    bad = _malformed(text, _ANY_SCORE_BRACKETS)
    if bad is not None:
        return invalid(f"malformed brackets {bad!r}: not the [[N]] asked for", "brackets")
    raws = [m.group("num") for m in _SCORE_BRACKETS.finditer(text)]
    if raws:
        return _decide_numbers(raws, low, high, "brackets")
    values = _json_values(text, SCORE_KEYS)
    if values:
        raws = []
        for value in values:
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                return invalid(f"JSON score {value!r} is not a number", "json")
            if isinstance(value, str) and not re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", value):
                return invalid(f"JSON score {value!r} is not a number", "json")
            raws.append(str(value).strip())
        return _decide_numbers(raws, low, high, "json")
    matches = list(_SCORE_MARKER.finditer(text))
    if matches:
        for m in matches:
            if m.group("range"):
                return invalid(f"a range, not a score: {m.group(0).strip()!r}", "marker")
            if m.group("scale") and float(re.sub(r"[^\d.]", "", m.group("scale"))) != high:
                return invalid(f"a score on another scale: {m.group(0).strip()!r}", "marker")
        return _decide_numbers([m.group("num") for m in matches], low, high, "marker")
    fractions = list(_FRACTION.finditer(text))
    if fractions:
        for m in fractions:
            if float(m.group("den")) != high:
                return invalid(f"a score on another scale: {m.group(0).strip()!r}", "fraction")
        return _decide_numbers([m.group("num") for m in fractions], low, high, "fraction")
    whole = _WHOLE_NUMBER.match(text)
    if whole:
        return _number(whole.group("num"), low, high, "whole")
    trailing = _TRAILING.search(text)
    if trailing:
        return _number(trailing.group("num"), low, high, "trailing")
    return invalid("no score found")


def parse_yes_no(text: str) -> Parsed:
    """``[[YES]]`` / ``[[NO]]`` (or a verdict line, JSON, or the whole answer) as True/False."""
    if not text or not text.strip():
        return invalid("empty answer")
    for rule, found in (
        ("brackets", [m.group(1) for m in _YES_NO_BRACKETS.finditer(text)]),
        ("json", [("yes" if v else "no") if isinstance(v, bool) else str(v)
                  for v in _json_values(text, ("verified", "verdict", "answer", "valid"))]),
        ("verdict", [m.group(1) for m in _YES_NO_VERDICT.finditer(text)]),
        ("whole", [m.group(1) for m in [_YES_NO_WHOLE.match(text)] if m]),
    ):
        if found:
            words = {w.strip().lower() for w in found}
            if not words <= {"yes", "no"}:
                return invalid(f"not yes or no: {sorted(words)}", rule)
            if len(words) > 1:
                return invalid("contradictory: both yes and no", rule)
            return Parsed(True, words == {"yes"}, rule)
    return invalid("no yes/no verdict found")


_POSITIVE = re.compile(r"\*\*\s*Positive\s+Modification\s*\*\*", re.I)
_NEGATIVE = re.compile(r"\*\*\s*Negative\s+Modification\s*\*\*", re.I)


def parse_modifications(text: str) -> Parsed:
    """Long-form RewardBench's needle answer (its ``data_gene_finegrained.py``): the text
    after ``** Positive Modification **`` up to ``** Negative Modification **``, and the
    text after that, as ``{"positive": ..., "negative": ...}``; invalid when a heading is
    missing or repeated, or a modification is empty."""
    if not text or not text.strip():
        return invalid("empty answer")
    positives, negatives = list(_POSITIVE.finditer(text)), list(_NEGATIVE.finditer(text))
    if not positives or not negatives:
        missing = "Positive" if not positives else "Negative"
        return invalid(f"no \"** {missing} Modification **\" heading", "headings")
    if len(positives) > 1 or len(negatives) > 1:
        return invalid("several modifications of one kind", "headings")
    if positives[0].start() > negatives[0].start():
        return invalid("the negative modification comes before the positive one", "headings")
    positive = text[positives[0].end():negatives[0].start()].strip()
    negative = text[negatives[0].end():].strip()
    if not positive or not negative:
        return invalid(f"an empty {'positive' if not positive else 'negative'} modification",
                       "headings")
    return Parsed(True, {"positive": positive, "negative": negative}, "headings")
