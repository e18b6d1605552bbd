"""The needle slide with two panels side by side (issue 50, point 1): a reward model's stored
scores and an LLM judge's run (a real OpenAI-compatible server on 127.0.0.1 that always
answers A, judged through the project's engine in both orders, so the judge is biased and at
chance: the longest foot there is), under a 200-character title. At 1280×720 and 1920×1080
the slide fits the window with no scrolling; each panel's colour legend runs 0 % to 100 %
inside its panel; no cell label runs past its cell; every text is at least 24 px at
1280×720; the foot says each panel's own empty and thin cells under that panel, and the
judge's bias under the judge's, in at most two lines. Screenshots of both sizes."""

from __future__ import annotations

import re
import uuid

import pytest

import store
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge
from needlework.judges.plan import load_items
from tests.browser.harness import assert_no_exception, screenshot, submit, wait_idle
from tests.browser.test_needle_slide import TEXTS_OF, TITLE, wait_slide
from tests.judges_fixtures import FakeJudgeServer
from tests.needle_fixtures import import_scored_needles

LENGTHS = (250, 500, 1000)

#: The two-panel slide: the window, the scroll heights, the title and findings, each panel's
#: chart box, legend box and labels, model and cell labels that run past their cell, the
#: foot's notes with their line counts, and every text's rendered size (as
#: test_needle_slide.MEASURE: a chart's text scaled by its SVG's own scale).
MEASURE = """() => {
""" + TEXTS_OF + """
  const slide = document.querySelector('.st-key-nw-slide');
  const rect = e => { const b = e.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, left: b.left, right: b.right, height: b.height,
            width: b.width}; };
  const words = e => ({...rect(e), text: e.textContent.trim(),
    size: parseFloat(getComputedStyle(e).fontSize), line: parseFloat(getComputedStyle(e).lineHeight),
    lines: Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight))});
  const panels = [...slide.querySelectorAll('[data-testid="stVegaLiteChart"] svg')].map(svg => {
    const legend = svg.querySelector('g.role-legend');
    const cells = [...svg.querySelectorAll('g.mark-rect.role-mark path[aria-label*="accuracy"]')]
      .filter(p => (p.getAttribute('fill') || 'none') !== 'none').map(rect);
    const model = (svg.querySelector('path[aria-label*="model: "]').getAttribute('aria-label')
                   .match(/model: ([^;]*);/) || [])[1];
    const over = [];
    let labels = 0;
    for (const t of svg.querySelectorAll('g.mark-text.role-mark text')) {
      const b = rect(t);
      const cx = (b.left + b.right) / 2, cy = (b.top + b.bottom) / 2;
      const cell = cells.find(c => c.left <= cx && cx <= c.right && c.top <= cy && cy <= c.bottom);
      labels += 1;
      if (!cell || b.left < cell.left - 1 || b.right > cell.right + 1 || b.top < cell.top - 1
          || b.bottom > cell.bottom + 1) over.push([t.textContent, b, cell || null]);
    }
    return {chart: rect(svg), legend: rect(legend), model, labels, over,
            legendLabels: [...legend.querySelectorAll('text')].map(t => t.textContent)};
  });
  const texts = textsOf(slide);
  const foot = document.querySelector('.st-key-nw-slide-foot');
  const main = document.querySelector('[data-testid="stMain"]');
  return {title: words(document.querySelector('#nw-present-title')),
          findings: [...slide.querySelectorAll('[id^="nw-finding-"]')].map(words),
          panels, texts, foot: foot ? rect(foot) : null,
          notes: [...slide.querySelectorAll('[id^="nw-present-note"]')].map(words),
          page: document.scrollingElement.scrollHeight, main: main.scrollHeight,
          mainView: main.clientHeight, width: innerWidth, height: innerHeight};
}"""


@pytest.fixture(scope="module")
def two_url(app_url, seeded_db):
    """A needle set (3 lengths × 6 demo haystacks: empty, thin and readable cells), a
    stand-in reward model's scores (wrong in the middle of the longest responses) and an
    always-A judge's run over every pair in both orders. Returns (lab url, judge's name)."""
    name = f"needles-two-{uuid.uuid4().hex[:6]}"
    db = store.connect(seeded_db)
    try:
        import_scored_needles(db, name, 6, 1100, LENGTHS, "7" * 32, "/models/stand-in-rm")
        with FakeJudgeServer(lambda body: "[[A]]") as always_a:
            row, items = load_items(db, name)
            run_judge(db, Connection(always_a.base_url, "judge", key_env=None), items, "selection",
                      dataset=name, format_name=row["format"], order="rotations")
            judge = "judge judge"  # the model's name on the server
    finally:
        db.conn.close()
    return f"{app_url}/needle?dataset={name}", judge


def _settled(page) -> dict:
    """The layout once slide.js has measured the screen and the charts took the height left
    (test_needle_slide.wait_slide)."""
    wait_slide(page)
    assert_no_exception(page)
    return page.evaluate(MEASURE)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_two_panels_fit_with_whole_legends_labels_in_cells_and_a_short_foot(browser, two_url, size):
    url, judge = two_url
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(url)
        present = page.get_by_role("button", name="Presentation mode")
        present.wait_for(timeout=240_000)
        # the lab shows the judge beside the reward model; the slide takes both
        page.locator(f'g.mark-rect path[aria-label*="model: {judge}"]').first.wait_for(timeout=60_000)
        wait_idle(page)
        submit(page, page.get_by_role("textbox", name="Slide title"), TITLE)
        present.click()
        page.locator("#nw-finding-1").wait_for(timeout=60_000)
        page.locator('.st-key-nw-slide g.mark-text.role-mark text').first.wait_for(timeout=60_000)
        got = _settled(page)
        screenshot(page, f"needle-slide-two-{width}x{height}")

        # the whole slide in the window, nothing scrolls
        assert got["page"] <= height and got["main"] <= got["mainView"] + 1, got
        assert got["title"]["text"] == TITLE and got["title"]["top"] >= 0, got["title"]
        assert len(got["findings"]) == 2, got["findings"]
        panels = got["panels"]
        models = sorted(p["model"] for p in panels)
        assert len(panels) == 2 and models[0].startswith(judge) and models[1] == "stand-in-rm", models
        for p in panels:
            assert got["findings"][-1]["bottom"] <= p["chart"]["top"], (got["findings"], p["chart"])
            assert p["chart"]["bottom"] <= got["foot"]["top"] + 1, (p["chart"], got["foot"])
            # each legend 0 % to 100 %, inside its panel and the window
            assert [t for t in p["legendLabels"] if t.endswith("%")] == ["0%", "25%", "50%", "75%", "100%"], \
                p["legendLabels"]
            legend = p["legend"]
            assert p["chart"]["left"] - 1 <= legend["left"] and legend["right"] <= p["chart"]["right"] + 1, \
                (legend, p["chart"])
            assert legend["bottom"] <= height and legend["right"] <= width, legend
            # every cell label inside its cell
            assert p["labels"] >= 10 and not p["over"], p["over"][:5]
        assert panels[0]["chart"]["right"] <= panels[1]["chart"]["left"], panels
        foot = got["foot"]
        assert foot["bottom"] <= height and foot["right"] <= width, foot
        # the foot: one note under each panel, its own cells; the judge's bias under the judge
        notes = got["notes"]
        assert len(notes) == 2, notes
        for note, p in zip(notes, panels, strict=True):
            assert abs(note["left"] - p["chart"]["left"]) < 40, (note, p["chart"])
            assert re.search(r"\b\d+ of 30 cells empty", note["text"]), note["text"]
            assert note["lines"] <= 2, note
            assert note["size"] >= 24, note
        rm, by_judge = ((notes[0], notes[1]) if panels[0]["model"] == "stand-in-rm"
                        else (notes[1], notes[0]))
        assert "Favours the first shown" in by_judge["text"] and "Favours" not in rm["text"], notes
        assert foot["height"] <= 2 * max(n["line"] for n in notes) + 4, (foot, notes)
        # every text at least 24 px at 1280×720 (larger on the larger screen)
        small = [t for t in got["texts"] if t[1] < 23.9]
        assert got["texts"] and not small, small
        if width == 1920:
            assert got["title"]["size"] >= 40, got["title"]
        # the chart takes the height there is: under 40 px left unused below the foot
        assert height - foot["bottom"] < 40, (height, foot)
    finally:
        context.close()
