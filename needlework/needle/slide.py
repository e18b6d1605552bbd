"""The needle slide as files a lead presents without editing: 16:9 PNG and PDF at 1920×1080
and a PowerPoint file (python-pptx), each with the title, the model, the headline finding
(or none, when the presenter hid it), the heatmap and the line that says how sparse the
grid is.

The PNG and PDF are one SVG page of 1920×1080 (:func:`slide_svg`): the words as SVG text,
the heatmap (rendered by vl-convert at the size left for it; with several models, each
panel on its own at its share of the width, side by side) nested inside, so both files have
exactly that page. The PPTX is a 13.333 × 7.5 inch (16:9) slide of text boxes and the
heatmap as a picture (the same drawing as a PNG).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

import altair as alt
import pandas as pd

from needlework.needle import charts
from needlework.needle.findings import wrap

WIDTH, HEIGHT = 1920, 1080  # the slide's page, 16:9
MARGIN = 64
INK, GREY = "#262730", "#444444"
#: Average advance of a character, in font sizes, for wrapping words into lines
#: (sans-serif; bold a little wider).
CHAR, BOLD_CHAR = 0.47, 0.5


@dataclass(frozen=True)
class SlideWords:
    """What the slide says: ``title``, ``subtitle`` (the models, pairs and lengths),
    ``finding`` (the headline lines; empty when hidden), ``note`` (empty and thin cells)
    and ``model`` (the model's name, for the file's properties)."""

    title: str
    subtitle: str
    finding: Sequence[str] = field(default_factory=tuple)
    note: str = ""
    model: str = ""


@dataclass(frozen=True)
class _Line:
    text: str
    size: int
    bold: bool = False
    colour: str = INK


def _wrapped(text: str, size: int, bold: bool, width: int = WIDTH - 2 * MARGIN) -> list[str]:
    per = max(10, int(width / ((BOLD_CHAR if bold else CHAR) * size)))
    return wrap(text, per) if text else []


def _title_size(title: str) -> int:
    """The title's font size on the page: 56 px, smaller for a long title (down to 40 px,
    so 200 characters take at most three lines)."""
    for size in (56, 48, 44, 40):
        if len(_wrapped(title, size, True)) <= 2:
            return size
    return 40


def _head(words: SlideWords) -> list[_Line]:
    """The lines above the chart."""
    size = _title_size(words.title)
    lines = [_Line(t, size, True) for t in _wrapped(words.title, size, True)]
    lines += [_Line(t, 30, False, GREY) for t in _wrapped(words.subtitle, 30, False)]
    for finding in words.finding:
        lines += [_Line(t, 34, True) for t in _wrapped(finding, 34, True)]
    return lines


def _foot(words: SlideWords) -> list[_Line]:
    return [_Line(t, 28, False, GREY) for t in _wrapped(words.note, 28, False)]


def _height(lines: Sequence[_Line]) -> int:
    return sum(round(line.size * 1.25) for line in lines)


def _text(lines: Sequence[_Line], top: int) -> tuple[str, int]:
    """SVG text elements for ``lines`` from ``top``; returns them and the y under them."""
    out, y = [], top
    for line in lines:
        step = round(line.size * 1.25)
        weight = ' font-weight="bold"' if line.bold else ""
        out.append(f'<text x="{MARGIN}" y="{y + round(line.size * 0.95)}" '
                   f'font-family="Liberation Sans, Arial, Helvetica, sans-serif" '
                   f'font-size="{line.size}"{weight} fill="{line.colour}">{escape(line.text)}</text>')
        y += step
    return "\n".join(out), y


GAP = 48  #: between panels side by side, slide pixels


def panels_of(results: pd.DataFrame, width: int, height: int,
              font: int = 28) -> list[alt.LayerChart]:
    """The heatmap for a file: one panel per model, each its own chart ``height`` tall and
    as wide as its share of ``width`` (less :data:`GAP` between panels) with its axes,
    legend and title (autosize "fit"), labels ``font`` px; with several, each titled with
    its model.

    Each panel is drawn on its own and the panels are placed side by side (as the page puts
    them in columns), never as one concat chart: a panel sizes itself to fit ("fit", which
    Vega-Lite does only for a single or layered view, and altair refuses inside a concat),
    and its legend's length and its labels follow its own width."""
    models = list(dict.fromkeys(results["model"]))
    each = (width - GAP * (len(models) - 1)) // max(1, len(models))
    return [charts.heatmap_panel(results[results["model"] == model],
                                 title=model if len(models) > 1 else None, select=False,
                                 font=font, height=height, slide=True).properties(width=each)
            for model in models]


def _chart_svg(results: pd.DataFrame, width: int, height: int, font: int | None = None) -> str:
    """The heatmap as an SVG document: one panel's own, or the panels side by side in one
    ``width × height`` document."""
    import vl_convert as vlc  # noqa: PLC0415 (native module, only when exporting)

    font = font or (28 if height >= 420 else 24)
    panels = [vlc.vegalite_to_svg(panel.to_json(), vl_version=charts._vl_version())
              for panel in panels_of(results, width, height, font)]
    if len(panels) == 1:
        return panels[0]
    each = (width - GAP * (len(panels) - 1)) // len(panels)
    nested = [_nest(svg, k * (each + GAP), 0, each, height) for k, svg in enumerate(panels)]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">\n' + "\n".join(nested) + "\n</svg>")


def _nest(svg: str, x: int, y: int, width: int, height: int) -> str:
    """An SVG document as an element placed at ``x, y`` in a box of ``width × height``
    (scaled down, never up, to fit it)."""
    body = re.sub(r"^<\?xml[^>]*>\s*", "", svg.strip())
    found = re.match(r"<svg\b([^>]*)>", body)
    if not found:
        raise ValueError("the chart renderer gave no SVG")
    attrs = found.group(1)
    w = float(re.search(r'\bwidth="([\d.]+)', attrs).group(1))  # type: ignore[union-attr]
    h = float(re.search(r'\bheight="([\d.]+)', attrs).group(1))  # type: ignore[union-attr]
    scale = min(1.0, width / w, height / h)
    attrs = re.sub(r'\s(width|height|x|y)="[^"]*"', "", attrs)
    if "viewBox" not in attrs:
        attrs += f' viewBox="0 0 {w:g} {h:g}"'
    root = (f'<svg{attrs} x="{x}" y="{y}" width="{w * scale:.1f}" height="{h * scale:.1f}" '
            'preserveAspectRatio="xMinYMin meet">')
    return root + body[found.end():]


def slide_svg(results: pd.DataFrame, words: SlideWords) -> str:
    """The slide as one 1920×1080 SVG page: title, subtitle, finding, the heatmap in the
    height left, the note at the foot."""
    head, foot = _head(words), _foot(words)
    top = MARGIN - 16
    chart_top = top + _height(head) + 16
    chart_height = HEIGHT - chart_top - _height(foot) - MARGIN + 16
    head_svg, _ = _text(head, top)
    foot_svg, _ = _text(foot, HEIGHT - MARGIN + 16 - _height(foot))
    chart = _nest(_chart_svg(results, WIDTH - 2 * MARGIN, max(240, chart_height)),
                  MARGIN, chart_top, WIDTH - 2 * MARGIN, max(240, chart_height))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}">\n<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>\n'
            f"{head_svg}\n{chart}\n{foot_svg}\n</svg>")


def slide_png(results: pd.DataFrame, words: SlideWords) -> bytes:
    """The slide as a 1920×1080 PNG."""
    import vl_convert as vlc  # noqa: PLC0415

    return vlc.svg_to_png(slide_svg(results, words), scale=1)


def slide_pdf(results: pd.DataFrame, words: SlideWords) -> bytes:
    """The slide as a one-page PDF of 1920×1080 (16:9), its words as text."""
    import vl_convert as vlc  # noqa: PLC0415

    return vlc.svg_to_pdf(slide_svg(results, words))


def slide_pptx(results: pd.DataFrame, words: SlideWords) -> bytes:
    """The slide as a PowerPoint file (one 16:9 slide): the title, the model and the counts,
    the finding, the heatmap as a picture, the note; the model's name also in the file's
    subject."""
    import vl_convert as vlc  # noqa: PLC0415
    from pptx import Presentation  # noqa: PLC0415
    from pptx.dml.color import RGBColor  # noqa: PLC0415
    from pptx.enum.text import MSO_AUTO_SIZE  # noqa: PLC0415
    from pptx.util import Emu, Pt  # noqa: PLC0415

    deck = Presentation()
    deck.slide_width, deck.slide_height = Emu(12192000), Emu(6858000)  # 13.333 × 7.5 in
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    px = 12192000 // WIDTH  # EMU per slide pixel (1920 across)

    def box(text: str, y: int, height: int, size: int, bold: bool = False,
            colour: str = INK) -> None:
        """A text box across the slide at ``y`` (slide pixels), ``size`` px type."""
        shape = slide.shapes.add_textbox(Emu(MARGIN * px), Emu(y * px),
                                         Emu((WIDTH - 2 * MARGIN) * px), Emu(height * px))
        frame = shape.text_frame
        frame.word_wrap = True
        # a viewer whose font runs wider than the one the layout assumed shrinks the
        # type to the box instead of running the words under the chart
        frame.auto_size = MSO_AUTO_SIZE.TEXT_TO_FIT_SHAPE
        frame.margin_left = frame.margin_right = frame.margin_top = frame.margin_bottom = 0
        run = frame.paragraphs[0].add_run()
        run.text = text
        run.font.size, run.font.bold = Pt(size / 2), bold  # a slide pixel is half a point
        run.font.color.rgb = RGBColor.from_string(colour.lstrip("#")[:6].upper())

    head, foot = _head(words), _foot(words)
    y = MARGIN - 16
    title = [line for line in head if line.bold and line.size >= 40]
    box(words.title, y, _height(title), title[0].size if title else 56, bold=True)
    y += _height(title)
    subtitle = _height([_Line(t, 30) for t in _wrapped(words.subtitle, 30, False)])
    box(words.subtitle, y, subtitle, 30, colour=GREY)
    y += subtitle
    for finding in words.finding:
        lines = [_Line(t, 34, True) for t in _wrapped(finding, 34, True)]
        box(finding, y, _height(lines), 34, bold=True)
        y += _height(lines)
    y += 16
    room = HEIGHT - y - _height(foot) - MARGIN + 16
    box_height = max(240, room)
    # the panels as the PNG and PDF draw them (one panel: the same pixels as its own PNG)
    picture = vlc.svg_to_png(_chart_svg(results, WIDTH - 2 * MARGIN, box_height,
                                        28 if room >= 420 else 24), scale=2)
    slide.shapes.add_picture(io.BytesIO(picture), Emu(MARGIN * px), Emu(y * px),
                             height=Emu(box_height * px))
    if words.note:
        box(words.note, HEIGHT - MARGIN + 16 - _height(foot), _height(foot), 28, colour=GREY)
    deck.core_properties.title = words.title[:255]
    deck.core_properties.subject = words.model[:255]
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()
