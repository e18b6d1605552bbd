"""The needle slide a lead presents without editing (issues 29 and 50): with a 200-character
title it fits 1280×720 and 1920×1080 with no scrolling, in full screen too, the chart in
the height left and its legend (0 % to 100 %) on screen; every text on it is at least 24 px
at 1280×720 (HTML and the chart's SVG text); the finding is one line; thin cells are marked
on the chart and the empty ones said in words; the slide's files are a 1920×1080 PNG, a
16:9 PDF and a PPTX holding the title, the chart and the finding; the finding can be edited
and hidden. Screenshots at 1280×720, 1920×1080, 1280×800, 1440×900 and 1024×768."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.needle.builder import BuildOptions, build_from_source
from needlework.needle.slide_meta import with_slide_title
from store.datasets import get_dataset, iter_items, set_dataset_meta
from store.scores import save_item_scores
from tests.browser.harness import (
    assert_no_exception,
    screenshot,
    wait_idle,
    wait_layout,
    wait_still,
)

DATASET = "slide-needles"
#: A title of 200 characters, the most the field takes.
TITLE = ("Does the reward model still notice one harmful sentence when it is hidden deep inside "
         "a long answer? Accuracy by response length and needle position, stand-in model, "
         "for the review in the")
TITLE = (TITLE + " team review" * 20)[:199].rstrip()
TITLE += "?" * (200 - len(TITLE))

#: A JS function ``textsOf(root)``: each visible text under ``root`` as [its first 40
#: characters, its rendered size in px (a chart's text scaled by its SVG's own scale), whether
#: it is in a chart].
TEXTS_OF = """  const textsOf = root => {
  const texts = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || !el.getClientRects().length) continue;
    if (getComputedStyle(el).visibility === 'hidden') continue;
    let size = parseFloat(getComputedStyle(el).fontSize);
    const svg = el.closest('svg');
    if (svg && svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width) {
      size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    }
    texts.push([n.textContent.trim().slice(0, 40), size, !!svg]);
  }
  return texts; };"""

#: Where everything on the slide is; the rendered size of every text on it (HTML text and the
#: chart's SVG text, scaled by the SVG's own scale); whether anything scrolls.
MEASURE = """() => {
""" + TEXTS_OF + """
  const slide = document.querySelector('.st-key-nw-slide');
  const rect = e => { const b = e.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, left: b.left, right: b.right, height: b.height}; };
  const box = s => { const e = document.querySelector(s); if (!e) return null;
    return {...rect(e), size: parseFloat(getComputedStyle(e).fontSize),
            line: parseFloat(getComputedStyle(e).lineHeight), text: e.textContent,
            overflow: e.scrollWidth > e.clientWidth + 1}; };
  const texts = textsOf(slide);
  const svg = slide.querySelector('[data-testid="stVegaLiteChart"] svg');
  const legend = svg.querySelector('g.role-legend');
  const main = document.querySelector('[data-testid="stMain"]');
  return {title: box('#nw-present-title'), finding: box('#nw-finding-0'),
          note: box('#nw-present-note'), chart: rect(svg), legend: rect(legend),
          legendLabels: [...legend.querySelectorAll('text')].map(t => t.textContent),
          texts, page: document.scrollingElement.scrollHeight,
          main: main.scrollHeight, mainView: main.clientHeight,
          buttons: [...document.querySelectorAll('.st-key-nw-slide-tools button')]
                   .map(b => b.getBoundingClientRect()).filter(b => b.width > 0)
                   .map(b => [b.left, b.right]),
          slideRight: slide.getBoundingClientRect().right,
          fullscreen: !!document.fullscreenElement, width: innerWidth, height: innerHeight};
}"""


@pytest.fixture(scope="module")
def slide_url(app_url, seeded_db):
    """A needle set of 4 lengths × 10 haystacks, with a stand-in model's scores that miss
    the needle in the middle of the longer responses (thin and blank cells included), and a
    slide title of 200 characters."""
    db = store.connect(seeded_db)
    try:
        if get_dataset(db, DATASET) is not None:  # set up again when the worker comes back
            return f"{app_url}/needle?dataset={DATASET}"
        built = build_from_source("demo", BuildOptions(lengths=(250, 500, 1000, 2000)), demo_count=10)
        import_bytes(db, built.jsonl().encode("utf-8"), f"{DATASET}.jsonl", format="needle",
                     dataset=DATASET)
        rows = []
        for item in iter_items(db, DATASET):
            r = item["record"]
            wrong = r["length_tokens"] >= 1000 and 0.3 <= r["tagged_position"] < 0.7
            rows.append({"item_key": r["id"], "subset": str(r["length_tokens"]),
                         "chosen_scores": [-1.0 if wrong else 1.0], "rejected_scores": [0.0]})
        save_item_scores(db, DATASET, "6" * 32, "fp32|full", "/models/stand-in-rm", rows)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        set_dataset_meta(db, DATASET, with_slide_title(get_dataset(db, DATASET)["meta"], TITLE,
                                                       "tester", now))
    finally:
        db.conn.close()
    return f"{app_url}/needle?dataset={DATASET}"


#: True once the slide is drawn for the screen it is on and nothing on it is about to
#: change: slide.js's last measure (``window.__nwSlide.sent``) is of this window and a measure
#: now (as slide.js takes it) would send nothing new, each chart of the slide is drawn at the
#: height the page makes of that measure (the height left, 240 to 2400 px:
#: components/needle/presentation.py's ``_chart_size``), the finding lines and the foot's
#: notes are fitted as slide.js fits them, the page and the main area are scrolled to the
#: top, and the slide's boxes have kept still for ``quiet`` ms.
SLIDE_SETTLED = """(quiet) => {
  const state = window.__nwSlide, sent = state && state.sent;
  const slide = document.querySelector('.st-key-nw-slide');
  const chart = document.querySelector('.st-key-nw-slide-chart');
  const foot = document.querySelector('.st-key-nw-slide-foot');
  const main = document.querySelector('[data-testid="stMain"]');
  const settled = () => {
    if (!sent || !slide || !chart || !foot || !main) return false;
    if (sent.w !== innerWidth || sent.h !== innerHeight) return false;
    const box = chart.getBoundingClientRect();
    const below = Math.max(0, foot.getBoundingClientRect().bottom - box.bottom);
    const block = document.querySelector('[data-testid="stMainBlockContainer"]');
    const pad = block ? parseFloat(getComputedStyle(block).paddingBottom) || 0 : 0;
    const avail = Math.floor(innerHeight - (box.top + main.scrollTop) - below - pad - 6);
    if (Math.abs(sent.avail - avail) > 3) return false;
    const height = Math.max(240, Math.min(2400, Math.floor(sent.avail)));
    const svgs = [...chart.querySelectorAll('[data-testid="stVegaLiteChart"] svg')];
    if (!svgs.length || svgs.some(s => Math.abs(s.getBoundingClientRect().height - height) > 3)) {
      return false;
    }
    for (const line of slide.querySelectorAll('[id^="nw-finding-"]')) {
      if (line.scrollWidth > line.clientWidth + 1 && !line.classList.contains('nw-wraps')) return false;
    }
    for (const note of slide.querySelectorAll('[id^="nw-present-note"]')) {
      const style = getComputedStyle(note), size = parseFloat(style.fontSize);
      const lines = note.getBoundingClientRect().height / (parseFloat(style.lineHeight) || 1.2 * size);
      if (lines > 2.5 && size > 24) return false;
    }
    return main.scrollTop === 0 && window.scrollY === 0;
  };
  const now = performance.now();
  if (!settled()) { window.__nwSlideStill = undefined; return false; }
  const boxes = [...slide.querySelectorAll('*')].filter(e => e.id || e.tagName === 'svg')
    .map(e => { const b = e.getBoundingClientRect(); return `${b.x},${b.y},${b.width},${b.height}`; })
    .join(';') + '|' + main.scrollHeight + '|' + document.scrollingElement.scrollHeight;
  const s = window.__nwSlideStill;
  if (!s || s.boxes !== boxes) { window.__nwSlideStill = {boxes, since: now}; return false; }
  return now - s.since >= quiet;
}"""


def wait_slide(page, quiet_ms: float = 100, timeout: float = 60_000) -> None:
    """Wait until the slide is drawn for its screen (:data:`SLIDE_SETTLED`) and the page is
    idle, and the slide still so: slide.js measures 200 and 800 ms after each draw and on a
    resize, and a measure it sends redraws the page (on a loaded machine that chain takes a
    few seconds)."""
    try:
        page.evaluate("() => { window.__nwSlideStill = undefined; }")
        page.wait_for_function(SLIDE_SETTLED, arg=quiet_ms, timeout=timeout, polling="raf")
        wait_idle(page, timeout)
        page.wait_for_function(SLIDE_SETTLED, arg=0, timeout=timeout, polling="raf")
    except PlaywrightTimeout:
        assert_no_exception(page)
        raise AssertionError(
            f"the slide was not drawn for its screen in {timeout:.0f} ms: "
            + page.evaluate("() => JSON.stringify({sent: window.__nwSlide && window.__nwSlide.sent,"
                            " window: [innerWidth, innerHeight], charts: [...document.querySelectorAll("
                            "'.st-key-nw-slide-chart svg')].map(s => s.getBoundingClientRect().height),"
                            " text: document.body.innerText.slice(0, 400)})")) from None


def _settled(page) -> dict:
    """The slide's layout once it is drawn for its screen (:func:`wait_slide`)."""
    wait_slide(page)
    assert_no_exception(page)
    return page.evaluate(MEASURE)


def _open_slide_from_the_lab(page, url: str) -> dict:
    page.goto(url)
    page.get_by_role("button", name="Presentation mode").wait_for(timeout=240_000)
    wait_idle(page)
    page.locator('[data-testid="stMain"]').evaluate("m => m.scrollTo(0, m.scrollHeight)")
    page.get_by_role("button", name="Presentation mode").click()
    page.locator("#nw-finding-0").wait_for(timeout=60_000)
    page.locator('.st-key-nw-slide g.mark-text.role-mark text').first.wait_for(timeout=60_000)
    return _settled(page)


def _fits(got: dict) -> None:
    """No scrolling, and title, finding, chart, legend and note inside the window."""
    width, height = got["width"], got["height"]
    assert got["page"] <= height, (got["page"], height)
    assert got["main"] <= got["mainView"] + 1, (got["main"], got["mainView"])
    assert 0 <= got["title"]["top"] < 60, got["title"]
    for part in ("finding", "chart", "legend", "note"):
        assert got[part]["bottom"] <= height and got[part]["right"] <= width, (part, got[part])
    assert got["title"]["bottom"] <= got["finding"]["top"] < got["chart"]["top"]
    assert got["chart"]["bottom"] <= got["note"]["top"] + 1, (got["chart"], got["note"])
    # every column label whole ("90–100", never "90–…"), the legend to 100 %
    columns = [t for t, _, chart in got["texts"] if chart]
    assert "90–100" in columns and "0–10" in columns, columns
    assert "0%" in got["legendLabels"] and "100%" in got["legendLabels"], got["legendLabels"]
    # the chart takes the height there is: under 40 px left unused below the note
    assert height - got["note"]["bottom"] < 40, (height, got["note"])


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_the_slide_fits_one_screen_with_room_sized_type(browser, slide_url, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        got = _open_slide_from_the_lab(page, slide_url)
        assert got["title"]["text"] == TITLE and len(TITLE) == 200
        _fits(got)
        # the title takes the width up to the buttons beside it, which end at the slide's
        # right edge: not 5/7 of the width (issue 59)
        left = min(b[0] for b in got["buttons"])
        right = max(b[1] for b in got["buttons"])
        assert left - got["title"]["right"] < 80, (got["title"], got["buttons"])
        assert got["slideRight"] - right < 40, (got["slideRight"], got["buttons"])
        assert got["title"]["right"] - got["title"]["left"] > 0.75 * (got["slideRight"]
                                                                   - got["title"]["left"])
        # every text at least 24 px (at 1920×1080 larger: labels follow the screen)
        small = [t for t in got["texts"] if t[1] < 23.9]  # (a chart's text scaled by its SVG)
        assert got["texts"] and not small, small
        if width == 1920:
            assert got["title"]["size"] >= 40 and got["finding"]["size"] >= 30, got
            assert min(s for _, s, chart in got["texts"] if chart) >= 30, got["texts"]
        # the finding: one line, the trend with its interval and the weakest length
        finding = got["finding"]
        assert not finding["overflow"] and finding["height"] < 1.6 * finding["line"], finding
        assert re.search(r"\d+ % → \d+ % first to last third \(.*95 % CI .*\); lowest at",
                         finding["text"]), finding["text"]
        # thin cells: marked on the chart (grey, dashed, their n only), said in the note
        labels = page.locator('.st-key-nw-slide g.mark-text.role-mark text').evaluate_all(
            "els => els.map(e => [e.textContent, e.getAttribute('aria-label') || ''])")
        thin = [text for text, aria in labels if "too few to read" in aria]
        assert thin and all(t.startswith("n=") for t in thin), thin
        assert "thin" not in finding["text"]
        assert re.search(r"\d+ of 40 cells are empty: the data has no pair of that length",
                         got["note"]["text"]), got["note"]["text"]
        screenshot(page, f"needle-slide-{width}x{height}")
        # F: the whole slide in full screen, and the chart takes the new height
        page.keyboard.press("f")
        page.wait_for_function("() => !!document.fullscreenElement", timeout=10_000)
        full = _settled(page)
        assert full["fullscreen"]
        _fits(full)
        expect(page.locator("#nw-slide-full")).to_have_text("Leave (Esc)", timeout=5_000)
        page.keyboard.press("f")
        page.wait_for_function("() => !document.fullscreenElement", timeout=10_000)
        expect(page.locator("#nw-slide-full")).to_have_text("Full screen", timeout=5_000)
    finally:
        context.close()


@pytest.mark.parametrize("size", [(1280, 800), (1440, 900), (1024, 768)])
def test_the_slide_at_other_sizes_cuts_nothing(browser, slide_url, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        got = _open_slide_from_the_lab(page, slide_url)
        _fits(got)
        texts = [t for t, _, _ in got["texts"]]
        assert "90–100" in texts and "0–10" in texts, texts  # no column label cut
        screenshot(page, f"needle-slide-{width}x{height}")
    finally:
        context.close()


def _download(page, name: str) -> bytes:
    page.get_by_role("button", name="Tools").click()
    button = page.get_by_role("button", name=name)
    button.wait_for(timeout=30_000)
    with page.expect_download(timeout=120_000) as info:
        button.click()
    path = info.value.path()
    page.keyboard.press("Escape")
    return open(path, "rb").read()


def test_the_slide_files_are_16_9_and_the_pptx_holds_title_chart_finding(browser, slide_url):
    from PIL import Image  # noqa: PLC0415
    from pptx import Presentation  # noqa: PLC0415
    from pptx.enum.shapes import MSO_SHAPE_TYPE  # noqa: PLC0415

    context = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    page = context.new_page()
    try:
        got = _open_slide_from_the_lab(page, slide_url)
        finding = got["finding"]["text"]
        png = _download(page, "Slide PNG (16:9)")
        assert Image.open(io.BytesIO(png)).size == (1920, 1080)
        pdf = _download(page, "Slide PDF (16:9)")
        box = re.search(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
        assert pdf.startswith(b"%PDF") and box, pdf[:200]
        x0, y0, x1, y1 = (float(v) for v in box.groups())
        assert abs((x1 - x0) / (y1 - y0) - 16 / 9) < 0.01, box.groups()
        deck = Presentation(io.BytesIO(_download(page, "Slide PPTX")))
        assert abs(deck.slide_width / deck.slide_height - 16 / 9) < 0.01
        (slide,) = deck.slides
        words = [s.text_frame.text for s in slide.shapes if s.has_text_frame]
        assert TITLE in words and finding in words, words
        assert any("stand-in-rm" in w for w in words), words  # the model's name
        pictures = [s for s in slide.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
        assert len(pictures) == 1 and pictures[0].image.content_type == "image/png"
        chart = Image.open(io.BytesIO(pictures[0].image.blob))
        assert chart.size[0] > 1000 and chart.size[1] > 400, chart.size
    finally:
        context.close()


def test_the_finding_is_edited_and_hidden_and_kept(browser, slide_url):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    mine = "Misses rise in the middle of long answers; short answers are fine."
    try:
        _open_slide_from_the_lab(page, slide_url)
        page.get_by_role("button", name="Tools").click()
        field = page.get_by_role("textbox", name="Slide finding")
        field.fill(mine)
        field.press("Enter")
        expect(page.locator("#nw-finding-0")).to_have_text(mine, timeout=30_000)
        wait_idle(page)
        screenshot(page, "needle-slide-tools-1280x720")
        page.keyboard.press("Escape")
        page.reload()  # kept with the needle dataset
        expect(page.locator("#nw-finding-0")).to_have_text(mine, timeout=60_000)
        page.get_by_role("button", name="Tools").click()
        page.get_by_text("Hide the finding on the slide and in its files").click()
        expect(page.locator("#nw-finding-0")).to_have_count(0, timeout=30_000)
        page.keyboard.press("Escape")
        got = _settled(page)
        _fits(got | {"finding": got["title"] | {"top": got["title"]["bottom"]}})
        # back to the computed headline: clear both
        page.get_by_role("button", name="Tools").click()
        page.get_by_text("Hide the finding on the slide and in its files").click()
        expect(page.locator("#nw-finding-0")).to_have_text(mine, timeout=30_000)
        wait_idle(page)
        field = page.get_by_role("textbox", name="Slide finding")
        expect(field).to_have_count(1, timeout=30_000)
        field.fill("")
        field.press("Enter")
        expect(page.locator("#nw-finding-0")).to_contain_text("first to last third", timeout=30_000)
    finally:
        context.close()


#: Every height the slide's chart SVG takes from now on, one reading a frame (window.__nwHeights).
RECORD_HEIGHTS = """() => { window.__nwHeights = [];
  const look = () => {
    const svg = document.querySelector('.st-key-nw-slide [data-testid="stVegaLiteChart"] svg');
    const h = svg ? Math.round(svg.getBoundingClientRect().height) : 0;
    const seen = window.__nwHeights;
    if (h && seen[seen.length - 1] !== h) seen.push(h);
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""


def test_the_slide_entered_again_is_drawn_at_its_size_at_once(browser, slide_url):
    """The slide remembers the screen it last measured in the session: entered again on the
    same screen, its chart is drawn at the settled height from the first frame and the page
    does not redraw under the presenter's first click."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        first = _open_slide_from_the_lab(page, slide_url)
        page.get_by_role("button", name="Tools").click()
        page.get_by_role("button", name="Exit presentation").click()
        present = page.get_by_role("button", name="Presentation mode")
        present.wait_for(timeout=60_000)
        wait_idle(page)
        page.evaluate(RECORD_HEIGHTS)
        page.locator('[data-testid="stMain"]').evaluate("m => m.scrollTo(0, m.scrollHeight)")
        present.click()
        page.locator('.st-key-nw-slide g.mark-text.role-mark text').first.wait_for(timeout=60_000)
        again = _settled(page)
        heights = page.evaluate("window.__nwHeights")
        assert heights and all(abs(h - round(first["chart"]["height"])) <= 2 for h in heights), \
            (heights, first["chart"])
        assert abs(again["chart"]["height"] - first["chart"]["height"]) <= 2, (again, first)
        _fits(again)
    finally:
        context.close()


#: Each chart of the lab: its SVG's box and its legend's box and labels.
LEGENDS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg')].map(svg => {
  const b = svg.getBoundingClientRect();
  return {svg: {left: b.left, right: b.right, top: b.top, bottom: b.bottom},
          legends: [...svg.querySelectorAll('g.role-legend')].map(g => {
            const r = g.getBoundingClientRect();
            return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                    labels: [...g.querySelectorAll('text')].map(t => t.textContent)}; })};
})"""


def test_the_labs_legends_are_not_cut_at_1024_px(browser, slide_url):
    """The lab's heatmap and accuracy lines at 1024 px: every legend inside its chart and the
    window, the colour legend to 100 %, every length in the lines' legend."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    try:
        page.goto(slide_url)
        page.get_by_role("button", name="Presentation mode").wait_for(timeout=240_000)
        page.locator('[data-testid="stVegaLiteChart"] g.role-legend').nth(1).wait_for(timeout=60_000)
        wait_layout(page)
        wait_still(page, '[data-testid="stVegaLiteChart"] svg, '
                   '[data-testid="stVegaLiteChart"] g.role-legend')
        charts = page.evaluate(LEGENDS)
        legends = [(c["svg"], g) for c in charts for g in c["legends"]]
        assert len(legends) >= 2, charts
        for svg, g in legends:
            assert svg["left"] - 1 <= g["left"] and g["right"] <= svg["right"] + 1, (svg, g)
            assert g["right"] <= 1024, g
        labels = [g["labels"] for _, g in legends]
        assert any("0%" in ls and "100%" in ls for ls in labels), labels
        assert any(all(n in ls for n in ("250", "500", "1000", "2000")) for ls in labels), labels
        page.locator('[data-testid="stVegaLiteChart"]').nth(1).scroll_into_view_if_needed()
        screenshot(page, "needle-lab-legends-1024")
    finally:
        context.close()


@pytest.mark.parametrize("size", [(1280, 800), (1440, 900)])
def test_the_labs_present_step_offers_the_finding_and_the_slide_files(browser, slide_url, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(slide_url)
        page.get_by_role("button", name="Presentation mode").wait_for(timeout=240_000)
        wait_idle(page)
        field = page.get_by_role("textbox", name="Slide finding")
        field.scroll_into_view_if_needed()
        assert "first to last third" in (field.get_attribute("placeholder") or "")
        for name in ("Slide PNG (16:9)", "Slide PDF (16:9)", "Slide PPTX"):
            expect(page.get_by_role("button", name=name)).to_be_visible()
        page.get_by_role("button", name="Slide PPTX").scroll_into_view_if_needed()
        assert_no_exception(page)
        screenshot(page, f"needle-lab-present-{width}x{height}")
    finally:
        context.close()
