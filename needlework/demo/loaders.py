"""Reading the demo's text from its data files (``needlework/demo/data/``).

The demo's prose lives in data files shipped inside the package and found with
:mod:`importlib.resources`, so they are there whether Needlework runs from a
checkout or from an installed wheel. The builders next to this module turn that
text into records; nothing here knows about formats.

Two kinds of file:

- **JSON** for structured banks. :func:`load_json` checks the parsed value
  against a ``TypedDict`` (or ``list[...]``/``dict[str, ...]`` of one), so a
  missing, unknown or mistyped field fails on load with the file and the
  field's path, e.g. ``grounding/answered.json: [3].passages[1].text: must be a
  string``, instead of surfacing later as odd text. Numbers keep their JSON
  type: a ``float`` field must be written ``95.0``, not ``95``, because the two
  print differently in the generated text.
- **Markdown** for long fixed passages. :func:`load_sections` splits a file at
  its ``## name`` heading lines; a section's text is what stands between its
  heading and the next one, without the blank lines around it. Anything before
  the first ``## `` heading (a title, a note) is not part of any section.

A multi-paragraph text in JSON is written as a list of paragraphs, joined with a
blank line by :func:`paragraphs`, so each paragraph stays on its own line.
"""

from __future__ import annotations

import json
import types
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, Literal, get_args, get_origin, get_type_hints, is_typeddict

#: The folder, inside this package, that holds the data files.
DATA_DIR = "data"


class DemoDataError(ValueError):
    """A demo data file is missing or does not have the expected shape."""


def data_file(name: str) -> Traversable:
    """The data file ``name`` (a path relative to the data folder, ``/``-separated)."""
    path = resources.files(__package__).joinpath(DATA_DIR)
    for part in name.split("/"):
        path = path.joinpath(part)
    return path


def read_text(name: str) -> str:
    """The text of the data file ``name`` (UTF-8)."""
    try:
        return data_file(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DemoDataError(f"{name}: demo data file not found") from None


def load_json(name: str, shape: Any) -> Any:
    """Parse the JSON data file ``name`` and check it against ``shape``."""
    return parse_json(read_text(name), shape, name)


def load_sections(name: str) -> dict[str, str]:
    """The ``## name`` sections of the Markdown data file ``name``, in file order."""
    return parse_sections(read_text(name), name)


def parse_json(text: str, shape: Any, name: str) -> Any:
    """Parse ``text`` (the file ``name``) as JSON and check it against ``shape``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise DemoDataError(f"{name} line {err.lineno}: {err.msg}") from None
    check(value, shape, name, "")
    return value


def parse_sections(text: str, name: str) -> dict[str, str]:
    """Split ``text`` (the Markdown file ``name``) into its ``## name`` sections."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("## "):
            key = line[3:].strip()
            if key in sections:
                raise DemoDataError(f"{name} line {number}: section {key!r} appears twice")
            current = sections[key] = []
        elif current is not None:
            current.append(line)
    return {key: "\n".join(lines).strip("\n") for key, lines in sections.items()}


def paragraphs(parts: list[str]) -> str:
    """Join a JSON paragraph list into one text, paragraphs separated by a blank line."""
    return "\n\n".join(parts)


def check(value: Any, shape: Any, name: str, where: str) -> None:
    """Raise :class:`DemoDataError` unless ``value`` matches ``shape``.

    ``shape`` is ``str``, ``int``, ``float``, ``bool``, a ``Literal``, a
    ``TypedDict`` (keys of a ``total=False`` base are optional, any other key is
    refused), ``list[T]``, ``dict[str, T]`` or a union ``A | B``. ``name`` and
    ``where`` (the path so far) go into the error message.
    """
    origin = get_origin(shape)
    if is_typeddict(shape):
        _check_object(value, shape, name, where)
    elif origin is list:
        _expect(isinstance(value, list), "must be a list", name, where)
        for i, item in enumerate(value):
            check(item, get_args(shape)[0], name, f"{where}[{i}]")
    elif origin is dict:
        _expect(isinstance(value, dict), "must be an object", name, where)
        for key, item in value.items():
            check(item, get_args(shape)[1], name, f"{where}.{key}" if where else key)
    elif origin is Literal:
        _expect(value in get_args(shape), f"must be one of {list(get_args(shape))}", name, where)
    elif origin is types.UnionType:
        for option in get_args(shape):
            try:
                check(value, option, name, where)
                return
            except DemoDataError:
                continue
        _expect(False, f"must be {' or '.join(_describe(o) for o in get_args(shape))}", name, where)
    elif shape in (str, int, float, bool):
        # type(...) is, not isinstance: True is not an int here, and 95 is not a float.
        _expect(type(value) is shape, f"must be {_describe(shape)}", name, where)
    else:
        raise TypeError(f"check() does not support the shape {shape!r}")


def _check_object(value: Any, shape: Any, name: str, where: str) -> None:
    _expect(isinstance(value, dict), "must be an object", name, where)
    hints = get_type_hints(shape)
    missing = [key for key in hints if key in shape.__required_keys__ and key not in value]
    _expect(not missing, f"missing field {', '.join(missing)}", name, where)
    unknown = [key for key in value if key not in hints]
    _expect(not unknown, f"unknown field {', '.join(unknown)}", name, where)
    for key, item in value.items():
        check(item, hints[key], name, f"{where}.{key}" if where else key)


def _describe(shape: Any) -> str:
    names = {str: "a string", int: "a whole number", float: "a decimal number (e.g. 95.0)",
             bool: "true or false"}
    return names.get(shape, "an object" if is_typeddict(shape) else str(shape))


def _expect(ok: bool, message: str, name: str, where: str) -> None:
    if not ok:
        raise DemoDataError(f"{name}: {where or 'the top level'}: {message}")
