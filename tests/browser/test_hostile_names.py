"""Names that come from data (dataset names, the annotator's name, a model's folder, an
uploaded results file) written in Markdown, LaTeX and HTML are shown as text on every
page: no image, link, bold text or typeset formula is made from them."""

from __future__ import annotations

import json
import shutil

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.seeding.demo import seed_demo
from tests.browser.harness import AppServer, assert_no_exception, wait_idle
from tests.conftest import garage_records, jsonl

MARK = "zq"  # every hostile name carries it, so what it turns into can be found
DATASET = f"**b{MARK}** ![i](http://img.invalid/{MARK}.png) [l](http://link.invalid/{MARK}) $x^{MARK}$"
PAIRS = f"__p{MARK}__ <img src=http://img.invalid/{MARK}2.png> $$y_{MARK}$$"
WHO = f"**w{MARK}** [me](http://link.invalid/w{MARK}) $z_{MARK}$ <b>x</b>"
PAGES = ("", "annotate", "agreement", "review", "rewards", "needle", "data")


def made_from_data(page) -> list[str]:
    """Elements the page made out of the hostile strings (should be none)."""
    return page.evaluate(
        """(mark) => {
            const found = [];
            for (const el of document.querySelectorAll('img, a, strong, b, em, .katex')) {
              // an image or a link to the hosts named in the data (links to our own pages
              // carry the names URL-encoded in their query: those are fine)
              const url = el.getAttribute('src') || el.getAttribute('href') || '';
              let host = '';
              try { host = url ? new URL(url, location.href).hostname : ''; } catch (e) { /* */ }
              const text = el.textContent || '';
              if (host.endsWith('.invalid') || (text.includes(mark) && el.tagName !== 'A')) {
                const where = el.closest('[data-testid]');
                found.push(el.tagName + ' in ' + (where ? where.dataset.testid : '?') + ': ' +
                           (url || text).slice(0, 80));
              }
            }
            return found;
        }""", MARK)


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory, chromium_available):
    folder = tmp_path_factory.mktemp("hostile")
    db_path = folder / "needlework.db"
    db = store.connect(db_path)
    seed_demo(db)
    import_bytes(db, jsonl(garage_records(3)), "ground.jsonl", dataset=DATASET)
    record = {"id": "p1", "subset": "QA", "prompt": "Q?", "chosen": ["A."], "rejected": ["B."]}
    import_bytes(db, (json.dumps(record) + "\n").encode(), "pairs.jsonl", dataset=PAIRS)
    for key in ("sample-1", "sample-2"):  # annotations by the hostile name, for Home and Agreement
        for who in (WHO, "bo"):
            store.annotations.set_annotation(db, DATASET, key, who, "label:1",
                                             "OUTDATED" if who == WHO else "UNKNOWN")
    db.conn.close()
    server = AppServer(db_path)
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("dataset", [DATASET, PAIRS])
def test_hostile_names_are_text_on_every_page(browser, hostile_server, dataset):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(hostile_server.url + "/")
        wait_idle(page)
        page.get_by_label("Annotator", exact=True).fill(WHO)
        page.keyboard.press("Enter")
        wait_idle(page)
        for path in PAGES:
            page.goto(f"{hostile_server.url}/{path}?dataset={_quote(dataset)}")
            wait_idle(page, timeout=60_000)
            assert_no_exception(page)
            assert made_from_data(page) == [], path or "home"
    finally:
        context.close()


def _quote(text: str) -> str:
    from urllib.parse import quote  # noqa: PLC0415

    return quote(text, safe="")


def test_hostile_model_folder_and_results_file_names_are_text(browser, hostile_server, tmp_path,
                                                              demo_models_dir):
    """A model loaded from a folder with a hostile name, on the Reward model page."""
    demo = demo_models_dir / "demo-model"
    folder = tmp_path / f"**m{MARK}** [x](http://link.invalid/m{MARK}) $m_{MARK}$"
    shutil.copytree(demo, folder)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{hostile_server.url}/rewards?dataset=demo-preference")
        wait_idle(page, timeout=90_000)
        box = page.get_by_role("textbox", name="Model folder or hub id")
        if box.count():
            box.first.fill(str(folder))
            page.keyboard.press("Enter")
            page.get_by_role("button", name="Load", exact=False).first.click()
            page.get_by_text("Architecture", exact=False).first.wait_for(timeout=120_000)
            wait_idle(page, timeout=60_000)
        assert_no_exception(page)
        assert made_from_data(page) == []
    finally:
        context.close()
