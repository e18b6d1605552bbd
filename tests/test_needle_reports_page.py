"""AppTest for saved needle reports (issue 18, point 24): save what the lab shows under a
name, reopen it in a new session exactly (dataset, Results of, Compare with, slide title and finding,
the panels), rename and delete it, and a report whose result set was deleted says so."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.needle import builder
from needlework.needle.reports import Report
from needlework.needle.slide_meta import with_slide_finding
from store import needle_reports
from store.datasets import get_dataset, set_dataset_meta
from store.scores import save_item_scores
from tests.conftest import ROOT
from tests.test_needle_page import charts, html_text, small_needles

PAGE = "app_pages/needle.py"
ALPHA, BETA = "a" * 32, "b" * 32


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    records = small_needles()
    for name in ("needles", "other-needles"):
        import_bytes(db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                     dataset=name)
    for fp, model, shift in ((ALPHA, "/models/alpha-rm", 0.0), (BETA, "/models/beta-rm", 0.7)):
        save_item_scores(db, "needles", fp, "fp32|full", model,
                         [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                           "chosen_scores": [r["tagged_position"] + shift], "rejected_scores": [0.5]}
                          for r in records])
    return db


def open_lab(dataset: str, annotator: str = "") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["dataset"] = dataset
    if annotator:
        at.session_state["annotator"] = annotator
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def heat_panels(at: AppTest) -> list[str]:
    return sorted(c.key.split("|")[1] for c in charts(at) if (c.key or "").startswith("nw_heat|"))


@pytest.mark.slow
def test_a_saved_report_reopens_exactly_in_a_new_session(app_db):
    at = open_lab("needles")
    assert at.button(key="nw_report_save").disabled  # saving needs the annotator's name
    assert any("Enter your name in the sidebar to save a report" in c.value for c in at.caption)
    at.session_state["annotator"] = "ana"
    at.run()
    at.selectbox(key="nw_results").set_value("alpha-rm").run()
    at.selectbox(key="nw_compare").set_value("beta-rm").run()
    title_field(at).set_value("Alpha vs beta <b>").run()
    finding_field(at).set_value("Beta misses more in the middle").run()
    at.text_input(key="nw_report_name").set_value("  alpha vs beta  ").run()
    at.button(key="nw_report_save").click().run()
    assert not at.exception, at.exception
    assert any("Saved report 'alpha vs beta' by ana" in s.value for s in at.success)
    [row] = needle_reports.list_reports(app_db)
    assert row["name"] == "alpha vs beta" and row["created_by"] == "ana" and row["dataset"] == "needles"
    report = Report.from_json(row["spec"])
    assert [s.name for s in report.sets] == ["alpha-rm", "beta-rm"] and report.title == "Alpha vs beta <b>"
    assert (report.finding, report.finding_hidden) == ("Beta misses more in the middle", False)
    # the dataset's finding changed since (another presenter): Open puts the report's back
    meta = get_dataset(app_db, "needles")["meta"]
    set_dataset_meta(app_db, "needles", with_slide_finding(meta, "", True, "cy", "2026-11-28"))
    # The same name again is refused, with the reason.
    at.text_input(key="nw_report_name").set_value("Alpha VS beta").run()
    at.button(key="nw_report_save").click().run()
    assert any("Not saved" in e.value and "already exists" in e.value for e in at.error)

    # A new session on another dataset, another title: Open brings everything back.
    again = open_lab("other-needles", annotator="bo")
    assert heat_panels(again) == []  # other-needles has no results
    again.button(key=f"nw_report_open_{row['id']}").click().run()
    assert not again.exception, again.exception
    assert again.session_state["dataset"] == "needles"
    assert again.selectbox(key="nw_results").value == "alpha-rm"
    assert again.selectbox(key="nw_compare").value == "beta-rm"
    assert title_field(again).value == "Alpha vs beta <b>"
    assert finding_field(again).value == "Beta misses more in the middle"
    assert heat_panels(again) == ["alpha-rm", "beta-rm"]
    assert any("Report alpha vs beta" in c.value for c in again.caption)
    # on the slide too: the report's title, as text
    again.button(key="nw_present").click().run()
    assert "Alpha vs beta &lt;b&gt;" in html_text(again)
    assert "Beta misses more in the middle" in html_text(again)


@pytest.mark.slow
def test_rename_delete_and_a_report_whose_result_set_was_deleted(app_db):
    spec = Report.from_json(
        '{"dataset": "needles", "title": "", "sets": ['
        f'{{"kind": "model", "name": "alpha-rm", "fingerprint": "{ALPHA}", "variant": "fp32|full"}},'
        f'{{"kind": "model", "name": "beta-rm", "fingerprint": "{BETA}", "variant": "fp32|full"}}]}}'
    ).to_json()
    report_id = needle_reports.save_report(app_db, "needles", "both", spec, "ana")
    with app_db.conn:
        app_db.execute("delete from item_scores where fingerprint = ?", [BETA])  # beta's scores gone
    at = open_lab("needles", annotator="bo")
    at.button(key=f"nw_report_open_{report_id}").click().run()
    assert not at.exception, at.exception
    warning = " ".join(w.value for w in at.warning).replace("\\", "")  # label() escapes Markdown
    assert "Report both" in warning and "'beta-rm' is no longer here" in warning
    assert heat_panels(at) == ["alpha-rm"]  # shown without it
    # Rename (who changed it is kept), then delete.
    at.text_input(key=f"nw_report_rename_{report_id}").set_value("alpha only").run()
    at.button(key=f"nw_report_rename_{report_id}_go").click().run()
    row = needle_reports.get_report(app_db, report_id)
    assert row["name"] == "alpha only" and row["updated_by"] == "bo" and row["created_by"] == "ana"
    at.button(key=f"nw_report_del_{report_id}").click().run()
    assert not at.exception, at.exception
    assert needle_reports.list_reports(app_db) == []
    assert any("Deleted report 'alpha only'" in s.value for s in at.success)
    # A report of a deleted needle dataset is listed, says so and does not open.
    gone = needle_reports.save_report(app_db, "needles", "kept", spec, "ana")
    from store.datasets import delete_dataset  # noqa: PLC0415

    delete_dataset(app_db, "needles")
    at = open_lab("other-needles")
    assert at.button(key=f"nw_report_open_{gone}").disabled
    assert any("its needle dataset was deleted" in c.value for c in at.caption)


def finding_field(at):
    """The slide finding field (its key names the saved finding's version)."""
    [field] = [t for t in at.text_input if t.label == "Slide finding"]
    return field


def title_field(at):
    """The slide title field (its key names the saved title's version)."""
    [field] = [t for t in at.text_input if t.label == "Slide title"]
    return field
