"""Step 1 of the needle lab: build a needle set from haystacks and save it as a dataset.

Every field has a default that works, so a newcomer can press the primary button
straight away: the demo haystacks, safety needles and the quick preset. The build
runs in the button's callback, so the new dataset can be selected in the sidebar
picker (a widget's value can only be set before it is drawn).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from components.callbacks import uninterrupted
from components.hints import import_words
from components.models.picker import current_model
from components.state import DATASET_KEY, annotator, get_db, signed_in
from components.text import label, render_text
from needlework.datasets.transfer import import_bytes
from needlework.formats import FormatError
from needlework.needle import builder, inputs
from needlework.needle.sites import resolve_counter
from needlework.teams.permissions import PermissionDenied
from store.datasets import DatasetExists, get_dataset, list_datasets

SOURCES = {
    "demo": "Demo haystacks (built in)",
    "dataset": "Responses of a preference dataset",
    "upload": "Upload a JSONL file",
}
KIND_HELP = {
    "safety": "a harmful phrase (rejected) vs a harmless one (chosen), prefixing a paragraph",
    "factuality": "a false statement (rejected) vs the true one (chosen), as a sentence of its own",
}
PRESETS = {  # name: (label, lengths, demo haystacks)
    "quick": ("Quick demo: 1K, 2K, 4K tokens · 3 demo haystacks", (1000, 2000, 4000), 3),
    "full": ("Full grid: 1K to 8K tokens, step 1K · 10 demo haystacks", builder.DEFAULT_LENGTHS, 10),
    "custom": ("Custom lengths", builder.DEFAULT_LENGTHS, 10),
}
SITES = {"grid": "Grid of 10 positions", "paper": "Paper: n = length / 1000 sites, at random"}
BUILT = "nb_built"
DEMO_TOKENS_PER_S = 12_000  # the demo model on an idle 2-core CPU (bench_needle.py: 14,700 over 1K–8K)
ERRORS = "nb_errors"
METHOD_NOTE = {
    "estimate": "an **estimate** (one token per word or punctuation mark; tiktoken o200k_base "
                "could not be loaded here): lengths and positions are approximate",
    "o200k_base": "tiktoken o200k_base, as the paper (exact)",
}


@dataclass(frozen=True)
class BuildRequest:
    """What the form asks for (read from the session state in the button's callback)."""

    source: str
    kind: str
    lengths: tuple[int, ...]
    demo_count: int
    paper_sites: bool
    seed: int
    name: str
    replace: bool
    dataset: str | None = None
    upload: Any = None
    facts: Any = None


def parse_lengths(text: str) -> tuple[int, ...]:
    """``"1000, 2K, 4k"`` → ``(1000, 2000, 4000)``; raises ``ValueError`` on anything else."""
    values = []
    for part in text.replace(";", ",").split(","):
        part = part.strip().lower()
        if not part:
            continue
        number = float(part[:-1]) * 1000 if part.endswith("k") else float(part)
        if number <= 0 or number != int(number):
            raise ValueError(f"lengths must be positive whole token counts, not {part!r}")
        values.append(int(number))
    if not values:
        raise ValueError("give at least one length, e.g. 1000, 2000, 4000")
    return tuple(sorted(set(values)))


def default_name(db: Any, kind: str, source: str, preset: str) -> str:
    """``needles-safety-demo-quick`` (with ``-2``, ``-3`` … when taken)."""
    base = f"needles-{kind}-{source}-{preset}"
    taken = {r["name"] for r in list_datasets(db)}
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}-{k}"
    return name


def _haystacks(req: BuildRequest, db: Any, counter: Any) -> list[inputs.Haystack]:
    """The haystacks of the request's source (demo, a preference dataset, an upload)."""
    if req.source == "demo":
        return inputs.demo_haystacks(req.demo_count, max(req.lengths), counter=counter.count,
                                      seed=req.seed)
    if req.source == "dataset":
        if not req.dataset:
            raise ValueError("pick a preference dataset for the haystacks")
        return inputs.haystacks_from_dataset(db, req.dataset)
    if req.upload is None:
        raise ValueError("upload a JSONL file of {\"prompt\", \"response\"} lines first")
    return inputs.haystacks_from_bytes(req.upload.getvalue(), req.upload.name)


def build(req: BuildRequest, db: Any) -> builder.BuildResult:
    """The needle records the request asks for (raises ``FormatError`` / ``ValueError``)."""
    options = builder.BuildOptions(kind=req.kind, lengths=req.lengths, paper_sites=req.paper_sites,
                                   seed=req.seed)
    options.check()
    loaded = current_model()
    counter = (resolve_counter(loaded[1].tokenizer, loaded[1].facts.name.rsplit("/", 1)[-1])
               if loaded else resolve_counter())
    pairs = inputs.builtin_pairs(req.kind)
    if req.kind == "factuality" and req.facts is not None:
        pairs = pairs + inputs.read_facts(req.facts.getvalue(), req.facts.name)
    return builder.build_needles(_haystacks(req, db, counter), pairs, options, counter)


def _request(db: Any) -> BuildRequest:
    """The form's values, read from the session state (raises ``ValueError`` on bad lengths)."""
    s = st.session_state
    preset = s.get("nb_preset", "quick")
    lengths = parse_lengths(s.get("nb_lengths") or "") if preset == "custom" else PRESETS[preset][1]
    demo_count = int(s.get("nb_demo_count") or PRESETS[preset][2]) if preset == "custom" \
        else PRESETS[preset][2]
    kind, source = s.get("nb_kind", "safety"), s.get("nb_source", "demo")
    return BuildRequest(source=source, kind=kind, lengths=lengths, demo_count=demo_count,
                        paper_sites=s.get("nb_sites") == "paper", seed=int(s.get("nb_seed") or 0),
                        name=(s.get("nb_name") or "").strip() or default_name(db, kind, source, preset),
                        replace=bool(s.get("nb_replace")), dataset=s.get("nb_pref"),
                        upload=s.get("nb_upload"), facts=s.get("nb_facts"))


@uninterrupted
def _on_build() -> None:
    """The Build button's callback: build, import, select the new dataset in the sidebar
    (with the connection of the run that calls it)."""
    db = get_db()
    st.session_state.pop(ERRORS, None)
    started = time.perf_counter()
    try:
        req = _request(db)
        result = build(req, db)
        if not result.records:
            raise ValueError("no records: every haystack is shorter than the lengths asked for")
        import_bytes(db, result.jsonl().encode("utf-8"), f"{req.name}.jsonl", format="needle",
                     dataset=req.name, replace=req.replace, created_by=annotator() or "needle lab",
                     actor=signed_in())  # a new dataset: team mode's import permission
    except PermissionDenied as exc:
        st.session_state[ERRORS] = [str(exc)]
        return
    except FormatError as exc:
        st.session_state[ERRORS] = [str(p) for p in exc.problems[:200]]
        return
    except DatasetExists:
        st.session_state[ERRORS] = [f"A dataset named {req.name} exists: change the name or tick "
                                    "Replace."]
        return
    except (ValueError, LookupError) as exc:
        st.session_state[ERRORS] = [str(exc)]
        return
    st.session_state[DATASET_KEY] = req.name
    st.session_state[BUILT] = {"name": req.name, "summary": result.summary.as_dict(),
                               "seconds": round(time.perf_counter() - started, 1)}


def summary_frame(summary: dict[str, Any]) -> pd.DataFrame:
    """Haystacks used and skipped (too short) per target length."""
    return pd.DataFrame([{"length (tokens)": int(n), "haystacks used": used,
                          "skipped (too short)": summary["skipped"].get(n, 0)}
                         for n, used in sorted(summary["kept"].items(), key=lambda kv: int(kv[0]))])


def render_build_summary(built: dict[str, Any]) -> None:
    """The last build: records, haystacks skipped per length, how tokens were counted."""
    s = built["summary"]
    st.success(f"Built **{s['records']:,}** {s['kind']} needle records from {s['haystacks']} "
               f"haystacks in {built['seconds']} s and selected them as "
               f"**{label(built['name'], 80)}**. Next: score them (step 2).", icon="✅")
    cols = st.columns([2, 3])
    cols[0].dataframe(summary_frame(s), hide_index=True, width="stretch", key="nb_summary_table")
    method = s["token_method"]
    note = METHOD_NOTE.get(method, f"the loaded model's tokenizer ({label(method, 60)})")
    cols[1].markdown(f"**Tokens counted with** {note}.  \n**Sites:** {s['site_mode']} · "
                     f"**phrase pairs:** {s['pairs']}")
    skipped = sum(s["skipped"].values())
    if skipped:
        cols[1].caption(f"{skipped} (haystack, length) combinations were skipped: the haystack is "
                        "shorter than the length (never padded with other text).")
    if s.get("short_sites"):
        cols[1].caption(f"{s['short_sites']} haystack/length cells had fewer paragraph starts than "
                        "sites asked for, so they got fewer sites.")


def _source_fields(db: Any, current: str | None) -> None:
    """a · Haystacks: the source and its own field."""
    source = st.radio("Haystacks: the long responses the needles go into", list(SOURCES),
                      format_func=SOURCES.get, horizontal=True, key="nb_source")
    if source == "demo":
        st.caption("Long essays composed from the demo's paragraphs on everyday topics (bread, "
                   "birds, chess, rivers …), seeded, no repeats.")
    elif source == "dataset":
        prefs = [r["name"] for r in list_datasets(db) if r["kind"] == "preference"]
        if not prefs:
            st.info(f"No preference dataset yet: {import_words(signed_in())}.", icon="ℹ️")
        st.selectbox("Preference dataset (its chosen responses)", prefs, key="nb_pref",
                     index=prefs.index(current) if current in prefs else 0 if prefs else None)
    else:
        st.file_uploader('JSONL, one {"prompt": …, "response": …, "id": optional} per line (or any '
                         "preference file: its chosen responses)", type=["jsonl", "json"],
                         key="nb_upload")
    st.caption("A haystack shorter than a length is skipped for that length (counted below), "
               "never padded.")


def _needle_fields() -> None:
    """b · Needle: the kind, and for factuality an optional facts file."""
    kind = st.radio("Needle kind", builder.KINDS, horizontal=True, key="nb_kind",
                    format_func=lambda k: f"{k}: {KIND_HELP[k]}")
    if kind == "factuality":
        st.file_uploader('Your own facts (optional): JSONL {"true": …, "false": …, "id": optional}',
                         type=["jsonl"], key="nb_facts",
                         help="Added to the built-in held-out pairs; ids become facts:ID.")


def _size_fields() -> tuple[str, int]:
    """c · Size: preset, lengths, haystacks, sites, seed; returns (preset, grid size or 0)."""
    preset = st.radio("Size", list(PRESETS), horizontal=True, key="nb_preset",
                      format_func=lambda p: PRESETS[p][0])
    cols = st.columns([3, 2, 3, 1.3])
    if preset == "custom":
        cols[0].text_input("Lengths (tokens, comma-separated)", key="nb_lengths",
                           value=", ".join(str(n) for n in builder.DEFAULT_LENGTHS),
                           help="e.g. 1000, 2000, 4000 or 1K, 2K, 4K")
        cols[1].number_input("Demo haystacks", 1, 10, 10, key="nb_demo_count")
    else:
        lengths = ", ".join(f"{n // 1000}K" for n in PRESETS[preset][1])
        cols[0].caption(f"Lengths: {lengths} tokens")
        cols[1].caption(f"Demo haystacks: {PRESETS[preset][2]}")
    sites = cols[2].radio("Sites", list(SITES), format_func=SITES.get, key="nb_sites")
    cols[3].number_input("Seed", 0, 10**6, 0, key="nb_seed")
    return preset, 10 if sites == "grid" else 0


def _estimate(preset: str, grid: int) -> str:
    """Records and tokens the demo source will give, and a rough scoring time."""
    s = st.session_state
    try:
        lengths = parse_lengths(s.get("nb_lengths") or "") if preset == "custom" else PRESETS[preset][1]
    except ValueError as exc:
        return f"⚠️ {exc}"
    hay = int(s.get("nb_demo_count") or 10) if preset == "custom" else PRESETS[preset][2]
    records = hay * sum(grid or max(1, n // 1000) for n in lengths)
    tokens = 2 * hay * sum((grid or max(1, n // 1000)) * n for n in lengths)
    minutes = max(1, round(tokens / DEMO_TOKENS_PER_S / 60))
    return (f"Up to {records:,} pairs ({len(lengths)} lengths × {hay} haystacks × sites), "
            f"≈ {tokens / 1000:,.0f}K tokens to score: about {minutes} min with the demo model on an "
            "idle 2-core CPU (longer when the machine is busy).")


def render_builder(db: Any, current: str | None, collapsed: bool = False) -> str | None:
    """The guided build form (in a closed expander when ``collapsed``, i.e. a needle dataset is
    already selected); returns the name of a dataset built in this session (or None)."""
    box = (st.expander("Build another needle set", icon="🧵") if collapsed
           else st.container(border=True))
    with box:
        st.markdown("**a · Haystacks** · **b · Needle** · **c · Size**, then **Build**. The defaults "
                    "build a small safety set from the demo data in a few seconds.")
        _source_fields(db, current)
        _needle_fields()
        preset, grid = _size_fields()
        if st.session_state.get("nb_source", "demo") == "demo":
            st.caption(_estimate(preset, grid))
        cols = st.columns([3, 2, 2], vertical_alignment="bottom")
        cols[0].text_input("Save as dataset", key="nb_name", placeholder=default_name(
            db, st.session_state.get("nb_kind", "safety"), st.session_state.get("nb_source", "demo"),
            preset), help="Empty: the name shown. The new dataset is selected in the sidebar.")
        cols[1].checkbox("Replace a dataset of that name", key="nb_replace")
        cols[2].button("Build the needle set", type="primary", icon="🧵", key="nb_build",
                       on_click=_on_build, width="stretch",
                       help="Cuts the haystacks, inserts the needles, saves the records as a "
                            "needle dataset and selects it.")
    problems = st.session_state.get(ERRORS)
    if problems:
        st.error(f"Nothing built: {len(problems)} problem(s).", icon="🚫")
        render_text("\n".join(problems), mono=True, box=True, max_height=240, key="nb-errors")
    built = st.session_state.get(BUILT)
    if built and get_dataset(db, built["name"]) is not None:
        render_build_summary(built)
        return built["name"]
    return None
