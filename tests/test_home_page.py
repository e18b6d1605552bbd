"""AppTest for the home page's dataset list: search, progress in words (a scored needle set
is not "not started"), and rename / archive / delete with what is lost named first
(issue 18, points 11, 14 and 21)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets import catalog
from needlework.datasets.transfer import import_bytes
from store.annotations import set_annotation
from store.datasets import DatasetExists, get_dataset, list_datasets
from tests.conftest import ROOT, garage_records, jsonl

NEEDLE = {"word_count": 120, "tagged_position": 0.5, "prompt": "Summarise.",
          "chosen": ["A faithful summary."], "rejected": ["A summary with an error."]}


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(3)), "ground.jsonl")
    import_bytes(db, jsonl([dict(NEEDLE, id=f"n{i}") for i in range(4)]), "needles.jsonl",
                 format="needle")
    return db


def home(annotator: str = "") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    if annotator:
        at.session_state["annotator"] = annotator
    at.run()
    assert not at.exception, at.exception
    return at


def captions(at: AppTest) -> list[str]:
    return [c.value.replace("\\", "") for c in at.caption]  # shown without Markdown escapes


def test_progress_in_words_and_a_scored_needle_set_is_started(app_db):
    for n in (1, 2, 3):
        set_annotation(app_db, "ground", "sample-1", "ana", f"label:{n}", "UNKNOWN")
    set_annotation(app_db, "ground", "sample-1", "ana", "answer", "Yes [cite_1].")
    set_annotation(app_db, "ground", "sample-2", "ana", "answer", "Yes [cite_9].")  # no passage 9
    for n in (1, 2, 3):
        set_annotation(app_db, "ground", "sample-2", "ana", f"label:{n}", "UNKNOWN")
    at = home()
    assert "1 of 3 items done by ana · 1 more started" in captions(at)  # the error is not done
    assert any(c.startswith("not started") for c in captions(at))
    app_db["item_scores"].insert({"dataset": "needles", "item_key": "n0", "fingerprint": "f",
                                  "variant": "fp32|full", "model": "demo-rm", "subset": "",
                                  "chosen_scores": "[1.0]", "rejected_scores": "[0.5]",
                                  "updated_at": "2025-01-01T00:00:00"})
    at.run()
    assert "needle run scored by demo-rm" in captions(at)
    assert not any(c.startswith("not started") for c in captions(at))


def test_search_box_keeps_matching_datasets(app_db):
    at = home()
    at.text_input(key="nw-home-search").set_value("NEED").run()
    names = " ".join(h.proto.body for h in at.get("html"))  # names are drawn as plain text
    assert "needles" in names and "ground" not in names
    at.text_input(key="nw-home-search").set_value("nothing like it").run()
    assert "No dataset matches the search." in captions(at)


def test_rename_archive_restore_and_delete_from_home(app_db):
    set_annotation(app_db, "ground", "sample-1", "ana", "label:1", "OUTDATED")
    at = home()
    at.session_state["nw-ds-manage|ground"] = True
    at.run()
    at.text_input(key="nw-ds-name|ground").set_value("Ground truth").run()
    at.button(key="nw-ds-rename|ground").click().run()
    assert not at.exception
    assert get_dataset(app_db, "ground") is None
    assert get_dataset(app_db, "Ground truth")["items"] == 3
    assert app_db.execute("select count(*) from annotations where dataset = 'Ground truth'").fetchone()[0] == 1
    at.session_state["nw-ds-manage|Ground truth"] = True
    at.run()
    at.button(key="nw-ds-archive|Ground truth").click().run()
    assert [r["name"] for r in list_datasets(app_db)] == ["needles"]  # hidden from the pickers
    assert not at.exception, at.exception
    at.toggle(key="nw-home-archived").set_value(True).run()
    at.session_state["nw-ds-manage|Ground truth"] = True
    at.run()
    # what deleting loses, named before it happens; the button waits for the name
    assert any("Deleting Ground truth deletes its 3 items, 1 annotation by 1 annotator and "
               "1 change of history" in c for c in captions(at))
    assert at.button(key="nw-ds-delete|Ground truth").disabled
    at.button(key="nw-ds-restore|Ground truth").click().run()
    assert sorted(r["name"] for r in list_datasets(app_db)) == ["Ground truth", "needles"]
    at.toggle(key="nw-home-archived").set_value(False).run()
    at.session_state["nw-ds-manage|Ground truth"] = True
    at.run()
    at.text_input(key="nw-ds-confirm|Ground truth").set_value("Ground truth").run()
    at.button(key="nw-ds-delete|Ground truth").click().run()
    assert not at.exception
    assert get_dataset(app_db, "Ground truth") is None
    assert app_db.execute("select count(*) from annotations").fetchone()[0] == 0


def test_rename_refuses_a_taken_name_and_keeps_everything(app_db):
    set_annotation(app_db, "ground", "sample-1", "ana", "label:1", "OUTDATED")
    with pytest.raises(DatasetExists):
        catalog.rename(app_db, "ground", " NEEDLES ")
    assert get_dataset(app_db, "ground")["items"] == 3
    new = catalog.rename(app_db, "ground", "  g2 ")
    assert new == "g2"
    assert app_db.execute("select count(*) from grounding_items where dataset = 'g2'").fetchone()[0] == 3
    assert app_db.execute("select annotator, started from progress_totals "
                          "where dataset = 'g2'").fetchall() == [("ana", 1)]
    assert app_db.execute("pragma foreign_key_check").fetchall() == []
