"""The rules judge: its rules on hand-made cases, its answers read by the RAG parsers,
its server through the real openai client, and the demo answers evaluated with it
(issue 14, Deliver 6: every figure offline)."""

from __future__ import annotations

import json
import subprocess
import sys

import openai
import pytest

from needlework.judges.client import check_connection
from needlework.judges.local import RULES_MODEL
from needlework.rag import prompts, rules_judge
from needlework.rag.parse import (
    parse_deflection,
    parse_eligibility,
    parse_factuality,
    parse_llmeval,
)
from needlework.rag.questions import RagPassage
from needlework.rag.rules_server import RulesJudges, answer, start_rules_server
from tests.conftest import ROOT

PASSAGES = ("[Passage 1]\nNATO was founded on April 4, 1949, when 12 countries signed the North "
            "Atlantic Treaty in Washington.\n\n[Passage 2]\nThe Great Wall of China is not "
            "visible to the naked eye from the Moon.")


@pytest.mark.parametrize(("sentence", "label"), [
    ("NATO was founded in 1949 by 12 countries [cite_1].", "supported"),
    ("NATO was founded in 1950 by 12 countries.", "contradictory"),      # another number
    ("The Great Wall of China is visible from the Moon.", "contradictory"),  # negation dropped
    ("NATO has its headquarters in Brussels, Belgium.", "unsupported"),
    ("Vitamin C cures a cold within a day.", "unsupported"),
    ("I hope this helps!", "no_rad"),
    ("Is that what you wanted to know?", "no_rad"),
    ("I cannot answer this from the passages.", "no_rad"),
    ("Yes.", "no_rad"),
])
def test_sentence_rules(sentence, label):
    verdict = rules_judge.sentence_label(sentence, PASSAGES)
    assert verdict.label == label, verdict
    assert verdict.rationale.startswith("rule: ")
    if label in ("supported", "contradictory"):
        assert verdict.excerpt and verdict.excerpt in PASSAGES


def test_numbers_keep_their_value_not_their_commas():
    assert rules_judge.numbers("about 299,792 km per second, 4.25% in 2024.") == {
        "299792", "4.25", "2024"}
    assert rules_judge.content("The [cite_3] wall isn't long") == {"wall", "long"}


@pytest.mark.parametrize(("text", "grade"), [
    ("There is not enough grounding for an answer.", "missing"),
    ("I couldn't find enough information to answer this question.", "missing"),
    ("The passages do not give the learning rate, so I cannot answer.", "missing"),
    ("NATO was founded in 1949. I am not sure of the day. It had 12 members.", "attempted"),
    ("NATO was founded in 1949 by 12 countries.", "attempted"),
])
def test_deflection_rule(text, grade):
    assert rules_judge.deflection(text) == grade


@pytest.mark.parametrize(("answer", "reference", "label"), [
    ("NATO was founded in 1949 by 12 countries.", "NATO was founded in 1949 by 12 countries.",
     "No Issues"),
    ("NATO was founded in 1949.", "NATO was founded in 1949 in Washington by twelve countries "
     "of Europe and North America.", "Minor Issue(s)"),    # 3 of 9 content words: 33 %
    ("It was a long time ago.", "NATO was founded in 1949 by 12 countries.", "Major Issue(s)"),
    ("Yes, you need a visa for Japan.", "No, you do not need a visa for Japan.", "Major Issue(s)"),
    ("There is not enough grounding for an answer.", "NATO was founded in 1949.", "Major Issue(s)"),
    ("NATO was founded in 1949.", "There is not enough grounding for an answer.", "Major Issue(s)"),
    ("I could not find enough information.", "There is not enough grounding for an answer.",
     "No Issues"),
])
def test_eligibility_rule(answer, reference, label):
    assert rules_judge.eligibility(answer, reference)[0] == label
    assert rules_judge.llmeval(answer, reference) == ("Yes" if label == "No Issues" else "No")


def test_its_replies_to_the_app_prompts_are_read_by_the_app_parsers():
    passages = (RagPassage(1, "NATO was founded on April 4, 1949, by 12 countries.", "web", "", None),)
    sentences = ["NATO was founded in 1949 [cite_1].", "It has 32 members today.", "Hope this helps!"]
    question = "When was NATO founded?"
    fact = rules_judge.reply(prompts.factuality_messages(question, passages, sentences))
    parsed = parse_factuality(fact, sentences)
    assert parsed.valid, parsed
    assert [v["label"] for v in parsed.value] == ["supported", "unsupported", "no_rad"]
    elig = rules_judge.reply(prompts.eligibility_messages(question, "NATO was founded in 1949.",
                                                          "NATO was founded in 1949."))
    assert parse_eligibility(elig).value == "No Issues"
    defl = rules_judge.reply(prompts.deflection_messages(question, "I do not know."))
    assert parse_deflection(defl).value == "missing"
    yes = rules_judge.reply(prompts.llmeval_messages(question, "In 1949.", "NATO: 1949."))
    assert parse_llmeval(yes).value["score"] == 1
    # anything else: a sentence the parsers read as invalid, never a guess
    other = rules_judge.reply([{"role": "user", "content": "Which response is better? [[A]] or [[B]]"}])
    assert other == rules_judge.ONLY_RAG
    assert not parse_eligibility(other).valid and not parse_deflection(other).valid


def test_the_server_speaks_the_openai_protocol_to_the_real_client():
    with start_rules_server() as server:
        client = openai.OpenAI(api_key="none", base_url=server.base_url, max_retries=0)
        messages = prompts.deflection_messages("Q?", "There is not enough grounding for an answer.")
        reply = client.chat.completions.create(model=server.model, messages=messages,
                                               temperature=0.7, max_tokens=64)
        assert json.loads(reply.choices[0].message.content)["grade"] == "missing"
        assert [m.id for m in client.models.list().data] == [RULES_MODEL]
        with pytest.raises(openai.NotFoundError, match="this server has 'needlework-rules' only"):
            client.chat.completions.create(model="gpt-4o", messages=messages)
        with pytest.raises(openai.BadRequestError, match="whole completions only"):
            client.chat.completions.create(model=server.model, messages=messages, stream=True)
        assert check_connection(server.connection()).ok
        client.close()
    assert not server.alive()


@pytest.mark.parametrize(("body", "status", "message"), [
    (b"{not json", 400, "not JSON"),
    (b"[1]", 400, "JSON object"),
    (json.dumps({"model": "needlework-rules", "messages": []}).encode(), 400, "messages"),
    (json.dumps({"model": "needlework-rules", "messages": [{"role": "user", "content": 3}]})
     .encode(), 400, "messages"),
])
def test_a_bad_request_gets_one_clear_error(body, status, message):
    code, reply = answer(body)
    assert code == status and message in reply["error"]["message"]


def test_one_server_per_process_started_once():
    judges = RulesJudges()
    try:
        first = judges.start()
        assert judges.start() is first and judges.running() is first
    finally:
        judges.stop()
    assert judges.running() is None


@pytest.mark.slow
def test_the_demo_answers_show_every_figure_with_the_rules_judge(tmp_path):
    """``make run``'s demo: rag-eval --rules-judge on the stored demo answers gives every
    judge figure for both demo models, none from an invalid answer, and the careful model
    ahead of the hasty one where the demo answers were written to differ."""
    db = str(tmp_path / "demo.db")
    run = [sys.executable, "-m", "needlework"]
    subprocess.run([*run, "seed-demo", "--db", db], cwd=ROOT, check=True, capture_output=True)
    out = subprocess.run([*run, "rag-eval", "--dataset", "demo-grounding", "--stored",
                          "--rules-judge", "--json", "--no-progress", "--db", db],
                         cwd=ROOT, check=True, capture_output=True, text=True, timeout=300)
    report = json.loads(out.stdout)
    assert report["judge"]["model"] == RULES_MODEL
    overall = report["overall"]
    figures = ("eligibility", "unadjusted_factuality", "factuality", "uraf", "raf",
               "deflection_tpr", "deflection_fpr", "llmeval")
    for model in ("demo-careful", "demo-hasty"):
        for name in figures:
            assert overall[model][name] is not None, (model, name)
    assert all(not row["invalid"] for row in report["answers"] if row["answered"])
    careful, hasty = overall["demo-careful"], overall["demo-hasty"]
    for name in ("eligibility", "factuality", "uraf", "raf", "llmeval", "deflection_tpr"):
        assert careful[name] > hasty[name], name
    assert careful["deflection_fpr"] < hasty["deflection_fpr"]
    # the irrelevant-passage fact: supported against all passages, not the relevant ones
    lisbon = [s for row in report["answers"] if row["model"] == "demo-hasty" and row["answered"]
              for s in row["sentences"] if "Lisbon" in s["text"]]
    assert [(s["all"]["label"], s["relevant"]["label"]) for s in lisbon] == [
        ("supported", "unsupported")]


@pytest.mark.slow
def test_serve_rules_judge_prints_where_it_serves_and_stops_on_ctrl_c():
    import signal  # noqa: PLC0415

    # Ctrl+C in a terminal: SIGINT as Python handles it by default (a suite started in the
    # background, e.g. `make test &`, hands its children SIGINT ignored, and Python keeps that)
    process = subprocess.Popen([sys.executable, "-m", "needlework", "serve-rules-judge"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        lines = [process.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("serving the rules judge (not an LLM)")
        base_url = lines[1].split("base URL: ", 1)[1].strip()
        assert lines[2].strip() == f"model: {RULES_MODEL}"
        client = openai.OpenAI(api_key="none", base_url=base_url, max_retries=0)
        reply = client.chat.completions.create(
            model=RULES_MODEL, messages=prompts.deflection_messages("Q?", "NATO: 1949."))
        assert json.loads(reply.choices[0].message.content)["grade"] == "attempted"
        client.close()
        process.send_signal(signal.SIGINT)
        assert process.wait(20) == 0
    finally:
        process.kill()
        process.stdout.close()


@pytest.mark.slow
def test_it_listens_on_its_own_port_when_free_so_a_rerun_is_answered_from_the_cache(
        tmp_path, monkeypatch):
    """The call cache is keyed by the judge's address: on its preferred port the rules judge
    keeps one address from one start to the next, and a second rag-eval asks it nothing.
    When the port is taken it falls back to a free one. (The preferred port is set to a
    free one here: an app of the browser tests may hold the default.)"""
    from needlework.judges.serve import free_port  # noqa: PLC0415
    from needlework.rag.rules_server import start_rules_server  # noqa: PLC0415

    port = free_port()
    monkeypatch.setenv("NEEDLEWORK_RULES_JUDGE_PORT", str(port))
    db = str(tmp_path / "demo.db")
    run = [sys.executable, "-m", "needlework"]
    subprocess.run([*run, "seed-demo", "--db", db], cwd=ROOT, check=True, capture_output=True)
    evaluate = [*run, "rag-eval", "--dataset", "demo-grounding", "--stored", "--rules-judge",
                "--json", "--no-progress", "--db", db]
    first = json.loads(subprocess.run(evaluate, cwd=ROOT, check=True, capture_output=True,
                                      text=True, timeout=300).stdout)
    second = json.loads(subprocess.run(evaluate, cwd=ROOT, check=True, capture_output=True,
                                       text=True, timeout=300).stdout)
    assert first["judge"]["endpoint"] == f"http://127.0.0.1:{port}/v1"
    assert first["calls"]["sent"] > 0 and first["calls"]["cached"] == 0
    assert second["calls"]["sent"] == 0 and second["calls"]["cached"] == first["calls"]["sent"]
    assert second["overall"] == first["overall"]
    with start_rules_server() as taken, start_rules_server() as other:
        assert taken.port == port and other.port != port
        assert other.alive()
