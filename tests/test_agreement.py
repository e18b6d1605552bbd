"""Agreement figures against hand-computed values."""

from __future__ import annotations

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.grounding.agreement import cohen_kappas, krippendorff_alpha, report
from store.annotations import dataset_annotations, set_annotation
from tests.conftest import garage_records, jsonl

IRR, A, R = "irrelevant", "ANSWER-THE-QUESTION", "RELATED-INFORMATION"


@pytest.fixture
def two_annotators(db):
    """ana and bo label five passages (sample-1 #1-3, sample-2 #1-2):
    ana: I I A A R; bo: I A A A R; plus a dimension they disagree on and one they share."""
    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl")
    units = [("sample-1", 1), ("sample-1", 2), ("sample-1", 3), ("sample-2", 1), ("sample-2", 2)]
    for who, values in (("ana", [IRR, IRR, A, A, R]), ("bo", [IRR, A, A, A, R])):
        for (key, n), value in zip(units, values, strict=True):
            set_annotation(db, "ground", key, who, f"label:{n}", value)
    set_annotation(db, "ground", "sample-1", "ana", "dim:question_complexity", "Simple")
    set_annotation(db, "ground", "sample-1", "bo", "dim:question_complexity", "Set")
    set_annotation(db, "ground", "sample-2", "ana", "dim:question_complexity", "Set")
    set_annotation(db, "ground", "sample-2", "bo", "dim:question_complexity", "Set")
    set_annotation(db, "ground", "sample-1", "ana", "dim:question_valid", "YES")
    set_annotation(db, "ground", "sample-1", "bo", "dim:question_valid", "YES")
    return db


def test_alpha_and_kappa_equal_the_hand_computed_case(two_annotators):
    """Coincidence matrix: o_II=2, o_IA=o_AI=1, o_AA=4, o_RR=2; n_I=3, n_A=5, n_R=2, n=10.
    D_o = 2/10; D_e = 2(3·5 + 3·2 + 5·2)/(10·9) = 62/90; alpha = 1 - D_o/D_e = 22/31.
    Kappa: p_o = 4/5; p_e = (2·1 + 2·3 + 1·1)/25 = 9/25; kappa = (0.8-0.36)/0.64 = 11/16."""
    rep = report(dataset_annotations(two_annotators, "ground"))
    assert rep.annotators == ["ana", "bo"]
    assert rep.labels.units == 5
    assert rep.labels.value == pytest.approx(22 / 31)
    (kappa,) = rep.kappas
    assert (kappa.a, kappa.b, kappa.units) == ("ana", "bo", 5)
    assert kappa.value == pytest.approx(11 / 16)
    assert kappa.agreement == pytest.approx(0.8)
    # complexity: units (Simple, Set), (Set, Set): o_SiSe=o_SeSi=1, o_SeSe=2; n_Si=1, n_Se=3, n=4
    # D_o = 2/4, D_e = 2·1·3/(4·3) = 1/2 -> alpha = 0
    assert rep.dims["question_complexity"].value == pytest.approx(0.0)
    assert rep.dims["question_valid"].value is None  # one value only: undefined
    assert "one value" in rep.dims["question_valid"].note
    assert rep.dims["question_popularity"].units == 0


def test_disagreements_list_items_passages_dims_and_adjudication(two_annotators):
    set_annotation(two_annotators, "ground", "sample-1", "rev", "final:label:2", A)
    rep = report(dataset_annotations(two_annotators, "ground"))
    (item,) = rep.disagreements
    assert item.item_key == "sample-1"
    assert item.passages == {2: {"ana": IRR, "bo": A}}
    assert item.dims == {"question_complexity": {"ana": "Simple", "bo": "Set"}}
    assert item.adjudicated == {2}
    # reviewer rows do not count as an annotator
    assert rep.annotators == ["ana", "bo"]


def test_missing_data_and_three_annotators():
    """Three coders, one unit coded by only one (not pairable) -> left out."""
    units = {("k", 1): {"a": IRR, "b": IRR, "c": A}, ("k", 2): {"a": A, "b": A},
             ("k", 3): {"a": R}}
    alpha = krippendorff_alpha(units)
    # unit 1: m=3, pairs I-I twice (weight 1/2 each ordered pair): o_II = 2·1/2 = 1,
    # o_IA = o_AI = 2·1/2 = 1; unit 2: o_AA = 2. n_I = 2, n_A = 3, n = 5.
    # D_o = 2/5, D_e = 2·2·3/(5·4) = 12/20 -> alpha = 1 - (2/5)/(3/5) = 1/3
    assert alpha.units == 2 and alpha.value == pytest.approx(1 / 3)
    kappas = {(k.a, k.b): k for k in cohen_kappas(units)}
    assert kappas[("a", "b")].agreement == 1.0 and kappas[("a", "b")].value == pytest.approx(1.0)
    # one shared unit, I vs A: p_o = 0, p_e = 0 -> kappa = 0
    assert kappas[("a", "c")].units == 1 and kappas[("a", "c")].value == pytest.approx(0.0)
    assert krippendorff_alpha({}).value is None
