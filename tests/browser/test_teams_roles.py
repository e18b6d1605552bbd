"""Team mode for each role in Chromium (issue 26's acceptance), against ``streamlit run
serve.py`` with a team config, every dataset kind present (grounding with stored model
answers, preference with model scores, needle), a gold item in the annotator's queue,
and two local OpenAI-compatible listeners that record every request's headers: the one
an admin named in needlework.toml (its key in a server environment variable) and one
nobody configured.

- Every page and every link an admin, a reviewer and an annotator are offered opens
  with no error and no "not offered to your role".
- Signed in as a reviewer, the admin's named connection answers Test connection with its
  key, sent to its configured URL only; as a reviewer or an annotator no page sends any
  of the server's secrets anywhere, and no page offers a base URL or a key source.
- An annotator labels blind: no file's label, no gold answer, no model score; the lead's
  setting shows the file's labels once the dataset has no gold item.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urldefrag, urlparse

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.seeding.demo import DEMO_GROUNDING, DEMO_PREFERENCE, seed_demo
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import set_visibility
from needlework.teams.gold import unmark_gold
from needlework.teams.quality import mark_gold
from store.scores import save_item_scores
from tests.browser.harness import AppServer, assert_no_exception, screenshot, wait_idle
from tests.browser.test_teams import send_form, signed_in_as
from tests.conftest import jsonl
from tests.judges_fixtures import FakeJudgeServer
from tests.teams_fixtures import PASSWORDS
from tests.test_home_page import NEEDLE

SECRET = "sk-roles-SECRET-4242"
OTHER = "sk-roles-OTHER-7373"
PEOPLE = {"lead": "admin", "rita": "reviewer", "ana": "annotator"}
OFFERED = {"admin": {"", "annotate", "review", "agreement", "rewards", "rag", "needle", "data",
                     "suggestions", "quality", "users", "assign", "guidelines", "audit"},
           "reviewer": {"", "annotate", "review", "agreement", "rewards", "rag", "needle", "quality"},
           "annotator": {"", "annotate", "review"}}
NOT_OFFERED = "This page is not offered to your role"


@pytest.fixture(scope="module")
def roles(tmp_path_factory, chromium_available):
    folder = tmp_path_factory.mktemp("roles")
    with FakeJudgeServer() as named, FakeJudgeServer() as stranger:
        config = folder / "needlework.toml"
        config.write_text(
            '[server]\nmode = "team"\naddress = "127.0.0.1"\n\n'
            f'[judges.team-judge]\nbase_url = "{named.base_url}"\nmodel = "judge"\n'
            'key_env = "TEAM_JUDGE_KEY"\nmax_tokens = 64\n', encoding="utf-8")
        db_path = folder / "roles.db"
        db = store.connect(db_path)
        for name, role in PEOPLE.items():
            accounts.add_user(db, name, role, password=PASSWORDS[name])
        lead = accounts.get_user(db, "lead")
        seed_demo(db)
        import_bytes(db, jsonl([dict(NEEDLE, id=f"n{i}") for i in range(3)]), "needles.jsonl",
                     format="needle", dataset="needles")
        for name in (DEMO_GROUNDING, DEMO_PREFERENCE):
            assign_dataset(db, name, ["ana"], per_item=1, actor=lead)
        gold_key = db.execute("select key from items where dataset = ? order by position "
                              "limit 1", [DEMO_GROUNDING]).fetchone()[0]
        mark_gold(db, DEMO_GROUNDING, gold_key, actor=lead)
        items = db.execute("select key, json_array_length(record, '$.chosen'), "
                           "json_array_length(record, '$.rejected') from items where dataset = ?",
                           [DEMO_PREFERENCE]).fetchall()
        save_item_scores(db, DEMO_PREFERENCE, "fp-roles", "fp32|full", "some-rm",
                         [{"item_key": k, "subset": "QA", "chosen_scores": [2.0] * (c or 1),
                           "rejected_scores": [1.5] * (r or 1)} for k, c, r in items])
        db.conn.close()
        server = AppServer(db_path, env={"NEEDLEWORK_CONFIG": str(config),
                                         "TEAM_JUDGE_KEY": SECRET, "OTHER_SECRET": OTHER})
        server.start()
        try:
            yield server, named, stranger, gold_key
        finally:
            server.stop()


def _signed_in(browser, server, who: str, path: str = ""):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.goto(f"{server.url}/{path}")
    page.get_by_label("Name or e-mail").wait_for(timeout=90_000)
    send_form(page, who, PASSWORDS[who])
    signed_in_as(page, who)
    return ctx, page


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _links(page, origin: str) -> list[str]:
    """Every same-origin link on the page (the sidebar's menu and the main area's)."""
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    return sorted({h for h in hrefs if h.startswith(origin) and "/_stcore" not in h})


def _settle(page) -> None:
    _main(page).wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    _check(page)


def _check(page) -> None:
    assert_no_exception(page)
    text = _main(page).inner_text()
    assert NOT_OFFERED not in text and "Page not found" not in text, text[:400]


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlparse(url).query)


def _open(page, url: str) -> str:
    """Open ``url`` as a person would from the page on screen, and say how: by clicking a
    link to it on the page ("click"), by clicking the menu's entry for its page when the
    page on screen shows the same dataset ("menu": the menu keeps the dataset), or by
    typing it ("typed"; a section of the page on screen is only scrolled to). A clicked
    page opens without reloading the app, which costs the browser about a quarter of a
    fresh load."""
    target = urlparse(url)
    if urldefrag(url).url == urldefrag(page.url).url:
        page.goto(url)  # a section of the page on screen: the browser scrolls to it
        return "section"
    link = page.locator(f'a[href="{url}"]')
    menu = page.locator(f'[data-testid="stSidebarNav"] a[href="{target.scheme}://{target.netloc}'
                        f'{target.path}"]')
    same_dataset = _query(page.url).get("dataset") == _query(url).get("dataset")
    if link.count():
        how, anchor = "click", link.first
    elif set(_query(url)) == {"dataset"} and same_dataset and menu.count():
        how, anchor = "menu", menu.first
    else:
        page.goto(url)
        return "typed"
    anchor.scroll_into_view_if_needed()
    anchor.click()
    page.wait_for_url(lambda now: urlparse(now).path == target.path
                      and all(_query(now).get(k) == v for k, v in _query(url).items()),
                      timeout=30_000)
    return how


@pytest.mark.parametrize("who", list(PEOPLE))
def test_every_page_and_link_a_role_is_offered_opens(browser, roles, who):
    server, _, _, _ = roles
    ctx, page = _signed_in(browser, server, who)
    try:
        _settle(page)
        more = page.locator('[data-testid="stSidebarNavViewButton"]')
        if more.count() and "more" in more.inner_text().lower():
            more.click()  # the menu shows its first pages only until asked
            expect(more).to_contain_text(re.compile("less", re.IGNORECASE), timeout=10_000)
        menu = page.eval_on_selector_all('[data-testid="stSidebarNav"] a',
                                         "els => els.map(e => e.href)")
        paths = {urlparse(h).path.strip("/") for h in menu}
        assert paths == OFFERED[PEOPLE[who]], paths
        seen: set[str] = set()
        todo = _links(page, server.url)
        for dataset in (DEMO_GROUNDING, DEMO_PREFERENCE, "needles"):
            todo += [f"{server.url}/{p}?dataset={dataset}" for p in sorted(paths)]
        while todo:
            url = todo.pop(0)
            if url in seen:
                continue
            seen.add(url)
            if _open(page, url) == "section":
                _check(page)  # the page on screen, scrolled: no run to wait for
            else:
                _settle(page)
            if urlparse(url).path.strip("/") == "":  # Home's own links, once per dataset,
                todo[:0] = [u for u in _links(page, server.url) if u not in seen]  # from it
        screenshot(page, f"teams-roles-{who}")
        assert len(seen) >= len(paths)
    finally:
        ctx.close()


def _requests(*servers) -> list[dict]:
    return [r for s in servers for r in s.requests]


def _no_secret_sent(named, stranger) -> None:
    for request in _requests(named, stranger):
        blob = repr(request)
        assert OTHER not in blob, request
    for request in stranger.requests:
        assert SECRET not in repr(request), request


def test_a_reviewer_uses_the_admins_connection_and_no_secret_leaves(browser, roles):
    server, named, stranger, _ = roles
    before = len(named.requests)
    ctx, page = _signed_in(browser, server, "rita", f"rewards?dataset={DEMO_PREFERENCE}")
    try:
        _settle(page)
        main = _main(page)
        assert main.get_by_label("Base URL").count() == 0
        assert main.get_by_label("Environment variable").count() == 0
        assert main.get_by_label("Secret name").count() == 0
        test = main.get_by_role("button", name=re.compile("Test connection"))
        test.scroll_into_view_if_needed()
        expect(test).to_be_enabled(timeout=30_000)
        test.click()
        # its one-line result: the request was answered (an idle page alone can be the
        # moment before the click's run, and the request then lands in the next test)
        main.get_by_text(re.compile(r"^ok: ")).first.wait_for(timeout=60_000)
        wait_idle(page, 60_000)
        deadline_requests = [r for r in named.requests[before:] if "chat" in r["path"]]
        assert deadline_requests, named.requests[before:]
        for request in deadline_requests:
            headers = {k.lower(): v for k, v in request["headers"].items()}
            assert headers.get("authorization") == f"Bearer {SECRET}"
        assert_no_exception(page)
        # the RAG page's judge form is the same picker
        page.goto(f"{server.url}/rag?dataset={DEMO_GROUNDING}")
        _settle(page)
        main.get_by_text("With a judge (GaRAGe, LLMeval too)").click()
        wait_idle(page, 60_000)
        assert main.get_by_label("Base URL").count() == 0
        screenshot(page, "teams-roles-reviewer-judge")
    finally:
        ctx.close()
    assert stranger.requests == []
    _no_secret_sent(named, stranger)


def test_an_annotator_reaches_no_endpoint_and_labels_blind(browser, roles):
    server, named, stranger, gold_key = roles
    before = len(_requests(named, stranger))
    ctx, page = _signed_in(browser, server, "ana", f"annotate?dataset={DEMO_GROUNDING}")
    try:
        _settle(page)
        main = _main(page)
        main.get_by_text("Blind labelling").first.wait_for(timeout=30_000)
        text = main.inner_text()
        assert "file's label" not in text and "gold" not in text.lower(), text[:600]
        # the gold item opens like any other: nothing tells it apart
        page.goto(f"{server.url}/annotate?dataset={DEMO_GROUNDING}&item={gold_key}")
        _settle(page)
        gold_text = main.inner_text()
        assert "file's label" not in gold_text and "gold" not in gold_text.lower()
        page.goto(f"{server.url}/review?dataset={DEMO_PREFERENCE}")
        _settle(page)
        review = main.inner_text()
        assert "2.000" not in review and "score" not in review.lower(), review[:600]
        assert main.get_by_label("Base URL").count() == 0
        # the lead shows annotators the file's labels: while the dataset has a gold item the
        # switch does nothing (gold answers are often the file's labels), on any item
        db = store.connect(server.db_path)
        lead = accounts.get_user(db, "lead")
        set_visibility(db, DEMO_GROUNDING, "annotators_see_file_labels", True, actor=lead)
        page.goto(f"{server.url}/annotate?dataset={DEMO_GROUNDING}")
        _settle(page)
        main.get_by_text("Blind labelling").first.wait_for(timeout=30_000)
        assert "file's label" not in main.inner_text()
        # without gold items they appear on her next page load
        unmark_gold(db, DEMO_GROUNDING, gold_key, actor=lead)
        db.conn.close()
        page.goto(f"{server.url}/annotate?dataset={DEMO_GROUNDING}")
        _settle(page)
        main.get_by_text("file's label").first.wait_for(timeout=30_000)
        screenshot(page, "teams-roles-annotator-labels-shown")
    finally:
        ctx.close()
    assert len(_requests(named, stranger)) == before
    _no_secret_sent(named, stranger)
