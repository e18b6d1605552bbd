"""The needle lab's seeded demo result (issue 18, point 19): a demo model variant with a
stated limitation (needlework/rewards/demo_model.py VARIANTS), the demo needle set scored by
the project's own needle run (needlework/needle/seed.py), idempotent, and the lab
opening with it. The variant here is built tiny and for a few steps (the real one: make run)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.needle import seed as needle_seed
from needlework.needle.analysis import stored_results
from needlework.rewards.demo_model import (
    VARIANTS,
    DemoSettings,
    build_demo_model,
    read_report,
    variant_settings,
)
from store.datasets import create_dataset, get_dataset, iter_items
from store.scores import scored_models
from tests.conftest import ROOT
from tests.test_needle_page import charts

TINY = DemoSettings(vocab_size=600, hidden=32, layers=1, heads=2, intermediate=64, eval_pairs=8,
                    batch_pairs=4)


@pytest.fixture(scope="module")
def short_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo-model-short")
    settings = replace(variant_settings("short", TINY), max_steps=4)
    build_demo_model(out, settings)
    return out


@pytest.fixture
def small_grid(monkeypatch):
    monkeypatch.setattr(needle_seed, "SEED_LENGTHS", (250, 500))
    monkeypatch.setattr(needle_seed, "SEED_HAYSTACKS", 2)


@pytest.mark.slow
def test_the_short_variant_is_trained_on_short_texts_and_says_so(short_model):
    settings = variant_settings("short")
    assert settings.max_tokens <= 96 and settings.variant == "short"
    assert variant_settings("") == DemoSettings()
    with pytest.raises(ValueError, match="unknown demo variant"):
        variant_settings("long")
    report = read_report(short_model)
    assert report["variant"] == "short" and report["limitation"] == VARIANTS["short"]["limitation"]
    assert report["settings"]["max_tokens"] == settings.max_tokens


@pytest.mark.slow
def test_seeding_scores_the_demo_needles_once(tmp_path, short_model, small_grid):
    db = store.connect(tmp_path / "s.db")
    outcome = needle_seed.seed_demo_needles(db, short_model)
    assert outcome.status == "seeded" and outcome.records > 0 and outcome.scored == outcome.records
    row = get_dataset(db, needle_seed.DEMO_NEEDLES)
    assert row["kind"] == "needle" and row["created_by"] == "demo" and row["items"] == outcome.records
    note = needle_seed.demo_note(row["meta"])
    assert note["limitation"] == VARIANTS["short"]["limitation"] and note["lengths"] == [250, 500]
    assert note["model"] == short_model.name and note["pairs"] == outcome.records
    [run] = scored_models(db, needle_seed.DEMO_NEEDLES)
    assert run["items"] == outcome.records
    records = [i["record"] for i in iter_items(db, needle_seed.DEMO_NEEDLES)]
    frame = stored_results(db, needle_seed.DEMO_NEEDLES, records, run["fingerprint"], run["variant"])
    assert len(frame) == len(records) and set(frame["length_tokens"]) == {250, 500}
    # Again: kept as it is, nothing scored, the model not even loaded.
    again = needle_seed.seed_demo_needles(db, short_model)
    assert again.status == "kept" and again.scored == 0
    assert scored_models(db, needle_seed.DEMO_NEEDLES) == [run]


@pytest.mark.slow
def test_seeding_leaves_a_set_it_did_not_make_and_refuses_a_folder_without_a_demo_model(
        tmp_path, short_model, small_grid):
    db = store.connect(tmp_path / "s.db")
    create_dataset(db, needle_seed.DEMO_NEEDLES, "needle", "needle", [], created_by="ana")
    outcome = needle_seed.seed_demo_needles(db, short_model)
    assert outcome.status == "skipped" and "not made by the demo" in outcome.reason
    assert scored_models(db, needle_seed.DEMO_NEEDLES) == []
    with pytest.raises(ValueError, match="no demo model here"):
        needle_seed.seed_demo_needles(db, tmp_path)
    done = subprocess.run([sys.executable, "-m", "needlework", "needle", "seed-demo", "--model",
                           str(tmp_path / "nothing"), "--db", str(tmp_path / "s.db")],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 1 and "error:" in done.stderr and "no demo model here" in done.stderr


@pytest.mark.slow
def test_the_lab_opens_with_the_demo_result(tmp_path, monkeypatch, short_model, small_grid):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    create_dataset(db, "a-grounding-set", "grounding", "garage", [], created_by="ana")
    needle_seed.seed_demo_needles(db, short_model)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["dataset"] = "a-grounding-set"  # not a needle set
    at.run()
    at.switch_page("app_pages/needle.py")
    at.run()
    assert not at.exception, at.exception
    info = " ".join(i.value for i in at.info).replace("\\", "")
    assert "the lab shows the demo needle set demo-needles" in info
    assert "Demo result." in info and VARIANTS["short"]["limitation"] in info
    heat = [c for c in charts(at) if (c.key or "").startswith("nw_heat|")]
    assert [c.key for c in heat] == [f"nw_heat|{short_model.name}"]
    at.button(key="nw_demo_select").click().run()
    assert at.session_state["dataset"] == needle_seed.DEMO_NEEDLES
