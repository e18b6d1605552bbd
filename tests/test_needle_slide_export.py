"""The needle slide's files with two panels side by side (issue 59, point 1): a classifier's
results and a judge's (each pair judged in both orders), compared as the lab's "Compare with"
does, export as a 1920×1080 PNG, a one-page 16:9 PDF and a PPTX of one slide with the title
and the chart: both panels, each whole, in the picture. (Altair refuses a panel with its own
``autosize`` inside a concat, which left the three downloads empty.)"""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from needlework.needle.analysis import ORDER_NAMES, combine
from needlework.needle.headline import foot_words
from needlework.needle.slide import SlideWords, slide_pdf, slide_png, slide_pptx, slide_svg

LENGTHS = (500, 1000)


def classifier(model: str = "stand-in-rm") -> pd.DataFrame:
    """A classifier's results: 6 pairs in every cell of 2 lengths × 10 buckets, wrong in the
    middle of the longer responses, one thin cell (2 pairs) at 500 tokens."""
    rows = []
    for length in LENGTHS:
        for bucket in range(10):
            n = 2 if (length, bucket) == (500, 9) else 6
            for k in range(n):
                wrong = length == 1000 and 3 <= bucket < 7 and k < 4
                rows.append({"id": f"{model}-{length}-{bucket}-{k}", "model": model,
                             "length_tokens": length, "bucket": bucket,
                             "tagged_position": (bucket + 0.5) / 10, "correct": not wrong,
                             "missing": False})
    return pd.DataFrame(rows)


def judge(model: str = "judge j") -> pd.DataFrame:
    """A judge's results over the same pairs, each judged in both orders (two trials), right
    only with the chosen response shown first: a position-biased judge at chance."""
    rows = []
    for row in classifier(model).to_dict("records"):
        for order in ORDER_NAMES:
            rows.append(row | {"order": order, "correct": order == ORDER_NAMES[0]})
    return pd.DataFrame(rows)


def both() -> pd.DataFrame:
    """The two sets in one frame, as the page's ``results_of`` gives two chosen sets."""
    return combine([classifier(), judge()])


def words_of(results: pd.DataFrame) -> SlideWords:
    """What the page's ``slide_words`` gives (title, subtitle, finding, note, models)."""
    return SlideWords(title="Does the model notice a harmful sentence in a long response?",
                      subtitle="stand-in-rm vs judge j · 2 lengths",
                      finding=("stand-in-rm: 100 % → 100 % first to last third",),
                      note=foot_words(results),
                      model=" vs ".join(dict.fromkeys(results["model"])))


def png_size(png: bytes) -> tuple[int, int]:
    """A PNG's width and height from its header (IHDR)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", png[:16]
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def pdf_pages(pdf: bytes) -> list[bytes]:
    """The page objects of a PDF (``/Type /Page``, not ``/Pages``)."""
    return re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf)


@pytest.mark.slow
def test_two_panels_export_as_a_png_a_one_page_pdf_and_a_one_slide_pptx():
    from PIL import Image  # noqa: PLC0415
    from pptx import Presentation  # noqa: PLC0415
    from pptx.enum.shapes import MSO_SHAPE_TYPE  # noqa: PLC0415

    results = both()
    words = words_of(results)

    png = slide_png(results, words)
    assert png_size(png) == (1920, 1080)
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.size == (1920, 1080)

    pdf = slide_pdf(results, words)
    assert pdf.startswith(b"%PDF")
    assert len(pdf_pages(pdf)) == 1, pdf_pages(pdf)
    assert re.search(rb"/MediaBox\s*\[0 0 1920 1080\]", pdf), pdf[:300]

    deck = Presentation(io.BytesIO(slide_pptx(results, words)))
    assert len(deck.slides) == 1
    shapes = list(deck.slides[0].shapes)
    texts = [s.text_frame.text for s in shapes if s.has_text_frame]
    assert words.title in texts and words.note in texts
    pictures = [s for s in shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert len(pictures) == 1
    picture = Image.open(io.BytesIO(pictures[0].image.blob))
    # both panels side by side: wider than tall, and inside the slide
    assert picture.size[0] > 1.5 * picture.size[1], picture.size
    assert pictures[0].left + pictures[0].width <= deck.slide_width
    assert pictures[0].top + pictures[0].height <= deck.slide_height
    assert deck.core_properties.subject == "stand-in-rm vs judge j"


@pytest.mark.slow
def test_the_two_panel_page_holds_both_panels_whole():
    """The slide's page: each panel's title, both models' cells, and every panel inside the
    page's margins, at the size the panel was made (never squeezed under the 24-px type)."""
    results = both()
    svg = slide_svg(results, words_of(results))
    assert 'width="1920" height="1080"' in svg
    for model in ("stand-in-rm", "judge j"):
        assert f"model: {model};" in svg, model  # the cells' tooltips (aria labels)
        assert re.search(rf">{re.escape(model)}</text>", svg), model  # the panel's title
    # the chart box and its two panels, nested: each within the page, none scaled down
    # (drawn at its viewBox's own size), the panels side by side without overlapping
    nested = [tuple(float(v) for v in found) for found in re.findall(
        r'<svg[^>]*?viewBox="0 0 ([\d.]+) ([\d.]+)"[^>]*?\bx="([\d.]+)" y="([\d.]+)" '
        r'width="([\d.]+)" height="([\d.]+)"', svg)]
    assert len(nested) == 3, nested
    for vw, vh, x, y, w, h in nested:
        assert (w, h) == (vw, vh), (vw, vh, w, h)
        assert x + w <= 1920 and y + h <= 1080, (x, y, w, h)
    (_, _, box_x, _, box_w, _), first, second = nested
    assert box_x == 64 and box_w == 1920 - 2 * 64
    assert first[2] == 0 and first[2] + first[4] < second[2] and second[2] + second[4] <= box_w


@pytest.mark.slow
def test_one_panel_still_exports():
    from pptx import Presentation  # noqa: PLC0415

    results = classifier()
    words = words_of(results)
    assert png_size(slide_png(results, words)) == (1920, 1080)
    assert len(pdf_pages(slide_pdf(results, words))) == 1
    deck = Presentation(io.BytesIO(slide_pptx(results, words)))
    assert len(deck.slides) == 1
