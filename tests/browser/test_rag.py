"""The RAG answers page in Chromium: demo answers evaluated by the demo judge (served by
``transformers serve`` through needlework.judges.serve, started here), the figures and a
failure, then one failing sentence opened on the annotate page beside the human answer.

The run uses a subset of the demo answers (three of demo-hasty's, uploaded as a file):
the other questions count as unanswered and are not sent, so the run takes seconds.
The demo judge's verdicts are not checked (a tiny model); the page's mechanics are."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.demo.rag_answers import demo_answer_sets
from needlework.judges.serve import start_server
from needlework.rag.failures import failing_sentences
from needlework.rag.sentences import split_sentences
from needlework.seeding.demo import seed_demo
from store.rag import list_runs, run_results
from tests.browser.harness import (
    assert_no_exception,
    screenshot,
    streamlit_server,
    submit,
    wait_idle,
    wait_layout,
)

DATASET = "demo-grounding"
MODEL = "hasty-subset"
RUN_TIMEOUT_MS = 400_000


@pytest.fixture(scope="module")
def seeded_db(tmp_path_factory):
    """This module's own demo database: the figures checked here (deflection TPR among
    them) depend on the demo's passage labels, which the session's other browser tests
    change by labelling on the shared database."""
    path = tmp_path_factory.mktemp("rag") / "needlework.db"
    db = store.connect(path)
    seed_demo(db)
    db.conn.close()
    return path


@pytest.fixture(scope="module")
def app_url(seeded_db, chromium_available):
    with streamlit_server(seeded_db) as url:
        yield url


@pytest.fixture(scope="module")
def demo_judge(demo_models_dir):
    """data/demo-judge, the shipped demo judge, served on 127.0.0.1 for this module."""
    server = start_server(demo_models_dir / "demo-judge", threads=1)
    yield server
    server.stop()


def _subset(path: Path) -> dict[str, str]:
    """Three of demo-hasty's answers with several sentences, as a model answers file."""
    hasty = dict(demo_answer_sets())["demo-hasty"]
    picked = {k: v for k, v in hasty.items() if len(split_sentences(v)) >= 2}
    picked = dict(list(picked.items())[:3])
    path.write_text("".join(json.dumps({"sample_id": k, "answer": v, "model": MODEL}) + "\n"
                            for k, v in picked.items()), encoding="utf-8")
    return picked


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _fill(page, name: str, value: str) -> None:
    submit(page, _main(page).get_by_label(name, exact=True), value)


def _shots(page, heading: str, name: str) -> None:
    for width in (1440, 1280, 1024):
        page.set_viewport_size({"width": width, "height": 1000})
        wait_layout(page)
        page.get_by_text(heading).first.evaluate("e => e.scrollIntoView({block: 'start'})")
        screenshot(page, f"{name}-{width}")


def sentence_link(page):
    """The failure detail's "Open this question on the annotate page" link, once it names
    a failing sentence: the detail is redrawn for a failures filter by a rerun, and until
    then it may still show a failure of another kind."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.st-key-rag-failure-detail a')].some("
        "a => a.textContent.includes('Open this question') && a.href.includes('sentence='))",
        timeout=60_000)
    return page.locator(".st-key-rag-failure-detail").get_by_role(
        "link", name="Open this question on the annotate page")


def _only_failing(page, check: str) -> None:
    """Pick ``check`` in the failures' "Failed checks" list."""
    main = _main(page)
    page.set_viewport_size({"width": 1400, "height": 1000})
    wait_idle(page)
    box = main.get_by_role("combobox", name="Failed checks")
    box.scroll_into_view_if_needed()
    option = page.get_by_role("option", name=check, exact=True)
    for _ in range(5):  # a rerun can close the list as it opens
        box.click()
        box.fill(check)  # filters the list
        try:
            option.wait_for(timeout=5_000)
            option.click()
            break
        except Exception:  # noqa: BLE001 - Playwright's timeout: try again
            page.keyboard.press("Escape")
            wait_idle(page)
    else:  # the list never showed the option: keep a picture of the page for the log
        screenshot(page, "rag-failures-no-option")
        raise AssertionError(f"the 'Failed checks' list never offered {check!r}")
    page.keyboard.press("Escape")
    wait_idle(page)


def test_demo_answers_through_the_demo_judge_and_a_failing_sentence(
        app_url, seeded_db, page, demo_judge, tmp_path):
    answers = _subset(tmp_path / f"{MODEL}.jsonl")
    page.goto(f"{app_url}/rag?dataset={DATASET}")
    wait_idle(page, 90_000)
    main = _main(page)
    main.get_by_text("RAG answers").first.wait_for()
    for name in ("demo-careful", "demo-hasty"):  # the stored sets: not this time
        main.locator(f'button[aria-label^="Remove {name}"]').click()
        wait_idle(page)
    main.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        str(tmp_path / f"{MODEL}.jsonl"))
    wait_idle(page)
    main.get_by_text(f"{MODEL} ({len(answers)} answers)").wait_for()

    main.get_by_text("With a judge (GaRAGe, LLMeval too)").click()
    # the judge form (shared with the reward page) waits for the engine import at a cold start
    main.get_by_label("Base URL", exact=True).wait_for(timeout=240_000)
    wait_idle(page, 60_000)
    _fill(page, "Base URL", demo_judge.base_url)
    _fill(page, "Model", demo_judge.model)
    _fill(page, "Max tokens", "16")  # the demo judge answers in a few tokens
    main.get_by_role("button", name="Evaluate 1 model(s)").click()
    main.get_by_text("judge calls:").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_idle(page, 60_000)
    assert_no_exception(page)

    db = store.connect(seeded_db)
    run = next(r for r in list_runs(db, DATASET) if r["models"] == [MODEL])
    assert run["status"] == "done" and run["summary"]["overall"][MODEL]["judged"]
    assert run["summary"]["calls"]["sent"] + run["summary"]["calls"]["cached"] > 0
    rows = {r["item_key"]: r for r in run_results(db, run["run_key"]) if r["answered"]}
    assert set(rows) == set(answers)
    main.get_by_text("Eligibility").first.wait_for()
    main.get_by_text("What each figure means").first.wait_for()
    _shots(page, "4 · Results", "rag-results")

    # failures: keep those with a failing sentence, open the first on the annotate page
    _only_failing(page, "not factual")
    detail = page.locator(".st-key-rag-failure-detail")
    detail.wait_for()
    link = sentence_link(page)
    _shots(page, "6 · Failures", "rag-failures")
    link.click()
    page.wait_for_url("**/annotate?**", timeout=60_000)
    wait_idle(page, 90_000)
    assert_no_exception(page)
    url = page.url
    assert f"rag_run={run['run_key']}" in url and f"model={MODEL}" in url and "sentence=" in url
    item = url.split("item=", 1)[1].split("&", 1)[0]
    index = int(url.split("sentence=", 1)[1].split("&", 1)[0]) - 1
    assert index in failing_sentences(rows[item])  # a failing sentence, as the page counts it
    panel = page.locator(".st-key-nw-rag-panel")
    panel.wait_for()
    assert "RAG run answer" in panel.inner_text() and MODEL in panel.inner_text()
    marked = panel.locator("mark.nw-current")
    expected = rows[item]["sentences"][index]["text"]
    assert marked.count() >= 1
    assert "".join(marked.all_inner_texts()).split() == expected.split()
    assert "Human answer" in panel.inner_text()
    _shots(page, "RAG run answer", "rag-annotate-panel")


def test_hostile_names_are_text_on_the_rag_page_and_the_panel(app_url, seeded_db, page, tmp_path):
    """A dataset and a model named in Markdown, LaTeX and HTML: shown as text in the
    answers, results, failures and the annotate page's panel (no judge needed)."""
    from tests.browser.test_hostile_names import MARK, made_from_data  # noqa: PLC0415
    from tests.conftest import garage_records, jsonl  # noqa: PLC0415

    dataset = f"rag **d{MARK}** ![i](http://img.invalid/{MARK}.png) $x^{MARK}$"
    model = f"__m{MARK}__ <img src=http://img.invalid/{MARK}2.png> [l](http://link.invalid/{MARK})"
    db = store.connect(seeded_db)
    import_bytes(db, jsonl(garage_records(3)), "hostile.jsonl", dataset=dataset)
    db.conn.close()
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"sample_id": "sample-1", "answer": f"**a{MARK}** $y_{MARK}$",
                                "model": model}) + "\n", encoding="utf-8")
    page.goto(f"{app_url}/rag?dataset={quote(dataset, safe='')}")
    wait_idle(page, 90_000)
    main = _main(page)
    main.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    wait_idle(page)
    main.get_by_role("button", name="Evaluate 1 model(s)").click()
    main.get_by_text("no judge: BERGEN metrics and attribution only").wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    page.locator(".st-key-rag-failure-detail").wait_for()
    assert made_from_data(page) == []
    page.locator(".st-key-rag-failure-detail").get_by_role(
        "link", name="Open this question on the annotate page").click()
    page.wait_for_url("**/annotate?**", timeout=60_000)
    wait_idle(page, 90_000)
    assert_no_exception(page)
    page.locator(".st-key-nw-rag-panel").wait_for()
    assert f"**a{MARK}** $y_{MARK}$" in page.locator(".st-key-nw-rag-panel").inner_text()
    assert made_from_data(page) == []


def test_every_figure_of_the_demo_answers_with_the_rules_judge(app_url, seeded_db, page):
    """Issue 14, Deliver 6: the stored demo answers, the rules judge started from the page,
    every judge figure for both demo models, and a failing sentence opened on the annotate
    page with the rule that failed it."""
    page.goto(f"{app_url}/rag?dataset={DATASET}")
    wait_idle(page, 90_000)
    main = _main(page)
    main.get_by_text("RAG answers").first.wait_for()
    main.get_by_text("With a judge (GaRAGe, LLMeval too)").click()
    start = main.get_by_role("button", name=re.compile(r"(Start|Use) the rules judge"))
    start.wait_for(timeout=240_000)
    main.get_by_text("Rules judge, not an LLM").first.wait_for()
    start.click()
    # the judge starts and a rerun fills the form in for it: wait for that (on a loaded
    # machine wait_idle alone can look before the rerun has begun)
    expect(main.get_by_label("Model", exact=True)).to_have_value("needlework-rules", timeout=60_000)
    wait_idle(page, 60_000)
    main.get_by_role("button", name="Evaluate 2 model(s)").click()
    # this job's outcome line (an earlier test's job of the dataset shows "judge calls:" too)
    main.get_by_text(re.compile(r"^Evaluated 2 model\(s\) on")).wait_for(timeout=RUN_TIMEOUT_MS)
    wait_idle(page, 60_000)
    assert_no_exception(page)

    db = store.connect(seeded_db)
    run = next(r for r in list_runs(db, DATASET)
               if sorted(r["models"]) == ["demo-careful", "demo-hasty"]
               and r.get("judge_model") == "needlework-rules")
    assert run["status"] == "done"
    overall = run["summary"]["overall"]
    for model in ("demo-careful", "demo-hasty"):
        for name in ("eligibility", "unadjusted_factuality", "factuality", "uraf", "raf",
                     "deflection_tpr", "deflection_fpr", "llmeval"):
            assert overall[model][name] is not None, (model, name)
        assert not any(overall[model]["invalid"].values())
    assert overall["demo-careful"]["raf"] > overall["demo-hasty"]["raf"]
    _shots(page, "4 · Results", "rag-rules-results")

    _only_failing(page, "not factual")
    detail = page.locator(".st-key-rag-failure-detail")
    detail.wait_for()
    link = sentence_link(page)  # the detail drawn for the filter
    detail.get_by_text("The judge's raw replies").click()  # the rules that decided, in its words
    detail.locator('[data-testid="stExpanderDetails"]').get_by_text("rule: ").first.wait_for(
        timeout=15_000)
    _shots(page, "6 · Failures", "rag-rules-failures")
    link.click()
    page.wait_for_url("**/annotate?**", timeout=60_000)
    wait_idle(page, 90_000)
    assert_no_exception(page)
    url = page.url
    item = url.split("item=", 1)[1].split("&", 1)[0]
    model = url.split("model=", 1)[1].split("&", 1)[0]
    index = int(url.split("sentence=", 1)[1].split("&", 1)[0]) - 1
    row = next(r for r in run_results(db, run["run_key"])
               if r["item_key"] == item and r["model"] == model)
    assert index in failing_sentences(row)
    assert row["sentences"][index]["all"]["label"] in ("unsupported", "contradictory")
    panel = page.locator(".st-key-nw-rag-panel")
    panel.wait_for()
    marked = panel.locator("mark.nw-current")
    assert "".join(marked.all_inner_texts()).split() == row["sentences"][index]["text"].split()
    _shots(page, "RAG run answer", "rag-rules-annotate-panel")
