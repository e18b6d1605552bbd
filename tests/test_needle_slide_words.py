"""The needle slide's words and files (issue 50): the one-line headline (trend over position
with Newcombe's interval of the change, then the weakest readable length), the line on empty
and thin cells, the presenter's finding kept in a dataset's meta and in a report, and the
slide's files (1920×1080 PNG, 16:9 PDF, a PPTX with title, chart, finding and model)."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from needlework.needle.analysis import ORDER_NAMES
from needlework.needle.headline import (
    foot_words,
    headline,
    headlines,
    newcombe_difference,
    panel_notes,
    sparse_words,
)
from needlework.needle.reports import Report, ReportError, SetRef
from needlework.needle.slide import SlideWords, slide_pdf, slide_png, slide_pptx, slide_svg
from needlework.needle.slide_meta import slide_finding_of, with_slide_finding


def frame(cells: dict[tuple[int, int], tuple[int, int]], model: str = "rm") -> pd.DataFrame:
    """Results from ``{(length, bucket): (right, n)}``: n pairs per cell, the first ``right``
    of them right, each pair's needle in the middle of its bucket."""
    rows = []
    for (length, bucket), (right, n) in cells.items():
        for k in range(n):
            rows.append({"id": f"{model}-{length}-{bucket}-{k}", "model": model,
                         "length_tokens": length, "bucket": bucket,
                         "tagged_position": (bucket + 0.5) / 10, "correct": k < right,
                         "missing": False})
    return pd.DataFrame(rows)


def grid(first: int, last: int, n: int = 10, lengths=(500, 1000)) -> dict:
    """Every cell of ``lengths`` × 10 buckets with ``n`` pairs: ``first`` right in buckets
    0–2 (the first third), ``last`` in buckets 7–9 (the last third), all right between."""
    return {(length, b): ((first if b < 3 else last if b >= 7 else n), n)
            for length in lengths for b in range(10)}


def test_the_headline_leads_with_the_trend_and_its_interval_then_the_weakest_length():
    cells = grid(first=9, last=6)
    cells.update({(1000, b): (4, 10) for b in range(3, 7)})  # 1K weaker in the middle
    text = headline(frame(cells))
    # first third: 54 of 60 pairs (90 %), last third: 36 of 60 (60 %)
    low, high = newcombe_difference(54 / 60, 60, 36 / 60, 60)
    assert text.startswith(f"90 % → 60 % first to last third (−30 points, 95 % CI "
                           f"−{round(-low * 100)} to −{round(-high * 100)});"), text
    assert text.endswith("lowest at 1K tokens, 61 %"), text  # 27 + 16 + 18 of 100 pairs at 1K
    assert "\n" not in text and len(text) <= 100


def test_the_headline_ignores_a_thin_cell_however_low():
    cells = grid(first=10, last=10)
    cells[(250, 5)] = (0, 3)  # one thin cell at 0 %, a length of 3 pairs
    text = headline(frame(cells))
    assert "250" not in text and "0 %" not in text.replace("100 %", ""), text
    assert text.startswith("100 % → 100 % first to last third (0 points"), text
    assert text.endswith("every length 100 %"), text


def test_the_change_interval_is_newcombes_hybrid_score_interval():
    # Newcombe (1998), method 10, example: 56/70 vs 48/80 → difference 0.2, CI 0.0524 to 0.3339
    low, high = newcombe_difference(48 / 80, 80, 56 / 70, 70)
    assert low == pytest.approx(0.0524, abs=5e-4) and high == pytest.approx(0.3339, abs=5e-4)


def test_without_both_thirds_the_headline_is_the_overall_accuracy_with_its_interval():
    cells = {(500, b): (8, 10) for b in range(3, 7)}  # the middle only
    text = headline(frame(cells))
    assert re.fullmatch(r"Accuracy 80 % \(95 % CI \d+–\d+ %, 40 pairs\); lowest at positions "
                        r"30–40 %, 80 %", text), text


def test_a_change_of_one_point_is_one_point():
    text = headline(frame(grid(first=50, last=49, n=100)))
    assert "50 % → 49 % first to last third (−1 point, 95 % CI" in text, text


def test_two_models_get_one_line_each():
    both = pd.concat([frame(grid(9, 6), "alpha"), frame(grid(10, 10), "beta")])
    lines = headlines(both)
    assert [line.split(":")[0] for line in lines] == ["alpha", "beta"]
    assert lines[0].startswith("alpha: 90 % → 60 %")


def test_sparse_words_say_how_many_cells_are_empty_and_why():
    cells = grid(10, 10)
    for b in range(6, 10):  # 500 tokens: no pair with the needle past 60 %
        del cells[(500, b)]
    cells[(500, 5)] = (2, 2)  # and one thin cell
    text = sparse_words(frame(cells))
    assert text == ("4 of 20 cells are empty: the data has no pair of that length with the needle "
                    "there; 1 is thin (grey, dashed: under 5 pairs). 500 tokens: 5 of 10 cells "
                    "readable.")
    assert sparse_words(frame(grid(10, 10))) == "Every cell holds at least 5 pairs."
    cells = grid(10, 10)
    cells[(500, 0)] = (1, 1)
    assert sparse_words(frame(cells)).startswith("1 of 20 cells is thin (grey, dashed")


def test_sparse_words_for_panels_side_by_side_count_each_grid():
    """Two models on one slide: each model's empty and thin cells of its own 20, one
    sentence (never a count over both grids together)."""
    first = grid(10, 10)
    for b in range(6, 10):
        del first[(500, b)]
    first[(500, 5)] = (2, 2)
    second = grid(10, 10)
    del second[(1000, 0)]
    both = pd.concat([frame(first, "rm"), frame(second, "judge j")], ignore_index=True)
    assert sparse_words(both) == (
        "rm: 4 of 20 cells empty, 1 thin (grey, dashed: under 5 pairs). judge j: 1 of 20 "
        "cells empty.")
    even = pd.concat([frame(grid(10, 10), "rm"), frame(grid(10, 10), "j")], ignore_index=True)
    assert sparse_words(even) == "Every cell holds at least 5 pairs."
    # the slide's foot: each panel's own note, under it, without the model's name
    assert panel_notes(both) == ["4 of 20 cells empty, 1 thin (grey, dashed: under 5 pairs).",
                                 "1 of 20 cells empty."]
    assert foot_words(both) == ("rm: 4 of 20 cells empty, 1 thin (grey, dashed: under 5 pairs). "
                                "judge j: 1 of 20 cells empty.")


def trials(cells: dict[tuple[int, int], tuple[int, int]], model: str) -> pd.DataFrame:
    """A judge's results that name the first response shown: each pair of :func:`frame`
    judged in both orders (two trials), right only with the chosen response shown first."""
    rows = []
    for row in frame(cells, model).to_dict("records"):
        for order in ORDER_NAMES:
            rows.append(row | {"order": order, "correct": order == ORDER_NAMES[0]})
    return pd.DataFrame(rows)


def test_a_judges_panel_note_says_its_bias_and_chance_in_two_short_clauses():
    cells = grid(10, 10)
    del cells[(500, 9)]
    both = pd.concat([frame(grid(10, 10), "rm"), trials(cells, "judge j")], ignore_index=True)
    rm, judge = panel_notes(both)
    assert rm == "Every cell holds at least 5 pairs."
    assert judge == ("1 of 20 cells empty. Favours the first shown (right 100\u00a0% vs 0\u00a0%); "
                     "at chance.")
    # a judge right more often with the chosen shown second, over too few pairs to tell
    few = frame({(500, 0): (2, 3)}, "judge k")
    few = pd.concat([few.assign(order=ORDER_NAMES[0], correct=[False, False, False]),
                     few.assign(order=ORDER_NAMES[1])], ignore_index=True)
    (note,) = panel_notes(few)
    assert note.startswith("9 of 10 cells empty, 1 thin (grey, dashed: under 5 pairs). No position "
                           "bias shown (right 0\u00a0% vs 67\u00a0%)"), note
    assert note.endswith("%); not shown above chance."), note  # 0 of 3: an interval up to 56 %


def test_the_presenters_finding_is_kept_in_meta_and_in_a_report():
    meta = with_slide_finding({"slide_title": {"text": "T"}}, "  Misses in the  middle ", False,
                              "ann", "2026-11-28T10:00:00+00:00")
    assert slide_finding_of(meta) == ("Misses in the middle", False)
    assert meta["slide_title"] == {"text": "T"}  # other keys kept
    assert slide_finding_of(with_slide_finding(meta, "", True, "ann", "now")) == ("", True)
    assert "slide_finding" not in with_slide_finding(meta, " ", False, "ann", "now")
    ref = SetRef("model", "rm", fingerprint="f")
    report = Report("needles", (ref,), "Title", "Misses in the middle", True)
    again = Report.from_json(report.to_json())
    assert (again.finding, again.finding_hidden) == ("Misses in the middle", True)
    old = '{"version": 1, "dataset": "n", "title": "", "sets": [{"kind": "model", "name": "rm", "fingerprint": "f"}]}'
    assert (Report.from_json(old).finding, Report.from_json(old).finding_hidden) == ("", False)
    with pytest.raises(ReportError, match="finding: at most 300 characters"):
        Report("n", (ref,), "", "x" * 301).to_json()
    with pytest.raises(ReportError, match="finding_hidden: true or false"):
        Report.from_json(old.replace('"title": ""', '"title": "", "finding_hidden": "yes"'))


WORDS = SlideWords(title="Does the model notice a harmful sentence? " * 4, subtitle="rm · 200 pairs",
                   finding=("90 % → 60 % first to last third (−30 points, 95 % CI −43 to −15)",),
                   note="Every cell holds at least 5 pairs.", model="stand-in-rm")


@pytest.mark.slow
def test_the_slide_files_are_16_9_and_hold_the_words():
    from PIL import Image  # noqa: PLC0415
    from pptx import Presentation  # noqa: PLC0415

    results = frame(grid(9, 6))
    svg = slide_svg(results, WORDS)
    assert 'width="1920" height="1080"' in svg and "90 % → 60 % first to last third" in svg
    assert Image.open(io.BytesIO(slide_png(results, WORDS))).size == (1920, 1080)
    pdf = slide_pdf(results, WORDS)
    assert re.search(rb"/MediaBox\s*\[0 0 1920 1080\]", pdf), pdf[:300]
    deck = Presentation(io.BytesIO(slide_pptx(results, WORDS)))
    texts = [s.text_frame.text for s in deck.slides[0].shapes if s.has_text_frame]
    assert WORDS.title in texts and WORDS.finding[0] in texts and WORDS.note in texts
    assert deck.core_properties.subject == "stand-in-rm"
    # a viewer without the layout's font shrinks the words to their boxes (never under
    # the chart): every text box autofits
    from pptx.enum.text import MSO_AUTO_SIZE  # noqa: PLC0415
    assert {s.text_frame.auto_size for s in deck.slides[0].shapes if s.has_text_frame} == \
        {MSO_AUTO_SIZE.TEXT_TO_FIT_SHAPE}
    hidden = SlideWords(WORDS.title, WORDS.subtitle, (), WORDS.note, WORDS.model)
    assert "first to last third" not in slide_svg(results, hidden)
