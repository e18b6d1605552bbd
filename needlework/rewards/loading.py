"""Loading scalar reward models (``AutoModelForSequenceClassification``, one label).

A small registry maps checkpoints to loader functions (like reward-bench's model
config table); the default loader serves every standard sequence classifier.
Problems raise one exception class per case (see :mod:`needlework.rewards.errors`);
checking a model folder, its config and its fingerprint is :mod:`needlework.rewards.model_files`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from needlework.rewards import errors
from needlework.rewards.model_files import (
    check_config,
    check_model_folder,
    fingerprint,
    first_line,
    needs_remote_code,
    read_config,
    remote_code_error,
    resolve_folder,
)
from needlework.rewards.pooling import Pooling, probe_pooling
from needlework.rewards.templates import has_chat_template, render, template_id

DTYPES: dict[str, torch.dtype] = {
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp32": torch.float32,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


@dataclass(frozen=True)
class LoadOptions:
    """How to load: dtype (auto/bf16/fp16/fp32), device (auto/cuda/mps/cpu), attention."""

    dtype: str = "auto"
    device: str = "auto"
    attn_implementation: str | None = None
    trust_remote_code: bool = False


@dataclass
class ModelFacts:
    """What the app shows about a loaded model; ``fingerprint`` keys the score cache."""

    name: str
    architecture: str
    model_type: str
    parameters: int
    dtype: str
    device: str
    context_length: int | None
    template_id: str
    template_fallback: bool
    fingerprint: str
    pad_is_eos: bool = False
    causal: bool = False
    pad_id: int | None = None  # config.pad_token_id as shipped: the id the model's pooling skips
    scoring_path: str = "forward"  # pooling.GATHER / FORWARD / SINGLE
    per_token_method: str = "prefix"  # pooling.HEAD (one pass) or PREFIX (one pass per prefix)
    per_token_reason: str = ""
    trust_remote_code: bool = False
    demo: bool = False
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The facts as a JSON-ready dict."""
        return asdict(self)


@dataclass
class RewardModel:
    """A loaded reward model: the torch module, its tokenizer and its facts."""

    model: Any
    tokenizer: Any
    facts: ModelFacts
    pooling: Pooling

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device


Loader = Callable[[str, LoadOptions, torch.dtype, str], Any]


@dataclass(frozen=True)
class LoaderSpec:
    """A registered loader: ``matches(config)`` selects it, ``load`` builds the module."""

    name: str
    matches: Callable[[Any], bool]
    load: Loader


LOADERS: list[LoaderSpec] = []


def register_loader(name: str, matches: Callable[[Any], bool]) -> Callable[[Loader], Loader]:
    """Decorator: register ``load(path, options, dtype, device)`` for matching configs.

    Later registrations take precedence; the ``default`` loader matches everything.
    """

    def wrap(load: Loader) -> Loader:
        LOADERS.insert(0, LoaderSpec(name, matches, load))
        return load

    return wrap


def loader_for(config: Any) -> LoaderSpec:
    """The first registered loader whose ``matches(config)`` is true."""
    for spec in LOADERS:
        if spec.matches(config):
            return spec
    raise LookupError("no loader registered")  # pragma: no cover - default matches all


@register_loader("default", lambda config: True)
def _load_default(path: str, options: LoadOptions, dtype: torch.dtype, device: str) -> Any:
    kwargs: dict[str, Any] = {"dtype": dtype, "trust_remote_code": options.trust_remote_code}
    if options.attn_implementation:
        kwargs["attn_implementation"] = options.attn_implementation
    model, info = AutoModelForSequenceClassification.from_pretrained(
        path, output_loading_info=True, **kwargs
    )
    missing = [k for k in info.get("missing_keys", []) if re.search(r"(^|\.)(score|classifier)\.", k)]
    if missing:
        raise errors.NotASequenceClassifierError(
            f"{path}: the weights have no trained score head ({', '.join(sorted(missing)[:3])} "
            "would be randomly initialised), so scores would be noise. Use a reward model "
            "checkpoint trained with its head, not a base or chat model."
        )
    return model.to(device)


def resolve_device(device: str = "auto") -> str:
    """``auto`` → cuda if available, then mps, then cpu; other values pass through."""
    if device != "auto":
        return device
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def avoid_per_shape_attention_plans(device: str) -> None:
    """On CUDA, turn PyTorch's cuDNN attention backend off for this process (flash and
    memory-efficient attention stay on); elsewhere, nothing. cuDNN attention builds a plan
    for each new sequence length, and scoring meets a new length on nearly every text: on
    an H100 (torch 2.11, the demo model) a pass on a new length took 106 ms with it and
    4.6 ms without, while repeated lengths ran at about 4 ms either way."""
    if device.startswith("cuda"):
        torch.backends.cuda.enable_cudnn_sdp(False)


def cuda_summary() -> str:
    """``NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, cuDNN attention off``: the first GPU,
    the torch build and the attention setting that decide GPU timings."""
    state = "on" if torch.backends.cuda.cudnn_sdp_enabled() else "off"
    return f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuDNN attention {state}"


def resolve_dtype(dtype: str, device: str) -> torch.dtype:
    """``auto`` → bf16 on cuda (fp16 without bf16 support), fp16 on mps, fp32 on cpu."""
    if dtype != "auto":
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}: use auto, bf16, fp16 or fp32")
        return DTYPES[dtype]
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("mps"):
        return torch.float16
    return torch.float32


def context_length(config: Any, tokenizer: Any) -> int | None:
    """The model's window: the smallest of the config's position limit and the tokenizer's."""
    limits = [getattr(config, a, None) for a in ("max_position_embeddings", "n_positions",
                                                    "max_sequence_length", "seq_length")]
    limits.append(getattr(tokenizer, "model_max_length", None))
    known = [int(x) for x in limits if isinstance(x, int) and 0 < x < 10_000_000]
    return min(known) if known else None


def probe_causal(model: Any) -> bool:
    """Whether the model's output at a position ignores every later token (a decoder).

    One tiny forward pass on 12 and on the first 8 of the same tokens: position 7's last
    hidden state must not change. For such a model the tokens of a right-padded row never
    see the padding, so a batch needs no attention mask, and without one PyTorch's
    scaled-dot-product attention takes its causal kernel instead of a masked one (on a CPU
    about 2.5× faster on two 8K-token rows). Encoders (BERT-style) return False and keep
    the mask; so does any model the probe cannot run.
    """
    vocab = int(getattr(model.config, "vocab_size", 0) or 0)
    if vocab < 16:
        return False
    device = next(model.parameters()).device
    ids = (torch.arange(12, device=device) * 7 % (vocab - 2) + 1).unsqueeze(0)
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)

    def last_state(x: torch.Tensor) -> torch.Tensor:
        if isinstance(base, torch.nn.Module):  # the transformer itself, whatever the head does
            return base(input_ids=x).last_hidden_state[0, 7]
        return model(input_ids=x, output_hidden_states=True).hidden_states[-1][0, 7]

    try:
        with torch.inference_mode():
            short, full = last_state(ids[:, :8]), last_state(ids)
    except Exception:  # a model without hidden states or with input rules of its own
        return False
    half = next(model.parameters()).dtype in (torch.float16, torch.bfloat16)
    tol = 5e-2 if half else 1e-3
    return bool(torch.allclose(short.float(), full.float(), atol=tol, rtol=tol))


PROBE_TURNS = (
    ("Is this answer grounded?", "Yes: every claim cites a passage."),
    ("Summarise the passage in two sentences, please.",
     "The passage describes how a reward model scores a long answer, token by token, and why "
     "the position of an error matters. It ends with a short list of checks."),
)


def probe_rows(tokenizer: Any) -> list[list[int]]:
    """Token ids of two short conversations of different lengths, rendered and tokenized as
    the scorer does (with the template's own ending, e.g. a final EOS)."""
    rows = []
    for prompt, response in PROBE_TURNS:
        shown = render(tokenizer, prompt, response, locate=False)
        rows.append(list(tokenizer(shown.text, add_special_tokens=shown.add_special_tokens,
                                   verbose=False)["input_ids"]))
    return rows


def pooling_note(pooling: Pooling, causal: bool) -> str:
    """One line for the model facts: how batches are scored and per-token rewards read."""
    pad = ("no pad id in its config: it reads the final token" if pooling.pad_id is None
           else f"it reads the last token that is not its config's pad id {pooling.pad_id}")
    how = {"gather": "batches run its base model right-padded"
                     + (" without an attention mask (causal, checked)" if causal else "")
                     + ", and its head is read at the token it pools",
           "forward": f"batches run its own forward with an attention mask, padded with id {pooling.fill_id}",
           "single": "texts are scored one at a time (its own forward, unpadded)"}[pooling.path]
    return f"pooling: {pad}; {how}. Per-token: {pooling.reason}."


def load_reward_model(
    name_or_path: str | Path,
    *,
    dtype: str = "auto",
    device: str = "auto",
    attn_implementation: str | None = None,
    trust_remote_code: bool = False,
) -> RewardModel:
    """Load a scalar reward model from a local folder or a hub id, checked and ready to score."""
    name = str(name_or_path)
    options = LoadOptions(dtype, device, attn_implementation, trust_remote_code)
    if trust_remote_code:
        warnings.warn(
            f"trust_remote_code is on for {name}: Python code shipped with the model will run "
            "on this machine. Only do this for models you trust.",
            UserWarning,
            stacklevel=2,
        )
    folder, config, tokenizer = _checked(name, trust_remote_code)
    device_name = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, device_name)
    avoid_per_shape_attention_plans(device_name)
    model = _weights(name, folder, config, options, torch_dtype, device_name)
    model.eval()
    return _probed(name, folder, config, model, tokenizer, torch_dtype, device_name,
                   trust_remote_code)


def _checked(name: str, trust_remote_code: bool) -> tuple[Path, Any, Any]:
    """``(folder, config, tokenizer)``, each checked before any weight is read."""
    folder = resolve_folder(name, trust_remote_code)
    check_model_folder(folder)
    config = read_config(folder, name, trust_remote_code)
    check_config(config, name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=trust_remote_code)
    except Exception as exc:
        raise errors.MissingTokenizerError(
            f"{name}: the tokenizer could not be loaded ({type(exc).__name__}: {exc}). "
            "Save a complete tokenizer next to the model (tokenizer.save_pretrained(folder))."
        ) from None
    return folder, config, tokenizer


def _weights(name: str, folder: Path, config: Any, options: LoadOptions,
             torch_dtype: torch.dtype, device_name: str) -> Any:
    """The model with its weights, by its architecture's loader; a failure as a
    :class:`~needlework.rewards.errors.RewardModelError` that says what to do."""
    spec = loader_for(config)
    try:
        return spec.load(str(folder), options, torch_dtype, device_name)
    except errors.RewardModelError:
        raise
    except Exception as exc:
        if errors.is_oom(exc):
            raise errors.oom_error(f"loading {name} ({DTYPE_NAMES.get(torch_dtype)} on {device_name})",
                                   exc) from None
        if needs_remote_code(exc):
            raise remote_code_error(name) from None
        raise errors.BadCheckpointError(
            f"{name}: the weights could not be loaded ({type(exc).__name__}: {first_line(exc)}). "
            "A weight file may be truncated or corrupt: fetch it again (compare its size with "
            "the source), or save the model again with save_pretrained."
        ) from None


def _probed(name: str, folder: Path, config: Any, model: Any, tokenizer: Any,
            torch_dtype: torch.dtype, device_name: str, trust_remote_code: bool) -> RewardModel:
    """The loaded model with its pooling probed and its :class:`ModelFacts` recorded."""
    notes: list[str] = []
    pad_is_eos = False
    if tokenizer.pad_token_id is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token  # for tokenizer calls only: batches are padded
        pad_is_eos = True                          # with the id the model's pooling skips
    if not has_chat_template(tokenizer):
        notes.append("no chat template: using the fallback 'User: ...\\n\\nAssistant: ...'")
    causal = probe_causal(model)
    pooling = probe_pooling(model, tokenizer, probe_rows(tokenizer), causal)
    notes.append(pooling_note(pooling, causal))
    facts = ModelFacts(
        name=name,
        architecture=type(model).__name__,
        model_type=str(getattr(config, "model_type", "")),
        parameters=sum(p.numel() for p in model.parameters()),
        dtype=DTYPE_NAMES.get(next(model.parameters()).dtype, str(torch_dtype)),
        device=device_name,
        context_length=context_length(config, tokenizer),
        template_id=template_id(tokenizer),
        template_fallback=not has_chat_template(tokenizer),
        fingerprint=fingerprint(folder, template_id(tokenizer)),
        pad_is_eos=pad_is_eos,
        causal=causal,
        pad_id=pooling.pad_id,
        scoring_path=pooling.path,
        per_token_method=pooling.per_token,
        per_token_reason=pooling.reason,
        trust_remote_code=trust_remote_code,
        demo=bool(getattr(config, "needlework_demo", False)),
        notes=notes,
    )
    return RewardModel(model, tokenizer, facts, pooling)
