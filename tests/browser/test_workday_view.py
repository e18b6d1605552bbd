"""Issue 50 in Chromium (H6): Review's Markdown view with a hostile response (formatting
only: no HTML, clickable link or remote image of the data's own), the prompt of a later
comparison on screen at 1280x800, the cited passage of a RAG failure link scrolled into
view at 1440x900, the RAG charts' labels whole at 1024 px, the annotator's pace in the
sidebar and on Home. Screenshots at 1280x800 and 1440x900 (artifacts/screenshots/)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

import store
from needlework.datasets.transfer import import_bytes, import_file
from needlework.rag.failures import cited_passage, failing_sentences
from needlework.seeding.demo import seed_demo
from store.rag import list_runs, run_results
from store.scores import save_item_scores
from tests import cli_here
from tests.browser.harness import (
    SCREENSHOTS,
    assert_no_exception,
    free_port,
    screenshot,
    streamlit_server,
    submit,
    wait_idle,
    wait_layout,
    wait_still,
)
from tests.browser.test_review_screen import wait_fitted
from tests.conftest import RMBENCH_DIR

PAIRS, RMBENCH, GROUNDING = "md-pairs", "rm-chat", "demo-grounding"
HOSTILE = ("### Steps\n\n**Bold words** and a list:\n\n- one\n- two\n\n"
           "<script>document.title='pwned'</script> <img src=x onerror=\"document.title='img'\">\n\n"
           "[click me](javascript:document.title='link') "
           "![pixel](http://img.invalid/pixel.png)\n")
SIZES = ((1280, 800), (1440, 900))


@pytest.fixture(scope="module")
def workday_db(tmp_path_factory, monkeypatch_module):
    path = tmp_path_factory.mktemp("workday") / "needlework.db"
    db = store.connect(path)
    seed_demo(db)
    record = {"id": "md1", "subset": "QA", "prompt": "How do I do it?", "chosen": [HOSTILE],
              "rejected": ["Plain words, nothing else."]}
    import_bytes(db, (json.dumps(record) + "\n").encode(), "pairs.jsonl", dataset=PAIRS)
    import_file(db, RMBENCH_DIR / "chat_filtered.json", dataset=RMBENCH)
    key = db.execute("select key from items where dataset = ? order by rowid limit 1",
                     [GROUNDING]).fetchone()[0]
    store.annotations.set_annotation(db, GROUNDING, key, "bo", "label:1", "OUTDATED")  # another's work
    # two reward models' scores of the pairs: Results offers a picker
    for model, score in (("/models/rm-one", 1.0), ("/models/rm-two", -1.0)):
        save_item_scores(db, PAIRS, (model[-3:] * 11)[:32], "fp32|full", model,
                         [{"item_key": "md1", "subset": "QA", "chosen_scores": [score],
                           "rejected_scores": [0.0]}])
    db.conn.close()
    monkeypatch_module.setenv("NEEDLEWORK_RULES_JUDGE_PORT", str(free_port()))
    done = cli_here.run(["rag-eval", "--dataset", GROUNDING, "--stored", "--rules-judge",
                         "--db", str(path), "--no-progress"])
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.fixture(scope="module")
def workday_url(workday_db, chromium_available):
    with streamlit_server(workday_db) as url:
        yield url


def screenshot_dir():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def _drawn_for(page, who: str) -> None:
    """Wait until Review's key script has the page drawn for ``who`` (its switches kept for
    that person, its keys saved under that name)."""
    page.wait_for_function("(who) => { const S = window.__nwReview; return !!(S && S.data && "
                           "S.data.annotator === who); }", arg=who, timeout=30_000)


def _open(browser, url: str, size: tuple[int, int], who: str = "ana"):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.goto(url)
    wait_idle(page)
    submit(page, page.get_by_label("Annotator", exact=True), who)
    page.keyboard.press("Escape")
    return context, page


@pytest.mark.parametrize("size", SIZES)
def test_markdown_view_draws_formatting_only(browser, workday_url, size):
    # a person of their own per size: the Markdown switch is kept per person
    context, page = _open(browser, f"{workday_url}/review?dataset={PAIRS}", size,
                          who=f"md-{size[0]}")
    try:
        _drawn_for(page, f"md-{size[0]}")
        responses = page.locator(".st-key-rv-responses")
        responses.get_by_text("### Steps").first.wait_for(timeout=30_000)  # text by default
        assert responses.locator("h3").count() == 0
        page.locator(".st-key-rv_markdown").get_by_text("Markdown").click()
        responses.locator("h3", has_text="Steps").wait_for(timeout=30_000)
        wait_idle(page)
        box = responses.locator(".nw-md").first
        assert box.locator("strong", has_text="Bold words").count() == 1
        assert box.locator("li").count() == 2
        for tag in ("script", "img", "a", "iframe"):
            assert box.locator(tag).count() == 0, tag
        text = box.inner_text()
        assert "<script>document.title='pwned'</script>" in text
        assert "[image: pixel — http://img.invalid/pixel.png]" in text
        assert "click me" in text and "(javascript:document.title='link')" in text
        box.get_by_text("click me").click()
        # a fixed pause, for what cannot be observed: a script the click must not run (a
        # javascript: link's would run in a task after the click) leaves no sign to wait for
        page.wait_for_timeout(300)
        assert page.title() not in ("pwned", "img", "link")
        requested = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)"
                                  ".filter(n => n.includes('img.invalid'))")
        assert requested == []
        assert_no_exception(page)
        screenshot(page, f"review-markdown-{size[0]}x{size[1]}")
    finally:
        context.close()


def _wait_verdict(db_path, dataset: str, who: str, timeout: float = 20.0) -> None:
    """Poll the database until ``who`` has a verdict on ``dataset``."""
    deadline = time.time() + timeout
    while True:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
        try:
            found = conn.execute("select count(*) from annotations where dataset = ? and "
                                 "annotator = ? and field like 'verdict:%'",
                                 [dataset, who]).fetchone()[0]
        finally:
            conn.close()
        if found:
            return
        if time.time() > deadline:
            raise AssertionError(f"no verdict of {who} on {dataset} after {timeout:.0f} s")
        time.sleep(0.05)


def _prompt_and_boxes(page) -> dict:
    return page.evaluate("""() => {
      const p = document.getElementById('rv-prompt').getBoundingClientRect();
      const bar = document.querySelector('.st-key-rv-bar').getBoundingClientRect();
      const boxes = [...document.querySelectorAll('.st-key-rv-responses .nw-box')].map(e => {
        const b = e.getBoundingClientRect(), lh = parseFloat(getComputedStyle(e).lineHeight);
        return {shown: Math.floor(Math.max(0, Math.min(b.bottom, bar.top) - Math.max(b.top, 64)) / lh),
                holds: Math.floor(e.clientHeight / lh)};
      });
      return {top: p.top, bottom: p.bottom, bar: bar.top, boxes, height: innerHeight};
    }""")


@pytest.mark.parametrize("size", SIZES)
def test_the_prompt_of_a_later_comparison_stays_on_screen(browser, workday_url, size):
    context, page = _open(browser, f"{workday_url}/review?dataset={RMBENCH}&item=100&i=3&j=3",
                          size)
    try:
        page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
        for n in range(3):  # this comparison, then two later ones (J)
            wait_fitted(page)  # the fit runs 60, 300 and 900 ms after the draw
            got = _prompt_and_boxes(page)
            assert got["top"] >= 0 and got["bottom"] <= got["bar"], (n, got)
            for box in got["boxes"]:  # and the responses keep their first screen
                assert box["shown"] >= min(20, box["holds"]), (n, got)
            if n == 1:
                screenshot(page, f"review-prompt-{size[0]}x{size[1]}")
            page.keyboard.press("j")
            wait_idle(page)
        assert_no_exception(page)
    finally:
        context.close()


def _failure_link(db_path) -> tuple[str, int]:
    db = store.connect(db_path)
    try:
        from components.rag.failures import annotate_url  # noqa: PLC0415

        run = next(r for r in list_runs(db, GROUNDING) if r["status"] == "done")
        best = None
        for row in run_results(db, run["run_key"]):
            for s in failing_sentences(row) if row["answered"] else ():
                p = cited_passage(row, s)
                if p and (best is None or p > best[1]):
                    best = (annotate_url(GROUNDING, run["run_key"], row, s), p)
        assert best is not None and best[1] >= 4, best
        return best
    finally:
        db.conn.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_rag_failure_link_scrolls_the_cited_passage_into_view(browser, workday_url, workday_db,
                                                                size):
    link, passage = _failure_link(workday_db)
    context, page = _open(browser, f"{workday_url}/", size)
    try:
        page.goto(f"{workday_url}/{link}")
        page.locator(".st-key-nw-rag-panel").wait_for(timeout=30_000)
        card = page.locator(f".st-key-nw-card-{passage}")
        card.wait_for(timeout=30_000)
        page.wait_for_function(
            "(n) => { const b = document.querySelector('.st-key-nw-card-' + n)"
            ".getBoundingClientRect(); return b.top >= 0 && b.top + Math.min(b.height, 200) "
            "<= innerHeight; }", arg=passage, timeout=15_000)
        screenshot(page, f"rag-link-passage-{size[0]}x{size[1]}")
        assert_no_exception(page)
    finally:
        context.close()


def test_rag_chart_labels_and_legends_are_whole_at_1024(browser, workday_url):
    context, page = _open(browser, f"{workday_url}/rag?dataset={GROUNDING}", (1024, 800))
    try:
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("4 · Results").first.wait_for(timeout=60_000)
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        charts.first.locator("svg text").first.wait_for(timeout=60_000)
        assert charts.count() >= 2  # the figures, and by dimension
        for k in range(charts.count()):
            charts.nth(k).scroll_into_view_if_needed()
            wait_layout(page)
            wait_still(page, '[data-testid="stVegaLiteChart"] svg')
            charts.nth(k).screenshot(path=str(screenshot_dir() / f"rag-chart-{k}-1024.png"))
        texts = page.evaluate("() => [...document.querySelectorAll('[data-testid=stVegaLiteChart] "
                              "svg text')].flatMap(t => { const lines = [...t.querySelectorAll("
                              "'tspan')]; return lines.length ? lines.map(l => l.textContent) "
                              ": [t.textContent]; })")
        assert not [t for t in texts if t.endswith("…")], texts  # every label, title, legend whole
        assert "Unadjusted factuality" in texts and "rules judge" in texts, texts
        assert "demo-careful" in texts and "demo-hasty" in texts, texts  # the models' legend
        assert_no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("size", SIZES)
def test_home_and_sidebar_tell_the_annotator_their_day(browser, workday_url, workday_db, size):
    context, page = _open(browser, f"{workday_url}/review?dataset={PAIRS}", size, who=f"dee{size[0]}")
    try:
        page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Today: nothing saved yet").wait_for(timeout=15_000)
        _drawn_for(page, f"dee{size[0]}")
        page.keyboard.press("a")  # a verdict: one item today
        _wait_verdict(workday_db, PAIRS, f"dee{size[0]}")
        wait_idle(page)
        page.goto(f"{workday_url}/")
        wait_idle(page)
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("Today: 1 item · no time per item yet").wait_for(timeout=30_000)
        assert "gap over 10 minutes counts as a break" in main.inner_text()
        assert "you have not started; 1 other has" in main.inner_text()  # bo's dataset
        screenshot(page, f"home-{size[0]}x{size[1]}")
        assert_no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_run_picker_says_each_count_once(browser, workday_url, size):
    """Results' run picker says each run's count once, in the singular for one item."""
    context, page = _open(browser, f"{workday_url}/rewards?dataset={PAIRS}", size, who="lead")
    try:
        main = page.locator('[data-testid="stMain"]')
        picker = main.locator('[data-testid="stSelectbox"]').filter(has_text="Results of")
        picker.wait_for(timeout=60_000)
        picker.evaluate("e => e.scrollIntoView({block: 'center'})")
        picker.locator('button[aria-haspopup="listbox"]').click()
        options = page.get_by_role("option")
        options.first.wait_for(timeout=15_000)
        words = options.all_inner_texts()
        screenshot(page, f"rewards-run-picker-{size[0]}x{size[1]}")
        assert len(words) == 2 and all("rm-" in w for w in words), words
        for w in words:
            assert w.count("item") == 1 and "· 1 item ·" in w, words
        page.keyboard.press("Escape")
        main.get_by_text("Ties count as wrong").first.wait_for(timeout=30_000)
        assert " 1 items" not in main.inner_text() and " 1 pairs" not in main.inner_text()
        assert_no_exception(page)
    finally:
        context.close()


def test_a_page_link_to_the_dataset_shown_carries_dataset_once(browser, workday_url):
    """Streamlit adds the sidebar picker's bound ``dataset`` to a page change: a link that
    names the dataset already shown arrived with ``dataset=`` twice, and kept it."""
    context, page = _open(browser, f"{workday_url}/?dataset={PAIRS}", (1280, 800))
    try:
        seen: list[str] = []
        page.on("framenavigated", lambda frame: seen.append(frame.url))
        page.locator(f'a[href="review?dataset={PAIRS}"]').first.click()
        page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
        wait_idle(page)
        page.wait_for_function("() => new URLSearchParams(location.search).get('item') === 'md1'",
                               timeout=15_000)  # the page writes where it is into its URL
        wait_idle(page)
        search = page.evaluate("location.search")
        assert search.count("dataset=") == 1, (search, seen)
        assert "item=md1" in search, search
    finally:
        context.close()
