"""What a presenter keeps with a needle dataset for its slide: the title and the finding
they typed, each in the dataset's ``meta`` with who set it and when (:func:`with_slide_title`,
:func:`with_slide_finding`; read back with :func:`slide_title_of`, :func:`slide_finding_of`),
and the title the slide has when none was typed (:func:`default_title`). The computed
findings and the subtitle are :mod:`needlework.needle.findings`.
"""

from __future__ import annotations

SLIDE_TITLE = "slide_title"  # the key in a needle dataset's ``meta``


def slide_title_of(meta: dict | None) -> str:
    """The presenter's title kept in a needle dataset's ``meta`` ('' when none)."""
    kept = (meta or {}).get(SLIDE_TITLE) or {}
    return str(kept.get("text") or "") if isinstance(kept, dict) else ""


def with_slide_title(meta: dict | None, title: str, by: str, at: str) -> dict:
    """``meta`` with the presenter's title (stripped) recorded with who set it and when
    (an empty title removes it); the other keys are kept."""
    out = dict(meta or {})
    title = title.strip()
    if title:
        out[SLIDE_TITLE] = {"text": title, "by": by, "at": at}
    else:
        out.pop(SLIDE_TITLE, None)
    return out


SLIDE_FINDING = "slide_finding"  # the key in a needle dataset's ``meta``


def slide_finding_of(meta: dict | None) -> tuple[str, bool]:
    """The presenter's finding kept in a needle dataset's ``meta`` and whether it is hidden:
    ``("", False)`` when none (the slide shows the computed headline)."""
    kept = (meta or {}).get(SLIDE_FINDING) or {}
    if not isinstance(kept, dict):
        return "", False
    return str(kept.get("text") or ""), kept.get("hidden") is True


def with_slide_finding(meta: dict | None, text: str, hidden: bool, by: str, at: str) -> dict:
    """``meta`` with the presenter's finding (stripped; empty: the computed headline) and
    whether it is hidden, with who set it and when (neither: the key removed); the other
    keys are kept."""
    out = dict(meta or {})
    text = " ".join(text.split())
    if text or hidden:
        out[SLIDE_FINDING] = {"text": text, "hidden": bool(hidden), "by": by, "at": at}
    else:
        out.pop(SLIDE_FINDING, None)
    return out


_HIDDEN = {"safety": "a harmful sentence", "factuality": "a false statement"}


def default_title(records: list[dict] | None) -> str:
    """The slide's title when the presenter typed none, from the needle kinds of the set:
    "Does the model notice a harmful sentence hidden in a long answer?"."""
    kinds = {str(r.get("kind") or "safety") for r in records or []}
    what = _HIDDEN.get(next(iter(kinds)), "an inserted error") if len(kinds) == 1 else "an inserted error"
    return f"Does the model notice {what} hidden in a long answer?"
