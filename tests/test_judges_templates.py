"""Prompt templates: the papers' prompts as defaults, an edited template as a run of its
own (both cached, both listed with their templates, neither asked twice), refusals that
name the placeholder, the papers' answer formats read by the parsers, and the CLI and
page that take a template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from needlework.judges import prompts
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge
from needlework.judges.job import job_template, judge_options
from needlework.judges.parse import parse_modifications, parse_score, parse_selection
from needlework.judges.templates import (
    TemplateError,
    fields,
    from_dict,
    make,
    placeholders,
)
from needlework.rag import prompts as rag_prompts
from needlework.rag import rules_judge
from needlework.rag.answers import AnswerSet
from needlework.rag.parse import (
    parse_deflection,
    parse_eligibility,
    parse_factuality,
    parse_llmeval,
)
from needlework.rag.questions import RagPassage
from needlework.rag.run import RagEvalSpec, evaluate
from needlework.results.compare import list_runs
from store import judges as judge_store
from store import rag as rag_store
from store.scores import list_jobs
from tests.conftest import ROOT, jsonl
from tests.judges_fixtures import FakeJudgeServer
from tests.rag_fixtures import ANSWERS_M, dataset_bytes
from tests.test_judges_engine import BLOCK, pairs, picks_good

ALL_MODES = [(prompts.TEMPLATES, m) for m in prompts.TEMPLATES] + \
            [(rag_prompts.TEMPLATES, m) for m in rag_prompts.TEMPLATES]
EDIT = "Think about safety first.\n\n"


def calls(db) -> int:
    return db.conn.execute("select count(*) from judge_calls").fetchone()[0]


def sample_values(mode) -> dict[str, str]:
    return {name: f"<{name} value>" for name in mode.placeholders}


@pytest.mark.parametrize(("table", "mode"), ALL_MODES)
def test_every_default_renders_with_its_modes_placeholders(table, mode) -> None:
    default = table[mode][0]
    assert default.name not in ("needlework", "edited") and default.source  # a paper's
    make(default.mode, default.user, default.system)  # passes its own check
    used = placeholders(default.system + default.user)
    assert used and set(used) <= set(default.mode.placeholders)
    for group in default.mode.required:
        assert set(group) & set(used), (mode, group)
    messages = default.messages(sample_values(default.mode))
    text = "\n".join(m["content"] for m in messages)
    for name in used:
        assert f"<{name} value>" in text and "{" + name + "}" not in text
    assert fields(default, messages) == {n: f"<{n} value>" for n in used}


def test_the_defaults_say_where_they_come_from() -> None:
    sources = {m: table[m][0].source for table, m in ALL_MODES}
    commit_lfrb, commit_bergen = "e30933a580959d4432b43c05405333f1199bed32", "1b0ee2c63b2e06cbcd1c81f2daccb30b1cafdbfe"
    assert all(commit_lfrb in sources[m] and "infer_bon_api.py" in sources[m]
               for m in ("selection", "scoring"))
    assert "data_gene_finegrained.py" in sources["needle"]
    for mode, section in (("eligibility", "B.2"), ("factuality", "B.3"), ("deflection", "B.4")):
        assert "GaRAGe" in sources[mode] and f"appendix {section}" in sources[mode]
    assert commit_bergen in sources["llmeval"] and "openai.py" in sources["llmeval"]


def test_the_selection_default_is_long_form_rewardbench_for_any_number_of_responses() -> None:
    two = prompts.selection_messages("Q?", ["a", "b"])[0]["content"]
    assert "provided by two AI assistants" in two and "comparing the two responses" in two
    assert two.endswith('format: "[[A]]" if assistant A is best, "[[B]]" if assistant B is '
                        "best.[User Question]\nQ?\n\n[The Start of Assistant A's Answer]\na\n"
                        "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's "
                        "Answer]\nb\n[The End of Assistant B's Answer]")
    four = prompts.selection_messages("Q?", list("abcd"))[0]["content"]
    assert ('"[[C]]" if assistant C is best, and "[[D]]" if assistant D is best.[User Question]'
            in four) and "comparing the four responses" in four
    score = prompts.scoring_messages("Q?", "R.")[0]["content"]
    assert "on a scale of 0 to 10" in score and score.endswith("[Response]\nR.\n\n[Your judgement]")


def test_the_demo_judge_gets_the_wording_it_was_trained_on(tmp_path) -> None:
    assert prompts.default_template("selection", str(tmp_path)) is prompts.LFRB_SELECTION
    (tmp_path / prompts.DEMO_REPORT).write_text("{}", encoding="utf-8")
    assert prompts.default_template("selection", str(tmp_path)) is prompts.NEEDLEWORK_SELECTION
    assert prompts.default_template("selection", "gpt-4o") is prompts.LFRB_SELECTION
    ours = prompts.selection_messages("Q?", ["a", "b"], prompts.NEEDLEWORK_SELECTION)[0]["content"]
    assert "[Response A]\na\n[End of Response A]" in ours and ours.endswith("[[A]] or [[B]].")


@pytest.mark.parametrize(("user", "named"), [
    ("Judge {question} and {responses}; also {nope}.", "{nope}"),
    ("Judge {question} {Responses}.", "{responses} or {responses_labelled}"),
    ("Judge these: {responses}", "{question}"),
])
def test_a_template_with_an_unknown_or_missing_placeholder_is_refused_naming_it(user, named) -> None:
    with pytest.raises(TemplateError) as refused:
        prompts.LFRB_SELECTION.edited(user)
    message = str(refused.value)
    assert named in message and message.endswith(".") and message.count(". ") == 0, message
    with pytest.raises(TemplateError, match="is empty"):
        prompts.LFRB_SCORING.edited("  \n")


def test_other_braces_are_text_and_values_are_filled_once() -> None:
    edited = rag_prompts.BERGEN_LLMEVAL.edited(
        'Answer {Yes} or {No}, or JSON {"ok": true}. {question} / {reference} / {answer}')
    user = rag_prompts.llmeval_messages("{answer}?", "ref", "gen", edited)[-1]["content"]
    assert user == 'Answer {Yes} or {No}, or JSON {"ok": true}. {answer}? / ref / gen'


def test_a_stored_template_is_checked_again_and_must_match_its_digest() -> None:
    edited = prompts.LFRB_SCORING.edited(EDIT + prompts.LFRB_SCORING.user)
    options = judge_options(mode="scoring", template=edited)
    assert job_template(options) == edited and options["template"]["digest"] == edited.digest
    with pytest.raises(TemplateError, match="does not match its digest"):
        from_dict(prompts.MODES, {**options["template"], "user": prompts.LFRB_SCORING.user})
    with pytest.raises(ValueError, match="cannot run in selection mode"):
        judge_options(mode="selection", template=edited)


def test_an_edited_template_is_a_run_of_its_own_and_neither_is_asked_twice(db) -> None:
    edited = prompts.LFRB_SELECTION.edited(EDIT + prompts.LFRB_SELECTION.user)
    items = pairs(3)
    with FakeJudgeServer(picks_good) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        default = run_judge(db, conn, items, "selection", dataset="t", order="rotations")
        assert len(server.chat_requests()) == 6 and calls(db) == 6
        mine = run_judge(db, conn, items, "selection", dataset="t", order="rotations",
                         template=edited)
        assert len(server.chat_requests()) == 12 and calls(db) == 12  # 6 cache entries each
        sent = [r["body"]["messages"][0]["content"] for r in server.chat_requests()]
        assert all(not s.startswith(EDIT) for s in sent[:6]) and all(s.startswith(EDIT) for s in sent[6:])
        again = [run_judge(db, conn, items, "selection", dataset="t", order="rotations",
                           template=t) for t in (None, edited)]
        assert len(server.chat_requests()) == 12  # re-running either sends no request
    assert default.run_key != mine.run_key
    assert [r.run_key for r in again] == [default.run_key, mine.run_key]
    assert all(r.summary["requests"] == 0 and r.summary["cached"] == 6 for r in again)
    assert mine.summary["accuracy"] == default.summary["accuracy"] == 1.0
    stored = {k: judge_store.get_run(db, k) for k in (default.run_key, mine.run_key)}
    assert stored[default.run_key]["options"]["template"]["name"] == "long-form-rewardbench"
    assert stored[mine.run_key]["options"]["template"]["user"] == edited.user
    assert stored[mine.run_key]["summary"]["prompt_version"] == edited.label
    titles = [ref.title for ref in list_runs(db, "t") if ref.kind == "judge"]
    assert len(titles) == 2  # side by side where runs are compared, told apart by template
    assert any(t.endswith(f"prompt edited ({edited.digest[:8]})") for t in titles), titles
    assert any(t.endswith(f"prompt long-form-rewardbench ({prompts.LFRB_SELECTION.digest[:8]})")
               for t in titles), titles


def test_an_edited_rag_template_asks_only_its_own_prompts_again(db) -> None:
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    eligibility = rag_prompts.GARAGE_ELIGIBILITY.edited(EDIT + rag_prompts.GARAGE_ELIGIBILITY.user)
    with FakeJudgeServer(lambda body: "Yes") as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        default = evaluate(db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), conn))
        first = len(server.chat_requests())
        mine = evaluate(db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), conn,
                                        templates=(eligibility,)))
        edited_sent = [r for r in server.chat_requests()[first:]]
        for templates in ((), (eligibility,)):
            evaluate(db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), conn,
                                     templates=templates))
        assert len(server.chat_requests()) == first + len(edited_sent)  # nothing asked again
    answered = sum(1 for text in ANSWERS_M.values() if text.strip())
    assert len(edited_sent) == answered  # only the eligibility prompts are new
    assert all(r["body"]["messages"][0]["content"].startswith(EDIT) for r in edited_sent)
    assert default.run_key != mine.run_key
    runs = {r["run_key"]: r for r in rag_store.list_runs(db, "museum")}
    assert set(runs) == {default.run_key, mine.run_key}
    assert mine.summary["templates"]["eligibility"]["user"] == eligibility.user
    assert default.summary["templates"]["eligibility"]["name"] == "garage"
    assert mine.summary["templates"]["factuality"] == default.summary["templates"]["factuality"]


def test_the_rules_judge_reads_the_published_prompts_not_an_edited_one() -> None:
    edited = rag_prompts.GARAGE_DEFLECTION.edited(EDIT + rag_prompts.GARAGE_DEFLECTION.user)
    for t in rag_prompts.TEMPLATES["deflection"]:
        reply = rules_judge.reply(rag_prompts.deflection_messages("Q?", "I do not know.", t))
        assert parse_deflection(reply).value == "missing"
    assert rag_prompts.read_prompt(rag_prompts.deflection_messages("Q?", "A", edited)) is None
    assert rules_judge.reply(rag_prompts.deflection_messages("Q?", "A", edited)) == rules_judge.ONLY_RAG


# -- the answers the papers' prompts ask for ------------------------------------------------


def test_the_papers_answer_formats_parse() -> None:
    selection = parse_selection("Assistant B follows the instructions better.\n\n[[B]]", 4)
    assert selection.valid and selection.value == 1
    score = parse_score("The response is accurate but thin.\n7", 0, 10)  # nothing after it
    assert score.valid and score.value == 7 and score.rule == "trailing"
    assert parse_score("Helpful overall. **8**", 0, 10).value == 8
    eligibility = parse_eligibility('Analysis: ...\n{"Instruction Following": "Minor Issue(s)"}')
    assert eligibility.valid and eligibility.value == "Minor Issue(s)"
    deflection = parse_deflection('{\n  "justification": "It declines.",\n  "grade": "missing",\n}')
    assert deflection.valid and deflection.value == "missing"
    assert parse_llmeval("{Yes}").value == {"score": 1, "weird": False}


def test_factuality_sentences_named_by_their_text_as_garage_asks() -> None:
    sentences = ["Apples are red [cite_1].", "Bananas are green.", "Apples are red [cite_2]."]
    answer = json.dumps({"grounding_quality": [
        {"sentence": "Apples are red.", "label": "supported", "rationale": "r", "excerpt": "x"},
        {"sentence": "Bananas  are green.", "label": "contradictory", "rationale": "r",
         "excerpt": "y"},
        {"sentence": "apples are red [cite_2].", "label": "unsupported", "rationale": "r",
         "excerpt": None}]})
    parsed = parse_factuality(answer, sentences)
    assert parsed.valid, parsed
    assert [v["label"] for v in parsed.value] == ["supported", "contradictory", "unsupported"]
    wrong = json.dumps({"grounding_quality": [{"sentence": "Pears are blue.", "label": "supported"}]})
    assert not parse_factuality(wrong, ["Pears are blue now."]).valid
    passages = [RagPassage(1, "Apples are red fruits.", "web", "2024-01-01", None)]
    text = rag_prompts.factuality_messages("Q?", passages, ["Apples\nare red."])[0]["content"]
    assert text.endswith("**Response:** Apples are red.")  # one sentence, one line


def test_the_papers_needle_answer_parses_into_its_two_modifications() -> None:
    chunk = "The war ended in 1945."
    assert prompts.needle_messages(chunk)[0]["content"].endswith(
        "** Input Text Segment **\nThe war ended in 1945.")
    answer = ("** Positive Modification **\nThe war ended in 1945, in Europe in May.\n\n"
              "** Negative Modification **\nThe war ended in 1946, in Europe in May.")
    parsed = parse_modifications(answer)
    assert parsed.valid and parsed.value == {"positive": "The war ended in 1945, in Europe in May.",
                                             "negative": "The war ended in 1946, in Europe in May."}
    for bad, why in (("** Positive Modification **\nonly this", "Negative"),
                     ("** Negative Modification **\nb\n** Positive Modification **\na", "before"),
                     ("** Positive Modification **\n\n** Negative Modification **\nb", "empty"),
                     ("", "empty")):
        result = parse_modifications(bad)
        assert not result.valid and why in result.reason, (bad, result)


# -- the command line -------------------------------------------------------------------------


def _pairs_db(path: Path) -> None:
    db = store.connect(path)
    records = [{"id": f"q{k}", "subset": "Chat", "prompt": f"Question {k}?",
                "chosen": [f"A good answer {k}."], "rejected": [f"A rude answer {k}."]}
               for k in range(2)]
    import_bytes(db, jsonl(records), "p.jsonl", dataset="pairs", format="lfrb")
    db.conn.close()


def test_the_judge_verb_takes_a_template_file_and_refuses_a_bad_one(tmp_path, capsys) -> None:
    db = tmp_path / "t.db"
    _pairs_db(db)
    good = tmp_path / "safety-first.txt"
    good.write_text(EDIT + prompts.LFRB_SELECTION.user, encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_text("Which is best? {question} {answers}", encoding="utf-8")
    with FakeJudgeServer(picks_good) as server:
        base = ["judge", "--dataset", "pairs", "--base-url", server.base_url, "--model", "judge",
                "--mode", "selection", "--json", "--no-progress", "--db", str(db)]
        assert main([*base, "--template", str(bad)]) == 2
        assert "{answers}" in capsys.readouterr().err and not server.chat_requests()
        assert main([*base, "--template", str(good)]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert main([*base, "--template", str(good)]) == 0
        again = json.loads(capsys.readouterr().out)
        sent = server.chat_requests()
    assert summary["template"]["name"] == "safety-first" and summary["accuracy"] == 1.0
    assert len(sent) == 2 and all(r["body"]["messages"][0]["content"].startswith(EDIT) for r in sent)
    assert again["requests"] == 0 and again["run_key"] == summary["run_key"]


def test_rag_eval_takes_a_template_per_mode(tmp_path, capsys) -> None:
    path = tmp_path / "m.db"
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    db.conn.close()
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps({"sample_id": k, "answer": v, "model": "m"}) + "\n"
                               for k, v in ANSWERS_M.items()), encoding="utf-8")
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"system": "You grade answers.",
                                "user": "Is {answer} right for {question}, given {reference}?"}),
                    encoding="utf-8")
    with FakeJudgeServer(lambda body: "Yes") as server:
        base = ["rag-eval", "--dataset", "museum", "--answers", str(answers), "--judge-base-url",
                server.base_url, "--judge-model", "judge", "--judge-key-env", "", "--no-progress",
                "--json", "--db", str(path)]
        assert main([*base, "--template", f"llmeval={mine}"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert main([*base, "--template", "nope=x"]) == 2
        assert "nope" in capsys.readouterr().err
        llmeval = [r["body"]["messages"] for r in server.chat_requests()
                   if r["body"]["messages"][0]["content"] == "You grade answers."]
    assert report["templates"]["llmeval"]["name"] == "mine"
    assert report["templates"]["eligibility"]["name"] == "garage"
    assert len(llmeval) == sum(1 for t in ANSWERS_M.values() if t.strip())
    assert llmeval[0][1]["content"].startswith("Is ") and "{" not in llmeval[0][1]["content"]


# -- the page -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_reward_page_edits_the_template_and_shows_it_with_the_run(tmp_path, monkeypatch) -> None:
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    _pairs_db(path)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "pairs"
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    with FakeJudgeServer(picks_good) as server:
        at.text_input(key="jd_base_url").set_value(server.base_url)
        at.text_input(key="jd_model").set_value("judge")
        at.run()
        prompt = at.text_area(key="rj_tpl_selection_long-form-rewardbench_user")
        assert prompt.value == prompts.LFRB_SELECTION.user
        prompt.set_value("Pick one: {question} {nope}").run()
        errors = [e.value.replace("\\", "") for e in at.error]  # shown escaped, as Markdown
        assert any("uses {nope}, which is not a placeholder" in e for e in errors), errors
        assert at.button(key="rj_run").disabled
        at.text_area(key="rj_tpl_selection_long-form-rewardbench_user").set_value(
            EDIT + prompts.LFRB_SELECTION.user).run()
        assert not at.button(key="rj_run").disabled
        at.button(key="rj_run").click()
        at.run()
        job = next(j for j in list_jobs(store.connect(path)) if j["kind"] == "judge")
        RUNNER.join(int(job["id"]), timeout=60)
        at.run()
        sent = [r["body"]["messages"][0]["content"] for r in server.chat_requests()]
    assert not at.exception, at.exception
    assert sent and all(s.startswith(EDIT) for s in sent)
    edited = prompts.LFRB_SELECTION.edited(EDIT + prompts.LFRB_SELECTION.user)
    captions = " ".join(c.value for c in at.caption)
    assert f"prompts {edited.label}" in captions.replace("\\", ""), captions
    assert any(edited.digest[:8] in e.label for e in at.expander), [e.label for e in at.expander]
    assert len(BLOCK.findall(sent[0])) == 2  # the responses shown as the paper shows them
