"""The demo judge's RAG training examples (needlework.judges.demo_rag) and stage 3."""

from __future__ import annotations

import json

import pytest

from needlework import demo
from needlework.demo.rag_answers import demo_models
from needlework.judges import demo as demo_judge
from needlework.judges import demo_rag
from needlework.rag.prompts import deflection_messages, eligibility_messages, factuality_messages
from needlework.rag.questions import RagPassage
from needlework.rag.sentences import split_sentences
from needlework.rewards.demo_model import split_paragraphs

PARAGRAPHS = demo.haystack_paragraphs()


@pytest.fixture(scope="module")
def examples() -> list[demo_rag.RagExample]:
    train, _ = split_paragraphs(PARAGRAPHS)
    maker = demo_rag.RagExamples(train, demo_rag.DEFLECTIONS_TRAIN, seed=3)
    return [maker.make(kind) for kind in demo_rag.KINDS for _ in range(60)]


def test_targets_parse_to_the_intended_verdicts(examples) -> None:
    seen: dict[str, set[str]] = {kind: set() for kind in demo_rag.KINDS}
    for example in examples:
        parsed = demo_rag.read_answer(example, example.target)
        assert parsed.valid, (example.target, parsed.reason)
        assert demo_rag.verdicts(example, parsed) == example.expected
        labels = example.expected if example.kind == "factuality" else [example.expected]
        seen[example.kind].update(labels)
    assert seen == {"eligibility": {"No Issues", "Major Issue(s)"},
                    "factuality": {"supported", "unsupported", "no_rad"},
                    "deflection": {"missing", "attempted"}}


def test_a_wrong_answer_reads_as_another_verdict(examples) -> None:
    example = next(e for e in examples if e.kind == "factuality" and len(e.sentences) > 1)
    assert not demo_rag.read_answer(example, "1: supported").valid  # a sentence left out
    flipped = ["unsupported" if x == "supported" else "supported" for x in example.expected]
    parsed = demo_rag.read_answer(example, demo_rag.factuality_target(flipped))
    assert demo_rag.verdicts(example, parsed) == flipped


def test_prompts_are_the_apps_own(examples) -> None:
    factuality = next(e for e in examples if e.kind == "factuality")
    content = factuality.messages[0]["content"]
    question = content.split("[User question]\n")[1].split("\n")[0]
    passages_block = content.split("[Passages]\n")[1].split("\n[End of passages]")[0]
    texts = [chunk.split("\n", 1)[1] for chunk in passages_block.split("\n\n")]
    rebuilt = factuality_messages(question, [RagPassage(n, t, "", "", None)
                                             for n, t in enumerate(texts, start=1)],
                                  list(factuality.sentences))
    assert rebuilt[0]["content"].split("[Answer sentences]")[1] == \
        content.split("[Answer sentences]")[1]
    fixed = {"eligibility": eligibility_messages("Q", "A", "B")[0]["content"].split("[User")[0],
             "deflection": deflection_messages("Q", "A")[0]["content"].split("[User")[0]}
    for example in examples:
        assert example.messages[0]["role"] == "user" and len(example.messages) == 1
        if example.kind in fixed:
            assert example.messages[0]["content"].startswith(fixed[example.kind])


def test_factuality_sentences_are_numbered_as_the_app_splits_them(examples) -> None:
    for example in (e for e in examples if e.kind == "factuality"):
        answer = " ".join(example.sentences)
        assert [s.text for s in split_sentences(answer)] == list(example.sentences)
        assert f"{len(example.sentences)}. {example.sentences[-1]}" in example.messages[0]["content"]
        passages = example.messages[0]["content"].split("[Passages]")[1].split("[End of passages]")[0]
        for sentence, label in zip(example.sentences, example.expected, strict=True):
            bare = sentence.split(" [cite_")[0]
            if label == "supported":
                assert bare in passages
            elif label == "unsupported":
                assert bare not in passages


def test_no_demo_answer_text_is_in_the_training_examples(examples) -> None:
    answers = [a["answer"] for m in demo_models() for a in m["answers"]]
    pieces = {s.text.split(" [cite_")[0] for a in answers for s in split_sentences(a)}
    pieces = {p for p in pieces | set(answers) | {demo.DEFLECTION} if len(p.split()) >= 4}
    for example in examples:
        for piece in pieces:
            assert piece not in example.messages[0]["content"], piece
    assert not pieces & set(demo_rag.DEFLECTIONS_TRAIN + demo_rag.DEFLECTIONS_HELDOUT
                            + demo_rag.COURTESIES)


def test_heldout_deflections_are_not_trained_on() -> None:
    assert not set(demo_rag.DEFLECTIONS_TRAIN) & set(demo_rag.DEFLECTIONS_HELDOUT)


def test_a_small_judge_reports_heldout_figures_per_prompt_kind(tmp_path) -> None:
    settings = demo_judge.DemoJudgeSettings(
        vocab_size=700, hidden=32, layers=1, heads=2, intermediate=64, max_positions=2048,
        pretrain_steps=2, max_steps=2, rag_steps=3, batch_pairs=2, rag_batch=3,
        rag_selection_pairs=1, min_tokens=20, max_tokens=40, eval_pairs=2, eval_tokens=30,
        rag_eval=3, warmup=2)
    paragraphs = PARAGRAPHS[:60]
    report = demo_judge.build_demo_judge(tmp_path / "judge", settings, texts=paragraphs,
                                         paragraphs=paragraphs)
    saved = json.loads((tmp_path / "judge" / demo_judge.REPORT_FILE).read_text())
    assert saved == report
    assert report["heldout_selection"]["trials"] == 4
    assert report["rag_training"]["steps"] == 3
    for kind in demo_rag.KINDS:
        figures = report["heldout_rag"][kind]
        assert figures["prompts"] == 3 and 0.0 <= figures["accuracy"] <= 1.0
        assert figures["judged"] >= 3 and 0.0 <= figures["invalid_rate"] <= 1.0
    assert report["heldout_rag"]["factuality"]["unit"] == "sentence"
