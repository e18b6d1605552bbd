"""The LLM-judge connection, shared by the Reward model page and the Needle lab.

A form (base URL, model, where the API key comes from, temperature, max tokens,
timeout, concurrency, context window), **Test connection** with its one-line result,
and **Start the local demo judge** (``transformers serve`` of ``data/demo-judge`` on
127.0.0.1, labelled as a demo) with how to point at a real endpoint instead. The RAG
answers page also offers **Start the rules judge** (:mod:`needlework.rag.rules_judge`:
the RAG prompts answered by fixed word-overlap rules, labelled as not an LLM).

The API key is never in the session, the form, the database, a log or an export: the
form holds only the *name* of an environment variable or of a Streamlit secret, and
the key is read when a connection is made (:func:`connection`), into a
:class:`~needlework.judges.connection.Secret` that prints as ``***``. The form's widgets keep
their values for the whole session (``persist_state="session"``; also remembered in
:data:`SAVED`), so every page shares one connection and a visit to another page loses
nothing. The numbers are held to the connection's limits
(:data:`~needlework.judges.connection.LIMITS`, which the command line refuses too); a form
that makes no connection says why under it, and a Test connection result is shown only while
the form still describes the connection it tested.

In team mode only an admin sees that form. Reviewers pick one of the admin's named
connections (``[judges.NAME]`` in needlework.toml, :mod:`needlework.judge_settings`) or
the demo and rules judges this server runs: nothing they type decides where a request
goes or which key travels with it (:func:`connection` ignores the typed fields for them).
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

import store
from components.callbacks import uninterrupted
from components.models.judge_form import (
    DEMO_CHOICE,
    RULES_CHOICE,
    form_key,
    full_form,
    named_judges,
    picker_form,
)
from components.state import get_db, signed_in
from components.text import label
from needlework.judges import cost
from needlework.judges.client import check_connection
from needlework.judges.connection import (
    DEFAULT_CONCURRENCY,
    DEFAULT_KEY_ENV,
    DEFAULT_MAX_TOKENS,
    LIMITS,
    MAX_TOKENS_CAP,
    Connection,
    Secret,
    default_max_tokens,
    named_connection,
)
from needlework.judges.job import order_for
from needlework.judges.local import (
    DEMO_BUILD,
    DEMO_SETTINGS,
    LOCAL,
    RULES_SETTINGS,
    context_window_of,
    demo_folder,
)
from needlework.judges.plan import load_items, select_items
from needlework.judges.serve import ServerError
from needlework.rag.rules_server import RULES
from needlework.teams.permissions import can
from needlework.words import short_name
from store import judges as store_judges
from store.datasets import dataset_version

SAVED = "jd_saved"  # the form's values (never a key)
PENDING = "jd_pending"  # values to put into the widgets before they are drawn
CHECK = "jd_check"  # the last test's {"ok", "message", "for": the connection it tested}
DEFAULTS: dict[str, Any] = {
    "base_url": "", "model": "", "key_from": "none", "key_env": DEFAULT_KEY_ENV,
    "secret": "openai_api_key", "temperature": 0.0, "max_tokens": DEFAULT_MAX_TOKENS,
    "timeout": 120.0, "concurrency": DEFAULT_CONCURRENCY, "window": 0, "named": "",
    "token_param": "auto", "structured": False, "input_price": 0.0, "output_price": 0.0,
    "reasoning_effort": "",
}
LOCAL_CONCURRENCY_CAP = 4
AUTH_SECRETS = ("auth",)  # st.login's section: the OIDC client and cookie secrets
DEMO_LABEL = ("🧪 **Demo judge**: a tiny model this project trained (and ships) on "
              "synthetic safety needles. It shows the workflow; its verdicts on anything else "
              "mean little (expect many invalid answers on real preference data, and on the "
              "RAG prompts, which it was not trained on).")
RULES_LABEL = ("📏 **Rules judge, not an LLM**: answers the RAG prompts (eligibility, "
               "factuality, deflection, LLMeval) and the suggestion prompts (passage labels, "
               "dimensions) by fixed word-overlap rules, so every figure can be seen offline. "
               "A baseline: it misses paraphrase and arithmetic (the rules are in docs/rag.md "
               "and docs/suggestions.md).")


def values() -> dict[str, Any]:
    """The form's current values (widgets while drawn, else the ones remembered)."""
    saved = st.session_state.setdefault(SAVED, dict(DEFAULTS))
    for name in DEFAULTS:
        if form_key(name) in st.session_state:
            saved[name] = st.session_state[form_key(name)]
    return dict(DEFAULTS) | saved


def _seed() -> None:
    """Apply a pending change (the demo judge started) to the remembered values and to
    the widgets, before they are drawn. Widgets are otherwise drawn with the remembered
    value as their default (``value=``), so one mounted late in the browser starts from it."""
    values()  # the widgets' latest values first
    pending = st.session_state.pop(PENDING, None) or {}
    st.session_state[SAVED].update(pending)
    for name, value in pending.items():
        st.session_state[form_key(name)] = value


def _secret(name: str) -> Secret | None:
    """The Streamlit secret ``name`` as a :class:`Secret` (``None`` when absent, and for a
    section of secrets, such as st.login's ``auth``: only a plain value is a key)."""
    if name in AUTH_SECRETS:
        return None
    try:
        value = st.secrets.get(name)
    except Exception:  # no secrets file at all: Streamlit raises
        return None
    return Secret(str(value)) if isinstance(value, str | int) and value else None


def may_configure() -> bool:
    """Whether this session may type a base URL and name a key source: local mode and
    admins; reviewers pick a named connection."""
    return can(signed_in(), "configure_judges")


def _picked(v: dict[str, Any]) -> Connection:
    """The connection a reviewer picked by name, with the numbers they set held to its
    limits; the address and the key source are the admin's or this server's."""
    choice = str(v.get("named") or "")
    temperature = min(2.0, max(0.0, float(v["temperature"])))
    for server, name in ((LOCAL.running(), DEMO_CHOICE), (RULES.running(), RULES_CHOICE)):
        if choice == name:
            if server is None:
                raise ValueError(f"the {name.split(' (')[0].lower()} is not running: start it above")
            return server.connection(
                temperature=temperature,
                timeout=min(LIMITS["timeout"][1], max(1.0, float(v["timeout"]))),
                max_tokens=min(MAX_TOKENS_CAP, max(1, int(v["max_tokens"]))),
                concurrency=min(LOCAL_CONCURRENCY_CAP, max(1, int(v["concurrency"]))),
                context_window=context_window_of(server.model))
    for judge in named_judges():
        if judge.name == choice:
            return named_connection(judge, temperature=temperature,
                                    max_tokens=int(v["max_tokens"]),
                                    concurrency=int(v["concurrency"]))
    raise ValueError("pick a judge connection (an admin sets them up in needlework.toml, "
                     "[judges.NAME]), or start the demo judge")


def connection(form: dict[str, Any] | None = None) -> Connection:
    """The connection the form describes, its key read now (``ValueError`` says what is
    missing or wrong, never the key). For a reviewer in team mode: the connection picked
    by name (the typed fields are never read)."""
    v = form or values()
    if not may_configure():
        return _picked(v)
    base_url, model = str(v["base_url"]).strip(), str(v["model"]).strip()
    if not base_url or not model:
        raise ValueError("fill in the base URL and the model name (or start the demo judge)")
    key_env, key = None, None
    if v["key_from"] == "env":
        key_env = str(v["key_env"]).strip() or None
        if key_env is None:
            raise ValueError("name the environment variable that holds the key")
    elif v["key_from"] == "secrets":
        name = str(v["secret"]).strip()
        key = _secret(name)
        if key is None:
            raise ValueError(f"no Streamlit secret named {name!r} (add it to .streamlit/secrets.toml)")
    window = int(v["window"] or 0) or context_window_of(model)
    effort = str(v.get("reasoning_effort") or "") or None
    budget = int(v["max_tokens"])
    if effort and budget == DEFAULT_MAX_TOKENS:
        budget = default_max_tokens(effort)  # room for the reasoning before the answer
    return Connection(base_url, model, key_env=key_env, key=key,
                      temperature=float(v["temperature"]),
                      timeout=float(v["timeout"]), concurrency=int(v["concurrency"]),
                      context_window=window, token_param=str(v["token_param"]),
                      structured=bool(v["structured"]),
                      input_price=float(v["input_price"] or 0) or None,
                      output_price=float(v["output_price"] or 0) or None,
                      reasoning_effort=effort, max_tokens=budget)


def tested_for(conn: Connection) -> str:
    """What a Test connection result is about: the connection's description (never its
    key). A result made for another connection is not shown."""
    return json.dumps(conn.describe(), sort_keys=True)


@uninterrupted
def _test() -> None:
    """The Test connection button's callback: one line, kept for the page while the form
    describes the connection it tested."""
    try:
        conn = connection()
    except (ValueError, TypeError) as exc:
        st.session_state[CHECK] = {"ok": False, "message": str(exc), "for": None}
        return
    result = check_connection(conn)
    st.session_state[CHECK] = {"ok": result.ok, "message": result.message,
                               "for": tested_for(conn)}


def _said(message: str, ok: bool, pending: dict[str, Any]) -> None:
    """Keep ``message`` for the connection the form describes once ``pending`` is in it."""
    try:
        about = tested_for(connection({**values(), **pending}))
    except (ValueError, TypeError):
        about = None
    st.session_state[CHECK] = {"ok": ok, "message": message, "for": about}


@uninterrupted
def _start_demo() -> None:
    """Start the demo judge (once per server) and fill the form with it."""
    try:
        server = LOCAL.start()
    except ServerError as exc:
        _said(f"the demo judge did not start: {exc}", False, {})
        return
    pending = {"base_url": server.base_url, "model": server.model, "key_from": "none",
               "window": context_window_of(server.model) or 0, **DEMO_SETTINGS,
               "input_price": 0.0, "output_price": 0.0, "named": DEMO_CHOICE}
    st.session_state[PENDING] = pending
    _said(f"ok: the demo judge answers at {server.base_url}", True, pending)


@uninterrupted
def _stop_demo() -> None:
    LOCAL.stop()
    _said("the demo judge was stopped", False, {})


@uninterrupted
def _start_rules() -> None:
    """Start the rules judge (once per server) and fill the form with it."""
    server = RULES.start()
    pending = {"base_url": server.base_url, "model": server.model, "key_from": "none",
               "window": 0, **RULES_SETTINGS, "input_price": 0.0, "output_price": 0.0,
               "named": RULES_CHOICE}
    st.session_state[PENDING] = pending
    _said(f"ok: the rules judge answers at {server.base_url} (not an LLM)", True, pending)


def _rules_row(model: str) -> None:
    """The rules judge: what it is, and Start (or Use, when it already runs)."""
    running = RULES.running()
    cols = st.columns([3, 2], vertical_alignment="center")
    cols[0].markdown(RULES_LABEL)
    if running is not None and model == running.model:
        cols[1].caption(f"Rules judge in use, at `{running.base_url}`. From a terminal: "
                        "`python -m needlework serve-rules-judge`.")
        return
    cols[1].button("Use the rules judge" if running else "Start the rules judge", key="jd_rules",
                   icon="📏", type="primary", on_click=_start_rules, width="stretch",
                   help="An OpenAI-compatible endpoint on 127.0.0.1, in this server; starts at "
                        "once. Fills in the form below. From a terminal: "
                        "python -m needlework serve-rules-judge.")


def is_demo(model: str) -> bool:
    """True when ``model`` names the local demo judge's folder."""
    return bool(model) and model.rstrip("/") == str(demo_folder())


def _demo_row(model: str) -> None:
    """The demo judge: what it is, and Start (or Use, when it runs for another session)
    and Stop."""
    built = (demo_folder() / "config.json").is_file()
    running = LOCAL.running()
    cols = st.columns([3, 2], vertical_alignment="center")
    cols[0].markdown(DEMO_LABEL)
    if running is not None:
        if not is_demo(model):
            cols[1].button("Use the running demo judge", key="jd_demo", icon="🧪", type="primary",
                           on_click=_start_demo, width="stretch",
                           help="It already runs on this server: fill in the form with it.")
        cols[1].caption(f"Demo judge running at `{running.base_url}`. From a terminal: "
                        "`python -m needlework serve-judge`.")
        cols[1].button("Stop the demo judge", key="jd_stop", icon="⏹️", on_click=_stop_demo)
    elif built:
        cols[1].button("Start the local demo judge", key="jd_demo", icon="🧪", type="primary",
                       on_click=_start_demo, width="stretch",
                       help="transformers serve on 127.0.0.1 and a free port, for this server; "
                            "about 15 s. Fills in the form below. From a terminal: "
                            "python -m needlework serve-judge.")
    else:
        cols[1].caption(f"The demo judge is not installed here: `{DEMO_BUILD}` (a few seconds), "
                        "or `make run`, which installs it.")


def render_connection(expanded: bool = True, *, rules: bool = False) -> Connection | None:
    """The demo judge's row (and the rules judge's with ``rules``: the RAG prompts), the
    connection form (in an expander, folded once a model is set unless ``expanded``),
    Test connection and its one-line result; returns the connection when the form is
    complete and valid (``None`` otherwise, with the reason)."""
    _seed()
    current = values()
    v = current
    if rules:
        _rules_row(str(current["model"]))
    _demo_row(str(current["model"]))
    title = ("Judge connection · " + short_name(str(current["model"]))) if current["model"] \
        else "Judge connection"
    with st.expander(title, expanded=expanded or not current["model"], icon="🔌"):
        if may_configure():
            full_form(v)
        else:
            picker_form(v, rules)
    try:
        conn = connection()
        problem = None
    except (ValueError, TypeError) as exc:
        conn, problem = None, str(exc)
    _test_row(conn, problem, loud=bool(str(values()["model"]).strip()))
    return conn


def _test_row(conn: Connection | None, problem: str | None, *, loud: bool) -> None:
    """Test connection, its one-line result, why there is no connection yet (a warning once
    a model is named, ``loud``; a caption on an empty form), and what the connection is."""
    # the button as wide as its words (a column cut it to "Test co…" at 1024 px), the
    # one-line result beside it, taking the rest of the row
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.button("Test connection", key="jd_test", icon="📡", on_click=_test,
               disabled=conn is None, width="content",
               help=None if problem is None else f"Not yet: {problem}.")
    check = st.session_state.get(CHECK)
    if check and check.get("for") == (None if conn is None else tested_for(conn)):
        (row.success if check["ok"] else row.error)(label(check["message"], 400))
    if problem:  # why Test connection and the runs below are greyed out
        if loud:
            row.warning(label(f"No connection yet: {problem}", 300), icon="✋")
        else:
            row.caption(label(problem, 300))
    if conn is not None:
        st.caption(f"Judge {label(short_name(conn.model), 60)} at {label(conn.endpoint, 80)} · key: "
                   f"{label(conn.key_source(), 80)} · window: "
                   + (f"{conn.context_window:,} tokens" if conn.context_window else "unknown")
                   + " (longer prompts follow the policy below).")


# -- what a judge run costs ------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner="Counting the run's tokens …")
def _judge_estimate(db_path: str, dataset: str, version: str, options: dict[str, Any],
                    described: str, answers: int, prompt: str, _conn: Connection, _template: Any
                    ) -> cost.Estimate:
    """The estimate of a judge run (cached by the database, the dataset's version, the
    run's options, the connection's description, the number of cached answers and the
    template's digest, so it is counted again when any of them changes, whichever server
    process changed it)."""
    db = get_db()
    row, items = load_items(db, dataset)
    if options.get("subsets") or options.get("per_subset"):
        items = select_items(items, subsets=options.get("subsets"),
                             per_subset=options.get("per_subset"))
    return cost.estimate(db, _conn, cost.judge_requests(
        _conn, items, options["mode"], order=order_for(row["kind"], options["order"]),
        seed=int(options.get("seed") or 0), context_policy=options["context_policy"],
        template=_template))


def render_judge_estimate(db: Any, conn: Connection, dataset: str, options: dict[str, Any]
                          ) -> cost.Estimate:
    """Before a judge run: its requests, tokens and (with a price) cost, in one line."""
    template = options.get("template")
    plain = {k: v for k, v in options.items() if k != "template"}
    estimate = _judge_estimate(str(store.default_path()), dataset, dataset_version(db, dataset),
                               plain, tested_for(conn), store_judges.count_calls(db),
                               template.digest if template is not None else "", conn, template)
    st.caption(f"💰 Before judging: {label(estimate.words(), 600)}")
    return estimate


def spent_words(db: Any, run_key: str | None) -> str | None:
    """What a finished judge run spent, in one line (``None`` without a stored run)."""
    run = store_judges.get_run(db, run_key) if run_key else None
    spent = ((run or {}).get("summary") or {}).get("cost")
    return cost.Actual.from_dict(spent).words() if spent else None
