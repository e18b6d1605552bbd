"""A reward model's folder before it is loaded: its files, its config and its fingerprint.

A local folder is used as it is; a hub id is fetched as a snapshot (or found in the
Hugging Face cache). The checks name what is missing or wrong in one sentence that
says what to do (:mod:`needlework.rewards.errors`); :func:`fingerprint` is the identity
that keys the score cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from huggingface_hub import snapshot_download
from transformers import AutoConfig
from transformers.models.auto.modeling_auto import MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES

from needlework.rewards import errors

WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json",
                   "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json",
                   "vocab.txt", "spiece.model", "sentencepiece.bpe.model")


def _files(folder: Path, patterns: tuple[str, ...]) -> list[Path]:
    found: set[Path] = set()
    for pattern in patterns:
        found.update(p for p in folder.glob(pattern) if p.is_file())
    return sorted(found)


def check_model_folder(folder: Path) -> None:
    """Raise the matching ``Missing*Error`` when config, weights or tokenizer are absent
    (and :class:`errors.BadConfigError` when ``config.json`` is not JSON)."""
    if not (folder / "config.json").is_file():
        raise errors.MissingConfigError(
            f"{folder}: no config.json. Point --model at the folder that holds config.json, "
            "the weights and the tokenizer (e.g. a snapshot saved with save_pretrained)."
        )
    read_config_json(folder)
    if not _files(folder, WEIGHT_PATTERNS):
        raise errors.MissingWeightsError(
            f"{folder}: no weights (*.safetensors or pytorch_model*.bin). The download may be "
            "incomplete: fetch the weight files again, or save the model with save_pretrained."
        )
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise errors.MissingTokenizerError(
            f"{folder}: no tokenizer files (tokenizer.json / tokenizer_config.json / vocab). "
            "Save the tokenizer next to the model (tokenizer.save_pretrained(folder))."
        )


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (at most 300 characters)."""
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else ""


def needs_remote_code(exc: BaseException) -> bool:
    """True when transformers refused because the model ships its own code."""
    return "trust_remote_code" in str(exc)


def remote_code_error(name: str) -> errors.RemoteCodeRequiredError:
    """The one error for a model that needs ``trust_remote_code``."""
    return errors.RemoteCodeRequiredError(
        f"{name} ships its own Python code (its config names classes that transformers does not "
        "have). Loading it runs that code on this machine: if you trust the model, pass "
        "--trust-remote-code (in the app: the remote-code box, offered only when the server "
        "listens on 127.0.0.1)."
    )


def read_config_json(folder: Path) -> dict[str, Any]:
    """``config.json`` parsed, or :class:`errors.BadConfigError` naming where it breaks."""
    path = folder / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = (f" (line {exc.lineno}, column {exc.colno})"
                 if isinstance(exc, json.JSONDecodeError) else "")
        raise errors.BadConfigError(
            f"{path}: not valid JSON{where}: {first_line(exc)}. The file is damaged or was "
            "edited by hand: fetch it again with the model, or fix it."
        ) from None
    if not isinstance(data, dict):
        raise errors.BadConfigError(f"{path}: expected a JSON object, found {type(data).__name__}.")
    return data


def read_config(folder: Path, name: str, trust_remote_code: bool = False) -> Any:
    """The model's config, or one error that says what is wrong with ``config.json``."""
    path = folder / "config.json"
    read_config_json(folder)
    try:
        return AutoConfig.from_pretrained(folder, trust_remote_code=trust_remote_code)
    except Exception as exc:  # unknown model type, remote code, bad values
        if needs_remote_code(exc):
            raise remote_code_error(name) from None
        raise errors.BadConfigError(
            f"{path}: transformers cannot read this config ({type(exc).__name__}: "
            f"{first_line(exc)}). Check model_type and architectures, or use a newer "
            "transformers if the model type is recent."
        ) from None


def check_config(config: Any, name: str) -> None:
    """Raise unless ``config`` describes a sequence classifier with one label."""
    architectures = list(getattr(config, "architectures", None) or [])
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise errors.NotASequenceClassifierError(
            f"{name} is a {architectures[0]}, not a sequence classifier: loading it as one would "
            "add an untrained score head and give random scores. Use a reward model checkpoint "
            "(…ForSequenceClassification with one label), or score it as a generative judge."
        )
    if not architectures and config.model_type not in MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES:
        raise errors.NotASequenceClassifierError(
            f"{name}: model type {config.model_type!r} has no sequence-classification class in "
            "transformers. Use a reward model checkpoint (…ForSequenceClassification)."
        )
    if config.num_labels != 1:
        labels = ", ".join(str(v) for v in (getattr(config, "id2label", None) or {}).values())
        raise errors.WrongNumLabelsError(
            f"{name} has num_labels={config.num_labels} ({labels}); a reward model has exactly one "
            "output, the scalar score. This looks like a text classifier: pick a reward model "
            "checkpoint, or re-save this one with num_labels=1 after training a scalar head."
        )


_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: Path) -> str:
    """sha256 of a file; free for Hugging Face cache blobs (named by their sha256)."""
    real = Path(os.path.realpath(path))
    if re.fullmatch(r"[0-9a-f]{64}", real.name):
        return real.name
    stat = real.stat()
    key = (str(real), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        with open(real, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


# Files beside the weights that change what a text is turned into (tokens, template) or
# how it is scored (remote code): all of them go into the fingerprint.
FINGERPRINT_PATTERNS = TOKENIZER_FILES + (
    "special_tokens_map.json", "added_tokens.json", "merges.txt", "chat_template.jinja",
    "chat_template.json", "additional_chat_templates/*.jinja", "*.tiktoken", "*.py",
)


def fingerprint(folder: Path, template: str = "") -> str:
    """The identity of a model's scores: a hash of config.json (parsed, key-sorted), the
    weights, every tokenizer and chat-template file (name, size, sha256; see
    :data:`FINGERPRINT_PATTERNS`) and ``template``, the id of the chat template in use
    (:func:`templates.template_id`). Two folders that differ in any of them score apart;
    dtype and the window policy are in the run's variant."""
    h = hashlib.sha256()
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    h.update(json.dumps(config, sort_keys=True).encode())
    for path in _files(folder, WEIGHT_PATTERNS) + _files(folder, FINGERPRINT_PATTERNS):
        name = path.relative_to(folder).as_posix()
        h.update(f"\n{name}:{path.stat().st_size}:{file_digest(path)}".encode())
    h.update(f"\ntemplate:{template}".encode())
    return h.hexdigest()[:32]


HUB_PATTERNS = ("*.json", "*.safetensors", "*.bin", "*.model", "*.txt", "*.jinja", "*.tiktoken")


def resolve_folder(name: str, trust_remote_code: bool = False) -> Path:
    """A local folder as is; a hub id downloaded (or found in the HF cache) as a snapshot."""
    folder = Path(name).expanduser()
    if folder.is_dir():
        return folder
    if name.startswith((".", "/", "~")) or name.count("/") != 1:
        raise errors.ModelNotFoundError(
            f"{name}: no such folder. Check the path (it should hold config.json, the weights "
            "and the tokenizer), or give a hub id like org/name."
        )
    patterns = list(HUB_PATTERNS) + (["*.py"] if trust_remote_code else [])
    try:
        return Path(snapshot_download(repo_id=name, allow_patterns=patterns))
    except Exception as exc:  # offline, unknown repository, gated, HTTP errors, ...
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise errors.ModelNotFoundError(
            f"{name}: could not fetch it from the Hugging Face hub ({type(exc).__name__}: "
            f"{first}). Check the id and your network or token, or download the model "
            "elsewhere (hf download NAME --local-dir DIR) and pass the folder."
        ) from None
