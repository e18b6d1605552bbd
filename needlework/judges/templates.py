"""Prompt templates: a judge prompt as text with named placeholders, checked before use.

A template is the text of one prompt (the user message, and optionally a system message
sent before it) in which a *placeholder* is a lower-case name in braces, ``{question}``.
Every other brace is text: a JSON example (``{"grade": "missing"}``), BERGEN's ``{Yes}``,
GaRAGe's ``{ { ... } }``, so a benchmark's published prompt is quoted as it is.

Each *mode* (:class:`Mode`: selection, scoring, GaRAGe's eligibility, ...) names the
placeholders it fills, the ones a template must use (a selection prompt that never shows
the responses cannot be judged) and the answer format its parser reads. :func:`make`
checks a template against its mode and refuses, in one sentence (:class:`TemplateError`),
a placeholder the mode does not know or a required one that is missing.

A template's :attr:`Template.digest` (SHA-256 of its text) is part of a run's identity, so
a run with an edited template is a run of its own; the call cache is keyed by the
rendered prompt, so nothing is asked twice for the same text. The registries are plain
tables in :mod:`needlework.judges.prompts` (selection, scoring, needle) and
:mod:`needlework.rag.prompts` (eligibility, factuality, deflection, LLMeval): mode ->
templates, the default (the paper's prompt) first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
EDITED = "edited"

Messages = list[dict[str, str]]


class TemplateError(ValueError):
    """A template that cannot be used; the message is one sentence naming the problem."""


@dataclass(frozen=True)
class Mode:
    """What a prompt of one kind is filled with and answered in.

    ``placeholders``: name -> what it holds; ``required``: groups of names, each group
    needing at least one of its names in the template; ``answer``: the answer format the
    mode's parser reads."""

    name: str
    placeholders: Mapping[str, str]
    required: tuple[tuple[str, ...], ...] = ()
    answer: str = ""


@dataclass(frozen=True)
class Template:
    """A mode's prompt: ``user`` (and ``system``, empty for none) with placeholders;
    ``name`` (the paper's name for a default, ``edited`` for a user's version) and
    ``source`` (where its text comes from)."""

    mode: Mode
    name: str
    user: str
    system: str = ""
    source: str = ""

    @property
    def digest(self) -> str:
        """16 hex digits of the SHA-256 of the system and user texts."""
        text = json.dumps({"system": self.system, "user": self.user}, ensure_ascii=False,
                          sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    @property
    def label(self) -> str:
        """``long-form-rewardbench (1a2b3c4d)``: the name and the digest's first 8 digits."""
        return f"{self.name} ({self.digest[:8]})"

    def identity(self) -> dict[str, str]:
        """What a run's key holds of the template: mode, name and digest."""
        return {"mode": self.mode.name, "name": self.name, "digest": self.digest}

    def as_dict(self) -> dict[str, str]:
        """JSON-ready: the identity, the texts, the source and the answer format."""
        return {**self.identity(), "system": self.system, "user": self.user,
                "source": self.source, "answer": self.mode.answer}

    def messages(self, values: Mapping[str, str]) -> Messages:
        """The chat messages with every placeholder filled from ``values``."""
        out = [{"role": "system", "content": fill(self.system, values)}] if self.system else []
        return out + [{"role": "user", "content": fill(self.user, values)}]

    def edited(self, user: str, system: str | None = None, *, name: str = EDITED) -> Template:
        """This mode's template with new text (checked by :func:`make`); the same template
        when the text is unchanged."""
        system = self.system if system is None else system
        if user == self.user and system == self.system:
            return self
        return make(self.mode, user, system, name=name, source=f"edited from {self.name}")


def placeholders(text: str) -> list[str]:
    """The placeholder names of ``text``, each once, in order of first use."""
    return list(dict.fromkeys(PLACEHOLDER.findall(text)))


def _names(names: Sequence[str], joined: str = " or ") -> str:
    return joined.join("{" + n + "}" for n in names)


def check(mode: Mode, user: str, system: str = "") -> None:
    """Raise :class:`TemplateError` when ``user`` / ``system`` is empty where it must not
    be, names a placeholder ``mode`` does not know, or lacks a required one."""
    if not user.strip():
        raise TemplateError(f"The {mode.name} template is empty: it needs a prompt.")
    used = placeholders(system + "\n" + user)
    unknown = [n for n in used if n not in mode.placeholders]
    if unknown:
        known = ", ".join("{" + n + "}" for n in mode.placeholders)
        raise TemplateError(f"The {mode.name} template uses {_names(unknown, ' and ')}, which "
                            f"{'is not a placeholder' if len(unknown) == 1 else 'are not placeholders'}"
                            f" of this mode (known: {known}).")
    for group in mode.required:
        if not any(n in used for n in group):
            raise TemplateError(f"The {mode.name} template lacks {_names(group)}, which the "
                                "judge needs to see.")


def make(mode: Mode, user: str, system: str = "", *, name: str = EDITED,
         source: str = "") -> Template:
    """A checked :class:`Template` (see :func:`check`)."""
    check(mode, user, system)
    return Template(mode, name, user, system, source)


def fill(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each placeholder replaced by its value, in one pass (a value that
    holds ``{question}`` stays as it is). A placeholder without a value is an error."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise TemplateError(f"No value for {{{name}}}.")
        return str(values[name])

    return PLACEHOLDER.sub(value, text)


def from_dict(modes: Mapping[str, Mode], data: Mapping[str, Any]) -> Template:
    """The template :meth:`Template.as_dict` wrote (checked again, and its digest
    compared: a stored template whose text does not match its digest is refused)."""
    mode = modes.get(str(data.get("mode")))
    if mode is None:
        raise TemplateError(f"No prompt mode named {data.get('mode')!r}.")
    template = make(mode, str(data.get("user") or ""), str(data.get("system") or ""),
                    name=str(data.get("name") or EDITED), source=str(data.get("source") or ""))
    if data.get("digest") and data["digest"] != template.digest:
        raise TemplateError(f"The stored {mode.name} template does not match its digest.")
    return template


def read_file(path: str | Path) -> tuple[str, str | None]:
    """``(user, system)`` of a template file: a JSON object ``{"user": ..., "system": ...}``
    (``system`` optional: ``""``), or else the whole file as the user message and ``None``
    for the system message (the mode's own is kept)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError:
        return text, None
    if isinstance(data, dict) and isinstance(data.get("user"), str):
        system = data.get("system") or ""
        if not isinstance(system, str):
            raise TemplateError(f"{path}: \"system\" must be text.")
        return data["user"], system
    return text, None


def from_file(template: Template, path: str | Path) -> Template:
    """``template`` with the text of the file at ``path`` (:func:`read_file`), named after
    the file; ``template`` itself when the file holds the same text."""
    user, system = read_file(path)
    return template.edited(user, system, name=Path(path).stem or EDITED)


def fields(template: Template, messages: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
    """The placeholder values that make ``template`` render ``messages`` (the inverse of
    :meth:`Template.messages`), or ``None`` when it does not render them. Where a value
    could end in several places, the shortest first values are taken."""
    texts = [template.system, template.user] if template.system else [template.user]
    if len(messages) != len(texts):
        return None
    found: dict[str, str] = {}
    for text, message in zip(texts, messages, strict=True):
        match = _inverse(text).fullmatch(str(message.get("content") or ""))
        if match is None:
            return None
        for name, value in match.groupdict().items():
            if found.setdefault(name, value) != value:
                return None
    return found


def _inverse(text: str) -> re.Pattern[str]:
    """A pattern matching what ``text`` renders: each placeholder's first use a lazy group,
    a later use the same text again."""
    parts, seen, at = [], set(), 0
    for match in PLACEHOLDER.finditer(text):
        parts.append(re.escape(text[at:match.start()]))
        name = match.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        at = match.end()
    parts.append(re.escape(text[at:]))
    return re.compile("".join(parts), re.S)


def named(table: Mapping[str, Sequence[Template]], mode: str, name: str | None = None) -> Template:
    """The template ``name`` of ``mode`` in ``table`` (the default, listed first, when
    ``name`` is ``None``)."""
    if mode not in table:
        raise TemplateError(f"No prompt mode named {mode!r} (known: {', '.join(table)}).")
    choices = table[mode]
    if name is None:
        return choices[0]
    for template in choices:
        if template.name == name:
            return template
    raise TemplateError(f"No {mode} template named {name!r} "
                        f"(known: {', '.join(t.name for t in choices)}).")

