"""What the commands say and take (issue 59, point 9): serve-judge on a taken port says why;
a comparison's interval reads in its sentence's direction; --max-retries on every verb that
sends requests; `suggestions list --json` gives the suggestions; the help of `judge
--per-subset` and `needle report` says what they do; `needle report --dataset` charts a
needle dataset's stored runs. Real local servers and processes, no mocks."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.figures import paired
from needlework.figures.stats_text import verdict
from needlework.judges.serve import LocalServer, ServerError, wait_ready
from needlework.needle import builder
from store.scores import save_item_scores
from tests.cli_here import run
from tests.conftest import ROOT, garage_records, jsonl
from tests.judges_fixtures import FakeJudgeServer
from tests.rag_fixtures import ANSWERS_M, answers_jsonl, dataset_bytes


def test_serve_judge_on_a_taken_port_says_why() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run(["serve-judge", "--folder", str(ROOT / "models" / "demo-judge"),
                    "--port", str(port)])
    assert done.returncode == 1, done.stderr
    assert f"port {port} on 127.0.0.1 is taken: another program listens there" in done.stderr


def test_a_server_that_exits_is_reported_with_its_last_log_line(tmp_path) -> None:
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:  # a process that fails as uvicorn does on a taken port
        process = subprocess.Popen(
            [sys.executable, "-c", "import sys; print('INFO: starting'); "
             "print('ERROR: [Errno 98] address already in use'); sys.exit(3)"],
            stdout=out, stderr=subprocess.STDOUT)
        process.wait(30)
    server = LocalServer(process, "127.0.0.1", 9, "m", log)
    with pytest.raises(ServerError) as err:
        wait_ready(server, timeout=5)
    first = str(err.value).splitlines()[0]
    assert first == "transformers serve exited with code 3: ERROR: [Errno 98] address already in use"


def test_the_interval_reads_in_the_sentences_direction() -> None:
    # demo-judge right on 4 of 40 pairs, fake3 on 33: fake3 ahead
    first = [1] * 4 + [0] * 36
    second = [1] * 3 + [0] * 1 + [1] * 30 + [0] * 6
    got = paired.paired(first, second, unit="pair")
    assert got.difference < 0 and got.high < 0
    sentence = verdict(got, "demo-judge", "fake3")
    assert "fake3 is ahead of demo-judge by 72.5 points" in sentence, sentence
    assert "interval of fake3 − demo-judge: +" in sentence, sentence
    assert "demo-judge − fake3" not in sentence and " -" not in sentence.split("interval")[1][:30]


@pytest.fixture
def museum(tmp_path):
    path = tmp_path / "nw.db"
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    (tmp_path / "a.jsonl").write_text(answers_jsonl("m", ANSWERS_M))
    db.conn.close()
    return path


@pytest.mark.parametrize("verb", [
    ["rag-generate", "--dataset", "museum", "--base-url", "{url}", "--model", "judge",
     "--key-env", "", "--limit", "2", "--no-progress"],
    ["rag-eval", "--dataset", "museum", "--answers", "{answers}", "--judge-base-url", "{url}",
     "--judge-model", "judge", "--judge-key-env", "", "--no-progress"],
    ["suggestions", "ask", "--dataset", "g", "--judge-base-url", "{url}", "--judge-model",
     "judge", "--judge-key-env", ""],
], ids=["rag-generate", "rag-eval", "suggestions-ask"])
@pytest.mark.slow
def test_max_retries_is_taken_by_every_verb_that_sends_requests(museum, verb) -> None:
    """Against a server answering 500: no retry with 0, each request twice with 1 (how
    many requests go out before the run gives up depends on how many were in flight: the
    check counts how often each one was sent)."""
    sent = {}
    for retries in ("0", "1"):
        with FakeJudgeServer(lambda body: "x", statuses=[500] * 1000) as server:
            args = [a.replace("{url}", server.base_url)
                    .replace("{answers}", str(museum.parent / "a.jsonl")) for a in verb]
            done = run([*args, "--max-retries", retries, "--db", str(museum)])
            assert "unrecognized arguments" not in done.stderr, done.stderr
            sent[retries] = Counter(json.dumps(r, sort_keys=True) for r in server.chat_requests())
    assert sent["0"] and max(sent["0"].values()) == 1, sent["0"]
    assert max(sent["1"].values()) == 2, sent["1"]
    assert sum(n == 2 for n in sent["1"].values()) >= len(sent["1"]) / 2, sent["1"]


def test_suggestions_list_json_gives_the_suggestions(tmp_path) -> None:
    path = tmp_path / "nw.db"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    db.conn.close()
    lines = tmp_path / "s.jsonl"
    lines.write_text(json.dumps({"item": "sample-1", "field": "label:1", "value": "OUTDATED",
                                 "score": 0.8, "source": "gpt"}) + "\n"
                     + json.dumps({"item": "sample-2", "field": "label:2", "value": "UNKNOWN"})
                     + "\n")
    assert run(["suggestions", "import", str(lines), "--dataset", "g", "--db", str(path)]
               ).returncode == 0
    listed = json.loads(run(["suggestions", "list", "--dataset", "g", "--json",
                             "--db", str(path)]).stdout)
    assert [(s["item"], s["field"], s["value"], s["source"]) for s in listed] == [
        ("sample-1", "label:1", "OUTDATED", "gpt"), ("sample-2", "label:2", "UNKNOWN", "file:s.jsonl")]
    assert listed[0]["score"] == 0.8
    one = json.loads(run(["suggestions", "list", "--dataset", "g", "--source", "gpt", "--json",
                          "--db", str(path)]).stdout)
    assert [s["item"] for s in one] == ["sample-1"]
    text = run(["suggestions", "list", "--dataset", "g", "--db", str(path)]).stdout
    assert "gpt: 1 suggestion(s) for 1 item(s)" in text


def test_the_help_says_what_the_options_do() -> None:
    judge = run(["judge", "--help"]).stdout
    assert "first N items" not in " ".join(judge.split())
    assert "spread over the needle positions" in " ".join(judge.split())
    report = " ".join(run(["needle", "report", "--help"]).stdout.split())
    assert "bootstrap interval" not in report
    assert "Wilson's for a reward model's pairs" in report and "--dataset NAME" in report


@pytest.mark.slow
def test_needle_report_charts_a_needle_datasets_stored_runs(tmp_path) -> None:
    from tests.test_needle_page import small_needles  # noqa: PLC0415

    path = tmp_path / "nw.db"
    db = store.connect(path)
    records = small_needles(count=1)
    import_bytes(db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    save_item_scores(db, "needles", "a" * 32, "fp32|full", "/models/alpha-rm",
                     [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                       "chosen_scores": [1.0], "rejected_scores": [0.0]} for r in records])
    db.conn.close()
    with FakeJudgeServer(lambda body: "[[A]]") as server:  # always A: right in one order
        judged = run(["judge", "--dataset", "needles", "--base-url", server.base_url, "--model",
                      "judge", "--key-env", "", "--mode", "selection", "--no-progress",
                      "--db", str(path)])
    assert judged.returncode == 0, judged.stderr
    out = Path(tempfile.mkdtemp(dir=tmp_path))
    done = run(["needle", "report", "--dataset", "needles", "--out-dir", str(out), "--json",
                "--db", str(path)])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    models = {c["model"] for c in report["cells"]}
    assert models == {"alpha-rm", "judge judge"}, models
    alpha = [c for c in report["cells"] if c["model"] == "alpha-rm"]
    assert sum(c["n"] for c in alpha) == len(records) and all(c["accuracy"] == 1 for c in alpha)
    judge = [c for c in report["cells"] if c["model"] == "judge judge"]
    assert sum(c["n"] for c in judge) == 2 * len(records)  # both orders of every pair
    assert report["written"]
    missing = run(["needle", "report", "--dataset", "nope", "--out-dir", str(out),
                   "--db", str(path)])
    assert missing.returncode == 1 and "no dataset named 'nope'" in missing.stderr
