"""Turning (prompt, response) into the text a reward model scores.

The prompt is one user turn and the response one assistant turn, rendered with
the tokenizer's chat template. A tokenizer without a chat template gets the
stated fallback :data:`FALLBACK_FORMAT`, and the result says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

FALLBACK_FORMAT = "User: {prompt}\n\nAssistant: {response}"
FALLBACK_TEMPLATE_ID = "fallback:user-assistant:v1"
_SENTINEL = "NEEDLEWORKRESPONSESENTINEL7f3a"


@dataclass(frozen=True)
class Rendered:
    """A rendered conversation.

    ``response_start`` is the character offset of the response in ``text``
    (``None`` when the template changed the response so it cannot be found).
    ``add_special_tokens`` says how to tokenize ``text``: False for chat templates
    (they write their own special tokens), True for the fallback.
    """

    text: str
    response_start: int | None
    template_id: str
    fallback: bool
    add_special_tokens: bool


def has_chat_template(tokenizer: Any) -> bool:
    """True when the tokenizer carries a usable chat template."""
    return bool(getattr(tokenizer, "chat_template", None))


def template_id(tokenizer: Any) -> str:
    """A stable id of how texts are rendered: ``chat:<hash>`` or the fallback id."""
    if not has_chat_template(tokenizer):
        return FALLBACK_TEMPLATE_ID
    template = tokenizer.chat_template
    if isinstance(template, dict):
        template = "\n".join(f"{k}={v}" for k, v in sorted(template.items()))
    return "chat:" + hashlib.sha256(str(template).encode()).hexdigest()[:16]


def _messages(prompt: str, response: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]


def _apply(tokenizer: Any, prompt: str, response: str) -> str:
    text = tokenizer.apply_chat_template(_messages(prompt, response), tokenize=False)
    if not isinstance(text, str):  # some tokenizers return a list for batched input
        text = text[0]
    return text


def render(tokenizer: Any, prompt: str, response: str, *, locate: bool = True) -> Rendered:
    """Render one user turn and one assistant turn.

    With ``locate`` (needed for per-token views only) also find where the response starts.
    """
    if not has_chat_template(tokenizer):
        head = FALLBACK_FORMAT.split("{response}")[0].format(prompt=prompt)
        return Rendered(head + response, len(head), FALLBACK_TEMPLATE_ID, True, True)
    text = _apply(tokenizer, prompt, response)
    if not locate:
        return Rendered(text, None, template_id(tokenizer), False, False)
    start: int | None = None
    probe = _apply(tokenizer, prompt, _SENTINEL)
    at = probe.find(_SENTINEL)
    if at >= 0 and probe.replace(_SENTINEL, response, 1) == text:
        start = at
    else:
        for needle in (response, response.strip()):
            found = text.rfind(needle) if needle else -1
            if found >= 0:
                start = found
                break
    return Rendered(text, start, template_id(tokenizer), False, False)


def text_hash(text: str) -> str:
    """The sha256 hex digest of a rendered text (the score cache key)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
