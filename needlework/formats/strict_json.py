"""Decoding one JSON record strictly: what JSON allows but no record may hold is refused,
with the field named (``grounding[2].text``).

Refused: ``NaN``/``Infinity`` and numbers that overflow to infinity (``1e400``), integers
with more digits than Python converts, a key repeated in one object, lone surrogate
escapes (``"\\ud800"``) and nesting deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

MAX_DEPTH = 256  # nesting of objects and arrays in one record


class RecordError(ValueError):
    """One record is not acceptable JSON; the message names the field where it can."""

    def __init__(self, message: str, line_offset: int = 0):
        super().__init__(message)
        self.line_offset = line_offset  # lines after the record's first where it was found


class _Bad:
    """A number the strict decoder refused, kept in place so its field can be named."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


class _DupDict(dict):
    """An object in which a key occurred twice (the first value is kept)."""

    duplicate: str = ""


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


class StrictJson:
    """``json.loads`` that refuses what JSON allows but no record may hold.

    Refused: ``NaN``/``Infinity`` and numbers that overflow to infinity (``1e400``),
    integers with more digits than Python converts, a key repeated in one object,
    lone surrogate escapes, and nesting deeper than :data:`MAX_DEPTH`. The hooks
    only mark what they find; a walk over the value names the field afterwards (it
    runs only for records that need it).
    """

    def __init__(self) -> None:
        self._marked = False
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
        self._max_digits = limit or 4300
        self._decoder = json.JSONDecoder(
            parse_float=self._float,
            parse_int=self._int,
            parse_constant=self._constant,
            object_pairs_hook=self._object,
        )

    def _float(self, text: str) -> Any:
        value = float(text)
        if math.isfinite(value):
            return value
        self._marked = True
        return _Bad(f"is {text}, which overflows to infinity: only finite numbers are allowed")

    def _int(self, text: str) -> Any:
        digits = len(text) - (text[0] == "-")
        if digits <= self._max_digits:
            return int(text)
        self._marked = True
        return _Bad(f"is an integer of {digits} digits: at most {self._max_digits} are allowed")

    def _constant(self, text: str) -> Any:
        self._marked = True
        return _Bad(f"is {text}: only finite numbers are allowed")

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        self._marked = True
        seen: set[str] = set()
        dup = _DupDict()
        for key, value in pairs:
            if key in seen and not dup.duplicate:
                dup.duplicate = key
            if key not in dup:
                dup[key] = value
            seen.add(key)
        return dup

    def loads(self, text: str, column: int = 0) -> Any:
        """The value of ``text``, or :class:`RecordError` naming what is wrong and where
        (``column``: where ``text`` starts on its first line, for error columns)."""
        self._marked = False
        try:
            value = self._decoder.decode(text)
        except json.JSONDecodeError as e:
            raise RecordError(json_error(e, column if e.lineno == 1 else 0), e.lineno - 1) from None
        except RecursionError:
            raise RecordError(f"the record is nested too deeply: at most {MAX_DEPTH} levels of "
                              "objects and arrays are allowed") from None
        surrogates = "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None
        deep = text.count("{") + text.count("[") > MAX_DEPTH
        if self._marked or surrogates or deep:
            message = _first_problem(value)
            if message:
                raise RecordError(message)
        return value


def json_error(e: json.JSONDecodeError, column: int = 0) -> str:
    """``invalid JSON: <what> at column N`` (the decoder's ``... starting at`` messages
    read on naturally: ``Unterminated string starting at column 12``)."""
    colno = e.colno + column
    where = f"column {colno}" if e.msg.endswith(" at") else f"at column {colno}"
    return f"invalid JSON: {e.msg} {where}"


def _first_problem(value: Any) -> str | None:
    """What the strict decoder marked, with the field's path; ``None`` when all is well.
    Iterative, so a deep value cannot exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        where = path or "the record"
        if depth > MAX_DEPTH and isinstance(node, (dict, list)):
            top = re.split(r"[.\[]", path, maxsplit=1)[0] or "the record"
            return (f"{top} is nested more than {MAX_DEPTH} levels deep: at most {MAX_DEPTH} "
                    "levels of objects and arrays are allowed")
        if isinstance(node, _Bad):
            return f"{where} {node.message}"
        if isinstance(node, str):
            found = _SURROGATE.search(node)
            if found:
                code = f"\\u{ord(found.group()):04x}"
                return (f"{where} contains a lone surrogate escape ({code}): it is not a "
                        "character; a surrogate pair must be complete")
        elif isinstance(node, dict):
            if isinstance(node, _DupDict):
                return f"{where} has the key {node.duplicate!r} twice: a key may appear once per object"
            children = []
            for key, child in node.items():
                if _SURROGATE.search(key):
                    return (f"{where} has a key with a lone surrogate escape: it is not a "
                            "character; a surrogate pair must be complete")
                children.append((child, _path(path, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed([(child, _path(path, i), depth + 1) for i, child in enumerate(node)]))
    return None
