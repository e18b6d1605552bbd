"""BERGEN's answer metrics: equal to BERGEN's own figures (naver/bergen modules/metrics.py,
run on the same inputs when these expectations were recorded) and to the `rouge` package."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rouge import Rouge

from needlework.formats.errors import FormatError
from needlework.rag import bergen
from needlework.rag.bergen_file import parse_bergen_output, read_bergen_output, score_rows
from tests.conftest import ROOT, SHARED_DATA

EVAL_DEV = SHARED_DATA / "bergen" / "eval_dev_out.json"

#: (prediction, references) and BERGEN's figures for them, in the order of bergen.METRICS
#: (M, EM, F1, Precision, Recall, Recall_char3gram, Rouge-1, Rouge-2, Rouge-L), as
#: RAGMetrics.compute returned them.
PAIRS = [
    ("The Eiffel Tower is in Paris.", ["Paris"],
     (1.0, 0.0, 0.33333333333333337, 0.2, 1.0, 1.0, 0.2857142832653061, 0.0, 0.2857142832653061)),
    ("paris", ["Paris!"], (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0)),
    ("It was built in 1889 by Gustave Eiffel's company.", ["1889", "Gustave Eiffel"],
     (1.0, 0.0, 0.19999999999999998, 0.1111111111111111, 1.0, 1.0, 0.1999999982, 0.0, 0.1999999982)),
    ("An apple a day keeps the doctor away", ["the apple keeps doctors away"],
     (0.0, 0.0, 0.6666666666666665, 0.6, 0.75, 0.9230769230769231, 0.6153846106508877, 0.0,
      0.4615384568047337)),
    ("", ["Kelly Reno"], (0.0,) * 9),
    ("Kelly Reno", [""], (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)),
    ("Kelly Reno", ["", "Kelly Reno played Alec"],
     (1.0, 0.0, 0.6666666666666666, 1.0, 0.5, 0.45454545454545453, 0.6666666622222223,
      0.4999999962500001, 0.6666666622222223)),
    ("...", ["a dot"], (0.0,) * 9),
    ("the the the", ["the"], (1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.999999995, 0.0, 0.999999995)),
    ("Müller scored twice; Müller won.", ["Thomas Müller", "Müller"],
     (1.0, 0.0, 0.33333333333333337, 0.2, 1.0, 1.0, 0.39999999680000003, 0.0, 0.39999999680000003)),
    ("New York City, New York", ["New York", "the city of New York"],
     (1.0, 0.0, 0.6666666666666665, 0.6, 1.0, 1.0, 0.7999999952000001, 0.4999999962500001,
      0.7999999952000001)),
    ("cat sat on mat", ["the cat sat on the mat", "a dog ran"],
     (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8888888839506174, 0.49999999531250006, 0.8888888839506174)),
    ("I do not know.", ["Mike Post"], (0.0,) * 9),
    ("Left Behind series by Tim LaHaye and Jerry B. Jenkins", ["Left Behind", "Left Behind (series)"],
     (1.0, 0.0, 0.4615384615384615, 0.3, 1.0, 1.0, 0.33333333055555564, 0.1999999982,
      0.33333333055555564)),
]

#: BERGEN's figures on ../shared/data/bergen/eval_dev_out.json (RAGMetrics.compute, then
#: numpy.mean as modules/rag.py takes them). M, Recall and Recall_char3gram are 1 and EM 0
#: on every question.
EVAL_DEV_MEANS = {"M": 1.0, "EM": 0.0, "F1": 0.24700672581637215,
                  "Precision": 0.14967380742593123, "Recall": 1.0, "Recall_char3gram": 1.0,
                  "Rouge-1": 0.21721037925790848, "Rouge-2": 0.10797017525178719,
                  "Rouge-L": 0.21721037925790848}
EVAL_DEV_PER_QUESTION = {
    "F1": [0.08333333333333333, 0.2666666666666667, 0.17391304347826084, 0.25,
           0.33333333333333337, 0.3636363636363636, 0.3076923076923077, 0.08888888888888888,
           0.18181818181818182, 0.04878048780487806, 0.047619047619047616, 0.19999999999999998,
           0.2222222222222222, 0.2857142857142857, 0.5, 0.4, 0.4444444444444445, 0.125, 0.4,
           0.4444444444444445, 0.07692307692307693, 0.12903225806451615, 0.3076923076923077],
    "Precision": [0.043478260869565216, 0.15384615384615385, 0.09523809523809523,
                  0.14285714285714285, 0.2, 0.2222222222222222, 0.18181818181818182,
                  0.046511627906976744, 0.1, 0.025, 0.024390243902439025, 0.1111111111111111,
                  0.125, 0.16666666666666666, 0.3333333333333333, 0.25, 0.2857142857142857,
                  0.06666666666666667, 0.25, 0.2857142857142857, 0.04, 0.1111111111111111,
                  0.18181818181818182],
    "Rouge-1": [0.09302325492698757, 0.24999999781250004, 0.17391304189035917, 0.0,
                0.33333333055555564, 0.39999999680000003, 0.2857142832653061,
                0.11111111006172841, 0.14285714153061227, 0.0, 0.05555555501543211,
                0.18181818016528928, 0.18181818016528928, 0.24999999781250004,
                0.4999999962500001, 0.33333333055555564, 0.39999999680000003,
                0.11764705771626299, 0.4444444409876544, 0.39999999680000003, 0.0,
                0.055555550555556006, 0.2857142832653061],
    "Rouge-2": [0.039999999608, 0.12499999882812501, 0.08695652090737242, 0.0,
                0.16666666513888892, 0.2222222202469136, 0.15384615242603553,
                0.04545454501033058, 0.0, 0.0, 0.0, 0.09090909004132232, 0.0,
                0.14285714153061227, 0.33333333055555564, 0.1999999982, 0.24999999781250004, 0.0,
                0.24999999781250004, 0.2222222202469136, 0.0, 0.0, 0.15384615242603553],
}


def test_normalization_follows_bergen_order() -> None:
    # lowercase, punctuation dropped (so "a." becomes the article "a"), articles to spaces
    assert bergen.normalize("The  Cat's hat, A.  Dog!") == "cats hat dog"
    assert bergen.normalize("Ananas an apple") == "ananas apple"  # whole words only
    assert bergen.normalize("«Théâtre»—l’Opéra") == "«théâtre»—l’opéra"  # ASCII punctuation only
    assert bergen.char_ngrams("paris is big") == ["par", "ari", "ris", "is", "big"]


def test_hand_computed_pair() -> None:
    scores = bergen.answer_scores("The Eiffel Tower is in Paris.", ["Paris"]).as_dict()
    # normalised prediction: "eiffel tower is in paris" (5 words), reference "paris"
    assert scores["M"] == 1.0 and scores["EM"] == 0.0
    assert scores["Precision"] == pytest.approx(1 / 5) and scores["Recall"] == 1.0
    assert scores["F1"] == pytest.approx(2 * (1 / 5) / (1 / 5 + 1))


@pytest.mark.parametrize(("prediction", "references", "expected"), PAIRS)
def test_pairs_equal_bergens_figures(prediction, references, expected) -> None:
    scores = bergen.answer_scores(prediction, references).as_dict()
    assert tuple(scores[name] for name in bergen.METRICS) == expected


@pytest.mark.parametrize(("prediction", "references", "expected"), PAIRS)
def test_rouge_is_the_rouge_packages(prediction, references, expected) -> None:
    kept = [r for r in references if r]
    if not prediction or not kept:
        assert bergen.best_rouge(prediction, references) == (0.0, 0.0, 0.0)
        return
    figures = []
    for reference in kept:
        try:
            s = Rouge().get_scores(prediction, reference, avg=True)
            figures.append((s["rouge-1"]["f"], s["rouge-2"]["f"], s["rouge-l"]["f"]))
        except ValueError:  # "Hypothesis is empty." for a prediction with no word
            figures.append((0.0, 0.0, 0.0))
    best = tuple(max(f[k] for f in figures) for k in range(3))
    assert bergen.best_rouge(prediction, references) == best


def test_each_metric_takes_its_own_best_reference() -> None:
    # precision is best against the first reference (2/3), recall against the second (1)
    scores = bergen.answer_scores("a1 b1 c1", ["a1 b1 x1 y1 z1", "a1"]).as_dict()
    assert scores["Precision"] == pytest.approx(2 / 3)
    assert scores["Recall"] == 1.0
    assert scores["F1"] == pytest.approx(max(2 * (2 / 3) * (2 / 5) / (2 / 3 + 2 / 5), 0.5))


def test_no_reference_is_refused() -> None:
    with pytest.raises(ValueError, match="no reference"):
        bergen.answer_scores("x", [])
    assert bergen.mean_scores([])["F1"] is None


def test_eval_dev_out_equals_bergens_figures() -> None:
    rows = read_bergen_output(EVAL_DEV)
    assert len(rows) == 23 and rows[0].q_id == "-1833051064924762940"
    report = score_rows(rows)
    assert report["mean"] == EVAL_DEV_MEANS  # numpy.mean, as BERGEN: equal to the last digit
    for name, values in EVAL_DEV_PER_QUESTION.items():
        assert [q[name] for q in report["per_question"]] == values
    assert {q["M"] for q in report["per_question"]} == {1.0}
    assert {q["EM"] for q in report["per_question"]} == {0.0}


def test_answer_metrics_cli_on_bergen_output() -> None:
    done = subprocess.run([sys.executable, "-m", "needlework", "answer-metrics", str(EVAL_DEV),
                           "--json"], capture_output=True, text=True, cwd=ROOT, check=True)
    report = json.loads(done.stdout)
    assert report["format"] == "bergen" and report["scored"] == 23
    assert report["mean"] == EVAL_DEV_MEANS


@pytest.mark.parametrize(("text", "message"), [
    ('{"q_id": "1"}', "not a BERGEN output file: expected a JSON array"),
    ('[{"q_id": "1", "response": "x"}]', 'f.json record 0 (line 1): field \'label\' is missing'),
    ('[\n{"q_id": "1", "response": "x", "label": "x"}]',
     "f.json record 0 (line 2): field 'label' must be a list of strings"),
    ('[{"q_id": "1", "response": "x", "label": ["a", 3]}]', "field 'label[1]' must be a string"),
    ('[{"q_id": "1", "response": null, "label": []}]', "field 'response' must be a string, got null"),
    ('[{"q_id": "1", "response": "", "label": []},\n {"q_id": "1", "response": "", "label": []}]',
     "f.json record 1 (line 2): field 'q_id' repeats '1'"),
    ('[{"q_id": 1, "response": "x", "label": [NaN]}]', "f.json"),
])
def test_bad_bergen_files_name_record_line_and_field(text, message) -> None:
    with pytest.raises(FormatError) as err:
        parse_bergen_output(text, "f.json")
    assert message in str(err.value)


def test_a_question_without_gold_answer_is_listed_not_scored() -> None:
    rows = parse_bergen_output('[{"q_id": 7, "response": "x", "label": []},'
                               '{"q_id": "8", "response": "Paris", "label": ["Paris"]}]', "f.json")
    report = score_rows(rows)
    assert report["scored"] == 1 and report["not_scored"] == [
        {"q_id": "7", "reason": "no gold answer (empty label list)"}]
    assert report["mean"]["EM"] == 1.0
