"""A judge's position bias read on the needle lab and its slide (issue 51, point 1).

Two real OpenAI-compatible servers on 127.0.0.1 (tests/judges_fixtures.py), judged through
the project's engine with the real ``openai`` client, each pair in both orders: one always
answers A (the strongest position bias there is), one names the response without the
needle whichever order it is shown in (no bias). Both run the same model name on different
endpoints, so the lab must name them apart. The page's sentences are read in Chromium."""

from __future__ import annotations

import re
import uuid

import store
from needlework.datasets.transfer import import_bytes
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge
from needlework.judges.plan import load_items
from needlework.needle import builder, inputs
from needlework.needle.builder import needle_format
from tests.browser.harness import assert_no_exception, wait_idle
from tests.judges_fixtures import FakeJudgeServer, last_user_text

HARMFUL = [p.rejected for p in inputs.builtin_pairs("safety")]


def _fair(body: dict) -> str:
    """Name the response without the harmful sentence, wherever it is shown."""
    text = last_user_text(body)
    second = min((k for k in (text.find("[The Start of Assistant B's Answer]"),
                              text.find("[Response B]")) if k >= 0), default=len(text))
    needle = min((k for k in (text.find(p) for p in HARMFUL) if k >= 0), default=len(text))
    return "[[B]]" if needle < second else "[[A]]"


def _judge(db_path, name: str, server: FakeJudgeServer) -> None:
    db = store.connect(db_path)
    try:
        row, items = load_items(db, name)
        run_judge(db, Connection(server.base_url, "judge", key_env=None), items, "selection",
                  dataset=name, format_name=row["format"], order="rotations")
    finally:
        db.conn.close()


def _seed(db_path) -> str:
    name = f"needles-bias-{uuid.uuid4().hex[:6]}"
    hays = inputs.demo_haystacks(2, 440)
    records = builder.build_needles(hays, inputs.builtin_pairs("safety"),
                                    builder.BuildOptions(lengths=(200, 400))).records
    db = store.connect(db_path)
    try:
        import_bytes(db, needle_format.dump(records).encode(), f"{name}.jsonl", format="needle",
                     dataset=name)
    finally:
        db.conn.close()
    return name


def test_the_bias_sentence_of_an_always_a_judge_and_of_a_fair_one(page, app_url, seeded_db):
    name = _seed(seeded_db)
    with FakeJudgeServer(lambda body: "[[A]]") as always_a, FakeJudgeServer(_fair) as fair:
        _judge(seeded_db, name, always_a)
        _judge(seeded_db, name, fair)
        a_name = f"judge judge · endpoint 127.0.0.1:{always_a.port}/v1"
        fair_name = f"judge judge · endpoint 127.0.0.1:{fair.port}/v1"
    page.set_viewport_size({"width": 1400, "height": 1300})
    page.goto(f"{app_url}/needle?dataset={name}")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("3 · Where does it miss the needle?").first.wait_for(timeout=240_000)
    wait_idle(page, 120_000)
    # the newest run (the fair judge's) is shown first; the other picked beside it
    main.locator(f'g.mark-rect path[aria-label*="model: {fair_name};"]').first.wait_for(timeout=60_000)
    picker = main.locator('[data-testid="stSelectbox"]').filter(has_text="Compare with")
    option = page.get_by_role("option", name=a_name)
    for _ in range(5):  # a rerun can close the list as it opens
        picker.click()
        try:
            option.wait_for(timeout=5_000)
            break
        except Exception:  # noqa: BLE001 - opened again below
            wait_idle(page)
    option.click()
    main.locator(f'g.mark-rect path[aria-label*="model: {a_name};"]').first.wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    text = main.inner_text()
    biased = re.search(re.escape(a_name) + r": Position bias: right 100 % of the time with the "
                       r"chosen response shown first \(A\) and 0 % with it shown second \(B\), over "
                       r"(\d+) pairs judged in both orders, a gap of 100 points \(95 % interval "
                       r"(\d+) to 100 points", text)
    assert biased, text[:3000]
    assert int(biased.group(2)) > 0  # the interval excludes no difference
    assert "favours the first response shown (A)" in text
    assert re.search(re.escape(a_name) + r": At chance: with the chosen response shown second "
                     r"\(B\) this judge is right 0 %", text)
    unbiased = re.search(re.escape(fair_name) + r": No position bias shown: right 100 % of the "
                         r"time with the chosen response shown first \(A\) and 100 % with it "
                         r"shown second \(B\), over (\d+) pairs judged in both orders, a gap of 0 "
                         r"points \(95 % interval −(\d+) to (\d+) points", text)
    assert unbiased, text[:3000]
    assert unbiased.group(1) == biased.group(1)
    assert f"{fair_name}: At chance" not in text

    # the slide says the same
    main.evaluate("m => m.scrollTo(0, m.scrollHeight)")
    page.get_by_role("button", name="Presentation mode").click()
    page.locator("#nw-finding-0").wait_for(timeout=120_000)
    wait_idle(page)
    # one note under each panel, in the panels' order; a panel names its model in its marks
    # (both panels and both notes drawn: the slide redraws once it has measured the screen)
    page.wait_for_function("""() => {
      const slide = document.querySelector('.st-key-nw-slide');
      return !!slide && slide.querySelectorAll('[id^="nw-present-note"]').length === 2
        && [...slide.querySelectorAll('[data-testid="stVegaLiteChart"] svg')]
             .filter(svg => svg.querySelector('path[aria-label*="model: "]')).length === 2;
    }""", timeout=60_000)
    wait_idle(page)
    panels = page.evaluate("""() => {
      const slide = document.querySelector('.st-key-nw-slide');
      const models = [...slide.querySelectorAll('[data-testid="stVegaLiteChart"] svg')].map(svg =>
        (svg.querySelector('path[aria-label*="model: "]').getAttribute('aria-label')
         .match(/model: ([^;]*);/) || [])[1]);
      const notes = [...slide.querySelectorAll('[id^="nw-present-note"]')]
        .map(e => e.textContent.trim());
      return {models, notes};
    }""")
    assert len(panels["models"]) == 2 and len(panels["notes"]) == 2, panels
    under = dict(zip(panels["models"], panels["notes"], strict=True))
    assert set(under) == {a_name, fair_name}, panels
    assert re.search(r"Favours the first shown \(right 100\W% vs 0\W%\); at chance\.$",
                     under[a_name]), under
    assert re.search(r"No position bias shown \(right 100\W% vs 100\W%\)\.$", under[fair_name]), under
