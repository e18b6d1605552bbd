"""The command line acts for a person in team mode (issue 57, point 2): the admin verbs take
``--as NAME`` and that account's password (``$NEEDLEWORK_PASSWORD`` or a prompt, never an
argument), or refuse in one line; every audit row they write names the person, the gold
table's "marked by" too; a wrong password is refused and audited like a sign-in; the
first admin is made without ``--as``; local mode needs no ``--as``. A paused name's
refused sign-in names its account; the Audit page offers people only."""

from __future__ import annotations

import pytest

import store
from needlework.teams import accounts
from needlework.teams.accounts import SignInRefused
from needlework.teams.assignment import assign_dataset
from needlework.teams.audit import event_choices
from needlework.teams.config import Policy
from needlework.teams.gold import gold_items
from store.audit import iter_events
from tests.cli_here import run
from tests.teams_fixtures import PASSWORDS, grounding, open_as, team_mode_db

ENV = "NEEDLEWORK_PASSWORD"


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    """Team mode (the config in $NEEDLEWORK_CONFIG, the database in $NEEDLEWORK_DB), lead
    (admin), rita (reviewer), ana and bob (annotators); dataset ``g`` of 6 items."""
    monkeypatch.delenv(ENV, raising=False)
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 6)
    return db


def as_lead(monkeypatch) -> list[str]:
    monkeypatch.setenv(ENV, PASSWORDS["lead"])
    return ["--as", "lead"]


def events(db, action: str | None = None) -> list[dict]:
    return [e for e in iter_events(db) if action is None or e["action"] == action]


def test_team_mode_refuses_an_admin_verb_that_names_nobody(team_db):
    for argv in (["assign", "--dataset", "g", "--annotators", "ana,bob"],
                 ["gold", "sample", "--dataset", "g", "--percent", "20"],
                 ["suggestions", "timing", "--dataset", "g", "--when", "after", "--for", "ana"],
                 ["users", "role", "ana", "reviewer"]):
        done = run(argv)
        assert done.returncode == 1, (argv, done.stdout)
        assert "acts as a person: add --as NAME (an admin) and give that account's password " \
               "in $NEEDLEWORK_PASSWORD or at the prompt" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert not events(team_db, "assignment.created") and not gold_items(team_db, "g")
    assert accounts.get_user(team_db, "ana").role == "annotator"


def test_as_the_lead_every_row_names_her_and_the_gold_table_too(team_db, monkeypatch, tmp_path):
    me = as_lead(monkeypatch)
    before = {e["id"] for e in events(team_db)}
    steps = [
        ["assign", "--dataset", "g", "--annotators", "ana,bob", "--per-item", "2", *me],
        ["gold", "sample", "--dataset", "g", "--percent", "20", *me],
        ["suggestions", "timing", "--dataset", "g", "--when", "after", "--for", "ana", *me],
        ["users", "role", "bob", "reviewer", *me],
        ["users", "email", "bob", "bob@example.org", *me],
        ["users", "disable", "bob", *me],
        ["reassign", "--dataset", "g", "--from", "bob", "--to", "ana", "--drop-kept", *me],
    ]
    gold = tmp_path / "gold.csv"
    gold.write_text("item,field,value\nsample-6,label:1,Outdated\n", encoding="utf-8")
    steps.append(["gold", "import", str(gold), "--dataset", "g", *me])
    for argv in steps:
        done = run(argv)
        assert done.returncode == 0, (argv, done.stderr)
        assert PASSWORDS["lead"] not in done.stdout + done.stderr
    made = [e for e in events(team_db) if e["id"] not in before]
    assert {e["action"] for e in made} >= {
        "assignment.created", "gold.sampled", "dataset.setting", "account.role",
        "account.email", "account.disabled", "assignment.reassigned", "gold.imported"}
    assert {e["by"] for e in made} == {"lead"}, made
    marked = gold_items(team_db, "g")
    assert marked and {g["marked_by"] for g in marked} == {"lead"}


def test_every_audit_row_of_a_team_names_a_person(team_db, monkeypatch):
    """After the CLI's verbs and a refused password, no row is by '(local)'; the only rows
    by nobody are refused sign-ins, and each of those names the account it was for."""
    me = as_lead(monkeypatch)
    before = {e["id"] for e in events(team_db)}  # the fixture's accounts, made by the test
    assert run(["assign", "--dataset", "g", "--annotators", "ana,bob", *me]).returncode == 0
    monkeypatch.setenv(ENV, "not-the-password-1")
    assert run(["users", "role", "ana", "admin", "--as", "lead"]).returncode == 1
    people = {u.name for u in accounts.list_users(team_db)}
    made = [e for e in events(team_db) if e["id"] not in before]
    assert len(made) == 2
    for e in made:
        if e["action"] == "sign_in.refused":
            assert (e["by"], e["target"]) == ("(not signed in)", "lead")
        else:
            assert e["by"] in people, e


def test_a_wrong_password_is_refused_and_audited_like_a_sign_in(team_db, monkeypatch):
    monkeypatch.setenv(ENV, "not-the-password-1")
    done = run(["users", "role", "ana", "admin", "--as", "lead"])
    assert (done.returncode, done.stderr.strip()) == (
        1, "users role: --as lead: wrong name or password")
    assert accounts.get_user(team_db, "ana").role == "annotator"
    [refused] = events(team_db, "sign_in.refused")
    assert (refused["by"], refused["target"]) == ("(not signed in)", "lead")
    assert '"client": "command line"' in refused["after"]
    assert "not-the-password-1" not in str(events(team_db))
    # five in a row pause the name, for the command line as for a browser without its cookie
    for _ in range(4):
        run(["users", "role", "ana", "admin", "--as", "lead"])
    monkeypatch.setenv(ENV, PASSWORDS["lead"])
    paused = run(["users", "role", "ana", "admin", "--as", "lead"])
    assert paused.returncode == 1 and "sign-in with this name is paused" in paused.stderr
    assert accounts.get_user(team_db, "ana").role == "annotator"


def test_the_password_comes_from_the_environment_or_a_terminal_only(team_db):
    done = run(["assign", "--dataset", "g", "--annotators", "ana", "--as", "lead"])
    assert (done.returncode, done.stderr.strip()) == (
        1, "assign: --as lead: no password: set $NEEDLEWORK_PASSWORD to the password of "
        "lead, or run the verb in a terminal to be asked for it")
    assert run(["assign", "--dataset", "g", "--annotators", "ana", "--as", "lead",
                "--password", "x"]).returncode == 2  # no such option: argparse refuses


def test_a_reviewer_may_not_act_as_an_admin(team_db, monkeypatch):
    monkeypatch.setenv(ENV, PASSWORDS["rita"])
    done = run(["assign", "--dataset", "g", "--annotators", "ana", "--as", "rita"])
    assert done.returncode == 1
    assert done.stderr.strip() == ("assign: rita is a reviewer and may not assign items to "
                                   "annotators in dataset 'g': that needs the admin role")


def test_the_first_admin_is_made_without_as_and_named_by_itself(tmp_path, monkeypatch):
    config = tmp_path / "needlework.toml"
    config.write_text('[server]\nmode = "team"\n', encoding="utf-8")
    monkeypatch.setenv("NEEDLEWORK_CONFIG", str(config))
    monkeypatch.delenv(ENV, raising=False)
    path = tmp_path / "team.db"
    monkeypatch.setattr("sys.stdin", _Stdin("boss-passphrase-1\n"))
    done = run(["users", "add", "boss", "--role", "admin", "--password-stdin", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    db = store.connect(path)
    [made] = events(db, "account.created")
    assert (made["by"], made["target"]) == ("boss", "boss")
    again = run(["users", "add", "eve", "--role", "admin", "--no-password", "--email",
                 "eve@example.org", "--db", str(path)])
    assert again.returncode == 1 and "add --as NAME" in again.stderr
    assert accounts.get_user(db, "eve") is None


def test_local_mode_needs_no_as(tmp_path, monkeypatch):
    monkeypatch.setenv("NEEDLEWORK_CONFIG", str(tmp_path / "absent.toml"))
    path = tmp_path / "local.db"
    db = store.connect(path)
    grounding(db, 3)
    accounts.add_user(db, "ana", "annotator", email="ana@example.org")
    done = run(["assign", "--dataset", "g", "--annotators", "ana", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    [made] = events(db, "assignment.created")
    assert made["by"] == "(local)"


def test_a_paused_names_refusal_names_its_account(tmp_path):
    db = store.connect(tmp_path / "a.db")
    accounts.add_user(db, "lead", "admin", password=PASSWORDS["lead"])
    policy = Policy(lock_failures=2)
    for _ in range(2):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "lead", "wrong-password-1", policy=policy)
    with pytest.raises(SignInRefused, match="paused"):
        accounts.sign_in(db, "LEAD", PASSWORDS["lead"], policy=policy)
    rows = [(e["target"], e["after"]) for e in events(db, "sign_in.refused")]
    assert [t for t, _ in rows] == ["lead", "lead", "lead"]
    assert '"reason": "paused"' in rows[-1][1]


def test_the_audit_pages_person_picker_offers_people_only(team_db, monkeypatch):
    lead = accounts.get_user(team_db, "lead")
    assign_dataset(team_db, "g", ["ana"])  # by '(local)', as the CLI once wrote
    with pytest.raises(SignInRefused):
        accounts.sign_in(team_db, "ana", "wrong-password-1")  # by '(not signed in)'
    at = open_as(team_db, "lead", "app_pages/audit.py")  # her sign-in is an event by her
    assert {e["by"] for e in events(team_db)} == {"(local)", "(not signed in)", "lead"}
    assert event_choices(team_db, actor=lead)["by"] == ["lead"]
    assert at.selectbox(key="nw-audit-by").options == ["(everyone)", "lead"]


class _Stdin:
    """A stdin that is not a terminal, with ``text`` to read."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)

    def readline(self) -> str:
        return self.lines.pop(0) if self.lines else ""

    def isatty(self) -> bool:
        return False


@pytest.mark.slow
def test_suggestions_ask_and_needle_datasets_act_as_the_lead_or_refuse(team_db, monkeypatch,
                                                                       tmp_path):
    """The verbs that start work for the team or import a dataset name their person too:
    ``suggestions ask`` (its ``job.started`` row) and ``needle build --dataset`` (the
    ``dataset.imported`` row); without --as they refuse before any request or work."""
    out = str(tmp_path / "needles.jsonl")
    for argv in (["suggestions", "ask", "--dataset", "g", "--rules-judge"],
                 ["needle", "build", "--haystacks", "demo", "--demo-count", "2", "--lengths",
                  "300", "--positions", "2", "--out", out, "--dataset", "nd"]):
        done = run(argv)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert "acts as a person: add --as NAME" in done.stderr, done.stderr
    def needle_imports() -> list[dict]:
        return [e for e in events(team_db, "dataset.imported") if "nd" in str(e.values())]

    assert not events(team_db, "job.started") and not needle_imports()
    me = as_lead(monkeypatch)
    done = run(["suggestions", "ask", "--dataset", "g", "--rules-judge", *me])
    assert done.returncode == 0, done.stderr
    done = run(["needle", "build", "--haystacks", "demo", "--demo-count", "2", "--lengths", "300",
                "--positions", "2", "--out", out, "--dataset", "nd", *me])
    assert done.returncode == 0, done.stderr
    started, imported = events(team_db, "job.started"), needle_imports()
    assert [e["by"] for e in started] == ["lead"], started
    assert [e["by"] for e in imported] == ["lead"], imported
