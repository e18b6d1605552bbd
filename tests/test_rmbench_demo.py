"""The RM-Bench demo set (needlework.demo.rmbench, data/rmbench/items.json): its shape, its
seeding as ``demo-rmbench``, and the RM-Bench figures of the demo reward model on it,
recounted by hand from the scores; the page draws its 3 × 3 view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.demo import rmbench_records
from needlework.demo.loaders import DemoDataError, data_file
from needlework.demo.rmbench import FILE, edited, styles
from needlework.figures import metrics
from needlework.figures.metrics import RMBENCH_STYLES as STYLES
from needlework.formats import rmbench as rmbench_format
from needlework.seeding.demo import DEMO_RMBENCH, seed_demo
from store.datasets import get_dataset, item_index, iter_items
from tests import cli_here
from tests.conftest import ROOT

REAL = ROOT.parent / "shared" / "data" / "rm-bench"  # RM-Bench's release files, where present


def words(text: str) -> int:
    return len(text.split())


def test_the_records_have_rm_bench_s_shape_and_styles() -> None:
    records = rmbench_records()
    assert len(records) == 12 and len({r["id"] for r in records}) == 12
    domains = [rmbench_format.domain_of(r["subset"]) for r in records]
    assert {metrics.rmbench_domain({"subset": d}) for d in domains} == {"chat", "code", "math",
                                                                        "safety"}
    assert {d: domains.count(d) for d in set(domains)} == {
        "chat": 3, "math": 3, "code": 3, "safety-refuse": 2, "safety-response": 1}
    for r in records:
        assert rmbench_format.validate(r) == [], r["id"]
        for side in ("chosen", "rejected"):
            concise, plain, markdown = r[side]
            assert words(concise) < words(plain), (r["id"], side)  # concise is shorter
            assert "###" not in plain and "**" not in plain and "```" not in plain
            assert "### 1. **" in markdown and "###" not in concise
        assert all(c != j for c, j in zip(r["chosen"], r["rejected"], strict=True))
    # the text comes from the data file, not from Python
    bank = json.loads(data_file(FILE).read_text(encoding="utf-8"))
    assert [e["prompt"] for e in bank] == [r["prompt"] for r in records]
    assert records[0]["chosen"][0] == bank[0]["chosen"]["concise"]
    code = next(r for r in records if r["subset"] == "bigcode/humanevalpack")
    assert code["language"] == "python" and "```python\n" in code["chosen"][2]
    assert next(r for r in records if r["subset"] == "alpacaeval")["error_key"] == "error"


def test_the_text_is_our_own_not_rm_bench_s() -> None:
    files = sorted(REAL.glob("*.json")) if REAL.is_dir() else []
    if not files:
        pytest.skip("RM-Bench's release files are not on this machine")
    theirs = {text.strip() for f in files for rec in json.loads(f.read_text(encoding="utf-8"))
              for text in [rec["prompt"], *rec["chosen"], *rec["rejected"]]}
    ours = [text.strip() for r in rmbench_records()
            for text in [r["prompt"], *r["chosen"], *r["rejected"]]]
    assert not [t for t in ours if t in theirs]


def test_a_bad_edit_or_point_names_the_file() -> None:
    answer = {"concise": "x = 5.", "intro": "Solve it.", "points": [["Step", "x = 5."]]}
    assert edited(answer, [["x = 5", "x = 6"]], "[id 1]")["points"] == [["Step", "x = 6."]]
    assert answer["points"] == [["Step", "x = 5."]]  # the chosen answer is left as it was
    with pytest.raises(DemoDataError, match=r"rmbench/items.json: \[id 1\]: edit target not found"):
        edited(answer, [["x = 7", "x = 8"]], "[id 1]")
    with pytest.raises(DemoDataError, match="rmbench/items.json: points must be"):
        styles({**answer, "points": [["only a title"]]})


def test_seed_demo_creates_demo_rmbench(tmp_path: Path) -> None:
    path = tmp_path / "nw.db"
    done = cli_here.run(["seed-demo", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    assert "12 preference items as 'demo-rmbench' (rmbench)" in done.stdout + done.stderr
    db = store.connect(path)
    row = get_dataset(db, DEMO_RMBENCH)
    assert row["format"] == "rmbench" and row["kind"] == "preference" and row["items"] == 12
    assert row["created_by"] == "demo"
    assert sorted({i["subset"] for i in item_index(db, DEMO_RMBENCH)}) == [
        "chat", "code", "math", "safety-refuse", "safety-response"]
    stored = [i["record"] for i in iter_items(db, DEMO_RMBENCH)]
    assert stored == rmbench_records()
    again = cli_here.run(["seed-demo", "--db", str(path)])
    assert again.returncode == 0 and get_dataset(store.connect(path), DEMO_RMBENCH)["items"] == 12


def flat(matrix: list[list[float]]) -> list[float]:
    return [x for row in matrix for x in row]


def by_hand(entries: list[dict]) -> dict[str, dict[str, float]]:
    """hard / normal / easy per pooled domain, counted without needlework.figures.metrics."""
    out: dict[str, dict[str, float]] = {}
    pooled = {"chat": "chat", "math": "math", "code": "code", "safety-refuse": "safety",
              "safety-response": "safety"}
    for domain in ("chat", "math", "code", "safety"):
        group = [e for e in entries
                 if pooled[rmbench_format.domain_of(e.get("domain") or e["subset"])] == domain]
        m = [[sum(e["chosen_scores"][i] > e["rejected_scores"][j] for e in group) / len(group)
              for j in range(3)] for i in range(3)]
        out[domain] = {"hard": (m[0][1] + m[0][2] + m[1][2]) / 3,
                       "normal": (m[0][0] + m[1][1] + m[2][2]) / 3,
                       "easy": (m[1][0] + m[2][0] + m[2][1]) / 3, "matrix": m}
    return out


@pytest.mark.slow
def test_the_rm_bench_figures_of_the_demo_model_on_the_demo_set(tmp_path, monkeypatch,
                                                               demo_models_dir) -> None:
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415
    from needlework.rewards.runs import score_dataset  # noqa: PLC0415

    path = tmp_path / "app.db"
    db = store.connect(path)
    seed_demo(db)
    rm = load_reward_model(demo_models_dir / "demo-model", device="cpu")
    out = tmp_path / "scores.jsonl"
    summary = score_dataset(db, rm, DEMO_RMBENCH, out=out)
    figures = summary["metrics"]["rmbench"]
    entries = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(entries) == 12 and all(len(e["chosen_scores"]) == 3 for e in entries)
    assert figures["comparable"] and figures["n"] == 12 and figures["missing"] == 0
    hand = by_hand(entries)
    for domain, want in hand.items():
        got = figures["domains"][domain]
        assert flat(got["matrix"]) == pytest.approx(flat(want["matrix"]))
        for key in ("hard", "normal", "easy"):
            assert got[key] == pytest.approx(want[key]), (domain, key)
    for key in ("hard", "normal", "easy"):
        assert figures[key] == pytest.approx(sum(h[key] for h in hand.values()) / 4)
    # a 3 × 3 with something to show: the cells differ, and no domain is all right or all wrong
    cells = {round(x, 6) for h in hand.values() for row in h["matrix"] for x in row}
    assert len(cells) >= 3 and 0 < figures["accuracy"] < 1

    # the page draws the figures and a 3 × 3 per domain
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["dataset"] = DEMO_RMBENCH
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    frames = [d.value for d in at.dataframe]
    (table,) = [f for f in frames if "domain" in f.columns and "hard" in f.columns]
    order = list(figures["domains"])
    assert sorted(order) == ["chat", "code", "math", "safety"]
    assert list(table["domain"]) == [*order, "overall"]
    matrices = [f for f in frames if list(f.columns) == [f"rejected {s}" for s in STYLES]]
    assert len(matrices) == 5  # all domains, then one per domain in the table's order
    overall = [sum(flat(h["matrix"])[k] for h in hand.values()) / 4 for k in range(9)]
    for want, frame in zip([overall, *(flat(hand[d]["matrix"]) for d in order)], matrices,
                           strict=True):
        assert list(frame.index) == [f"chosen {s}" for s in STYLES]
        shown = [float(v.split("%")[0]) for row in frame.values.tolist() for v in row]
        assert shown == pytest.approx([100 * x for x in want], abs=0.06)
    # each cell with its comparisons won: 12 prompts in all, 3 in a domain (issue 59)
    assert all(v.endswith("/12)") for row in matrices[0].values.tolist() for v in row)
    assert all(v.endswith("/3)") for row in matrices[1].values.tolist() for v in row)
    overall_row = table.set_index("domain").loc["overall"]
    for key in ("hard", "normal", "easy"):
        won = figures["counts"][key][0]
        assert figures["counts"][key][1] == 36  # 3 comparisons of each kind × 12 prompts
        assert overall_row[key].startswith(f"{figures[key] * 100:.1f}% ({won}/36; "), overall_row[key]
