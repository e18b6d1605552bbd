"""The load test's simulated annotator (benchmarks/locustfile.py) run by one cell of
benchmarks/bench_team.py, for real: ``serve-team`` with one process behind HAProxy, Locust
headless with two simulated users for a few seconds. Each signs in through the form, loads
its queue, has label actions committed and moves to the next question, with no error; and
every action the route acknowledged is in the database."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.conftest import ROOT
from tests.serve_team_fixtures import haproxy_missing

pytestmark = pytest.mark.slow


def bench_team():
    spec = importlib.util.spec_from_file_location("bench_team",
                                                  ROOT / "benchmarks" / "bench_team.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_team", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_two_simulated_annotators_sign_in_load_move_and_commit_without_errors(tmp_path):
    missing = haproxy_missing()
    if missing:
        pytest.fail(missing)
    bench = bench_team()
    template = tmp_path / "template.db"
    made = bench.make_template(template, 2)
    accounts_file = tmp_path / "accounts.json"
    accounts_file.write_text(json.dumps(made), encoding="utf-8")

    cell = bench.run_cell(1, 2, template, accounts_file, tmp_path / "cell", seconds=5,
                          spawn_rate=2, key_seconds=0.3)

    assert cell.problems == [] and cell.errors == []
    assert cell.ready_at is not None and cell.cpu.get("w1", 0) > 0
    for account in made:
        done = [s[0] for s in cell.samples if s[4] == account["name"] and s[3]]
        for name in ("sign in", "page load", "press -> committed", "move -> committed",
                     "page move"):
            assert name in done, (account["name"], name, sorted(set(done)))
