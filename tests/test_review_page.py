"""AppTest: the review page with a temporary database (NEEDLEWORK_DB)."""

from __future__ import annotations

import json
import sqlite3
import uuid

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.actions import positions
from needlework.actions.service import apply_actions
from needlework.datasets.transfer import import_bytes, import_file
from needlework.jobs.runner import RUNNER
from needlework.review.lengths import method
from needlework.verdicts import make_value
from store.annotations import set_annotation
from tests.conftest import RMBENCH_DIR, ROOT, garage_records, jsonl
from tests.page_keys import TAB, as_tab, key_data, move, press

LONG = "\n\n".join(f"Paragraph {k}: " + " ".join(f"w{k}x{n}" for n in range(60)) for k in range(200))
LFRB = [
    {"id": "QA_1", "subset": "QA", "prompt": "Is <b>this</b> bold? <script>document.title='x'</script> "
     "It costs $5 and $10.", "chosen": ["Paris is the capital of France."],
     "rejected": ["Lyon is the capital of France.", "I do not know.", "France."]},
    {"id": "RAG_2", "subset": "RAG", "prompt": "Explain at length.", "chosen": [LONG],
     "rejected": [LONG.replace("w3x7", "ERROR"), "Short.", "Also short."]},
]


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "review.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(LFRB), "lf.jsonl", dataset="lf")
    import_file(db, RMBENCH_DIR / "chat_filtered.json", dataset="rmchat")
    yield path
    db.conn.close()


def open_review(dataset: str, annotator: str = "", item: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["dataset"] = dataset
    if annotator:
        at.session_state["annotator"] = annotator
    if item is not None:
        at.query_params["item"] = item
    at.run()
    at.switch_page("app_pages/review.py")
    at.run()
    assert not at.exception, at.exception
    return at


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click()
    at.run()
    assert not at.exception, at.exception
    return at


def verdicts(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("select item_key, annotator, field, value, updated_at from annotations "
                            "where field like 'verdict:%'").fetchall()
    finally:
        conn.close()
    return {(k, a, f): (json.loads(v), u) for k, a, f, v, u in rows}


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def html(at: AppTest) -> str:
    return "\n".join(h.value for h in at.get("html"))


def test_opens_the_first_unreviewed_comparison_and_puts_it_in_the_url(app_db):
    at = open_review("lf", "ana")
    assert "#### Item QA\\_1" in markdown(at)
    assert at.query_params["item"] == "QA_1"
    body = html(at)  # near-identical: shown as a diff
    assert '<mark class="nw-chg nw-current">Paris</mark> is the capital' in body
    assert '<mark class="nw-chg nw-current">Lyon</mark> is the capital' in body


def act(path, dataset: str, *actions: dict) -> None:
    """Deliver actions as the outbox does (the key script makes them in the browser;
    tests/browser/test_review.py drives that part)."""
    db = store.connect(path)
    try:
        delivery = apply_actions(db, [dict(a, id=f"test-{uuid.uuid4().hex}", dataset=dataset,
                                           annotator="ana") for a in actions])
    finally:
        db.conn.close()
    assert delivery.error is None and not delivery.rejected, delivery


def ask(at: AppTest, dataset: str, item: str, i: int, j: int, seek: str | None = None) -> AppTest:
    """What the key script sends: a move to comparison (item, i, j) (a click in the grid)
    when the page is elsewhere, then for J / K / N (``seek``) a move where the page's
    data says the key leads (nothing when it leads nowhere)."""
    if "nw-outbox-tab" not in at.session_state:
        as_tab(at)
    data = key_data(at, "review")
    if (data["item"], data["i"], data["j"]) != (item, i, j):
        move(at, "review", dataset, item, i=i, j=j)
    if seek is not None:
        press(at, "review", seek)
    assert not at.exception, at.exception
    return at


@pytest.mark.slow
def test_the_link_counts_when_the_page_opens_and_the_tab_stays_where_it_moved(app_db):
    """The first run opens the comparison ``?item=&i=&j=`` names; later runs draw where the
    server has the tab, whatever address their requests carry; J / K / N lead where the
    page's data says."""
    at = open_review("lf", "ana", item="RAG_2")
    assert (at.query_params["item"], at.query_params["j"]) == ("RAG_2", "1")
    as_tab(at)
    move(at, "review", "lf", "QA_1", i=0, j=1)
    for _ in range(3):  # requests sent before the browser had the new address
        at.query_params.update({"item": "RAG_2", "i": "1", "j": "3"})
        at.run()
        assert (at.query_params["item"], at.query_params["j"]) == ("QA_1", "2")
    moves = key_data(at, "review")["moves"]
    none = {"verdict": None, "reasons": []}  # what is saved there: nothing yet
    assert moves["next"] == {"item": "QA_1", "i": 0, "j": 2, **none}
    assert moves["previous"] == {"item": "QA_1", "i": 0, "j": 0, **none}
    assert moves["unreviewed"] == {"item": "QA_1", "i": 0, "j": 2, **none}
    act(app_db, "lf", {"kind": "verdict", "item": "QA_1", "i": 0, "j": 0, "verdict": "tie",
                       "reasons": ["verbose"]})
    at.run()
    assert key_data(at, "review")["moves"]["previous"] == {
        "item": "QA_1", "i": 0, "j": 0, "verdict": "tie", "reasons": ["verbose"]}
    # a restarted server: the browser's first request already says which tab it is, and
    # the address it sends lags behind the keys: where the server has the tab wins
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for name, value in {"dataset": "lf", "annotator": "ana", "nw-outbox-tab": TAB}.items():
        fresh.session_state[name] = value
    fresh.switch_page("app_pages/review.py")
    fresh.query_params.update({"item": "RAG_2", "i": "1", "j": "3"})
    fresh.run()
    assert (fresh.query_params["item"], fresh.query_params["j"]) == ("QA_1", "2")
    # a reload (or a link opened in this tab): its first request cannot say which tab it
    # is; the link wins, and the tab is put there once the browser says
    reload = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for name, value in {"dataset": "lf", "annotator": "ana"}.items():
        reload.session_state[name] = value
    reload.switch_page("app_pages/review.py")
    reload.query_params.update({"item": "RAG_2", "i": "1", "j": "3"})
    reload.run()
    as_tab(reload)
    assert (reload.query_params["item"], reload.query_params["j"]) == ("RAG_2", "3")
    db = store.connect(app_db)
    assert positions.get(db, "", TAB, "review", "lf") == positions.Position(
        "RAG_2", key_data(reload, "review")["seq"], 0, 2, 0)


def test_a_key_move_committed_during_a_run_is_not_overwritten_by_the_place_it_drew(
        app_db, monkeypatch):
    """A run reads where the server has the tab, and a K pressed meanwhile moves the tab
    before the run gets to put itself there: the page draws the older place this once,
    and the tab stays where K put it (its next run draws that)."""
    from components.review import position as review_position  # noqa: PLC0415

    at = open_review("lf", "ana")
    as_tab(at)
    move(at, "review", "lf", "QA_1", i=0, j=1)
    drawn = review_position.into_view
    landed: list[int] = []

    def k_meanwhile(*args, **kwargs):  # between the run's reading and its remember
        if not landed:
            db = store.connect(app_db)
            try:
                landed.append(positions.move(db, "", TAB, "review", "lf", "QA_1", i=0, j=0).seq)
            finally:
                db.conn.close()
        return drawn(*args, **kwargs)

    monkeypatch.setattr(review_position, "into_view", k_meanwhile)
    at.run()
    assert not at.exception, at.exception
    data = key_data(at, "review")
    assert (data["item"], data["i"], data["j"]) == ("QA_1", 0, 1)  # the run's older place
    assert data["seq"] < landed[0]  # so the key script waits for its own move
    db = store.connect(app_db)
    try:
        assert positions.get(db, "", TAB, "review", "lf") == positions.Position(
            "QA_1", landed[0], 0, 0, 0)
    finally:
        db.conn.close()
    at.run()
    data = key_data(at, "review")
    assert (data["item"], data["i"], data["j"], data["seq"]) == ("QA_1", 0, 0, landed[0])


def test_verdict_is_saved_with_who_and_when_and_the_page_moves_on(app_db):
    at = open_review("lf", "ana")
    act(app_db, "lf", {"kind": "verdict", "item": "QA_1", "i": 0, "j": 0, "verdict": "flip"})
    ask(at, "lf", "QA_1", 0, 0, "unreviewed")
    saved = verdicts(app_db)
    value, stamp = saved[("QA_1", "ana", "verdict:0:0")]
    assert value == {"verdict": "flip", "reasons": [], "note": ""} and stamp.startswith("20")
    assert "rejected 2" in markdown(at)  # moved to the next unreviewed comparison
    assert any(c.value.startswith("Last saved: “rejected better” on item QA\\_1") for c in at.caption)
    ask(at, "lf", "QA_1", 0, 1, "previous")  # back: the saved verdict is shown as saved
    assert any("Saved: rejected better" in s.value for s in at.success)


def test_reasons_and_note_go_with_the_verdict_and_later_edits_save_at_once(app_db):
    at = open_review("lf", "ana")
    note = [t for t in at.text_input if t.label == "Note"][0]
    note.input("capital wrong").run()
    assert verdicts(app_db) == {}  # nothing saved before the verdict
    act(app_db, "lf", {"kind": "verdict", "item": "QA_1", "i": 0, "j": 0, "verdict": "agree",
                       "reasons": ["factual error"], "note": "capital wrong"})
    value, _ = verdicts(app_db)[("QA_1", "ana", "verdict:0:0")]
    assert value == {"verdict": "agree", "reasons": ["factual error"], "note": "capital wrong"}
    act(app_db, "lf", {"kind": "reasons", "item": "QA_1", "i": 0, "j": 0,
                       "reasons": ["factual error", "verbose"]})
    value, _ = verdicts(app_db)[("QA_1", "ana", "verdict:0:0")]
    assert value["reasons"] == ["factual error", "verbose"]
    at.run()
    assert at.button(key="rv_r_4").proto.type == "primary"  # saved reasons are drawn on
    note = [t for t in at.text_input if t.label == "Note"][0]
    note.input("capital wrong: Paris").run()  # the note of a saved verdict saves at once
    value, _ = verdicts(app_db)[("QA_1", "ana", "verdict:0:0")]
    assert value["note"] == "capital wrong: Paris" and value["verdict"] == "agree"


def test_without_an_annotator_nothing_is_written(app_db):
    at = open_review("lf")
    assert any("Enter your name in the sidebar to save verdicts" in c.value for c in at.caption)
    note = [t for t in at.text_input if t.label == "Note"][0]
    note.input("no name").run()
    assert verdicts(app_db) == {}


def test_deep_link_opens_the_item_in_diff_mode_and_difference_navigation(app_db):
    at = open_review("rmchat", "ana", item="95")
    assert "#### Item 95" in markdown(at)
    body = html(at)
    assert '<mark class="nw-chg nw-current">root vegetables</mark>' in body
    assert '<mark class="nw-chg nw-current">orchids</mark>' in body
    click(at, "rv_dnext")
    body = html(at)
    assert '<mark class="nw-chg nw-current">strawberries</mark>' in body
    assert '<mark class="nw-chg">root vegetables</mark>' in body


def test_next_unreviewed_skips_what_i_reviewed(app_db):
    db = store.connect(app_db)
    for j in range(3):
        set_annotation(db, "lf", "QA_1", "ana", f"verdict:0:{j}", make_value("agree"))
    set_annotation(db, "lf", "RAG_2", "ana", "verdict:0:0", make_value("tie"))
    at = open_review("lf", "ana")
    assert "#### Item RAG\\_2" in markdown(at) and "rejected 2" in markdown(at)
    ask(at, "lf", "RAG_2", 0, 1, "unreviewed")
    assert "rejected 3" in markdown(at)


def test_long_response_draws_the_first_chunk_then_the_rest_on_demand(app_db):
    at = open_review("lf", "ana", item="RAG_2")
    ask(at, "lf", "RAG_2", 0, 1)  # a click in the grid: chosen vs the short rejected 2
    assert "w0x1" in html(at) and "w199x59" not in html(at)
    more = [b for b in at.button if b.label == "All"]
    more[0].click().run()
    assert "w199x59" in html(at)


def test_text_is_literal(app_db):
    at = open_review("lf", "ana")
    body = html(at)
    assert "&lt;script&gt;document.title=&#x27;x&#x27;&lt;/script&gt;" in body
    assert "Is &lt;b&gt;this&lt;/b&gt; bold?" in body and "$5 and $10" in body
    assert "<script>document" not in body and "<b>this" not in body


def test_model_disagrees_filter_reads_scores(app_db):
    db = store.connect(app_db)
    db.execute(
        "insert into item_scores (dataset, item_key, fingerprint, variant, model, subset, "
        "chosen_scores, rejected_scores, updated_at) values "
        "('lf', 'QA_1', 'f', 'fp32|full', 'tiny-rm', 'QA', '[1.0]', '[0.2, 1.0, -1.0]', 't'), "
        "('lf', 'RAG_2', 'f', 'fp32|full', 'tiny-rm', 'RAG', '[3.0]', '[1.0, 2.0, 0.0]', 't')")
    db.conn.commit()
    at = open_review("lf", "ana")
    assert not at.checkbox  # filters are drawn only while their expander is open
    at.session_state["rv_filters"] = True  # open it
    at.run()
    at.checkbox(key="rv_f_disagree").check().run()
    assert any(c.value.startswith("1 of 2 items") for c in at.caption)
    assert "score 1.000" in markdown(at)
    assert any(e.label == "Filters and sort · 1 active" for e in at.expander)
    at.session_state["rv_filters"] = False  # closed: the filter still applies
    at.run()
    assert any(c.value.startswith("1 of 2 items") for c in at.caption)


def test_dataset_overview_shows_lengths_subsets_and_agreement(app_db):
    db = store.connect(app_db)
    for j, v in enumerate(["agree", "agree", "flip"]):
        set_annotation(db, "lf", "QA_1", "ana", f"verdict:0:{j}", make_value(v))
    at = open_review("lf", "ana")
    at.segmented_control(key="rv_mode").set_value("Dataset overview").run()
    assert not at.exception
    # no token counts yet: the page says so and counts nothing itself
    assert not at.get("vega_lite_chart")
    assert any("need counting first: 0 of 2 items" in c.value for c in at.caption)
    job = RUNNER.submit(db, "lengths", "lf", options={"method": method()})
    assert RUNNER.run(app_db, job)["status"] == "done"
    at.run()
    assert len(at.get("vega_lite_chart")) == 1
    tables = [d.value for d in at.dataframe]
    lengths = next(t for t in tables if "side" in t.columns)
    assert dict(zip(lengths["side"], lengths["responses"], strict=True)) == {"chosen": 2, "rejected": 6}
    subsets = next(t for t in tables if "subset" in t.columns)
    assert list(subsets["items"]) == [1, 1]
    assert list(subsets["reviewed"]) == [3, 0]
    people = next(t for t in tables if "annotator" in t.columns)
    row = people.iloc[0]
    assert row["annotator"] == "ana" and row["Rejected better"] == 1
    assert row["agreement"] == pytest.approx(2 / 3)
    assert at.get("download_button")


def test_a_grounding_dataset_gets_buttons_that_open_the_preference_ones(app_db):
    db = store.connect(app_db)
    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl", dataset="ground")
    at = open_review("ground", "ana")
    assert any("ground is a grounding dataset" in i.value and "Annotate" in i.value for i in at.info)
    assert {b.label for b in at.button} >= {"lf · 2 items", "rmchat · 129 items"}
    click(at, "rv_pick_ds|lf")
    assert "#### Item QA\\_1" in markdown(at)
    assert at.session_state["dataset"] == "lf"


def caption_with(at: AppTest, start: str) -> str:
    return next(c.value for c in at.caption if c.value.startswith(start))


def test_search_finds_prompts_and_ids_and_lands_on_the_match(app_db):
    at = open_review("lf", "ana")
    assert "#### Item QA\\_1" in markdown(at)
    at.text_input(key="rv_search").input("rag_2").run()  # an id, any case
    assert "#### Item RAG\\_2" in markdown(at)
    assert caption_with(at, "1 of 2 items").startswith("1 of 2 items · comparison 1 of 3 in this view")
    at.text_input(key="rv_search").input("  EXPLAIN   at ").run()  # the prompt's words, any case
    assert "#### Item RAG\\_2" in markdown(at) and caption_with(at, "1 of 2 items")
    at.text_input(key="rv_search").input("<b>this</b>").run()  # literal text, not markup
    assert "#### Item QA\\_1" in markdown(at)
    at.text_input(key="rv_search").input("no such words").run()
    assert any("No comparisons match the filters and the search" in i.value for i in at.info)
    at.text_input(key="rv_search").input("").run()
    assert caption_with(at, "2 items").startswith("2 items · comparison")


def test_sort_by_model_margin_puts_the_worst_first_and_moves_in_that_order(app_db):
    db = store.connect(app_db)
    db.execute(
        "insert into item_scores (dataset, item_key, fingerprint, variant, model, subset, "
        "chosen_scores, rejected_scores, updated_at) values "
        "('lf', 'QA_1', 'f', 'fp32|full', 'tiny-rm', 'QA', '[5.0]', '[0.2, 1.0, -1.0]', 't'), "
        "('lf', 'RAG_2', 'f', 'fp32|full', 'tiny-rm', 'RAG', '[3.0]', '[1.0, 2.0, 0.0]', 't')")
    db.conn.commit()
    at = open_review("lf", "ana")
    assert "#### Item QA\\_1" in markdown(at)
    at.session_state["rv_filters"] = True
    at.run()
    at.checkbox(key="rv_f_margin").check().run()
    # RAG_2's smallest margin is 3 - 2 = 1, QA_1's 5 - 1 = 4: RAG_2 first
    assert "#### Item RAG\\_2" in markdown(at)
    assert caption_with(at, "2 of 2 items").startswith("2 of 2 items · comparison 1 of 6")
    ask(at, "lf", "RAG_2", 0, 2, "next")  # after RAG_2's last comparison: QA_1
    assert "#### Item QA\\_1" in markdown(at)
    assert caption_with(at, "2 of 2 items").startswith("2 of 2 items · comparison 4 of 6")
    assert any(e.label == "Filters and sort · 1 active" for e in at.expander)


def test_one_verdict_for_the_next_comparisons_of_the_view(app_db):
    db = store.connect(app_db)
    set_annotation(db, "lf", "QA_1", "ana", "verdict:0:1", make_value("flip"))
    db.conn.commit()
    # a link to the item: at its first comparison without a verdict (opened with no link,
    # the page resumes after the comparison last given one: tests/test_resume.py)
    at = open_review("lf", "ana", item="QA_1")
    assert "#### Item QA\\_1" in markdown(at)
    at.session_state["rv-bulk"] = True
    at.run()
    at.number_input(key="rv-bulk-n").set_value(3).run()
    at.selectbox(key="rv-bulk-verdict").set_value("tie").run()
    assert any(c.value.replace("\\", "").startswith("3 comparison(s): QA_1 (1 vs 1), QA_1 (1 vs 3), "
                                                     "RAG_2 (1 vs 1)") for c in at.sidebar.caption)
    click(at, "rv-bulk-go")
    saved = verdicts(app_db)
    assert {k: v[0]["verdict"] for k, v in saved.items()} == {
        ("QA_1", "ana", "verdict:0:0"): "tie", ("QA_1", "ana", "verdict:0:1"): "flip",
        ("QA_1", "ana", "verdict:0:2"): "tie", ("RAG_2", "ana", "verdict:0:0"): "tie"}
    assert any("saved on 3 comparison(s)" in t.value.replace("\\", "") for t in at.toast)
    assert caption_with(at, "2 items").endswith("2 not reviewed by you")


def test_the_length_filter_waits_for_the_count_then_keeps_long_items(app_db):
    at = open_review("lf", "ana")
    at.session_state["rv_filters"] = True
    at.run()
    assert not at.slider  # not counted yet: no length filter
    assert any("needs every response's token count (2 items" in c.value for c in at.caption)
    click(at, "rv_count_tokens")
    db = store.connect(app_db)
    job = RUNNER.latest(db, "lengths", "lf")
    RUNNER.join(int(job["id"]), 60)
    at.run()
    slider = at.slider(key="rv_f_len")
    top = slider.max
    assert top > 1000  # RAG_2's long response
    slider.set_value((100, top)).run()
    assert "#### Item RAG\\_2" in markdown(at)
    assert caption_with(at, "1 of 2 items")
