"""Choosing and loading a reward model; its facts.

Loaded models live in :data:`needlework.rewards.registry.MODELS` (one per path/id,
dtype, device, attention implementation and trust_remote_code) for the whole
server process: every rerun and every browser tab reuses them. The session only
remembers which one it is using (``rw_current``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label
from needlework.judges.local import INSTALL_COMMAND
from needlework.rewards.errors import RewardModelError
from needlework.rewards.loading import ModelFacts, RewardModel
from needlework.rewards.registry import MODELS, ModelKey
from needlework.teams.events import record
from needlework.teams.permissions import can, model_source_refusal, remote_code_refusal

DEMO_MODEL_PATH = "data/demo-model"
DEMO_BUILD = INSTALL_COMMAND
CURRENT = "rw_current"
DTYPES = ("auto", "bf16", "fp16", "fp32")
DEVICES = ("auto", "cuda", "mps", "cpu")
ATTENTION = ("default", "sdpa", "eager", "flash_attention_2")
HOW_TO = (
    "**A real reward model:** type a local folder that holds `config.json`, the weights "
    "(`*.safetensors` or `pytorch_model*.bin`) and the tokenizer files (what `save_pretrained` "
    "or `hf download NAME --local-dir DIR` writes), or a Hugging Face hub id where this server "
    "can reach the hub. It must be a sequence classifier with one output (a scalar reward "
    "model such as `…ForSequenceClassification`, `num_labels=1`)."
)
HOW_TO_DATA = (
    "**A real reward model:** your role loads models from the data folder only: ask an admin "
    "to put one there (a folder with `config.json`, the weights and the tokenizer files), then "
    "type its folder, e.g. `data/my-reward-model`. It must be a sequence classifier with one "
    "output (`num_labels=1`)."
)
DEMO_NOTE = (
    "**Demo model.** A tiny Llama classifier trained for a few minutes on synthetic safety "
    "needles in this project's own text: it shows the workflow, its scores mean little. "
    "Load a real reward model under **Load another model** below."
)


def current_model() -> tuple[ModelKey, RewardModel] | None:
    """The model this session uses, falling back to the one loaded last in the process."""
    key = st.session_state.get(CURRENT)
    if key is not None:
        rm = MODELS.get(key)
        if rm is not None:
            return key, rm
    loaded = MODELS.loaded()
    if loaded:
        st.session_state[CURRENT] = loaded[0][0]
        return loaded[0]
    return None


def _error(message: str) -> None:
    st.error(label(message, limit=2000), icon="🚫")


def loaded_with(fingerprint: str | None) -> tuple[ModelKey, RewardModel] | None:
    """A model loaded in this server whose weights have ``fingerprint`` (the one in use
    first), or ``None``."""
    if not fingerprint:
        return None
    current = current_model()
    if current is not None and current[1].facts.fingerprint == fingerprint:
        return current
    return next(((k, rm) for k, rm in MODELS.loaded() if rm.facts.fingerprint == fingerprint), None)


def load_model(key: ModelKey) -> RewardModel | None:
    """Load ``key`` (the role's rule on model folders checked first) and use it; says why
    not on the page and returns ``None`` when it cannot."""
    return _load(key)


def _load(key: ModelKey) -> RewardModel | None:
    if not key.name:
        _error("Type a model folder or a hub id first.")
        return None
    refusal = model_source_refusal(key.name, signed_in(), Path(DEMO_MODEL_PATH).parent)
    if refusal:
        _error(refusal)
        return None
    try:
        with st.spinner(f"Loading {label(key.name, 80)} …"):
            rm = MODELS.load(key)
    except RewardModelError as exc:
        _error(str(exc))
        return None
    except Exception as exc:  # e.g. a broken config.json or a bad attention implementation
        _error(f"{key.name} could not be loaded: {type(exc).__name__}: {exc}")
        return None
    st.session_state[CURRENT] = key
    record(get_db(), signed_in(), "model.loaded", key.name,
           after={"dtype": key.dtype, "device": key.device, "trust_remote_code": key.trust_remote_code})
    return rm


def _form(default: str | None = None) -> ModelKey:
    """The picker's fields (the folder opens with ``default``, else the demo model); returns
    the key they describe."""
    anywhere = can(signed_in(), "load_any_model")
    # the field opens with the default and then keeps what was typed (a keyed text input's
    # identity is its key). The default is the widget's own value, not one put in the
    # session state: a field first drawn inside a folded expander is mounted later, and the
    # browser shows a widget's own default there, not a value the session state set
    name = st.text_input(
        "Model folder or hub id" if anywhere else "Model folder (in the data folder)",
        value=default or DEMO_MODEL_PATH, key="rw_model",
        help=("A local folder with config.json, weights and tokenizer, or a hub id. "
              if anywhere else "A folder inside the data folder with config.json, weights "
              "and tokenizer (an admin puts models there). ")
             + (f"It opens with the model that scored the results on screen, {default}; "
                if default else "It opens with the demo model, ")
             + f"{DEMO_MODEL_PATH} is the demo model.")
    # the three choices on a row of their own: beside the folder they were cut to "a" at 1024 px
    dtype_col, device_col, attn_col = st.columns(3, vertical_alignment="bottom")
    dtype = dtype_col.selectbox("dtype", DTYPES, key="rw_dtype",
                              help="auto: bf16 on CUDA (fp16 without bf16), fp16 on MPS, fp32 on CPU")
    device = device_col.selectbox("Device", DEVICES, key="rw_device",
                               help="auto: CUDA, then MPS, then CPU")
    attn = attn_col.selectbox("Attention", ATTENTION, key="rw_attn",
                             help="attn_implementation passed to transformers; default lets it choose")
    if name.strip() in (DEMO_MODEL_PATH, str(Path(DEMO_MODEL_PATH).resolve())):
        st.caption("🧪 **Demo model** (the default): a tiny classifier this project trained on "
                   "synthetic safety needles, to try the workflow offline; its scores mean little. "
                   "For a real one, type its folder" + (" or hub id" if anywhere else "")
                   + " above.")
    refusal = remote_code_refusal(st.get_option("server.address"), signed_in())
    trust = st.checkbox("trust_remote_code", value=False, key="rw_trust", disabled=bool(refusal),
                        help=refusal or "Run Python code shipped with the model (needed by a few "
                             "custom architectures).") and not refusal
    if trust:
        st.warning("trust_remote_code is on: Python code from the model's folder or hub "
                   "repository will run on this server when it loads. Only use it for models "
                   "you trust.", icon="⚠️")
    return ModelKey.of(name, dtype, device, None if attn == "default" else attn, trust)


def _demo_hint(key: ModelKey) -> None:
    demo = Path(DEMO_MODEL_PATH)
    if key.name in (DEMO_MODEL_PATH, str(demo.resolve())) and not (demo / "config.json").is_file():
        st.info(f"The demo model is not installed here. Install the shipped demo models with "
                f"`{DEMO_BUILD}` (a few seconds; `make run` does it), then load it.",
                icon="🧪")


def code(text: str, limit: int = 160) -> str:
    """``text`` as a Markdown code span (literal inside; backticks and newlines dropped)."""
    text = " ".join(text.replace("`", "'").split())
    return f"`{text[: limit - 1] + '…' if len(text) > limit else text}`"


def render_facts(facts: ModelFacts) -> None:
    """Architecture, parameters, dtype, device, context length and the chat template used."""
    if facts.demo:
        st.info(DEMO_NOTE, icon="🧪")
    cols = st.columns(4)
    cols[0].metric("Parameters", _count(facts.parameters), help=f"{facts.parameters:,}")
    cols[1].metric("dtype", facts.dtype)
    cols[2].metric("Device", facts.device)
    cols[3].metric("Context (tokens)", f"{facts.context_length:,}" if facts.context_length else "unknown")
    if facts.template_fallback:
        template = ("none in the tokenizer: the stated fallback `User: {prompt}\\n\\nAssistant: "
                    "{response}` is used")
    else:
        template = f"the tokenizer's own ({code(facts.template_id)}): one user turn, one assistant turn"
    st.markdown(f"**Architecture** {code(facts.architecture)} ({label(facts.model_type, 40)})  \n"
                f"**Chat template** {template}  \n"
                f"**Model** {code(facts.name)} · fingerprint {code(facts.fingerprint[:12])} "
                "(keys the score cache)")
    for note in facts.notes:
        st.caption(f"Note: {label(note, 300)}")
    if facts.trust_remote_code:
        st.warning("This model was loaded with trust_remote_code.", icon="⚠️")


def _count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return str(n)


@uninterrupted
def _switch() -> None:
    pick = st.session_state.get("rw_switch")
    if pick is not None:
        st.session_state[CURRENT] = pick
    st.session_state["rw_switch"] = None


@uninterrupted
def _unload(key: ModelKey) -> None:
    MODELS.unload(key)
    st.session_state.pop(CURRENT, None)


def _loaded_row(key: ModelKey) -> None:
    """The model in use, how to unload it, and the other models this server holds."""
    others = [k for k, _ in MODELS.loaded() if k != key]
    cols = st.columns([4, 2, 1], vertical_alignment="bottom")
    options = [f"{k}={v}" for k, v in (("dtype", key.dtype), ("device", key.device),
                                        ("attention", key.attn_implementation)) if v not in (None, "auto")]
    cols[0].markdown(f"**In use:** {code(key.name, 120)}"
                     + (f" ({label(', '.join(options), 80)})" if options else "")
                     + (" · trust_remote_code" if key.trust_remote_code else ""))
    if others:
        cols[1].selectbox("Also loaded in this server", [None, *others], key="rw_switch",
                          on_change=_switch,
                          format_func=lambda k: "switch to …" if k is None else k.describe())
    cols[2].button("Unload", key="rw_unload", on_click=_unload, args=(key,),
                   help="Free this model's memory (for every session of this server).")


def render_model_picker(default: str | None = None) -> tuple[ModelKey, RewardModel] | None:
    """The model in use with its facts, and the picker (folded once a model is loaded; its
    folder opens with ``default``, e.g. the model of the run on screen, else the demo
    model); returns (key, model) or ``None``."""
    loaded = current_model()
    with st.container(border=True):
        if loaded is not None:
            _loaded_row(loaded[0])
            render_facts(loaded[1].facts)
        title = "Load a model" if loaded is None else "Load another model"
        with st.expander(title, expanded=loaded is None, icon=":material/upload:"):
            key = _form(default)
            _demo_hint(key)
            st.caption(HOW_TO if can(signed_in(), "load_any_model") else HOW_TO_DATA)
            if st.button("Load model", type="primary", key="rw_load") and _load(key) is not None:
                st.rerun()
    return loaded
