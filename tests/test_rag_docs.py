"""Every figure has one definition, and docs/rag.md shows the same texts the UI does."""

from __future__ import annotations

from needlework.rag import metrics
from needlework.rag.definitions import DEFINITIONS, TITLES
from tests.conftest import ROOT


def test_every_figure_has_a_definition_and_a_title() -> None:
    row = metrics.flat(metrics.summarize([]))
    figures = set(row) - {"n", "no_answer"}
    assert figures == set(DEFINITIONS) == set(TITLES)


def test_docs_repeat_the_definitions_word_for_word() -> None:
    text = (ROOT / "docs" / "rag.md").read_text(encoding="utf-8")
    for key, definition in DEFINITIONS.items():
        assert f"| {TITLES[key]} | `{key}` | {definition} |" in text, key
    rules = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = rules[rules.index("## 5. RAG answer evaluation"):rules.index("## 6.")]
    assert "planned" not in section and "rag.md" in section
