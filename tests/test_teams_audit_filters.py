"""The audit events filtered (issue 47, point 4): by action (any of several, or all but
some), person, dataset and dates, in SQL; each filter's result equals the same filter
applied in Python to every event; pages of 50, newest first, with the total; the events
file and ``audit --events`` honour the filters; the Audit page (AppTest)."""

from __future__ import annotations

import csv
import json
import random
from datetime import UTC, date, datetime, timedelta

import pytest
from streamlit.testing.v1 import AppTest

import store
from components.teams.session import TOKEN
from needlework.teams import accounts
from needlework.teams.audit import (
    AuditError,
    event_choices,
    event_filter,
    event_page,
    export_events,
)
from needlework.teams.permissions import PermissionDenied
from store.audit import EventFilter, add_event, count_events, events_page, iter_events
from tests.cli_here import run
from tests.conftest import ROOT
from tests.teams_fixtures import PASSWORDS, team_mode_db

ACTIONS = ("sign_in", "sign_in.refused", "account.created", "account.role", "dataset.setting",
           "assignment.created", "gold.marked")
PEOPLE = ("lead", "rita", "(not signed in)", "(local)")
DATASETS = (None, "g", "p", "gone")
START = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)


def fill(db, n: int = 400, seed: int = 7) -> list[dict]:
    """``n`` events at increasing times over about 40 days; returns them as stored."""
    rng = random.Random(seed)
    moment = START
    for i in range(n):
        moment += timedelta(minutes=rng.randrange(1, 300))
        add_event(db, at=moment.isoformat(timespec="milliseconds"), by=rng.choice(PEOPLE),
                  action=rng.choice(ACTIONS), target=f"t{i}", dataset=rng.choice(DATASETS),
                  after={"i": i})
    return list(iter_events(db))


def admits(f: EventFilter, e: dict) -> bool:
    """The filter's meaning, in Python, on one stored event."""
    return ((not f.actions or e["action"] in f.actions) and e["action"] not in f.skip
            and (f.by is None or e["by"] == f.by)
            and (f.dataset is None or e["about_dataset"] == f.dataset)
            and (f.since is None or e["at"] >= f.since)
            and (f.before is None or e["at"] < f.before))


def random_filter(rng: random.Random) -> EventFilter:
    """A filter of random parts (a range that ends before it starts is drawn again)."""
    while True:
        try:
            return _draw(rng)
        except AuditError:
            continue


def _draw(rng: random.Random) -> EventFilter:
    day = (START + timedelta(days=rng.randrange(0, 42))).date()
    moment = START + timedelta(minutes=rng.randrange(0, 60 * 24 * 42))
    return event_filter(
        actions=rng.sample(ACTIONS, rng.choice((0, 0, 1, 2, 3))),
        skip=rng.sample(ACTIONS, rng.choice((0, 0, 1, 2))),
        by=rng.choice((None, None, *PEOPLE, "nobody")),
        dataset=rng.choice((None, None, "g", "p", "gone", "absent")),
        since=rng.choice((None, day, moment.isoformat(), day.isoformat())),
        until=rng.choice((None, None, day + timedelta(days=rng.randrange(0, 10)),
                          (moment + timedelta(days=rng.randrange(0, 9))).isoformat())))


@pytest.fixture
def db(tmp_path):
    return store.connect(tmp_path / "audit.db")


@pytest.mark.slow
def test_each_sql_filter_equals_the_same_filter_in_python(db):
    every = fill(db)
    rng = random.Random(11)
    nonempty = 0
    for _ in range(300):
        f = random_filter(rng)
        want = [e for e in every if admits(f, e)]
        assert list(iter_events(db, where=f, batch=17)) == want, f
        assert count_events(db, f) == len(want)
        newest = [e for e in reversed(want)]
        assert events_page(db, f, limit=50, offset=0) == newest[:50]
        assert events_page(db, f, limit=7, offset=14) == newest[14:21]
        nonempty += bool(want)
    assert nonempty > 100  # the filters are not all empty ones


def test_dates_count_whole_days_in_utc_and_moments_as_they_are():
    f = event_filter(since=date(2026, 3, 2), until=date(2026, 3, 4))
    assert (f.since, f.before) == ("2026-03-02", "2026-03-05")  # the 4th is included
    f = event_filter(since="2026-03-02T10:00", until="2026-03-02T12:00:00+02:00")
    assert (f.since, f.before) == ("2026-03-02T10:00:00.000+00:00", "2026-03-02T10:00:00.001+00:00")
    assert event_filter(by="", dataset="", since="", until="") == EventFilter()
    assert event_filter(actions=["a", "a", "", "b"]).actions == ("a", "b")
    with pytest.raises(AuditError, match="--since '2026-02-30' is not a date"):
        event_filter(since="2026-02-30")
    with pytest.raises(AuditError, match="--until 'yesterday' is not a date"):
        event_filter(until="yesterday")
    with pytest.raises(AuditError, match=r"the dates end \(2026-03-01\) before they start"):
        event_filter(since="2026-03-03", until="2026-03-01")


def test_pages_of_fifty_newest_first_with_the_total(db):
    every = fill(db, 130)
    f = event_filter(skip=["sign_in", "sign_in.refused"])
    want = [e for e in reversed(every) if admits(f, e)]
    pages = [event_page(db, f, n) for n in (1, 2, 3)]
    assert [p.total for p in pages] == [len(want)] * 3 and pages[0].pages == -(-len(want) // 50)
    assert [e for p in pages[:pages[0].pages] for e in p.rows] == want
    assert event_page(db, f, 99).page == pages[0].pages  # past the end: the last page
    assert event_page(db, f, -3).page == 1
    empty = event_page(db, event_filter(by="nobody"))
    assert (empty.rows, empty.total, empty.page, empty.pages) == ([], 0, 1, 1)
    choices = event_choices(db)
    assert choices["actions"] == sorted({e["action"] for e in every})
    assert choices["by"] == sorted({e["by"] for e in every} - {"(local)", "(not signed in)"})
    assert choices["datasets"] == sorted({e["about_dataset"] for e in every} - {None})


def test_only_admins_read_or_export_the_events(db, tmp_path):
    fill(db, 10)
    rita = accounts.add_user(db, "rita", "reviewer", email="rita@example.org")
    for call in (lambda: event_page(db, EventFilter(), actor=rita),
                 lambda: event_choices(db, actor=rita),
                 lambda: export_events(db, tmp_path / "e.csv", filters=EventFilter(), actor=rita)):
        with pytest.raises(PermissionDenied, match="rita is a reviewer"):
            call()
    assert not (tmp_path / "e.csv").exists()


def test_the_events_file_honours_the_filters(db, tmp_path):
    every = fill(db, 200)
    f = event_filter(actions=["account.created", "gold.marked"], dataset="g",
                     since=date(2026, 3, 5))
    want = [e for e in every if admits(f, e)]
    assert want
    assert export_events(db, tmp_path / "e.jsonl", filters=f) == len(want)
    lines = (tmp_path / "e.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [e["id"] for e in want]  # oldest first
    assert export_events(db, tmp_path / "e.csv", filters=f) == len(want)
    with (tmp_path / "e.csv").open(newline="", encoding="utf-8") as fh:
        assert [int(r["id"]) for r in csv.DictReader(fh)] == [e["id"] for e in want]


@pytest.mark.slow
def test_cli_audit_events_with_filters(tmp_path):
    path = tmp_path / "audit.db"
    every = fill(store.connect(path), 150)
    out = tmp_path / "e.jsonl"
    done = run(["audit", "--events", "--out", str(out), "--action", "account.role",
                "--action", "gold.marked", "--by", "rita", "--since", "2026-03-03",
                "--until", "2026-03-30", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    f = event_filter(actions=["account.role", "gold.marked"], by="rita", since="2026-03-03",
                     until="2026-03-30")
    want = [e["id"] for e in every if admits(f, e)]
    assert want and [json.loads(x)["id"] for x in out.read_text().splitlines()] == want
    assert done.stdout.strip() == (f"wrote {len(want)} audit events to {out} (filtered by "
                                   "--action, --by, --since, --until)")
    done = run(["audit", "--events", "--out", str(out), "--not-action", "sign_in",
                "--not-action", "sign_in.refused", "--dataset", "p", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    want = [e["id"] for e in every if e["about_dataset"] == "p"
            and not e["action"].startswith("sign_in")]
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == want
    done = run(["audit", "--events", "--out", str(out), "--since", "2026-04-31", "--db", str(path)])
    assert done.returncode == 1 and done.stderr.startswith("audit: --since '2026-04-31' is not "
                                                           "a date")
    done = run(["audit", "--dataset", "g", "--by", "rita", "--out", str(out), "--db", str(path)])
    assert done.returncode == 1 and "--by filters the audit events: add --events" in done.stderr


@pytest.mark.slow
def test_the_audit_page_filters_and_pages(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch, people={"lead": "admin", "rita": "reviewer"})
    every = fill(db, 120)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TOKEN] = accounts.sign_in(db, "lead", PASSWORDS["lead"]).token
    at.run()
    at.switch_page("app_pages/audit.py")
    at.run()
    assert not at.exception, at.exception
    every = list(iter_events(db))  # with the sign-ins and accounts of the fixture

    def shown() -> list[str]:
        table = next(d.value for d in at.dataframe if "target" in d.value.columns)
        return list(table["target"])

    def count() -> str:
        return next(m.value for m in at.markdown if "events match" in m.value)

    assert shown() == [e["target"] for e in reversed(every)][:50]
    assert count().startswith(f"**{len(every):,}** events match · 1–50 shown")
    at.button(key="nw-audit-older").click().run()
    assert shown() == [e["target"] for e in reversed(every)][50:100]
    at.checkbox(key="nw-audit-hide-sign-ins").check().run()  # back to the first page
    want = [e["target"] for e in reversed(every) if not e["action"].startswith("sign_in")]
    assert shown() == want[:50] and count().startswith(f"**{len(want):,}**")
    at.multiselect(key="nw-audit-actions").set_value(["gold.marked", "account.role"]).run()
    at.selectbox(key="nw-audit-by").set_value("rita").run()
    at.text_input(key="nw-audit-since").input("2026-03-04").run()
    at.text_input(key="nw-audit-until").input("2026-03-20").run()
    assert not at.exception, at.exception
    f = event_filter(actions=["gold.marked", "account.role"], skip=["sign_in", "sign_in.refused"],
                     by="rita", since=date(2026, 3, 4), until=date(2026, 3, 20))
    want = [e["target"] for e in reversed(every) if admits(f, e)]
    assert want and shown() == want[:50]
    assert at.button(key="nw-audit-older").disabled == (len(want) <= 50)
    at.selectbox(key="nw-audit-by").set_value("(everyone)").run()
    at.selectbox(key="nw-audit-dataset").set_value("gone").run()
    f = event_filter(actions=["gold.marked", "account.role"], skip=["sign_in", "sign_in.refused"],
                     dataset="gone", since=date(2026, 3, 4), until=date(2026, 3, 20))
    assert shown() == [e["target"] for e in reversed(every) if admits(f, e)][:50]
