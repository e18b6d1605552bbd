"""The leaderboard of a dataset (issue 48, point 6): a tiny reward model really scores a small
set and a judge really runs against a local OpenAI-compatible server (the real ``openai``
client over HTTP), twice, one of them with HTTP 500 on some requests; then every row, its
counts, its interval and its subsets are recounted by hand from the stored scores and from
what the server answered."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.cli import main
from needlework.figures.lines import judge_lines, leaderboard_lines
from needlework.figures.stats_text import percent, percent_range
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge
from needlework.results import leaderboard as lb
from needlework.rewards.runs import load_preferences, score_dataset
from needlework.teams.permissions import PermissionDenied, User
from store.datasets import NewItem, create_dataset
from store.scores import item_scores, save_item_scores
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer, last_user_text
from tests.rewards_fixtures import tiny_model_dir, tiny_rm  # noqa: F401
from tests.teams_fixtures import open_as, team_mode_db
from tests.test_judges_engine import BLOCK

QUESTION = re.compile(r"Question (\d+)\?")
N = 9  # items q0..q8: odd ones QA, even ones Chat


def wilson(right: int, n: int) -> tuple[float, float]:
    """The Wilson score interval at 95 %, written out here from the textbook formula."""
    z = 1.959963984540054
    p = right / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if right == 0 else centre - half), (1.0 if right == n else centre + half)


def make_set(path: Path) -> store.Database:
    db = store.connect(path)
    items = [NewItem(f"q{k}", {"id": f"q{k}", "subset": "QA" if k % 2 else "Chat",
                               "prompt": f"Question {k}?",
                               "chosen": [f"A good, kind answer to question {k}."],
                               "rejected": [f"A rude answer {k}, you fool.",
                                            f"A short wrong reply {k}."]},
                     "QA" if k % 2 else "Chat") for k in range(N)]
    create_dataset(db, "prefs", "preference", "lfrb", items)
    return db


class Scripted:
    """Names the good response, except for items 0, 3, 6 (the rude one); remembers what it
    answered per item."""

    def __init__(self) -> None:
        self.right: dict[int, bool] = {}

    def __call__(self, body: dict) -> str:
        prompt = last_user_text(body)
        item = int(QUESTION.search(prompt).group(1))
        blocks = BLOCK.findall(prompt)
        good = next(label for label, text in blocks if "good" in text)
        bad = next(label for label, text in blocks if "rude" in text)
        wrong = item % 3 == 0
        self.right[item] = not wrong
        return f"[[{bad if wrong else good}]]"


@pytest.fixture
def board(tmp_path, tiny_rm):  # noqa: F811
    """The set scored by the tiny model and judged twice (the second run with seed 1, HTTP
    500 on the 2nd and 5th request); returns the db, its path and the hand recounts."""
    path = tmp_path / "lb.db"
    db = make_set(path)
    score_dataset(db, tiny_rm, "prefs")
    _, items = load_preferences(db, "prefs")
    first, second = Scripted(), Scripted()
    with FakeJudgeServer(first) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=1, max_retries=0)
        run_judge(db, conn, items, "selection", dataset="prefs", format_name="lfrb")
    statuses = [200, 500, 200, 200, 500] + [200] * N
    with FakeJudgeServer(second, statuses=list(statuses)) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=1, max_retries=0)
        run_judge(db, conn, items, "selection", dataset="prefs", format_name="lfrb", seed=1)
        sent = server.chat_requests()
        assert len(sent) == N  # no retry: one request per item
        failed_items = {int(QUESTION.search(last_user_text(r["body"])).group(1))
                        for r, status in zip(sent, statuses[:N], strict=True) if status == 500}
    assert len(failed_items) == 2
    answered_second = {k: v for k, v in second.right.items() if k not in failed_items}
    return db, path, first.right, answered_second, failed_items


def recount(right: dict[int, bool]) -> dict[str, tuple[int, int]]:
    """``{subset: (right, n)}`` and ``overall``."""
    out: dict[str, tuple[int, int]] = {}
    for k, ok in right.items():
        subset = "QA" if k % 2 else "Chat"
        r, n = out.get(subset, (0, 0))
        out[subset] = (r + ok, n + 1)
    out["overall"] = (sum(right.values()), len(right))
    return out


def classifier_recount(db) -> dict[str, tuple[int, int]]:
    rows = item_scores(db, "prefs", next(iter({r["fingerprint"] for r in db["item_scores"].rows})))
    right = {int(r["item_key"][1:]): r["chosen_scores"][0] > max(r["rejected_scores"]) for r in rows}
    assert len(right) == N
    return recount(right)


def test_every_run_is_a_row_and_every_figure_recounts_by_hand(board) -> None:
    db, _, first, second, failed = board
    rows = lb.leaderboard(db, "prefs")
    assert [r.kind for r in rows].count(lb.REWARD_MODEL) == 1
    assert [r.kind for r in rows].count(lb.JUDGE) == 2
    # sorted by accuracy, best first
    assert [r.accuracy for r in rows] == sorted((r.accuracy for r in rows), reverse=True)
    expected = {"classifier": classifier_recount(db), "seed 0": recount(first),
                "seed 1": recount(second)}
    assert expected["seed 0"]["overall"] == (6, 9)  # items 0, 3 and 6 wrong
    for row in rows:
        which = ("classifier" if row.kind == lb.REWARD_MODEL
                 else "seed 1" if "seed 1" in row.mode else "seed 0")
        right, n = expected[which]["overall"]
        assert (row.right, row.n) == (right, n), which
        assert row.accuracy == pytest.approx(right / n)
        low, high = wilson(right, n)
        assert row.interval["method"] == "wilson"
        assert (row.interval["low"], row.interval["high"]) == (pytest.approx(low), pytest.approx(high))
        assert set(row.subsets) == {"QA", "Chat"}
        for name, part in row.subsets.items():
            r, k = expected[which][name]
            assert (part["right"], part["n"]) == (r, k), (which, name)
            lo, hi = wilson(r, k)
            assert (part["interval"]["low"], part["interval"]["high"]) == (
                pytest.approx(lo), pytest.approx(hi))
        if row.kind == lb.JUDGE:
            assert row.unit == "trials" and row.metric == "accuracy per trial"
            assert row.failed == (len(failed) if which == "seed 1" else 0)
            assert row.items == N - row.failed  # one trial per item in one shuffled order
            assert row.endpoint.startswith("http://127.0.0.1:") and row.temperature == "0"
            assert row.name == "judge judge" and row.model == "judge"
        else:
            assert row.failed is None and row.items == N and row.metric == lb.BEST_OF_N
            assert row.mode == "fp32|skip:256"  # the variant: dtype and input view


def test_cli_text_json_and_csv_give_the_same_rows(board, capsys) -> None:
    db, path, *_ = board
    rows = lb.as_dicts(lb.leaderboard(db, "prefs"))
    assert main(["metrics", "--leaderboard", "--dataset", "prefs", "--db", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == json.loads(json.dumps({"dataset": "prefs", "rows": rows}))
    assert main(["metrics", "--leaderboard", "--dataset", "prefs", "--db", str(path)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == "prefs: 3 runs, best accuracy first"
    assert text[1:] == leaderboard_lines(rows)
    judge = next(r for r in rows if r["kind"] == lb.JUDGE and "seed 0" in r["mode"])
    lo, hi = wilson(6, 9)
    line = next(t for t in text if "seed 0" in t)
    assert (f"accuracy per trial 66.7 % (6/9 trials), 95 % Wilson {100 * lo:.1f}–{100 * hi:.1f} %"
            in line), line
    assert "9 items answered, 0 failed requests" in line
    assert judge["accuracy"] == pytest.approx(6 / 9)
    assert main(["metrics", "--leaderboard", "--dataset", "prefs", "--db", str(path), "--csv"]) == 0
    csv_lines = capsys.readouterr().out.splitlines()
    assert csv_lines[0].startswith("#,run,kind,mode,metric,accuracy,counted,95 % interval,method")
    assert len(csv_lines) == 4
    assert "66.7 %" in next(c for c in csv_lines if "seed 0" in c)


def test_cli_refuses_a_missing_dataset_and_mixed_arguments(tmp_path, capsys) -> None:
    path = tmp_path / "empty.db"
    make_set(path)
    assert main(["metrics", "--leaderboard", "--dataset", "nope", "--db", str(path)]) == 1
    assert "error: no dataset named 'nope' in the store: import it first" in capsys.readouterr().err
    assert main(["metrics", "--leaderboard", "--db", str(path)]) == 2
    assert "--leaderboard needs --dataset" in capsys.readouterr().err
    assert main(["metrics", "--leaderboard", "--dataset", "prefs", "--kind", "bon",
                 "--db", str(path)]) == 2
    assert main(["metrics", "--kind", "bon"]) == 2
    assert "needs --kind and --scores" in capsys.readouterr().err
    assert main(["metrics", "--leaderboard", "--dataset", "prefs", "--db", str(path)]) == 0
    assert "no scored model or judge run on this dataset yet" in capsys.readouterr().out


def test_an_annotator_may_not_see_the_models_results(board) -> None:
    db, *_ = board
    annotator = User(id=1, name="ann", role="annotator")
    with pytest.raises(PermissionDenied, match="ann is an annotator and may not see the models' "
                                               "results in dataset 'prefs': that needs the reviewer"):
        lb.leaderboard(db, "prefs", annotator)
    with pytest.raises(PermissionDenied, match="disabled"):
        lb.leaderboard(db, "prefs", User(id=3, name="old", role="admin", disabled=True))
    assert len(lb.leaderboard(db, "prefs", User(id=2, name="rev", role="reviewer"))) == 3


def test_judge_lines_give_counts_and_intervals_of_a_stored_run(board) -> None:
    db, *_ = board
    from store import judges as store_judges  # noqa: PLC0415

    run = next(r for r in store_judges.finished_runs(db, "prefs")
               if r["summary"].get("failed"))
    lines = judge_lines(run["summary"])
    right, n = run["summary"]["metrics"]["bon"]["correct"], run["summary"]["metrics"]["bon"]["n"]
    assert n == N - 2
    lo, hi = wilson(right, n)
    assert lines[0] == (f"accuracy {100 * right / n:.1f} % ({right}/{n} trials), "
                        f"95 % Wilson {100 * lo:.1f}–{100 * hi:.1f} %")
    assert {line.split(":")[0].strip() for line in lines[1:]} == {"Chat", "QA"}


# -- the page -----------------------------------------------------------------------------


def open_rewards_page(path: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    return at


def board_frame(at: AppTest):
    return next(d.value for d in at.dataframe if "95 % interval" in d.value.columns)


def test_the_page_shows_the_rows_the_command_prints_and_opens_one(board, monkeypatch,
                                                                  capsys) -> None:
    db, path, *_ = board
    assert main(["metrics", "--leaderboard", "--dataset", "prefs", "--db", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)["rows"]
    at = open_rewards_page(path, monkeypatch)
    frame = board_frame(at)
    assert len(frame) == len(printed) == 3
    for (_, cells), row in zip(frame.iterrows(), printed, strict=True):
        assert cells["run"] == row["name"] and cells["mode"] == row["mode"]
        assert cells["accuracy"] == percent(row["right"], row["n"])
        assert cells["counted"] == f"{row['right']}/{row['n']} {row['unit']}"
        assert cells["95 % interval"] == percent_range(row["interval"])
        assert cells["method"] == "95 % Wilson"
        for name, part in row["subsets"].items():  # the counts beside the share (issue 59)
            assert cells[name] == (f"{percent(part['right'], part['n'])} "
                                   f"({part['right']}/{part['n']} {row['unit']}; "
                                   f"{percent_range(part['interval'])})")
        assert str(cells["failed requests"]) == ("–" if row["failed"] is None else str(row["failed"]))
    # open the last row (the worst) in Results
    last = printed[-1]
    at.selectbox(key="rw_board_open").set_value(last["key"])
    at.button(key="rw_board_go").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["rw_run"] == last["key"]


def test_an_rmbench_set_ranks_by_the_rmbench_score_with_its_domains(tmp_path) -> None:
    """Scores stored for two models on a 5-item RM-Bench set (chat 3 items, math 2): the
    rows' scores and domain columns recounted from the 3×3 wins by hand."""
    db = store.connect(tmp_path / "rm.db")
    domains = ["chat", "chat", "chat", "math", "math"]
    items = [NewItem(f"r{k}", {"id": f"r{k}", "domain": d, "prompt": f"Question {k}?",
                               "chosen": ["c1", "c2", "c3"], "rejected": ["r1", "r2", "r3"]}, d)
             for k, d in enumerate(domains)]
    create_dataset(db, "rm", "preference", "rmbench", items)
    win = {"chosen_scores": [3.0, 3.0, 3.0], "rejected_scores": [1.0, 1.0, 1.0]}
    lose = {"chosen_scores": [0.0, 0.0, 0.0], "rejected_scores": [1.0, 1.0, 1.0]}
    # model A: every chat item won, math one of two; model B: every item lost but one chat
    save_item_scores(db, "rm", "a" * 32, "fp32|full", "/models/a",
                     [{"item_key": f"r{k}", "subset": d, **(lose if k == 4 else win)}
                      for k, d in enumerate(domains)])
    save_item_scores(db, "rm", "b" * 32, "fp32|full", "/models/b",
                     [{"item_key": f"r{k}", "subset": d, **(win if k == 0 else lose)}
                      for k, d in enumerate(domains)])
    rows = lb.leaderboard(db, "rm")
    assert [r.name for r in rows] == ["a", "b"]
    a, b = rows
    assert a.metric == lb.RMBENCH_SCORE and a.right is None and a.n == 5
    assert a.accuracy == pytest.approx((1.0 + 0.5) / 2)  # mean over the domains
    assert b.accuracy == pytest.approx((1 / 3 + 0.0) / 2)
    assert a.subsets["chat"]["accuracy"] == 1.0 and a.subsets["math"]["accuracy"] == 0.5
    assert (a.subsets["chat"]["n"], a.subsets["math"]["n"]) == (3, 2)
    assert a.interval["method"] in ("bootstrap", "none", "wilson")
    cells = lb.table(rows)
    # model A won 9 comparisons of each won item, 0 of the lost one: 36 of 45
    assert cells[0]["accuracy"] == "75.0 %"
    assert cells[0]["counted"] == "n=5 items, 36/45 comparisons"
    assert cells[0]["chat"].startswith("100.0 % (27/27 comparisons, 3 items; ")
    assert cells[0]["math"].startswith("50.0 % (9/18 comparisons, 2 items; ")
    assert cells[1]["accuracy"] == "16.7 %"


def test_the_signature_changes_when_a_run_is_added_or_rescored(tmp_path) -> None:
    db = make_set(tmp_path / "sig.db")
    empty = lb.signature(db, "prefs")
    assert empty[-1] == () and empty[0].endswith("sig.db")
    rows = [{"item_key": f"q{k}", "subset": "QA" if k % 2 else "Chat", "chosen_scores": [1.0],
             "rejected_scores": [0.0, 2.0]} for k in range(4)]
    save_item_scores(db, "prefs", "c" * 32, "fp32|full", "/m/c", rows)
    one = lb.signature(db, "prefs")
    assert one != empty and one[-1][0][2] == 4
    save_item_scores(db, "prefs", "c" * 32, "fp32|full", "/m/c",
                     [{**rows[0], "item_key": "q5"}])
    assert lb.signature(db, "prefs") != one  # more items scored: new rows
    assert lb.leaderboard(db, "prefs")[0].n == 5


def test_a_rotation_run_counts_trials_and_names_the_items_its_interval_resamples(tmp_path) -> None:
    """Every rotation of 3 responses (27 trials), the 2nd request answered HTTP 500: the
    row counts the 26 answered trials, right on those of items not divisible by 3, and its
    interval, over the 9 items, says so."""
    db = make_set(tmp_path / "rot.db")
    _, items = load_preferences(db, "prefs")
    script = Scripted()
    answers: list[bool] = []

    def answer(body: dict) -> str:
        text = script(body)
        answers.append(script.right[int(QUESTION.search(last_user_text(body)).group(1))])
        return text

    with FakeJudgeServer(answer, statuses=[200, 500]) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=1, max_retries=0)
        run_judge(db, conn, items, "selection", dataset="prefs", format_name="lfrb",
                  order="rotations")
        assert len(server.chat_requests()) == 3 * N
        failed = int(QUESTION.search(last_user_text(server.chat_requests()[1]["body"])).group(1))
    assert failed == 0  # the 2nd request was item 0's (a wrong one) 2nd rotation
    (row,) = lb.leaderboard(db, "prefs")
    assert (row.right, row.n, row.failed) == (sum(answers), len(answers), 1)
    assert (row.right, row.n) == (18, 26)  # 6 right items x 3 trials; 3 x 3 - 1 wrong
    assert row.interval["n"] == N and row.mode == "selection, every rotation"
    assert row.interval["method"] == "bootstrap"  # items of 2 or 3 trials: weighted shares
    text = leaderboard_lines(lb.as_dicts([row]))[0]
    assert "accuracy per trial 69.2 % (18/26 trials), 95 % bootstrap over 9 items " in text
    assert "9 items answered, 1 failed request;" in text
    assert lb.table([row])[0]["method"] == "95 % bootstrap over 9 items"


def test_team_mode_shows_the_leaderboard_to_a_reviewer_and_not_to_an_annotator(
        tmp_path, monkeypatch) -> None:
    db = team_mode_db(tmp_path, monkeypatch)
    items = [NewItem(f"q{k}", {"id": f"q{k}", "subset": "QA", "prompt": f"Question {k}?",
                               "chosen": ["good"], "rejected": ["bad"]}, "QA") for k in range(3)]
    create_dataset(db, "prefs", "preference", "lfrb", items)
    save_item_scores(db, "prefs", "d" * 32, "fp32|full", "/m/d",
                     [{"item_key": f"q{k}", "subset": "QA", "chosen_scores": [float(k)],
                       "rejected_scores": [1.0]} for k in range(3)])  # q2 right: 1 of 3
    at = open_as(db, "rita", "app_pages/rewards.py", "prefs")
    frame = board_frame(at)
    assert list(frame["run"]) == ["d"] and list(frame["accuracy"]) == ["33.3 %"]
    assert list(frame["counted"]) == ["1/3 items"]
    # an annotator is not offered the page (its script never runs for them), and the
    # logic refuses them too
    from components.teams.session import may_open  # noqa: PLC0415
    from needlework.teams import accounts  # noqa: PLC0415

    ana = accounts.resume(db, accounts.sign_in(db, "ana", "ana-passphrase-1").token)
    assert ana is not None and not may_open(ana, "rewards")
    with pytest.raises(PermissionDenied, match="ana is an annotator"):
        lb.leaderboard(db, "prefs", ana)
