"""The model registry (needlework.rewards.registry): one load per key shared by every
caller, unload, the memory each model holds, the newest model's token counter; and the
module stays light (no torch until a model is loaded)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from needlework.rewards.loading import load_reward_model
from needlework.rewards.registry import ModelKey, ModelRegistry, newest_token_counter
from tests.conftest import ROOT
from tests.rewards_fixtures import tiny_model_dir  # noqa: F401


def test_one_key_is_loaded_once_and_shared(tiny_model_dir):  # noqa: F811
    registry = ModelRegistry()
    calls = []

    def loader(name, **options):
        calls.append((name, options))
        return load_reward_model(name, **options)

    key = ModelKey.of(str(tiny_model_dir), "fp32", "cpu")
    got = []
    threads = [threading.Thread(target=lambda: got.append(registry.load(key, loader)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(calls) == 1 and calls[0][1] == {"dtype": "fp32", "device": "cpu",
                                                "attn_implementation": None,
                                                "trust_remote_code": False}
    assert len(got) == 3 and got[0] is got[1] is got[2] is registry.get(key)
    assert [k for k, _ in registry.loaded()] == [key]


@pytest.mark.slow
def test_memory_counts_parameters_and_buffers_and_unload_frees(tiny_model_dir):  # noqa: F811
    registry = ModelRegistry()
    key = ModelKey.of(str(tiny_model_dir), "fp32", "cpu")
    rm = registry.load(key)
    expected = sum(t.numel() * t.element_size()
                   for t in [*rm.model.parameters(), *rm.model.buffers()])
    assert registry.memory() == {key: expected} and expected >= 4 * rm.facts.parameters
    assert registry.unload(key) and registry.get(key) is None and registry.memory() == {}
    assert not registry.unload(key)


def test_the_newest_models_tokenizer_counts_tokens(tiny_model_dir):  # noqa: F811
    registry = ModelRegistry()
    assert newest_token_counter(registry) == (None, "model")
    rm = registry.load(ModelKey.of(str(tiny_model_dir), "fp32", "cpu"))
    count, name = newest_token_counter(registry)
    assert name == rm.facts.name
    assert count("hello world") == len(rm.tokenizer.encode("hello world", add_special_tokens=False))


def test_the_registry_imports_no_torch():
    code = ("import sys; from needlework.rewards.registry import MODELS, newest_token_counter; "
            "newest_token_counter(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
