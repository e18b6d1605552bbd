"""AppTest for "Write needles with an LLM" in the needle lab's build step: the shared judge
connection form, the background judge-needles job against a real local HTTP server, kept /
rejected by verification in words, the written set opened as the needle dataset (the form
then drawn once, in step 2), and a failed job in one line."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from needlework.rewards import registry
from store.datasets import get_dataset, iter_items
from store.scores import list_jobs
from tests.conftest import ROOT, garage_records, jsonl
from tests.judges_fixtures import FakeJudgeServer, free_port
from tests.test_needle_writing import writer_answer

PAGE = "app_pages/needle.py"


@pytest.fixture(autouse=True)
def fresh_registry():
    registry.MODELS.clear()
    yield
    registry.MODELS.clear()


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    return store.connect(path)


def open_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def write(at: AppTest, app_db, base_url: str) -> dict:
    """Toggle the writer on, point the judge form at ``base_url``, write into two demo
    haystacks at 1000 tokens, wait for the job; returns its row."""
    at.toggle(key="nwr_on").set_value(True).run()
    assert not at.exception, at.exception
    assert at.button(key="nwr_go").disabled  # no connection yet
    at.text_input(key="jd_base_url").set_value(base_url)
    at.text_input(key="jd_model").set_value("judge")
    at.text_input(key="nwr_lengths").set_value("1000")
    at.number_input(key="nwr_positions").set_value(1)  # one needle per haystack: anywhere
    at.text_input(key="nwr_name").set_value("llm-needles")
    at.run()
    assert not at.button(key="nwr_go").disabled
    at.button(key="nwr_go").click().run()
    assert not at.exception, at.exception
    job = next(j for j in list_jobs(app_db) if j["kind"] == "judge-needles")
    RUNNER.join(int(job["id"]), timeout=120)
    at.run()
    assert not at.exception, at.exception
    return RUNNER.get(app_db, int(job["id"]))


@pytest.mark.slow
def test_written_needles_are_saved_counted_and_opened(app_db):
    # a dataset made before: the sidebar's default (the oldest), so the written set is
    # not the one shown until it is opened
    import_bytes(app_db, jsonl(garage_records(1)), "g.jsonl", dataset="older")
    with FakeJudgeServer(writer_answer) as server:
        at = open_page()
        job = write(at, app_db, server.base_url)
    assert job["status"] == "done", job
    assert job["options"]["lengths"] == [1000] and job["options"]["connection"]["model"] == "judge"
    assert any("Wrote 2 needles with judge: 2 kept and 0 rejected by verification" in s.value
               and "Saved as llm\\-needles" in s.value for s in at.success), [s.value for s in at.success]
    assert get_dataset(app_db, "llm-needles")["kind"] == "needle"
    records = [i["record"] for i in iter_items(app_db, "llm-needles")]
    assert len(records) == 2 and {r["length_tokens"] for r in records} == {1000}
    # factual needles: the paper's prompt unless the Prompt template expander picks another
    assert job["options"]["template"]["name"] == "long-form-rewardbench"
    assert all(r["writer"]["template"]["name"] == "long-form-rewardbench"
               and "** Input Text Segment **" in r["writer"]["rewrite_prompt"] for r in records)
    attempts = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert list(attempts["reason"]) == ["verified", "verified"]
    # Open it: the written set becomes the page's needle dataset; the judge form is then
    # drawn once (by step 2) and the writer uses its values
    at.button(key="nwr_open").click().run()
    assert not at.exception, at.exception
    assert any("llm-needles" in m.value and "2 pairs" in m.value for m in at.markdown)
    assert any("Writer: the judge connection of step 2 below: judge" in c.value for c in at.caption)
    assert at.button(key="nj_run") is not None and not at.button(key="nwr_go").disabled


def test_a_failed_writing_job_says_why_in_one_line(app_db):
    at = open_page()
    job = write(at, app_db, f"http://127.0.0.1:{free_port()}/v1")
    assert job["status"] == "failed"
    (error,) = [e.value for e in at.error]
    assert error.startswith("Writing failed: ") and "\n" not in error
    assert get_dataset(app_db, "llm-needles") is None
