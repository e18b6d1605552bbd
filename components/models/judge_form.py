"""The judge connection's two forms, drawn by :func:`components.models.judge.render_connection`:
a reviewer's (:func:`picker_form`: a named connection or a judge this server runs, and the
generation numbers) and an admin's or local user's (:func:`full_form`: endpoint, model, where
the key comes from, the numbers, prices). Every widget keeps its value for the session
(:func:`kept`), under the key :func:`form_key` names.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

import streamlit as st

from components.teams.session import team_config
from needlework.judge_settings import NamedJudge
from needlework.judges.connection import (
    DEFAULT_MAX_TOKENS,
    LIMITS,
    REASONING_EFFORTS,
    REASONING_MAX_TOKENS,
)
from needlework.judges.local import LOCAL
from needlework.rag.rules_server import RULES

KEY_SOURCES = {
    "none": "No key (local servers: the demo judge, vLLM, Ollama)",
    "env": "An environment variable of this server",
    "secrets": "A Streamlit secret (.streamlit/secrets.toml)",
}
#: reasoning_effort choices ("": not sent)
EFFORTS = {"": "not sent (the model's default)", **{e: e for e in REASONING_EFFORTS}}
#: how the answer's length limit is named in the request (OpenAI's reasoning models refuse
#: max_tokens)
TOKEN_PARAMS = {"auto": "auto (max_tokens, or max_completion_tokens once refused)",
                "max_tokens": "max_tokens", "max_completion_tokens": "max_completion_tokens"}
# What a reviewer may pick besides the admin's named connections: the judges this server runs.
DEMO_CHOICE, RULES_CHOICE = "Demo judge (this server)", "Rules judge (this server)"
REAL_ENDPOINTS = """\
| server | base URL | model | API key |
|---|---|---|---|
| OpenAI | `https://api.openai.com/v1` | e.g. `gpt-4o-mini` | environment variable `OPENAI_API_KEY` (set before starting the app), or a Streamlit secret |
| vLLM (`vllm serve MODEL --port 8000`) | `http://127.0.0.1:8000/v1` | the served name (`MODEL`) | none, or the `--api-key` you set |
| Ollama | `http://127.0.0.1:11434/v1` | as in `ollama list`, e.g. `llama3.1:8b` | none |
| any folder (`python -m needlework serve-judge --folder DIR`) | the URL it prints | the folder's absolute path | none |
"""


class Kept(TypedDict):
    """The keyword arguments :func:`kept` gives a widget."""

    key: str
    persist_state: Literal["session"]


def form_key(name: str) -> str:
    return f"jd_{name}"


def kept(name: str) -> Kept:
    """A form widget's key, its value kept for the whole session: on every page that draws
    the form, and when the user comes back from a page that does not (without it,
    Streamlit drops a widget's state on such a page and, for a value the page once set
    itself, such as the demo judge's settings, brings that value back instead of the
    user's last edit)."""
    return {"key": form_key(name), "persist_state": "session"}


def named_judges() -> tuple[NamedJudge, ...]:
    """The admin's named judge connections (needlework.toml ``[judges.NAME]``)."""
    return team_config().judges


def picker_form(v: dict[str, Any], rules: bool) -> None:
    """A reviewer's form: a named connection (or a judge this server runs) and the
    generation numbers, held to the connection's limits."""
    judges = {j.name: j for j in named_judges()}
    options = list(judges)
    if LOCAL.running() is not None:
        options.append(DEMO_CHOICE)
    if rules and RULES.running() is not None:
        options.append(RULES_CHOICE)
    if not options:
        st.info("No judge connection is set up yet: an admin adds one to needlework.toml "
                "([judges.NAME]: base URL, model, where the key is read). The demo judge "
                "above works without one.", icon=":material/info:")
        return
    chosen = v["named"] if v["named"] in options else options[0]
    st.selectbox("Connection", options, index=options.index(chosen), **kept("named"),
                 format_func=lambda n: judges[n].describe() if n in judges else n,
                 help="Set up by an admin: where the judge is and where its key is read.")
    cols = st.columns(4)
    cols[0].number_input("Temperature", *_bounds("temperature", float), float(v["temperature"]),
                         step=0.1, **kept("temperature"))
    cols[1].number_input("Max tokens", *_bounds("max_tokens", int), int(v["max_tokens"]), step=64,
                         **kept("max_tokens"), help="Held to the connection's limit.")
    cols[2].number_input("Timeout (s)", *_bounds("timeout", float), float(v["timeout"]),
                         step=10.0, **kept("timeout"))
    cols[3].number_input("Concurrency", *_bounds("concurrency", int), int(v["concurrency"]),
                         **kept("concurrency"),
                         help="Requests in flight at once; held to the connection's limit.")
    st.caption("Only an admin sets where a judge is and where its key is read.")


def full_form(v: dict[str, Any]) -> None:
    """The whole form: base URL, model, key source and generation settings (local mode and
    admins)."""
    cols = st.columns([3, 3])
    cols[0].text_input("Base URL", value=v["base_url"], **kept("base_url"),
                       placeholder="http://127.0.0.1:8000/v1 or https://api.openai.com/v1")
    cols[1].text_input("Model", value=v["model"], **kept("model"), placeholder="gpt-4o-mini")
    cols = st.columns([3, 3])
    source = cols[0].selectbox("API key", list(KEY_SOURCES), **kept("key_from"),
                               index=list(KEY_SOURCES).index(v["key_from"]),
                               format_func=KEY_SOURCES.__getitem__,
                               help="The key itself is never typed here, stored, logged or "
                                    "shown: only where to read it.")
    if source == "env":
        cols[1].text_input("Environment variable", value=v["key_env"], **kept("key_env"))
    elif source == "secrets":
        cols[1].text_input("Secret name", value=v["secret"], **kept("secret"))
    nums = st.columns(5)
    nums[0].number_input("Temperature", *_bounds("temperature", float), float(v["temperature"]),
                         step=0.1, **kept("temperature"))
    nums[1].number_input("Max tokens", *_bounds("max_tokens", int), int(v["max_tokens"]), step=64,
                         **kept("max_tokens"),
                         help="The longest answer; also kept free in the context window, so it "
                              "must be below the window.")
    nums[2].number_input("Timeout (s)", *_bounds("timeout", float), float(v["timeout"]),
                         step=10.0, **kept("timeout"))
    nums[3].number_input("Concurrency", *_bounds("concurrency", int), int(v["concurrency"]),
                         **kept("concurrency"), help="Requests in flight at once.")
    nums[4].number_input("Context window", *_bounds("context_window", int), int(v["window"]),
                         step=1024, **kept("window"),
                         help="The judge's window in tokens (0: unknown, not checked). "
                              "Filled in for the demo judge from its report.")
    cols = st.columns([3, 3])
    cols[0].selectbox("Length limit sent as", list(TOKEN_PARAMS), **kept("token_param"),
                      index=list(TOKEN_PARAMS).index(v["token_param"]),
                      format_func=TOKEN_PARAMS.__getitem__,
                      help="OpenAI's reasoning models (o1, o3, gpt-5) take max_completion_tokens "
                           "and refuse max_tokens; auto switches on the first refusal.")
    cols[1].checkbox("Structured output (JSON schema)", value=bool(v["structured"]),
                     **kept("structured"),
                     help="Send each prompt's answer schema as response_format (OpenAI, vLLM, "
                          "Ollama). An endpoint that refuses it is asked in words. Its answers "
                          "are cached apart from plain ones.")
    cols = st.columns([3, 3])
    cols[0].selectbox("Reasoning effort", list(EFFORTS), **kept("reasoning_effort"),
                      index=list(EFFORTS).index(v.get("reasoning_effort") or ""),
                      format_func=EFFORTS.__getitem__,
                      help="Sent as reasoning_effort (OpenAI's reasoning models, gpt-5, o-series) "
                           f"only when chosen; with it, Max tokens left at {DEFAULT_MAX_TOKENS} "
                           f"becomes {REASONING_MAX_TOKENS} (the reasoning counts against the "
                           "limit). A parameter the endpoint refuses (this one, or Temperature "
                           "on a reasoning model) is left to its default, and the run says so.")
    cols = st.columns([3, 3])
    cols[0].number_input("Price per million input tokens", 0.0, 1e6, float(v["input_price"]),
                         step=0.05, format="%.4f", **kept("input_price"),
                         help="Optional (0: not set). With a price, each run says what it will "
                              "cost before it starts and what it cost after. Never part of a "
                              "cache key.")
    cols[1].number_input("Price per million output tokens", 0.0, 1e6, float(v["output_price"]),
                         step=0.05, format="%.4f", **kept("output_price"),
                         help="Optional (0: not set): completion tokens, reasoning included.")
    with st.popover("Use a real judge instead", icon="🌐"):
        st.markdown(REAL_ENDPOINTS)
        st.caption("Keys: set the variable in the shell that starts the app (`export "
                   "OPENAI_API_KEY=…` then `make run`), or put it in `.streamlit/secrets.toml` "
                   "and name it here. The page never asks for the key itself.")


def _bounds(name: str, kind: type) -> tuple[Any, Any]:
    """A number input's lowest and highest value: the connection's limits (the command
    line refuses the same)."""
    low, high = LIMITS[name]
    return kind(low), kind(high)
