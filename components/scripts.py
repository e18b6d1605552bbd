"""The browser scripts (``components/js/*.js``) as the one module a component loads.

The scripts are ES modules: each file imports what it uses from the others
(``import {a, b as c} from "./file.js";``, ``import * as name from "./file.js";``) and
exports its API (``export function f``, ``export const X``, ``export {a, b};``,
``export default ...``). Node runs them as they are (``tests/js``), and TypeScript's
checker reads them with their JSDoc types (``tests/test_js_types.py``).

Streamlit takes a component's code as one string (``st.components.v2.component(js=...)``)
and loads it as a module of its own from a blob URL, where a relative import resolves
to nothing; it serves files only for an installed package's declared asset folder. So
:func:`bundle` joins a script and everything it imports, each file once and after the
files it imports, each in a function of its own: a file's names are seen by no other
file, which gets only what it imports (its exports, frozen). The entry file's default
export is the module's. Nothing is built ahead: the app reads the files when it starts.

Only the import and export forms above are taken, each at the start of a line; any other
``import`` or ``export`` line, an ``export let`` (a binding that changes, which a copy
would not follow), an import of a name the file does not export and an import cycle are
errors, raised when the component is made (at import, so a test catches them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: where the scripts are
JS = Path(__file__).parent / "js"

_NAME = r"[A-Za-z_$][\w$]*"
_IMPORT = re.compile(
    rf'^import\s+(?:\{{(?P<names>[^}}]*)\}}|\*\s+as\s+(?P<star>{_NAME}))\s+from\s+'
    rf'"\./(?P<file>[\w-]+\.js)";[ \t]*$', re.M)
_EXPORT_DECLARED = re.compile(rf"^export\s+((?:async\s+)?function\*?\s+|const\s+|class\s+)({_NAME})",
                              re.M)
_EXPORT_LIST = re.compile(r"^export\s+\{(?P<names>[^}]*)\};[ \t]*$", re.M)
_EXPORT_DEFAULT = re.compile(r"^export\s+default\s+", re.M)
_ANY = re.compile(r"^(import|export)\b.*$", re.M)
#: the names the bundle gives each file's exports; no script may use them
_PREFIX = "__nw_js_"


class ScriptError(ValueError):
    """A script the bundle cannot take (its file and line named)."""


@dataclass(frozen=True)
class Script:
    """One file: the files it imports, what it exports, and its code as the function
    body it becomes (imports made constants, ``export`` words dropped)."""

    name: str
    #: (file, the names taken from it (none: ``* as``), line)
    imports: tuple[tuple[str, tuple[str, ...], int], ...]
    exports: tuple[str, ...]
    body: str


def _var(name: str) -> str:
    return _PREFIX + re.sub(r"\W", "_", name[:-3])


def _pairs(names: str) -> list[tuple[str, str]]:
    """``a, b as c`` → ``[("a", "a"), ("b", "c")]`` (exported name, local name)."""
    out = []
    for part in (p.strip() for p in names.split(",")):
        if not part:
            continue
        m = re.fullmatch(rf"({_NAME})(?:\s+as\s+({_NAME}))?", part)
        if not m:
            raise ValueError(part)
        out.append((m.group(1), m.group(2) or m.group(1)))
    return out


def parse(name: str, source: str) -> Script:
    """The script ``name`` (its text ``source``) as the bundle takes it."""
    def fail(offset: int, why: str) -> ScriptError:
        line = source.count("\n", 0, offset) + 1
        return ScriptError(f"components/js/{name}:{line}: {why}")

    if _PREFIX in source:
        raise fail(source.index(_PREFIX), f"{_PREFIX}* names are the bundle's")
    for m in _ANY.finditer(source):
        if not any(p.match(source, m.start()) for p in
                   (_IMPORT, _EXPORT_LIST, _EXPORT_DECLARED, _EXPORT_DEFAULT)):
            raise fail(m.start(), f"an import or export the bundle does not take: {m.group(0)}")
    imports: list[tuple[str, tuple[str, ...], int]] = []
    exports: list[str] = []
    for m in _EXPORT_LIST.finditer(source):
        try:
            pairs = _pairs(m.group("names"))
        except ValueError as e:
            raise fail(m.start(), f"cannot read the export of {e}") from None
        if any(a != b for a, b in pairs):
            raise fail(m.start(), "export {a as b} is not taken: export a under its own name")
        exports.extend(a for a, _ in pairs)

    def imported(m: re.Match[str]) -> str:
        file, line = m.group("file"), source.count("\n", 0, m.start()) + 1
        lines = "\n" * m.group(0).count("\n")  # the file's lines keep their numbers
        if m.group("star"):
            imports.append((file, (), line))
            return f"const {m.group('star')} = {_var(file)};{lines}"
        try:
            pairs = _pairs(m.group("names"))
        except ValueError as e:
            raise fail(m.start(), f"cannot read the import of {e}") from None
        imports.append((file, tuple(a for a, _ in pairs), line))
        inside = ", ".join(a if a == b else f"{a}: {b}" for a, b in pairs)
        return f"const {{{inside}}} = {_var(file)};{lines}"

    def declared(m: re.Match[str]) -> str:
        exports.append(m.group(2))
        return m.group(1) + m.group(2)

    body = _IMPORT.sub(imported, source)
    body = _EXPORT_LIST.sub("", body)
    body = _EXPORT_DECLARED.sub(declared, body)
    if _EXPORT_DEFAULT.search(body):
        exports.append("default")
        body = _EXPORT_DEFAULT.sub(f"const {_PREFIX}default = ", body)
    if len(set(exports)) != len(exports):
        raise ScriptError(f"components/js/{name}: a name exported twice")
    return Script(name, tuple(imports), tuple(exports), body)


def _load(name: str, folder: Path) -> Script:
    path = folder / name
    if not path.is_file():
        raise ScriptError(f"components/js/{name}: no such script")
    return parse(name, path.read_text(encoding="utf-8"))


def order(entry: str, folder: Path = JS) -> list[Script]:
    """``entry`` and every script it imports, each once, each after what it imports."""
    done: dict[str, Script] = {}
    path: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        if name in path:
            raise ScriptError("an import cycle: " + " → ".join([*path[path.index(name):], name]))
        path.append(name)
        script = _load(name, folder)
        for dep, _, _ in script.imports:
            visit(dep)
        path.pop()
        done[name] = script

    visit(entry)
    scripts = list(done.values())
    exported = {s.name: set(s.exports) for s in scripts}
    for s in scripts:  # every name imported is one its file exports
        for file, names, line in s.imports:
            for name in names:
                if name not in exported[file]:
                    raise ScriptError(f"components/js/{s.name}:{line}: {file} exports no {name}")
    return scripts


def _code(name: str, body: str) -> str:
    """``body`` without its comment lines and blank lines: the code crosses the wire with
    every element that draws it (a courier's every run). A line with code after a
    comment (``/** @type {X} */ (y)``) is kept whole; a comment after code stays."""
    out: list[str] = []
    block = False
    for n, line in enumerate(body.split("\n"), 1):
        text = line.strip()
        if line.count("`") % 2:
            raise ScriptError(f"components/js/{name}:{n}: a template literal over lines "
                              "(the bundle drops comment lines and blank lines)")
        if block:
            block = "*/" not in text
            continue
        if not text or text.startswith("//"):
            continue
        if text.startswith("/*") and (text.endswith("*/") or "*/" not in text):
            block = "*/" not in text[2:]
            continue
        out.append(line.rstrip())
    return "\n".join(out)


def _wrapped(script: Script) -> str:
    names = ", ".join(f"default: {_PREFIX}default" if n == "default" else n
                      for n in script.exports)
    return (f"// components/js/{script.name}\n"
            f"const {_var(script.name)} = (() => {{\n{_code(script.name, script.body)}\n;"
            f"return Object.freeze({{{names}}});\n}})();\n")


@cache
def bundle(entry: str, folder: Path = JS) -> str:
    """The one ES module of script ``entry`` (a file name in ``folder``): what it imports
    and it, in order, each in its own scope; its default export is the module's."""
    scripts = order(entry, folder)
    if "default" not in scripts[-1].exports:
        raise ScriptError(f"components/js/{entry}: an entry script exports a default function")
    return ("".join(_wrapped(s) for s in scripts)
            + f"export default {_var(entry)}.default;\n")
