"""The shipped demo models (needlework/seeding/demo_models.py): the files in models/ match
their sums, each report passes the checks the app, the docs and the tests rely on, install copies them
into data/ all or nothing, a build that fails a check keeps nothing, and the installed models
give the same outputs whatever vector kernels PyTorch runs (ATEN_CPU_CAPABILITY stands in for
other processors)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from needlework.seeding import demo_models
from needlework.seeding.demo_models import DEMO_MODELS, Check, DemoModel, DemoModelError
from tests.conftest import ROOT


@pytest.fixture
def shipped_copy(tmp_path) -> Path:
    root = tmp_path / "models"
    shutil.copytree(demo_models.SHIPPED_DIR, root)
    return root


def test_the_shipped_files_match_their_sums() -> None:
    assert demo_models.verify() == []
    sums = demo_models.read_sums()
    for model in DEMO_MODELS:
        assert f"{model.name}/model.safetensors" in sums and f"{model.name}/config.json" in sums


@pytest.mark.parametrize("model", DEMO_MODELS, ids=lambda m: m.name)
def test_each_shipped_report_passes_its_checks(model: DemoModel) -> None:
    report = demo_models.shipped_report(model.name)
    assert report["demo"] is True and model.problems(report) == []
    assert report.get("variant", "") == model.variant


def test_the_figures_docs_quote_are_the_shipped_reports() -> None:
    """docs/rewards.md's table of the demo models: each shipped figure is its report's."""
    text = (ROOT / "docs" / "rewards.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (demo-[a-z-]+) \| ([^|]+) \| ([0-9.]+) \| [^|]+ \|$", text, re.M)
    assert len(rows) == 6
    key = {"safety accuracy": "accuracy", "selection accuracy": "accuracy",
           "shown first": "accuracy_chosen_first", "shown second": "accuracy_chosen_second",
           "invalid answers": "invalid_rate"}
    for name, what, shown in rows:
        report = demo_models.shipped_report(name)
        figures = report.get("heldout_safety") or report["heldout_selection"]
        [field] = [v for k, v in key.items() if k in what]
        assert f"{figures[field]:.3f}" == shown, (name, what)


def test_a_judge_that_mostly_says_a_fails_the_checks() -> None:
    judge = demo_models.model_named("demo-judge")
    report = {"heldout_selection": {"accuracy": 0.795, "invalid_rate": 0.0,
                                    "accuracy_chosen_first": 1.0, "accuracy_chosen_second": 0.59}}
    overall, second = judge.problems(report)
    assert overall.startswith("heldout_selection.accuracy = 0.795, below the minimum 0.85")
    assert second.startswith("heldout_selection.accuracy_chosen_second = 0.59, below the minimum 0.8")
    assert judge.problems({}) and "missing from the report" in judge.problems({})[0]


def test_install_copies_then_keeps_then_replaces_a_damaged_copy(shipped_copy, tmp_path) -> None:
    dest = tmp_path / "data"
    first = demo_models.install(dest, shipped_copy)
    assert [i.status for i in first] == ["installed"] * len(DEMO_MODELS)
    assert demo_models.install(dest, shipped_copy)[0].status == "kept"
    weights = dest / "demo-judge" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-10])
    (dest / "demo-model" / "stray.txt").write_text("x")
    statuses = {i.name: i.status for i in demo_models.install(dest, shipped_copy)}
    assert statuses == {"demo-model": "replaced", "demo-model-short": "kept", "demo-judge": "replaced"}
    assert demo_models.sha256_of(weights) == demo_models.read_sums(shipped_copy)[
        "demo-judge/model.safetensors"]
    assert not (dest / "demo-model" / "stray.txt").exists()
    assert sorted(p.name for p in dest.iterdir()) == sorted(m.name for m in DEMO_MODELS)


def test_a_damaged_shipped_file_is_named_and_nothing_is_installed(shipped_copy, tmp_path) -> None:
    (shipped_copy / "demo-model-short" / "model.safetensors").write_bytes(
        b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n")
    (shipped_copy / "demo-judge" / "config.json").unlink()
    dest = tmp_path / "data"
    with pytest.raises(DemoModelError) as caught:
        demo_models.install(dest, shipped_copy)
    message = str(caught.value)
    assert "demo-model-short/model.safetensors: a Git LFS pointer" in message
    assert "demo-judge/config.json: missing" in message
    assert not dest.exists()


def test_a_malformed_sums_line_names_the_file_and_line(shipped_copy) -> None:
    path = shipped_copy / demo_models.SUMS_FILE
    lines = path.read_text().splitlines()
    lines[2] = "not a sum"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DemoModelError, match=r"SHA256SUMS, line 3: expected"):
        demo_models.verify(shipped_copy)


def test_the_cli_installs_and_verifies(tmp_path) -> None:
    from needlework.cli import main  # noqa: PLC0415

    assert main(["demo-models", "verify"]) == 0
    assert main(["demo-models", "install", "--dest", str(tmp_path)]) == 0
    assert demo_models.install(tmp_path)[0].status == "kept"


TINY = dict(vocab_size=600, hidden=32, layers=1, heads=2, intermediate=64, eval_pairs=8,
            batch_pairs=4, max_steps=3, max_positions=1024, eval_tokens=60, max_tokens=120)


@pytest.mark.slow
def test_a_build_that_fails_a_check_keeps_nothing(shipped_copy, monkeypatch) -> None:
    """Real (tiny, three-step) training runs whose report cannot pass, with two seeds: both
    are tried, and the shipped folder and its sums are left exactly as they were."""
    from needlework.rewards import demo_model  # noqa: PLC0415

    before = (shipped_copy / demo_models.SUMS_FILE).read_text()
    paragraphs = [f"Paragraph {k} of plain text about rivers, bread and chess." for k in range(30)]
    original = demo_model.build_demo_model

    def tiny(out, settings, **kw):
        return original(out, replace(settings, **TINY), texts=paragraphs, paragraphs=paragraphs, **kw)

    monkeypatch.setattr(demo_model, "build_demo_model", tiny)
    impossible = DemoModel("demo-model", "reward", "", "needlework_demo.json",
                           (Check("heldout_safety.accuracy", "min", 1.01, "cannot pass"),))
    lines: list[str] = []
    with pytest.raises(DemoModelError, match="nothing was kept: demo-model: heldout_safety.accuracy"):
        demo_models.build(shipped_copy, [impossible], seeds=2, log=lines.append)
    tried = [line for line in lines if line.startswith("building demo-model")]
    assert tried == ["building demo-model (training seed 0)", "building demo-model (training seed 1)"]
    assert (shipped_copy / demo_models.SUMS_FILE).read_text() == before
    assert demo_models.verify(shipped_copy) == []
    assert not [p for p in shipped_copy.iterdir() if p.name.startswith(".")]


def _capabilities() -> list[str | None]:
    """default and avx2 (where the processor has it), and None: the processor's own kernels."""
    found: list[str | None] = ["default"]
    if "avx2" in Path("/proc/cpuinfo").read_text():
        found.append("avx2")
    return [*found, None]


@pytest.mark.slow
def test_the_installed_models_answer_alike_on_every_kernel(demo_models_dir) -> None:
    """Each PyTorch vector code path gives the judge's very answers (all valid) and the
    reward models' scores to within 1e-4, ranking every pair the same way."""
    outputs = {}
    for capability in _capabilities():
        env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
        if capability:
            env["ATEN_CPU_CAPABILITY"] = capability
        done = subprocess.run([sys.executable, "-m", "needlework", "demo-models", "probe",
                               "--dest", str(demo_models_dir)], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=600, check=True)
        outputs[capability or "native"] = json.loads(done.stdout)
        # the judge's accuracy with the chosen shown first and second, on the lab's needles
        assert re.search(r"demo-judge on 16 pairs of the needle lab's demo set \(250–2K tokens\): "
                         r"accuracy with the chosen shown first \d+%, shown second \d+%", done.stderr)
    native = outputs["native"]
    lab = native["demo-judge"]["lab_needles"]
    assert lab["pairs"] == 16 and sorted(lab["by_length"], key=int) == ["250", "500", "1000", "2000"]
    assert {"accuracy_chosen_first", "accuracy_chosen_second"} <= set(lab)
    assert outputs["default"]["cpu_capability"] == "DEFAULT"
    if "avx2" in outputs:
        assert outputs["avx2"]["cpu_capability"] == "AVX2"
    for answers in native["demo-judge"]["answers"]:
        assert [re.fullmatch(r"\[\[[AB]\]\]", a.strip()) is not None for a in answers] == [True, True]
    for name, out in outputs.items():
        assert out["demo-judge"]["answers"] == native["demo-judge"]["answers"], name
        assert out["demo-judge"]["lab_needles"] == lab, name
        for model in ("demo-model", "demo-model-short"):
            for got, want in zip(out[model]["scores"], native[model]["scores"], strict=True):
                assert got == pytest.approx(want, abs=1e-4), (name, model)
                assert (got[0] > got[1]) == (want[0] > want[1]), (name, model)
