"""Fixtures for browser tests: a seeded database, the running app, a Chromium page."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.seeding.demo import seed_demo
from tests.browser.harness import CHROMIUM, ROOT, SharedContext, launch_browser, streamlit_server
from tests.conftest import GARAGE_RECORD

XSS_RECORD = dict(
    GARAGE_RECORD,
    sample_id="xss-1",
    question="Is <b>this</b> bold? It costs $5 and $10.",
    grounding=[
        {"cite_1": "<script>document.title='x'</script> Safe text one.", "age": "", "date": "2024-10-01",
         "provider": "web"},
        {"cite_2": "<img src=x onerror=alert(1)> Safe text two.", "age": "", "date": "2024-10-02",
         "provider": "web"},
        {"cite_3": "The ticket costs $5 and $10 at the door.", "age": "", "date": "2024-10-03",
         "provider": "ent"},
    ],
)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


FAILURES = ROOT / "artifacts" / "failures"

#: What a failed test's page showed: where it was, whether a run was going, what had the
#: focus and the text of the page (a flake seen once in a whole run is chased from this).
PAGE_STATE = """() => {
  const app = document.querySelector('[data-testid=stApp]');
  const active = document.activeElement;
  const text = (sel) => { const el = document.querySelector(sel); return el ? el.innerText : ''; };
  const idle = window.__nwIdle;
  return {url: location.href, state: app && app.dataset.testScriptState,
          sockets: idle ? `${idle.opened} opened, ${idle.closed} closed` : 'not watched',
          runs: idle ? `${idle.asked} asked, ${idle.finished} finished `
                       + `(${idle.finishedAtAsk} at the last ask)` : 'not watched',
          active: active && (active.tagName + ' ' + (active.getAttribute('aria-label') || '')),
          sidebar: text('[data-testid=stSidebar]').slice(0, 1500),
          main: text('[data-testid=stMain]').slice(-5000)};
}"""


def _page_at_failure(page, name: str) -> str:
    """What ``page`` shows, as a failure report's text; its screenshot goes to
    artifacts/failures/ as ``name``.png."""
    try:
        state = page.evaluate(PAGE_STATE)
        FAILURES.mkdir(parents=True, exist_ok=True)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-150:]
        page.screenshot(path=str(FAILURES / f"{name}.png"), full_page=True, timeout=10_000)
    except Exception as e:  # noqa: BLE001 - a page that cannot answer is said so
        return f"the page did not answer: {e}"
    return ("\n".join(f"{k}: {v}" for k, v in state.items() if k not in ("sidebar", "main"))
            + f"\n--- sidebar ---\n{state['sidebar']}\n--- main (last 5000 characters) ---\n"
            + state["main"])


@pytest.fixture(autouse=True)
def _contexts_of_the_test(request, monkeypatch):
    """The browser contexts a test opens of its own (those of ``browser`` it did not find
    there), for its report when it fails (:func:`pytest_runtest_makereport`): those still
    open then, and those it closes while an exception is on its way out (its ``finally``),
    whose pages are noted as they close."""
    from playwright.sync_api import BrowserContext  # noqa: PLC0415

    browser = request.getfixturevalue("browser") if "browser" in request.fixturenames else None
    before = set(browser.contexts) if browser is not None else set()
    noted: list[tuple[str, str]] = []
    request.node.nw_pages_at_failure = noted
    request.node.nw_open_contexts = lambda: [c for c in browser.contexts if c not in before] \
        if browser is not None else []
    close = BrowserContext.close

    def closing(ctx, *args, **kwargs):
        if sys.exc_info()[0] is not None and ctx not in before:
            noted.extend(_pages_at_failure(ctx, f"{request.node.nodeid}-{len(noted)}"))
        return close(ctx, *args, **kwargs)

    monkeypatch.setattr(BrowserContext, "close", closing)
    yield


def _pages_at_failure(ctx, name: str) -> list[tuple[str, str]]:
    """Report sections of what the open pages of ``ctx`` show (:func:`_page_at_failure`)."""
    return [(f"page at failure ({pg.url})", _page_at_failure(pg, f"{name}-{k}"))
            for k, pg in enumerate(p for p in ctx.pages if not p.is_closed())]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """When a browser test fails, the report shows what its pages showed: the ``page``
    fixture's, and those of the contexts it opened, closed on its way out or still open
    (a screenshot of each goes to artifacts/failures/)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    page = getattr(item, "funcargs", {}).get("page")
    if page is not None and not page.is_closed():
        report.sections.append(("page at failure", _page_at_failure(page, item.nodeid)))
    report.sections.extend(getattr(item, "nw_pages_at_failure", []))
    still_open = getattr(item, "nw_open_contexts", list)()
    for k, ctx in enumerate(c for c in still_open if page is None or c is not page.context):
        report.sections.extend(_pages_at_failure(ctx, f"{item.nodeid}-open-{k}"))


@pytest.fixture(scope="session")
def chromium_available():
    if not shutil.which(CHROMIUM) and not shutil.os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make test` (it installs it)")


@pytest.fixture(scope="session")
def seeded_db(tmp_path_factory):
    """A database file with the demo data and an XSS probe dataset."""
    path = tmp_path_factory.mktemp("app") / "needlework.db"
    db = store.connect(path)
    seed_demo(db)
    import_bytes(db, (json.dumps(XSS_RECORD) + "\n").encode(), "xss.jsonl", dataset="xss")
    db.conn.close()
    return path


@pytest.fixture(scope="session")
def app_url(seeded_db, chromium_available):
    with streamlit_server(seeded_db) as url:
        yield url


@pytest.fixture(scope="session")
def browser(chromium_available):
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as p:
        b = launch_browser(p)
        yield b
        b.close()


@pytest.fixture(scope="session")
def shared_context(browser):
    """One browser context per worker for the ``page`` fixture (:class:`SharedContext`): a
    tab opened where the app was loaded before reuses its compiled scripts, which saves
    about a third of the CPU a test's first page costs."""
    shared = SharedContext(browser)
    yield shared
    shared.close()


@pytest.fixture
def page(shared_context):
    """The worker's tab in its shared context (:class:`SharedContext`), holding no cookie,
    stored value or listener from an earlier test (a test that needs a browser of its own
    opens a context from ``browser``)."""
    pg = shared_context.new_page()
    dialogs: list[str] = []

    def dismiss(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    pg.on("dialog", dismiss)
    pg.dialogs = dialogs
    yield pg
    pg.remove_listener("dialog", dismiss)
    shared_context.reset()
