"""Grounding logic: labels, ages, answer checks, the export rule, progress and filters."""

from __future__ import annotations

import pytest

from needlework.formats.garage import DEFLECTION
from needlework.grounding import answer as ga
from needlework.grounding import labels as gl
from needlework.grounding.item import categories, derive_age, parse_categories, passages
from needlework.grounding.resolve import resolve, resolve_answer


def test_imported_labels_and_evidence_encoding(garage_record):
    assert gl.imported_label(garage_record, 1) == gl.ANSWER
    assert gl.imported_label(garage_record, 2) == gl.IRRELEVANT
    assert gl.imported_label(garage_record, 3) == gl.RELATED
    assert gl.imported_label(garage_record, 4) is None
    garage_record["evidence_correct"][2] = ""
    assert gl.imported_text(garage_record, 3) == "relevant (type not judged)"
    assert gl.evidence_for(gl.IRRELEVANT) == ("NO", "")
    assert gl.evidence_for(gl.OUTDATED) == ("YES", "OUTDATED")
    with pytest.raises(ValueError):
        gl.evidence_for("maybe")
    assert gl.passage_number("label:12") == 12
    assert gl.passage_number("final:label:3", gl.FINAL_PREFIX) == 3
    assert gl.passage_number("final:label:3") is None


def test_ages_are_derived_when_missing_and_say_so(garage_record):
    assert derive_age("2023-12-12", "2024-11-20T10:00:00") == "11 months, 8 days"
    assert derive_age("2024-01-31", "2024-02-29") == "29 days"
    assert derive_age("2020-01-01", "2025-01-01") == "5 years"
    assert derive_age("2025-02-01", "2025-01-01") is None
    assert derive_age("", "2025-01-01") is None
    garage_record["grounding"][0]["age"] = ""
    garage_record["grounding"].append({"cite_4": "late", "age": "", "date": "2025-03-01",
                                       "provider": "web"})
    views = passages(garage_record)
    assert (views[0].age, views[0].age_note) == ("2 months, 3 days", "derived")
    assert (views[1].age, views[1].age_note) == ("", "unknown")
    assert (views[2].age, views[2].age_note) == ("3 years", "")
    assert views[3].age_note == "after question"
    assert views[1].text.startswith("<script>")


def test_answer_checks():
    labels = {1: gl.ANSWER, 2: gl.IRRELEVANT, 3: gl.ANSWER, 4: None}
    check = ga.check_answer("A [cite_1] and B [cite_2] and C [cite_7].", 4, labels)
    assert check.cited == (1, 2) and check.missing == (7,)
    assert check.irrelevant_cited == (2,) and check.uncited_answers == (3,)
    assert len(check.errors) == 1 and "[cite_7]" in check.errors[0]
    assert any("irrelevant" in w for w in check.warnings)
    assert any("passage 3 not cited" in w for w in check.warnings)
    deflected = ga.check_answer(DEFLECTION, 4, labels)
    assert deflected.deflection and any("Deflected, but" in w for w in deflected.warnings)
    no_answer = ga.check_answer("Some answer [cite_4].", 4, {1: gl.RELATED, 4: gl.RELATED})
    assert any("needs the deflection" in w for w in no_answer.warnings)
    fine = ga.check_answer(" there is NOT enough grounding for an answer. ", 2,
                           {1: gl.RELATED, 2: gl.IRRELEVANT})
    assert fine.deflection and not fine.warnings and not fine.errors


def test_answer_helpers():
    assert ga.cited_numbers("x [cite_3] y [cite_1] [cite_3]") == [3, 1]
    assert ga.evidence_cited("x [cite_3]", 3) == ["NO", "NO", "YES"]
    assert ga.insert_marker("Adults pay $5.", 2) == "Adults pay $5 [cite_2]."
    assert ga.insert_marker("Adults pay", 2) == "Adults pay [cite_2]"
    assert ga.insert_marker("", 1) == "[cite_1]"
    segments = ga.preview_segments("a [cite_1] b [cite_9]", 2)
    assert segments == [("a ", None, None), ("[cite_1]", "nw-cite", None), (" b ", None, None),
                        ("[cite_9]", "nw-bad", None)]


def _e(who, field, value, at="2025-01-01T00:00:00"):
    return {"annotator": who, "field": field, "value": value, "updated_at": at}


def test_resolve_rule_final_majority_tie_single_imported():
    order = gl.LABELS
    assert resolve({}, [], gl.RELATED, order).source == "imported"
    assert resolve({}, [], None, order).source == "none"
    single = resolve({"ana": gl.OUTDATED}, [], gl.RELATED, order)
    assert (single.value, single.source) == (gl.OUTDATED, "single")
    majority = resolve({"a": gl.ANSWER, "b": gl.ANSWER, "c": gl.RELATED}, [], None, order)
    assert (majority.value, majority.source) == (gl.ANSWER, "majority")
    tie_imported = resolve({"a": gl.UNKNOWN, "b": gl.OUTDATED}, [], gl.OUTDATED, order)
    assert (tie_imported.value, tie_imported.source) == (gl.OUTDATED, "tie")
    tie_order = resolve({"a": gl.UNKNOWN, "b": gl.RELATED}, [], gl.ANSWER, order)
    assert (tie_order.value, tie_order.source) == (gl.RELATED, "tie")
    finals = [_e("rev1", "final:label:1", gl.UNKNOWN, "2025-01-02"),
              _e("rev2", "final:label:1", gl.ANSWER, "2025-01-03")]
    final = resolve({"a": gl.RELATED}, finals, None, order)
    assert (final.value, final.source) == (gl.ANSWER, "final")


def test_resolve_answer():
    assert resolve_answer([]) is None
    assert resolve_answer([_e("a", "answer", "  ")]) is None
    entries = [_e("a", "answer", "old [cite_1]", "2025-01-01"),
               _e("b", "answer", "new [cite_2]", "2025-01-02")]
    assert resolve_answer(entries).value == "new [cite_2]"
    entries.append(_e("rev", "final:answer", "old [cite_1]", "2025-01-01"))
    assert resolve_answer(entries).source == "final"


def test_category_list():
    assert categories({}, ["Travel", "Space"])[-1] == "Space"
    assert categories({"categories": ["A", "B"]}, ["B", "C"]) == ["A", "B", "C"]
    assert parse_categories(" A \n\nB\nA\nLaw, Government\n") == ["A", "B", "Law, Government"]



def test_a_dimension_choice_is_the_option_its_saved_fields_amount_to():
    from needlework.grounding.item import time_sensitivity  # noqa: PLC0415
    from needlework.grounding.keymap import choice_of, dimension_keys  # noqa: PLC0415

    dims = {d["title"]: d for d in dimension_keys()}
    time = dims["Time sensitivity"]
    for sensitive in ("YES", "NO", None):
        for qtype in ("SLOW-CHANGING", "FAST-CHANGING", "", None):
            index = choice_of(time, [sensitive, qtype])
            # the same rule as the single time-sensitivity choice of the exports and filters
            assert (None if index is None else time["options"][index]) == \
                time_sensitivity(sensitive, qtype), (sensitive, qtype)
    assert choice_of(dims["Complexity"], ["Set"]) == 2
    assert choice_of(dims["Complexity"], ["Nonsense"]) is None
    assert choice_of(dims["Valid"], [None]) is None
    assert [d["title"] for d in dimension_keys()] == [
        "Valid", "False premise", "Info-seeking", "Time sensitivity", "Complexity", "Popularity"]


def test_the_annotation_guide_lists_every_key_of_the_key_map():
    import re  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from needlework.grounding.keymap import KEYMAP  # noqa: PLC0415

    guide = (Path(__file__).resolve().parents[1] / "docs" / "annotation.md").read_text()
    rows = {re.sub(r"[`\s]", "", row.split("|")[1]): row.split("|")[2].strip()
            for row in guide.splitlines() if row.startswith("| ") and row.count("|") >= 3}
    for keys, what in KEYMAP:
        assert rows.get(re.sub(r"\s", "", keys)) == what, keys


def test_answer_warnings_name_passages_in_plain_english():
    labels = {1: "ANSWER-THE-QUESTION", 2: "ANSWER-THE-QUESTION", 6: "ANSWER-THE-QUESTION"}
    check = ga.check_answer(DEFLECTION, 6, labels)
    assert "Deflected, but passages 1, 2 and 6 are labeled ANSWER-THE-QUESTION." in check.warnings
    check = ga.check_answer(DEFLECTION, 6, {2: "ANSWER-THE-QUESTION"})
    assert "Deflected, but passage 2 is labeled ANSWER-THE-QUESTION." in check.warnings
    check = ga.check_answer("It costs $5 [cite_1].", 6, labels)
    assert "ANSWER-THE-QUESTION passages 2 and 6 not cited yet." in check.warnings


def test_a_decision_is_told_in_plain_sentences_against_the_annotators_own_values():
    from needlework.grounding.decision import decision_lines  # noqa: PLC0415

    finals = {"label:2": "RELATED-INFORMATION", "label:10": "irrelevant", "label:1": "UNKNOWN",
              "dim:question_complexity": "Set", "answer": "theirs"}
    mine = {"label:2": "OUTDATED", "label:1": "UNKNOWN", "dim:question_complexity": "Set",
            "answer": "mine"}
    assert decision_lines(finals, mine) == [
        "passage 1: Unknown (as yours)", "passage 2: Related (yours: Outdated)",
        "passage 10: Irrelevant (you left it unlabeled)", "complexity: Set (as yours)",
        "answer: another annotator's was chosen"]
