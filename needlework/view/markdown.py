"""Markdown from data drawn as formatting, never as HTML of its own.

The contract: :func:`to_html` turns a response written in Markdown (headings, emphasis,
lists, code, tables, quotes) into HTML in which

- raw HTML in the text is shown escaped, as the characters typed (``<script>`` reads
  ``<script>``; nothing in the data becomes a tag or an attribute);
- no link is clickable: a link is drawn as its text followed by its address in plain
  text, so ``[click](javascript:…)`` is words, never a script, and no address is
  followed by a click;
- no image is loaded: an image is drawn as ``[image: alt text — address]`` in plain
  text, so nothing is fetched from a remote server when a response is read.

Every string from the data passes through the escaping of markdown-it (CommonMark with
``html`` off, tables and strikethrough on, no autolinking of bare addresses); only the
tags markdown-it makes for the Markdown syntax reach the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

_MD: MarkdownIt | None = None


def _link_open(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    return '<span class="nw-md-link">'


def _link_close(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    # the address of the link this closes: the nearest link_open before it
    href = ""
    for token in reversed(tokens[:idx]):
        if token.type == "link_open":
            href = str(token.attrGet("href") or "")
            break
    return "</span>" + (f' <span class="nw-md-url">({escapeHtml(href)})</span>' if href else "")


def _image(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = "".join(child.content for child in (token.children or []))
    src = str(token.attrGet("src") or "")
    return (f'<span class="nw-md-image">[image: {escapeHtml(alt) or "no description"}'
            + (f" — {escapeHtml(src)}" if src else "") + "]</span>")


class _EveryAddress(MarkdownIt):
    """markdown-it that keeps every link's address: each is shown as text, none followed
    (markdown-it's own check drops ``javascript:`` links, whose words would then show
    their raw Markdown)."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return True


def _parser() -> MarkdownIt:
    global _MD
    if _MD is None:
        md = _EveryAddress("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.enable(["table", "strikethrough"])
        md.add_render_rule("link_open", _link_open)
        md.add_render_rule("link_close", _link_close)
        md.add_render_rule("image", _image)
        _MD = md
    return _MD


def to_html(text: str) -> str:
    """``text`` (Markdown) as safe HTML: see the module docstring for what is guaranteed."""
    return _parser().render(text)

