"""Loading reward models: facts, templates, and one clear error per broken folder."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from needlework.rewards import errors
from needlework.rewards.loading import (
    avoid_per_shape_attention_plans,
    load_reward_model,
    resolve_device,
    resolve_dtype,
)
from needlework.rewards.model_files import fingerprint
from needlework.rewards.templates import FALLBACK_TEMPLATE_ID, render
from tests import rewards_fixtures
from tests.rewards_fixtures import save_tiny_model

# shared fixtures (pytest finds them as module attributes)
tiny_model_dir = rewards_fixtures.tiny_model_dir
tiny_rm = rewards_fixtures.tiny_rm



def test_facts_of_a_tiny_model(tiny_rm, tiny_model_dir):
    facts = tiny_rm.facts
    assert facts.architecture == "LlamaForSequenceClassification"
    assert facts.parameters == sum(p.numel() for p in tiny_rm.model.parameters())
    assert facts.dtype == "fp32" and facts.device == "cpu"
    assert facts.context_length == 256
    assert facts.template_id.startswith("chat:") and not facts.template_fallback
    assert len(facts.fingerprint) == 32
    assert facts.fingerprint == fingerprint(tiny_model_dir, facts.template_id)
    assert json.dumps(facts.as_dict())


def test_fingerprint_changes_with_the_weights(tmp_path):
    a = save_tiny_model(tmp_path / "a", seed=0)
    b = save_tiny_model(tmp_path / "b", seed=1)
    c = tmp_path / "c"
    shutil.copytree(a, c)
    assert fingerprint(a) != fingerprint(b)
    assert fingerprint(a) == fingerprint(c)


@pytest.mark.parametrize("change", ["chat_template.jinja", "special_tokens_map.json",
                                    "added_tokens.json", "merges.txt", "modeling_custom.py",
                                    "template in use"])
def test_fingerprint_covers_every_file_that_changes_a_score(tmp_path, change):
    """Run identity (issue 10, point 5): templates, tokenizer side files and remote code."""
    a = save_tiny_model(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    if change == "template in use":
        assert fingerprint(a, "chat:1") != fingerprint(b, "chat:2")
        return
    before = fingerprint(b)
    path = b / change
    path.write_text((path.read_text() if path.exists() else "") + "\n{# another #}\n")
    assert fingerprint(b) != before


def test_runs_differing_only_in_the_chat_template_are_saved_apart(tmp_path):
    """A chat_template.jinja edit changes the rendered texts, so the run is another run."""
    import store  # noqa: PLC0415
    from needlework.rewards.runs import score_dataset  # noqa: PLC0415
    from store.datasets import NewItem, create_dataset  # noqa: PLC0415
    from store.scores import scored_models  # noqa: PLC0415

    folder = save_tiny_model(tmp_path / "rm")
    db = store.connect(tmp_path / "db.sqlite")
    record = {"id": "x", "subset": "QA", "prompt": "q?", "chosen": ["a good answer"],
              "rejected": ["a bad one", "worse", "worst"]}
    create_dataset(db, "lf", "preference", "lfrb", [NewItem("x", record, "QA", "q?")])
    before = load_reward_model(folder, dtype="fp32", device="cpu")
    first = score_dataset(db, before, "lf")
    template = (folder / "chat_template.jinja").read_text()
    (folder / "chat_template.jinja").write_text(template.replace("<|end|>", "<|end|><|end|>"))
    after = load_reward_model(folder, dtype="fp32", device="cpu")
    assert before.facts.template_id != after.facts.template_id
    second = score_dataset(db, after, "lf")
    assert first["fingerprint"] != second["fingerprint"]
    assert len(scored_models(db, "lf")) == 2


def test_chat_template_renders_user_and_assistant_turns(tiny_rm):
    shown = render(tiny_rm.tokenizer, "What is it?", "It is a needle.")
    assert shown.text == "<|bos|><|user|>\nWhat is it?<|end|>\n<|assistant|>\nIt is a needle.<|end|>"
    assert shown.text[shown.response_start:].startswith("It is a needle.")
    assert not shown.fallback and not shown.add_special_tokens


def test_fallback_template_is_used_and_reported(tmp_path):
    rm = load_reward_model(save_tiny_model(tmp_path / "m", chat_template=False), device="cpu")
    assert rm.facts.template_fallback and rm.facts.template_id == FALLBACK_TEMPLATE_ID
    assert any("fallback" in note for note in rm.facts.notes)
    shown = render(rm.tokenizer, "Q?", "A.")
    assert shown.text == "User: Q?\n\nAssistant: A." and shown.fallback
    assert shown.response_start == len("User: Q?\n\nAssistant: ")


def test_dtype_and_device_resolution():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") in ("cuda", "mps", "cpu")
    assert resolve_dtype("auto", "cpu") == torch.float32
    assert resolve_dtype("bf16", "cpu") == torch.bfloat16
    assert resolve_dtype("fp16", "cuda") == torch.float16
    with pytest.raises(ValueError, match="auto, bf16, fp16 or fp32"):
        resolve_dtype("int3", "cpu")


def test_cudnn_attention_turned_off_for_cuda_only():
    """cuDNN attention builds a plan per new sequence length (106 ms a pass on an H100):
    a model on CUDA turns it off; on other devices the flag is left alone."""
    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        avoid_per_shape_attention_plans("cpu")
        avoid_per_shape_attention_plans("mps")
        assert torch.backends.cuda.cudnn_sdp_enabled()
        avoid_per_shape_attention_plans("cuda:1")
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)


def test_bf16_load(tiny_model_dir):
    rm = load_reward_model(tiny_model_dir, dtype="bf16", device="cpu")
    assert rm.facts.dtype == "bf16"
    assert next(rm.model.parameters()).dtype == torch.bfloat16


def test_trust_remote_code_warns(tiny_model_dir):
    with pytest.warns(UserWarning, match="trust_remote_code is on"):
        rm = load_reward_model(tiny_model_dir, device="cpu", trust_remote_code=True)
    assert rm.facts.trust_remote_code


def test_attn_implementation_is_passed(tiny_model_dir):
    rm = load_reward_model(tiny_model_dir, device="cpu", attn_implementation="eager")
    assert rm.model.config._attn_implementation == "eager"


# -- one error class per broken folder ---------------------------------------------------

def test_missing_config(tmp_path, tiny_model_dir):
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "config.json").unlink()
    with pytest.raises(errors.MissingConfigError, match="no config.json. Point --model"):
        load_reward_model(folder, device="cpu")


def test_missing_weights(tmp_path, tiny_model_dir):
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "model.safetensors").unlink()
    with pytest.raises(errors.MissingWeightsError, match="no weights .* fetch the weight files"):
        load_reward_model(folder, device="cpu")


def test_missing_tokenizer(tmp_path, tiny_model_dir):
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_dir, folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                 "chat_template.jinja"):
        (folder / name).unlink(missing_ok=True)
    with pytest.raises(errors.MissingTokenizerError, match="no tokenizer files.*save_pretrained"):
        load_reward_model(folder, device="cpu")


def test_broken_tokenizer(tmp_path, tiny_model_dir):
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "tokenizer.json").write_text("{not json")
    with pytest.raises(errors.MissingTokenizerError, match="could not be loaded"):
        load_reward_model(folder, device="cpu")


def test_causal_lm_is_not_a_sequence_classifier(tmp_path):
    folder = save_tiny_model(tmp_path / "lm", causal_lm=True)
    with pytest.raises(errors.NotASequenceClassifierError,
                       match="LlamaForCausalLM, not a sequence classifier.*reward model checkpoint"):
        load_reward_model(folder, device="cpu")


def test_classifier_without_trained_head(tmp_path):
    folder = save_tiny_model(tmp_path / "lm", causal_lm=True)
    config = json.loads((folder / "config.json").read_text())
    config["architectures"] = ["LlamaForSequenceClassification"]
    config["num_labels"] = 1
    config["id2label"] = {"0": "LABEL_0"}
    config["label2id"] = {"LABEL_0": 0}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(errors.NotASequenceClassifierError, match="no trained score head"):
        load_reward_model(folder, device="cpu")


def test_two_labels_is_not_a_reward_model(tmp_path):
    folder = save_tiny_model(tmp_path / "clf", num_labels=2)
    with pytest.raises(errors.WrongNumLabelsError, match="num_labels=2 .* exactly one output"):
        load_reward_model(folder, device="cpu")


def test_unknown_path_or_hub_id(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(errors.ModelNotFoundError, match="no such folder"):
        load_reward_model(tmp_path / "nowhere", device="cpu")
    with pytest.raises(errors.ModelNotFoundError, match="hub"):
        load_reward_model("no-such-org/no-such-reward-model", device="cpu")


def test_out_of_memory_while_loading_says_what_to_try(tiny_model_dir, monkeypatch):
    from needlework.rewards import loading  # noqa: PLC0415

    def boom(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    monkeypatch.setattr(loading.AutoModelForSequenceClassification, "from_pretrained", boom)
    with pytest.raises(errors.RewardModelOOMError, match="out of memory while loading.*smaller dtype"):
        load_reward_model(tiny_model_dir, device="cpu")


def test_every_error_is_a_reward_model_error():
    for cls in (errors.MissingConfigError, errors.MissingWeightsError, errors.MissingTokenizerError,
                errors.NotASequenceClassifierError, errors.WrongNumLabelsError,
                errors.RewardModelOOMError, errors.ModelNotFoundError):
        assert issubclass(cls, errors.RewardModelError)
