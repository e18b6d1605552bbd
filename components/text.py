"""The one way to show untrusted text: literally, as text.

Text from data is HTML-escaped and drawn with ``st.html`` in a ``pre-wrap`` block,
so ``<script>`` is shown, not run, and ``$5 and $10`` or ``**bold**`` are not
turned into LaTeX or Markdown. Widget labels take Markdown, so data that goes
into a label passes through :func:`label` first. Where the reader chooses it (Review's
Markdown view), :func:`render_markdown` draws formatting only: no HTML, link or image
of the data's own.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import streamlit as st

from needlework.view.markdown import to_html as markdown_html

#: The literal-text style, once before the blocks of one ``st.html``.
TEXT_STYLE = """
<style>
.nw-text{white-space:pre-wrap;word-wrap:break-word;font-family:var(--nw-font,inherit);
  line-height:1.55;margin:0 0 .25rem 0;}
.nw-text.nw-mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
.nw-text.nw-box{border:1px solid rgba(128,128,128,.35);border-radius:.5rem;padding:.6rem .8rem;
  overflow-y:auto}
.nw-text mark{padding:0 .1em;border-radius:.2em}
.nw-text mark.nw-ins{background:#b7f0c0}
.nw-text mark.nw-del{background:#ffc9c9;text-decoration:line-through}
.nw-text mark.nw-chg{background:#ffe08a}
.nw-text mark.nw-needle{background:#ff8c8c;outline:2px solid #d00}
.nw-text mark.nw-cite{background:#d6e4ff}
.nw-text mark.nw-bad{background:#ffc9c9}
.nw-text mark.nw-current{outline:2px solid #1f6feb}
.nw-md{white-space:normal;font-family:inherit}
.nw-md :is(h1,h2,h3,h4,h5,h6){font-size:1.05em;font-weight:700;margin:.6rem 0 .3rem;padding:0}
.nw-md h1{font-size:1.25em}.nw-md h2{font-size:1.15em}
.nw-md p{margin:0 0 .5rem}.nw-md :is(ul,ol){margin:0 0 .5rem 1.2rem;padding:0}
.nw-md pre{white-space:pre-wrap;background:rgba(128,128,128,.1);padding:.4rem;border-radius:.3rem}
.nw-md code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
.nw-md table{border-collapse:collapse;margin:0 0 .5rem}
.nw-md :is(th,td){border:1px solid rgba(128,128,128,.4);padding:.15rem .4rem}
.nw-md blockquote{margin:0 0 .5rem;padding-left:.6rem;border-left:3px solid rgba(128,128,128,.4)}
.nw-md .nw-md-link{text-decoration:underline dotted}
.nw-md :is(.nw-md-url,.nw-md-image){color:rgba(100,100,100,.95);font-size:.85em}
</style>
"""


def escape(text: str) -> str:
    """HTML-escape ``text`` (quotes too)."""
    return html.escape(text, quote=True)


def block(inner: str, *, mono: bool = False, box: bool = False, max_height: int | None = None,
          key: str | None = None) -> str:
    """A literal-text ``<div>`` around ``inner`` (HTML the caller escaped), for pages that
    draw several pieces as one ``st.html`` (after :data:`TEXT_STYLE`)."""
    classes = "nw-text" + (" nw-mono" if mono else "") + (" nw-box" if box else "")
    style = f' style="max-height:{int(max_height)}px"' if max_height else ""
    ident = f' id="{escape(key)}"' if key else ""
    return f'<div class="{classes}"{ident}{style}>{inner}</div>'


def render_text(
    text: str,
    *,
    mono: bool = False,
    box: bool = False,
    max_height: int | None = None,
    key: str | None = None,
) -> None:
    """Draw ``text`` literally (HTML-escaped, whitespace kept)."""
    st.html(TEXT_STYLE + block(escape(text), mono=mono, box=box, max_height=max_height, key=key))


def render_markdown(text: str, *, box: bool = False, max_height: int | None = None,
                    key: str | None = None) -> None:
    """Draw ``text`` from data as Markdown formatting only (:mod:`needlework.view.markdown`):
    its raw HTML shown escaped, links as words with their address in plain text, images
    as ``[image: …]`` and never loaded. A view the reader chooses; text stays text
    (:func:`render_text`) by default."""
    classes = "nw-text nw-md" + (" nw-box" if box else "")
    style = f' style="max-height:{int(max_height)}px"' if max_height else ""
    ident = f' id="{escape(key)}"' if key else ""
    st.html(f'{TEXT_STYLE}<div class="{classes}"{ident}{style}>{markdown_html(text)}</div>')


def render_heading_text(text: str, limit: int = 80) -> None:
    """Draw ``text`` (a name from data) as a short bold line, literally: HTML-escaped, one line,
    cut with an ellipsis past ``limit`` characters. Use it where Markdown's ``**name**`` would
    be tempting: there the name's own ``**`` or ``$`` would become formatting."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    st.html(f'<div class="nw-text" style="font-weight:600">{escape(text)}</div>')


def marked_html(segments: Iterable[tuple[str, str | None, str | None]]) -> str:
    """HTML for text made of ``(text, css_class, style)`` segments, each escaped.

    ``css_class`` is one of the ``nw-*`` marks (``nw-ins``, ``nw-del``, ``nw-chg``,
    ``nw-needle``, ``nw-cite``, ``nw-bad``, ``nw-current``) or None for plain text;
    ``style`` is an optional inline style the caller builds from numbers (e.g. a
    background colour for per-token shading), never from data.
    """
    parts = []
    for text, css_class, style in segments:
        if css_class is None and style is None:
            parts.append(escape(text))
            continue
        cls = f' class="{css_class}"' if css_class else ""
        sty = f' style="{escape(style)}"' if style else ""
        parts.append(f"<mark{cls}{sty}>{escape(text)}</mark>")
    return "".join(parts)


def render_marked_text(
    segments: Iterable[tuple[str, str | None, str | None]],
    *,
    box: bool = False,
    max_height: int | None = None,
    key: str | None = None,
) -> None:
    """Draw text with highlighted segments (see :func:`marked_html`); still literal."""
    st.html(TEXT_STYLE + block(marked_html(segments), mono=False, box=box, max_height=max_height, key=key))


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$<>~:])")
#: What Markdown turns into a link even when escaped (GFM autolinks): a URL scheme,
#: ``www.`` and e-mail addresses. An invisible word joiner (U+2060) breaks each.
_AUTOLINK = re.compile(r"(?i)(?<=:/)(?=/)|(?<=www)(?=\.)|(?<=@)")
_JOINER = "\u2060"


def label(text: str, limit: int = 120) -> str:
    """``text`` made safe for a widget label (labels render Markdown and LaTeX):
    every Markdown/LaTeX special character is backslash-escaped, autolinks (``://``,
    ``www.``, ``@``) are broken by an invisible word joiner, newlines become spaces, and
    long text is cut with an ellipsis."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = _AUTOLINK.sub(_JOINER, text)
    return _MD_SPECIAL.sub(r"\\\1", text)


def option(text: str, limit: int = 120) -> str:
    """``text`` for a select box's or a multiselect's option (``format_func``): shown as
    plain text by Streamlit, so only newlines become spaces and long text is cut with an
    ellipsis; nothing is escaped (an escape would show as a backslash)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
