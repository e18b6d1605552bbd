"""A broken model folder ends in one line that says what to do, never a traceback: a
config.json that is not JSON, a truncated weights file, a checkpoint that ships its own
code (trust_remote_code off)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.rewards_fixtures import save_tiny_model


@pytest.fixture
def model(tmp_path) -> Path:
    folder = tmp_path / "rm"
    save_tiny_model(folder)
    return folder


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "needlework", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.slow
def test_config_that_is_not_json(model):
    (model / "config.json").write_text('{"model_type": "llama",\n  oops}', encoding="utf-8")
    line = one_line_error(run("model-info", "--model", str(model)))
    assert "config.json: not valid JSON (line 2, column 3)" in line and "fetch it again" in line


@pytest.mark.slow
def test_truncated_weights(model):
    weights = next(model.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:100])
    line = one_line_error(run("model-info", "--model", str(model)))
    assert "the weights could not be loaded" in line and "truncated or corrupt" in line


@pytest.mark.slow
def test_custom_code_checkpoint_without_trust_remote_code(model):
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    config.update(model_type="my-custom-rm", architectures=["MyCustomForSequenceClassification"],
                  auto_map={"AutoConfig": "configuration_my.MyConfig",
                            "AutoModelForSequenceClassification":
                            "modeling_my.MyCustomForSequenceClassification"})
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (model / "configuration_my.py").write_text(
        "from transformers import PretrainedConfig\n\n\nclass MyConfig(PretrainedConfig):\n"
        "    model_type = 'my-custom-rm'\n", encoding="utf-8")
    line = one_line_error(run("model-info", "--model", str(model)))
    assert "ships its own Python code" in line and "--trust-remote-code" in line


@pytest.mark.slow
def test_an_unexpected_error_is_one_line_too(tmp_path):
    folder = tmp_path / "rm"
    shutil.rmtree(folder, ignore_errors=True)
    done = run("metrics", "--kind", "bon", "--scores", str(tmp_path))  # a folder, not a file
    one_line_error(done)
