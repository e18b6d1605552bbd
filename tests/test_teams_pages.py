"""AppTest for team mode's pages: the sign-in gate, the pages offered to each role, who is
signed in, the writes the pages make as that user, and the Users, Assignment, Quality,
Guidelines and Audit pages. Local mode keeps its typed name and no sign-in.

A browser keeps its session token in a cookie; AppTest has no browser, so a test hands
the token of a real session (``accounts.sign_in``) to the app's session state, where
the cookie's value goes when a browser session starts. AppTest runs ``app.py`` on its
first run only (later runs execute the page script alone), so what the sign-in form
shows after a click is checked in the browser (tests/browser/test_teams.py); here its
callback's effects are.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from components.teams.session import TOKEN
from components.teams.signin import ERROR
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from tests.conftest import ROOT
from tests.teams_fixtures import PASSWORDS, grounding, team_mode_db


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    """Team mode (a needlework.toml) over a database with a team and two grounding
    datasets; ``g`` is assigned to ana and bob, each item by both."""
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 4, "g")
    grounding(db, 2, "other")
    assign_dataset(db, "g", ["ana", "bob"], per_item=2)
    return db


def app(page: str | None = None, who: str | None = None, db=None) -> AppTest:
    """The app, signed in as ``who`` (a real session), on ``page``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if who is not None:
        at.session_state[TOKEN] = accounts.sign_in(db, who, PASSWORDS[who]).token
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    assert not at.exception, at.exception
    return at


def sign_in_form(at: AppTest, login: str, password: str) -> AppTest:
    at.text_input(key="nw-sign-in-login").set_value(login)
    at.text_input(key="nw-sign-in-password").set_value(password)
    at.button(key="nw-sign-in-go").click()
    return at.run()


TEAM_PAGES = ("app_pages/users.py", "app_pages/assign.py", "app_pages/quality.py", "app_pages/guidelines.py",
              "app_pages/audit.py")


def assert_not_registered(at: AppTest, page: str) -> None:
    """The page's script is not among the router's pages for this session (its URL shows
    a sentence instead, see tests/browser/test_teams.py): AppTest cannot open it."""
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(page)


def titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def table_with(at: AppTest, column: str):
    """The first table that has ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def account_line(at: AppTest) -> str:
    return " ".join(m.value for m in at.sidebar.markdown if "account_circle" in m.value)


def history_by(db, field_prefix: str) -> list[tuple]:
    return db.execute("select item_key, annotator, field, by from history where field like ? "
                      "order by id", [field_prefix + "%"]).fetchall()


def test_local_mode_has_no_sign_in_and_no_team_pages(tmp_path, monkeypatch):
    monkeypatch.setenv("NEEDLEWORK_DB", str(tmp_path / "local.db"))
    monkeypatch.setenv("NEEDLEWORK_CONFIG", str(tmp_path / "absent.toml"))
    at = app()
    assert [t.label for t in at.sidebar.text_input] == ["Annotator"]
    assert not [t for t in at.text_input if t.key == "nw-sign-in-login"]
    for page in TEAM_PAGES:
        assert_not_registered(at, page)


def test_team_mode_shows_only_the_sign_in_form(team_db):
    at = app()
    assert titles(at) == ["🪡 Needlework"]
    assert [t.key for t in at.text_input] == ["nw-sign-in-login", "nw-sign-in-password"]
    assert not at.sidebar.text_input and not at.sidebar.selectbox  # no name field, no picker
    assert not at.dataframe  # nothing of the data


def refusal(at: AppTest) -> str:
    """What the sign-in screen says went wrong (the form's callback leaves it for the run
    that draws it)."""
    return " ".join(e.value for e in at.error)


def attempt(login: str, password: str) -> AppTest:
    """A fresh browser session sends the sign-in form once."""
    return sign_in_form(app(), login, password)


@pytest.mark.slow
def test_a_wrong_password_is_refused_and_the_right_one_signs_in(team_db):
    at = attempt("ana", "not-her-password")
    assert refusal(at) == "wrong name or password"
    assert at.session_state["nw-sign-in-password"] == ""  # not kept
    assert at.session_state[TOKEN] is None
    at = attempt("ANA", PASSWORDS["ana"])  # names are matched up to case
    assert at.session_state[TOKEN].startswith(accounts.TOKEN_PREFIX)
    assert at.session_state["nw-sign-in-password"] == ""
    assert accounts.resume(team_db, at.session_state[TOKEN]).name == "ana"
    at = app(who="ana", db=team_db)  # the next run resumes it
    assert "ana" in account_line(at) and "annotator" in account_line(at)
    assert not at.sidebar.text_input  # the name is the account's, never typed


@pytest.mark.slow
def test_five_wrong_passwords_lock_the_account_and_say_until_when(team_db):
    for _ in range(4):
        assert refusal(attempt("bob", "wrong-password-0")) == "wrong name or password"
    assert ("5 times in a row: sign-in with this name is paused in browsers it has not signed "
            "in from before until") in refusal(attempt("bob", "wrong-password-0"))
    at = attempt("bob", PASSWORDS["bob"])  # even the right one, while paused
    assert ("after 5 wrong passwords in a row, sign-in with this name is paused in browsers it "
            "has not signed in from before: try again after") in refusal(at)
    assert at.session_state[TOKEN] is None


def test_the_sign_in_screen_shows_the_refusal(team_db):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[ERROR] = "wrong name or password"  # as the form's callback leaves it
    at.run()
    assert [e.value for e in at.error] == ["wrong name or password"]
    at.run()  # a rerun nobody asked for (the cookie's answer) leaves it on screen
    assert [e.value for e in at.error] == ["wrong name or password"]


def test_sign_out_ends_the_session(team_db):
    at = app(who="rita", db=team_db)
    token = at.session_state[TOKEN]
    at.button(key="nw-sign-out").click()
    at.run()
    assert accounts.resume(team_db, token) is None
    assert at.session_state[TOKEN] is None and "nw-signed-in" not in at.session_state


def test_an_expired_or_ended_session_asks_to_sign_in_again(team_db):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    signed = accounts.sign_in(team_db, "ana", PASSWORDS["ana"])
    accounts.sign_out_everywhere(team_db, signed.user)
    at.session_state[TOKEN] = signed.token
    at.run()
    assert any("Your session has ended" in i.value for i in at.info)


@pytest.mark.parametrize(("who", "opens", "closed"), [
    ("ana", ["app_pages/annotate.py", "app_pages/review.py"],
     ["app_pages/agreement.py", "app_pages/data.py", "app_pages/users.py", "app_pages/assign.py",
      "app_pages/quality.py", "app_pages/needle.py", "app_pages/suggestions.py"]),
    ("rita", ["app_pages/agreement.py", "app_pages/quality.py"],
     ["app_pages/data.py", "app_pages/users.py", "app_pages/assign.py", "app_pages/guidelines.py",
      "app_pages/audit.py", "app_pages/suggestions.py"]),
    ("lead", ["app_pages/users.py", "app_pages/assign.py", "app_pages/guidelines.py", "app_pages/audit.py",
              "app_pages/data.py", "app_pages/agreement.py", "app_pages/suggestions.py"], []),
])
def test_each_role_is_offered_its_pages_only(team_db, who, opens, closed):
    at = app(who=who, db=team_db)
    for page in closed:  # checked on the router's pages, before any page runs alone
        assert_not_registered(at, page)
    for page in opens:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert not [w for w in at.warning if "not offered to your role" in w.value], page


@pytest.mark.slow
def test_an_annotator_picks_among_assigned_datasets_only(team_db):
    at = app(who="ana", db=team_db)
    assert at.sidebar.selectbox(key="dataset").options == ["g"]
    at = app(who="rita", db=team_db)
    assert at.sidebar.selectbox(key="dataset").options == ["g", "other"]


def test_dimensions_are_saved_as_the_signed_in_annotator_on_assigned_items(team_db):
    at = app("app_pages/annotate.py", who="ana", db=team_db)
    widget = next(s for s in at.selectbox if s.key and s.key.startswith("nw-dim-question_category-"))
    widget.set_value(widget.options[0]).run()
    assert not at.exception
    rows = history_by(team_db, "dim:question_category")
    assert [(r[1], r[3]) for r in rows] == [("ana", "ana")]


def test_an_annotator_is_refused_writes_on_items_not_assigned_to_them(team_db):
    at = app("app_pages/annotate.py", who="ana", db=team_db)
    assign_dataset(team_db, "g", ["bob"], replace=True)  # reassigned while the page is open
    widget = next(s for s in at.selectbox if s.key and s.key.startswith("nw-dim-question_category-"))
    widget.set_value(widget.options[0]).run()
    assert history_by(team_db, "dim:") == []
    assert any("is not assigned to ana" in t.value for t in at.toast)


@pytest.mark.slow
def test_a_reviewer_adjudicates_as_themselves(team_db):
    for who, label in (("ana", "OUTDATED"), ("bob", "UNKNOWN")):
        user = accounts.get_user(team_db, who)
        from needlework.actions.writes import write_annotation  # noqa: PLC0415

        write_annotation(team_db, "g", "sample-1", "label:1", label, actor=user)
    at = app("app_pages/agreement.py", who="rita", db=team_db)
    final = next(s for s in at.get("button_group") if s.key and s.key.startswith("nw-final|g|"))
    final.set_value("OUTDATED").run()
    assert not at.exception
    assert history_by(team_db, "final:") == [("sample-1", "rita", "final:label:1", "rita")]


@pytest.mark.slow
def test_admin_creates_an_account_whose_password_is_only_hashed(team_db):
    at = app("app_pages/users.py", who="lead", db=team_db)
    at.text_input(key="nw-user-new-name").set_value("cy")
    at.text_input(key="nw-user-new-password").set_value("cy-secret-pass-9")
    at.text_input(key="nw-user-new-again").set_value("cy-secret-pass-9")
    at.button(key="nw-user-add-go").click().run()
    assert not at.exception
    assert any("Account cy created" in s.value for s in at.success)
    stored = team_db.execute("select password_hash from users where name = 'cy'").fetchone()[0]
    assert stored.startswith("$argon2id$") and "cy-secret-pass-9" not in stored
    assert at.session_state["nw-user-new-password"] == ""  # not kept in the session
    assert accounts.sign_in(team_db, "cy", "cy-secret-pass-9").user.name == "cy"


@pytest.mark.slow
def test_admin_changes_a_role_disables_and_resets(team_db):
    at = app("app_pages/users.py", who="lead", db=team_db)
    at.selectbox(key="nw-user-pick").set_value("bob").run()
    at.selectbox(key="nw-user-role|bob").set_value("reviewer").run()
    at.button(key="nw-user-role-go").click().run()
    assert accounts.get_user(team_db, "bob").role == "reviewer"
    bob_session = accounts.sign_in(team_db, "bob", PASSWORDS["bob"]).token
    at.button(key="nw-user-disable").click().run()
    assert accounts.get_user(team_db, "bob").disabled
    assert accounts.resume(team_db, bob_session) is None  # signed out everywhere
    at.button(key="nw-user-enable").click().run()
    at.text_input(key="nw-user-reset-password").set_value("bob-new-pass-22")
    at.text_input(key="nw-user-reset-again").set_value("bob-new-pass-22")
    at.button(key="nw-user-reset-go").click().run()
    assert not at.exception
    assert accounts.sign_in(team_db, "bob", "bob-new-pass-22").user.role == "reviewer"


@pytest.mark.slow
def test_admin_assigns_with_overlap_and_reassigns_someone_who_left(team_db):
    accounts.add_user(team_db, "cy", "annotator", password="cy-passphrase-1")
    at = app("app_pages/assign.py", who="lead", db=team_db)
    at.multiselect(key="nw-assign-who").set_value(["ana", "bob", "cy"])
    at.number_input(key="nw-assign-k").set_value(2)
    at.checkbox(key="nw-assign-replace").check().run()
    at.button(key="nw-assign-go").click().run()
    assert not at.exception
    assert any("4 items distributed as 8 assignments" in s.value for s in at.success)
    loads = dict(team_db.execute("select annotator, count(*) from assignments where dataset = 'g' "
                                 "group by annotator").fetchall())
    assert sorted(loads.values()) == [2, 3, 3] and sum(loads.values()) == 8
    at.selectbox(key="nw-reassign-from").set_value("cy").run()
    at.button(key="nw-reassign-go").click().run()
    assert not at.exception
    left = team_db.execute("select count(*) from assignments where annotator = 'cy'").fetchone()[0]
    assert left == 0
    assert any("unfinished items of cy moved" in s.value for s in at.success)


@pytest.mark.slow
def test_guidelines_written_by_the_admin_show_beside_the_task_as_markdown(team_db):
    at = app("app_pages/guidelines.py", who="lead", db=team_db)
    widget = next(t for t in at.text_area if t.key.startswith("nw-guidelines-text|g|"))
    widget.set_value("# Labels\n\n**Outdated** means the passage was true once.").run()
    at.button(key="nw-guidelines-save").click().run()
    assert not at.exception
    at = app(who="ana", db=team_db)  # the sidebar, beside every page of dataset g
    panel = [m.value for m in at.sidebar.markdown if "Outdated" in m.value]
    assert panel == ["# Labels\n\n**Outdated** means the passage was true once."]


@pytest.mark.slow
def test_quality_page_marks_gold_and_ranks_annotators(team_db):
    from tests.teams_fixtures import finish_grounding  # noqa: PLC0415

    finish_grounding(team_db, "g", "sample-1", accounts.get_user(team_db, "ana"))
    finish_grounding(team_db, "g", "sample-1", accounts.get_user(team_db, "bob"),
                     labels=("irrelevant", "irrelevant", "RELATED-INFORMATION"))
    at = app("app_pages/quality.py", who="rita", db=team_db)
    at.selectbox(key="nw-gold-item").set_value("sample-1").run()
    at.button(key="nw-gold-mark").click().run()
    assert not at.exception
    assert team_db.execute("select item_key, marked_by from gold_items").fetchall() == [
        ("sample-1", "rita")]
    people = table_with(at, "accuracy on gold %")
    assert list(people["annotator"]) == ["bob", "ana"]  # worst accuracy on gold first
    assert list(people["accuracy on gold %"]) == [pytest.approx(200 / 3, abs=0.1), 100.0]


@pytest.mark.slow
def test_gold_answers_are_picked_like_labels(team_db):
    at = app("app_pages/quality.py", who="rita", db=team_db)
    assert not at.text_area  # no JSON to type
    at.selectbox(key="nw-gold-item").set_value("sample-2").run()
    pickers = {s.label: s for s in at.get("button_group")}
    assert set(pickers) == {"Passage 1", "Passage 2", "Passage 3"}
    pickers["Passage 2"].set_value("OUTDATED").run()
    at.get("button_group")[2].set_value(None).run()  # passage 3 left unchecked
    at.button(key="nw-gold-mark").click().run()
    assert not at.exception, at.exception
    [answers] = [json.loads(r[0]) for r in team_db.execute("select answers from gold_items")]
    assert answers == {"label:1": "ANSWER-THE-QUESTION", "label:2": "OUTDATED"}


def test_audit_page_offers_the_history_to_admins(team_db):
    from needlework.actions.writes import write_annotation  # noqa: PLC0415

    write_annotation(team_db, "g", "sample-2", "label:2", "OUTDATED",
                     actor=accounts.get_user(team_db, "ana"))
    at = app("app_pages/audit.py", who="lead", db=team_db)
    assert not at.exception
    assert any("**1** change in" in m.value and "ana" in m.value for m in at.markdown)


@pytest.mark.slow
def test_home_shows_progress_per_annotator_and_dataset(team_db):
    at = app(who="lead", db=team_db)
    assert list(table_with(at, "items finished by all")["dataset"]) == ["g"]
    people = table_with(at, "remaining")
    assert list(people["annotator"]) == ["ana", "bob"]
    at = app(who="ana", db=team_db)
    people = table_with(at, "remaining")
    assert list(people["annotator"]) == ["ana"]  # an annotator sees their own row
