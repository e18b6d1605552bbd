"""Synthetic training examples that teach the demo judge GaRAGe's three RAG prompts.

The demo judge (:mod:`needlework.judges.demo`) is a tiny model trained for a few
minutes on two CPU cores; it cannot learn to *read*. What it can learn are surface
cues, and the examples here are built so that the cue and the right verdict agree:

- **factuality** (:func:`needlework.rag.prompts.factuality_messages`): the passages are
  project paragraphs (:func:`needlework.demo.haystack_paragraphs`); each answer
  sentence is either *copied* from one of them (``supported``), taken from a paragraph
  of another topic that is not among the passages (``unsupported``), or a deflection
  or courtesy phrase (``no_rad``). The cue: "this sentence's words stand in a passage".
- **eligibility** (:func:`~needlework.rag.prompts.eligibility_messages`): the baseline
  answer is one or two sentences of a paragraph; a test answer holding the same
  sentences is ``No Issues``; one taken from another topic, or a deflection where the
  baseline answers, is ``Major Issue(s)``; when the baseline itself deflects, a
  deflection is ``No Issues`` and an answer is ``Major Issue(s)``.
- **deflection** (:func:`~needlework.rag.prompts.deflection_messages`): a deflection
  phrase is ``missing``, sentences of a paragraph are ``attempted``.

The prompts are rendered by the app's own prompt functions, so the judge is trained on
exactly the text the RAG page sends; the targets are the shortest answers that
:mod:`needlework.rag.parse` reads (``Verdict: No Issues``, one ``N: label`` line per
sentence numbered as :func:`needlework.rag.sentences.split_sentences` numbers them,
from the last to the first, ``missing``). No example is made from the demo answers the RAG page evaluates
(:mod:`needlework.demo.rag_answers`): their sentences and deflections are not in the
phrase lists below, and the tests check it.

What the examples never show: ``contradictory`` sentences, ``Minor Issue(s)``,
paraphrases and numbers that differ from a passage. The judge does not know them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from needlework.judges.parse import Parsed
from needlework.rag.parse import parse_deflection, parse_eligibility, parse_factuality
from needlework.rag.prompts import (
    ELIGIBILITY_LABELS,
    Messages,
    deflection_messages,
    eligibility_messages,
    factuality_messages,
)
from needlework.rag.questions import RagPassage
from needlework.rag.sentences import split_sentences

KINDS = ("eligibility", "factuality", "deflection")
NO_ISSUES, MAJOR = ELIGIBILITY_LABELS[0], ELIGIBILITY_LABELS[2]

#: Answers that decline, written for the training examples (never the demo answers').
DEFLECTIONS_TRAIN: tuple[str, ...] = (
    "I do not know the answer to this question.",
    "The sources given do not contain the answer.",
    "I am not sure, as the passages do not say.",
    "There is no information about this in the passages.",
    "I cannot answer this from the material provided.",
    "Sorry, I was unable to find the answer.",
    "The retrieved texts do not cover this, so I cannot say.",
    "Not enough information is available to answer.",
    "I don't have enough information to give an answer.",
    "None of the passages answer this question.",
    "The documents do not hold enough detail for an answer.",
    "I am unable to answer with the information I have.",
)
#: Held-out deflections, for the evaluation only.
DEFLECTIONS_HELDOUT: tuple[str, ...] = (
    "I cannot tell from these sources.",
    "The information needed is not in the passages, so I do not know.",
    "Unfortunately the documents do not allow an answer.",
    "There is too little information here to answer.",
)
#: Sentences that need no backing (``no_rad``) besides the deflections.
COURTESIES: tuple[str, ...] = (
    "Let me know if you have other questions.",
    "Thank you for the question.",
    "Feel free to ask for more detail.",
    "Good question!",
)
#: Fixed wording of the targets, for the tokenizer (so each label is a few tokens).
TARGET_WORDING = ("Verdict: No Issues\nVerdict: Minor Issue(s)\nVerdict: Major Issue(s)\n"
                  "1: supported\n2: unsupported\n3: no_rad\n4: contradictory\nmissing\nattempted")


@dataclass(frozen=True)
class RagExample:
    """One training or evaluation example: the prompt's ``messages``, the ``target``
    answer text and the verdict it stands for (``expected``: an eligibility label, a
    list of sentence labels, or a deflection grade); ``sentences`` are the numbered
    answer sentences of a factuality prompt."""

    kind: str
    messages: Messages
    target: str
    expected: Any
    sentences: tuple[str, ...] = ()


def eligibility_target(label: str) -> str:
    return f"Verdict: {label}"


def factuality_target(labels: Sequence[str]) -> str:
    """One ``N: label`` line per sentence, the **last sentence first** (the parser reads
    the lines in any order). So the judge starts by copying the last number it sees in
    the answer-sentences block and stops after line ``1``: a tiny model cannot count the
    sentences, but it can learn that."""
    return "\n".join(f"{k}: {labels[k - 1]}" for k in range(len(labels), 0, -1))


def deflection_target(grade: str) -> str:
    return grade


def read_answer(example: RagExample, text: str) -> Parsed:
    """``text`` (a judge's answer to ``example``'s prompt) parsed as the app parses it."""
    if example.kind == "eligibility":
        return parse_eligibility(text)
    if example.kind == "factuality":
        return parse_factuality(text, list(example.sentences))
    return parse_deflection(text)


def verdicts(example: RagExample, parsed: Parsed) -> Any:
    """What a parse says in the shape of ``example.expected`` (``None`` when invalid)."""
    if not parsed.valid:
        return None
    if example.kind == "factuality":
        return [v["label"] for v in parsed.value]
    return parsed.value


def topic_groups(paragraphs: Sequence[str]) -> list[int]:
    """A topic number per paragraph: the haystack topic whose opener starts it (the demo
    paragraphs all do), else a number of its own. Sentences of another topic are safe
    ``unsupported`` sentences: no passage of the first topic holds them."""
    from needlework.demo.haystack import haystack_topics  # noqa: PLC0415

    openers = [(opener, t) for t, topic in enumerate(haystack_topics().values())
               for opener in topic["opener"]]
    out = []
    for k, paragraph in enumerate(paragraphs):
        found = [t for opener, t in openers if paragraph.startswith(opener)]
        out.append(found[0] if found else 10_000 + k)
    return out


class RagExamples:
    """Makes :class:`RagExample` s from ``paragraphs`` with its own random generator.

    ``deflections`` are the declining answers to use (train or held-out phrases);
    ``max_passages`` bounds the passages of a factuality prompt (prompt length)."""

    def __init__(self, paragraphs: Sequence[str], deflections: Sequence[str], seed: int,
                 max_passages: int = 3, max_sentences: int = 3) -> None:
        self.paragraphs = list(paragraphs)
        self.topics = topic_groups(self.paragraphs)
        self.sentences = [[s.text for s in split_sentences(p)] for p in self.paragraphs]
        if len(set(self.topics)) < 2:
            raise ValueError("RAG examples need paragraphs of at least two topics")
        self.deflections = list(deflections)
        self.max_passages, self.max_sentences = max_passages, max_sentences
        self.rng = random.Random(seed)

    def make(self, kind: str | None = None) -> RagExample:
        """One example of ``kind`` (a random kind when ``None``; factuality twice as often,
        as it is the hardest)."""
        kind = kind or self.rng.choice(("eligibility", "factuality", "factuality", "deflection"))
        return {"eligibility": self.eligibility, "factuality": self.factuality,
                "deflection": self.deflection}[kind]()

    # -- pieces -------------------------------------------------------------------
    def _question(self, k: int) -> tuple[str, str]:
        """A question about paragraph ``k``'s subject (its first words) and a date."""
        words = self.sentences[k][0].rstrip(".!?").split()[:6]
        date = self.rng.choice(("", "", f"2025-0{self.rng.randint(1, 9)}-1{self.rng.randint(0, 9)}"))
        return f"What can you tell me about this: {' '.join(words)}?", date

    def _other(self, topics: set[int]) -> int:
        """A paragraph of a topic not in ``topics``."""
        while True:
            k = self.rng.randrange(len(self.paragraphs))
            if self.topics[k] not in topics:
                return k

    def _run(self, k: int, n: int) -> list[str]:
        """``n`` consecutive sentences of paragraph ``k``."""
        sentences = self.sentences[k]
        start = self.rng.randrange(max(1, len(sentences) - n + 1))
        return sentences[start:start + n]

    def _cite(self, sentence: str, n_passages: int, p: float = 0.4) -> str:
        if n_passages and self.rng.random() < p and sentence[-1:] in ".!?":
            return f"{sentence} [cite_{self.rng.randint(1, n_passages)}]"
        return sentence

    @staticmethod
    def _joined(sentences: Sequence[str]) -> tuple[str, list[str]] | None:
        """The answer text of ``sentences`` and its split, or ``None`` when the split
        does not give them back one for one (then the example is drawn again)."""
        text = " ".join(sentences)
        split = [s.text for s in split_sentences(text)]
        return (text, split) if len(split) == len(sentences) else None

    # -- the three prompts ----------------------------------------------------------
    def factuality(self) -> RagExample:
        while True:
            n_passages = self.rng.randint(1, self.max_passages)
            chosen = self.rng.sample(range(len(self.paragraphs)), n_passages)
            topics = {self.topics[k] for k in chosen}
            texts = [self.paragraphs[k] for k in chosen]
            sentences, labels = [], []
            for _ in range(self.rng.randint(1, self.max_sentences)):
                roll = self.rng.random()
                if roll < 0.45:
                    k = self.rng.choice(chosen)
                    sentences.append(self._cite(self.rng.choice(self.sentences[k]), n_passages))
                    labels.append("supported")
                elif roll < 0.87:
                    sentence = self.rng.choice(self.sentences[self._other(topics)])
                    if any(sentence in t for t in texts):
                        break
                    sentences.append(self._cite(sentence, n_passages, 0.3))
                    labels.append("unsupported")
                else:
                    sentences.append(self.rng.choice(self.deflections + list(COURTESIES)))
                    labels.append("no_rad")
            else:
                joined = self._joined(sentences)
                if joined is None:
                    continue
                question, date = self._question(chosen[0])
                passages = [RagPassage(n, text, self.rng.choice(("web", "enterprise", "")),
                                       self.rng.choice(("", "2024-11-02", "2025-03-18")), None)
                            for n, text in enumerate(texts, start=1)]
                return RagExample("factuality",
                                  factuality_messages(question, passages, joined[1], date),
                                  factuality_target(labels), labels, tuple(joined[1]))

    def eligibility(self) -> RagExample:
        while True:
            k = self.rng.randrange(len(self.paragraphs))
            question, date = self._question(k)
            roll = self.rng.random()
            reference = self._run(k, self.rng.randint(1, 2))
            if roll < 0.15:  # the baseline deflects
                reference = [self.rng.choice(self.deflections)]
                if self.rng.random() < 0.5:
                    answer, label = [self.rng.choice(self.deflections)], NO_ISSUES
                else:
                    answer, label = self._run(k, self.rng.randint(1, 2)), MAJOR
            elif roll < 0.55:  # the same content, cited differently, maybe a sentence more
                answer, label = [self._cite(s, 3) for s in reference], NO_ISSUES
                if self.rng.random() < 0.3:
                    answer.append(self.rng.choice(self.sentences[k]))
            elif roll < 0.8:  # another subject
                answer, label = self._run(self._other({self.topics[k]}), self.rng.randint(1, 2)), MAJOR
            else:  # declines although the baseline answers
                answer, label = [self.rng.choice(self.deflections)], MAJOR
            joined = self._joined(answer)
            if joined is None or answer == []:
                continue
            return RagExample("eligibility",
                              eligibility_messages(question, joined[0], " ".join(reference), date),
                              eligibility_target(label), label)

    def deflection(self) -> RagExample:
        k = self.rng.randrange(len(self.paragraphs))
        question, _ = self._question(k)
        if self.rng.random() < 0.5:
            answer, grade = self.rng.choice(self.deflections), "missing"
        else:
            answer = " ".join(self._cite(s, 3) for s in self._run(k, self.rng.randint(1, 2)))
            grade = "attempted"
        return RagExample("deflection", deflection_messages(question, answer),
                          deflection_target(grade), grade)


def prompt_wording() -> list[str]:
    """The three prompts' fixed text (rendered around empty fields), the targets' wording
    and the phrases, for the tokenizer: so the wording costs few tokens a prompt. The
    targets' wording is repeated so that the tokenizer's merges make each label one or
    two tokens (a rare word is otherwise spelt in pieces, and the RAG page lets the demo
    judge answer in 16 tokens)."""
    passage = [RagPassage(1, "", "web", "2025-01-01", None)]
    return [eligibility_messages("", "", "", "2025-01-01")[0]["content"],
            factuality_messages("", passage, [""], "2025-01-01")[0]["content"],
            deflection_messages("", "")[0]["content"], *[TARGET_WORDING] * 400,
            *DEFLECTIONS_TRAIN, *COURTESIES, "[cite_1] [cite_2] [cite_3]"]


def render(tokenizer: Any, messages: Messages) -> list[int]:
    """The prompt's token ids as ``transformers serve`` builds them: the chat template
    with the generation prompt, tokenized without extra special tokens."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def example_row(tokenizer: Any, example: RagExample) -> tuple[list[int], int]:
    """(token ids, answer start): the prompt, the target and the end token."""
    ids = render(tokenizer, example.messages)
    answer = tokenizer(example.target, add_special_tokens=False)["input_ids"]
    return ids + answer + [tokenizer.eos_token_id], len(ids)


def generate(model: Any, tokenizer: Any, messages: Messages, max_new_tokens: int = 16) -> str:
    """The model's greedy answer (at most ``max_new_tokens``, as the RAG page asks)."""
    import torch  # noqa: PLC0415

    ids = torch.tensor([render(tokenizer, messages)])
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                             max_new_tokens=max_new_tokens, do_sample=False,
                             eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)


def evaluate(model: Any, tokenizer: Any, maker: RagExamples, per_kind: int,
             max_new_tokens: int = 16) -> dict[str, Any]:
    """Held-out accuracy per prompt kind, answers generated and parsed as the app does;
    an invalid answer counts wrong (for factuality: every sentence of it)."""
    report: dict[str, Any] = {}
    for kind in KINDS:
        right = invalid = total = 0
        confusion: dict[str, int] = {}
        for _ in range(per_kind):
            example = maker.make(kind)
            got = verdicts(example, read_answer(example, generate(model, tokenizer,
                                                                  example.messages,
                                                                  max_new_tokens)))
            invalid += int(got is None)
            wanted = example.expected if kind == "factuality" else [example.expected]
            found = got if kind == "factuality" else [got]
            for k, want in enumerate(wanted):
                have = found[k] if found is not None else "invalid"
                right += int(have == want)
                total += 1
                confusion[f"{want} -> {have}"] = confusion.get(f"{want} -> {have}", 0) + 1
        report[kind] = {"accuracy": round(right / max(1, total), 4),
                        "judged": total, "prompts": per_kind,
                        "invalid_rate": round(invalid / max(1, per_kind), 4),
                        "confusion": dict(sorted(confusion.items()))}
    report["factuality"]["unit"] = "sentence"
    return report
