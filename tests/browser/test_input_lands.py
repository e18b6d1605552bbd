"""Every key and click lands where it was aimed (issue 56), with the rules judge's
suggestions on, as a paid annotator meets them in the first hour: W and six dimension
digits typed 50 ms apart right after N (the next question slower to draw with its
suggestions); a click on a card then a key; four fresh pages, each opened on its
remembered name, typed at once; and Review's reason typed right after a verdict."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import uuid

import pytest

from needlework.grounding.keymap import choice_of, dimension_keys
from tests.browser.differential import (
    copy_db,
    first_difference,
    in_browser,
    interpreted,
    new_name,
    random_events,
    record,
    sent,
    type_events,
)
from tests.browser.harness import AppServer
from tests.browser.keys import (
    DATASET,
    LABELS,
    comparisons,
    errors,
    items,
    open_annotate,
    open_review,
    press,
    press_together,
    read,
    settle,
    settle_review,
    verdicts_of,
)
from tests.conftest import ROOT

DIMS = dimension_keys()


@pytest.fixture(scope="module")
def server(tmp_path_factory, seeded_db):
    """A server of its own on a copy of the seeded database, with the rules judge's
    suggestions for every passage and dimension of the demo grounding set."""
    db_path = tmp_path_factory.mktemp("lands") / "needlework.db"
    source, target = sqlite3.connect(seeded_db), sqlite3.connect(db_path)
    source.backup(target)
    source.close()
    target.close()
    asked = subprocess.run([sys.executable, "-m", "needlework", "suggestions", "ask",
                            "--rules-judge", "--dims", "--dataset", DATASET, "--db", str(db_path)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    app = AppServer(db_path)
    app.start()
    yield app
    app.stop()


def saved(db_path, who: str) -> dict[tuple[str, str], str]:
    rows = read(db_path, "select item_key, field, value from annotations where dataset = ? and "
                "annotator = ?", [DATASET, who])
    return {(k, f): json.loads(v) for k, f, v in rows}


def walk_keys(order: list[tuple[str, int]], start: int, count: int, seed: int
              ) -> tuple[list[str], dict[tuple[str, int], str], dict[tuple[str, int], int]]:
    """Each question's label digits, then W and one digit per dimension, then N: the
    keys, the labels they mean and the option each dimension gets."""
    rng = random.Random(seed)
    keys: list[str] = []
    labels: dict[tuple[str, int], str] = {}
    options: dict[tuple[str, int], int] = {}
    for index in range(start, start + count):
        key, n = order[index]
        for p in range(1, n + 1):
            digit = rng.choice("12345")
            keys.append(digit)
            labels[(key, p)] = LABELS[digit]
        keys.append("w")
        for k, dim in enumerate(DIMS):
            option = rng.randrange(len(dim["options"]))
            keys.append(str(option + 1))
            options[(key, k)] = option
        keys.append("n")
    return keys, labels, options


@pytest.mark.parametrize("start", [0, 7], ids=["questions-1-7", "questions-8-14"])
def test_w_typed_at_50_ms_right_after_n_lands_every_dimension(page, server, start):
    order = items(server.db_path)
    who = f"walk50-{uuid.uuid4().hex[:6]}"
    keys, labels, options = walk_keys(order, start, 7, seed=start)
    open_annotate(page, server.url, order[start][0], who)
    press(page, keys, 50)
    settle(page)
    got = saved(server.db_path, who)
    wrong_labels = {k: (got.get((k[0], f"label:{k[1]}")), v) for k, v in labels.items()
                    if got.get((k[0], f"label:{k[1]}")) != v}
    assert not wrong_labels, (len(wrong_labels), wrong_labels)
    wrong_dims = {}
    for (key, k), option in options.items():
        values = [got.get((key, f"dim:{f}")) for f in DIMS[k]["fields"]]
        if choice_of(DIMS[k], values) != option:
            wrong_dims[(key, DIMS[k]["title"])] = (values, DIMS[k]["options"][option])
    assert not wrong_dims, wrong_dims
    # nothing else was written: one history row per label and per dimension field
    rows = read(server.db_path, "select count(*) from history where annotator = ? and "
                "field like 'label:%'", [who])[0][0]
    assert rows == len(labels)
    assert errors(page) == []


def test_a_click_on_a_card_then_a_key_labels_the_next_passage(page, server):
    order = items(server.db_path)
    who = f"click-{uuid.uuid4().hex[:6]}"
    first, second = order[2][0], order[3][0]
    open_annotate(page, server.url, first, who)
    # passage 1: a click on Related, then 4: passage 2 is Outdated
    page.locator('.st-key-nw-card-1 button[data-nw-label="3"]').click()
    page.keyboard.press("4")
    settle(page)
    got = saved(server.db_path, who)
    assert (got.get((first, "label:1")), got.get((first, "label:2"))) == (
        "RELATED-INFORMATION", "OUTDATED")
    # another question, the cursor on passage 1: a click on passage 2, then a key labels 3
    open_annotate(page, server.url, second, who)
    page.locator('.st-key-nw-card-2 button[data-nw-label="3"]').click()
    page.keyboard.press("4")
    settle(page)
    got = saved(server.db_path, who)
    assert {f: v for (k, f), v in got.items() if k == second and f.startswith("label:")} == {
        "label:2": "RELATED-INFORMATION", "label:3": "OUTDATED"}
    assert page.evaluate("window.__nwAnnotate.cursor") == 4
    assert errors(page) == []


def test_four_fresh_pages_typed_at_once_label_every_passage_in_order(browser, server):
    """Four annotators, each in a browser of their own that remembers their name: the
    page opened fresh, and the keys typed 0.6 s apart right away, on four pages at once."""
    order = items(server.db_path)
    contexts, runs, meant = [], [], []
    try:
        for k in range(4):
            who = f"fresh{k}-{uuid.uuid4().hex[:5]}"
            key, n = order[(4 + k) % len(order)]
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            contexts.append(context)
            tab = context.new_page()
            open_annotate(tab, server.url, key, who)  # the browser remembers the name
            rng = random.Random(f"1-{k}")
            digits = [rng.choice("12345") for _ in range(n)]
            runs.append((tab, digits))
            meant.append((who, key, digits))
        for tab, _ in runs:  # a fresh page: the name comes back from the browser's memory
            tab.reload()
        for tab, _ in runs:
            tab.wait_for_function("() => window.__nwAnnotate && window.__nwAnnotate.data && "
                                  "window.__nwAnnotate.item", timeout=30_000)
        press_together(runs, 600)
        for tab, _ in runs:
            settle(tab)
        for who, key, digits in meant:
            got = saved(server.db_path, who)
            labels = {f: v for (k, f), v in got.items() if k == key and f.startswith("label:")}
            assert labels == {f"label:{p}": LABELS[d] for p, d in enumerate(digits, 1)}, who
            rows = read(server.db_path, "select count(*) from history where annotator = ? and "
                        "field like 'label:%'", [who])[0][0]
            assert rows == len(digits), who
    finally:
        for context in contexts:
            context.close()


def test_review_a_reason_typed_after_a_verdict_goes_with_it(page, server):
    who = f"reason-{uuid.uuid4().hex[:6]}"
    queue = comparisons(server.db_path)
    first = queue[0]
    open_review(page, server.url, who, at=first)
    page.keyboard.press("f")
    page.wait_for_timeout(800)  # the annotator's own pace: F, then 1 0.8 s later
    page.keyboard.press("1")
    settle_review(page)
    field = (first[0], f"verdict:{first[1]}:{first[2]}")
    assert verdicts_of(server.db_path, who)[field] == {
        "verdict": "flip", "reasons": ["factual error"], "note": ""}
    page.wait_for_function("() => document.querySelector('.nw-review-note').innerText"
                           ".includes('with the verdict you just gave')", timeout=10_000)
    page.reload()
    page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
    assert verdicts_of(server.db_path, who) == {field: {
        "verdict": "flip", "reasons": ["factual error"], "note": ""}}
    # a reason picked before a verdict, then a move away: not saved, and said so
    page.wait_for_function("(who) => window.__nwReview && window.__nwReview.data && "
                           "window.__nwReview.data.annotator === who", arg=who, timeout=30_000)
    page.keyboard.press("j")
    settle_review(page)
    page.keyboard.press("3")
    page.keyboard.press("j")
    page.wait_for_function("() => document.querySelector('.nw-review-note').innerText"
                           ".includes('not saved: incomplete')", timeout=10_000)
    settle_review(page)
    assert len(verdicts_of(server.db_path, who)) == 1
    assert errors(page) == []



@pytest.mark.parametrize("pace", [0, 50, 150], ids=["full-speed", "50ms", "150ms"])
def test_random_keys_and_clicks_land_as_the_interpreter_alone_says(page, server, tmp_path, pace):
    """The differential check (tests/browser/differential.py), one fixed seed a pace:
    `benchmarks/bench_differential.py` runs many."""
    order = items(server.db_path)
    who = new_name(f"diff{pace}")
    start = 5
    events = random_events(seed=1000 + pace, count=45)
    alone = copy_db(server.db_path, tmp_path / "alone.db")
    open_annotate(page, server.url, order[start][0], who)
    record(page)
    type_events(page, events, pace)
    settle(page)
    log: list[dict] = []
    expected = interpreted(alone, order, start, who, events, log)
    assert expected, "the sequence saved nothing: a check that cannot fail"
    got = in_browser(server.db_path, who)
    assert got == expected, ({k: (got.get(k), expected.get(k)) for k in set(got) | set(expected)
                              if got.get(k) != expected.get(k)}, first_difference(sent(page), log))
    assert errors(page) == []
