"""AppTest for the Suggestions page: asking the rules judge fills every passage of a
grounding dataset through the suggest job; a source is deleted; a bad file is refused
with file, line and field and stores nothing; a preference dataset offers its scoring runs."""

from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from store.suggestions import dataset_suggestions, suggestion_sources
from tests.conftest import ROOT, garage_records, jsonl

PAGE = "app_pages/suggestions.py"


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    records = garage_records(4)
    for n, r in enumerate(records, start=1):
        r["question"] = f"Question {n}: {r['question']}"
    import_bytes(db, jsonl(records), "ground.jsonl", dataset="ground")
    return db


def open_page(dataset: str = "ground") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["dataset"] = dataset
    at.run()
    at.switch_page(PAGE)
    at.query_params["dataset"] = dataset
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.slow
def test_asking_the_rules_judge_fills_every_passage_and_a_source_can_be_deleted(app_db):
    at = open_page()
    assert any("No suggestions" in c.value for c in at.caption)
    assert at.button(key="sg_ask").disabled  # no judge yet
    at.button(key="jd_rules").click().run()
    assert not at.exception, at.exception
    assert not at.button(key="sg_ask").disabled
    at.checkbox(key="sg_dims").check().run()
    at.button(key="sg_ask").click().run()
    db = store.connect(os.environ["NEEDLEWORK_DB"])
    job = RUNNER.latest(db, "suggest", "ground")
    assert job is not None
    RUNNER.join(int(job["id"]), timeout=120)
    for _ in range(3):  # the page reruns once the fragment sees the job finished
        at.run()
    assert not at.exception, at.exception
    assert RUNNER.get(db, int(job["id"]))["status"] == "done"
    assert any("36 suggestion(s) from judge:needlework-rules for 4 question(s)"
               in s.value.replace("\\", "") for s in at.success)  # 12 labels, 24 dimensions
    labels = [r for r in dataset_suggestions(db, "ground") if r["field"].startswith("label:")]
    assert len(labels) == 12  # 4 questions x 3 passages
    table = at.dataframe[0].value
    assert list(table["source"]) == ["judge:needlework-rules"] and list(table["items"]) == [4]
    at.button(key="sg_delete").click().run()
    assert not suggestion_sources(db, "ground")


def test_a_bad_file_is_refused_naming_file_line_and_field_and_stores_nothing(app_db):
    at = open_page()
    data = (b'{"item": "sample-1", "field": "label:1", "value": "OUTDATED"}\n'
            b'{"item": "sample-1", "field": "label:9", "value": "OUTDATED"}\n')
    at.get("file_uploader")[0].set_value(("s.jsonl", data, "application/jsonl"))
    at.run()
    at.button(key="sg_import").click().run()
    assert not at.exception, at.exception
    assert any("Nothing imported: 1 problem(s)" in e.value for e in at.error)
    assert "s.jsonl line 2: label:9: the item has 3 passage(s)" in "\n".join(h.value for h in at.get("html"))
    assert not suggestion_sources(app_db, "ground")


def test_a_preference_dataset_without_scores_says_how_to_get_them(app_db):
    from needlework.seeding.demo import seed_demo  # noqa: PLC0415

    seed_demo(app_db)
    at = open_page("demo-preference")
    assert any("Nothing has scored this dataset yet" in c.value for c in at.caption)


def test_local_mode_sets_when_annotators_see_suggestions_for_the_names_that_worked_here(app_db):
    from needlework.teams.blind import suggestion_setting  # noqa: PLC0415
    from store.annotations import set_annotation  # noqa: PLC0415

    set_annotation(app_db, "ground", "sample-1", "ana", "label:1", "OUTDATED")
    at = open_page()
    at.radio(key="nw-suggest-when|ground|always|").set_value("after").run()
    at.multiselect(key="nw-suggest-for|ground|always|").select("ana").run()
    at.button(key="nw-suggest-save|ground").click().run()
    assert not at.exception, at.exception
    saved = suggestion_setting(app_db, "ground")
    assert (saved.when, saved.names) == ("after", ("ana",))
    assert saved.timing_for("bob") == "never"
