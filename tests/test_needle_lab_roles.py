"""Who may open the Needle lab and present it is a setting: ``[pages] needle_lab`` in
needlework.toml, reviewers by default (admins only before). The menu (components.teams.
session's page roles) and the page's own check (needlework.teams.permissions) follow it;
a reviewer in the lab picks judge connections by name and types no base URL, and building
a needle set (a new dataset) still needs an admin."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from components.state import SIGNED_IN
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.config import ConfigError, parse_config
from needlework.teams.permissions import User, may_open_needle_lab, needle_lab_refusal
from tests.conftest import ROOT, jsonl
from tests.teams_fixtures import open_as, team_mode_db
from tests.test_home_page import NEEDLE

JUDGE = ('[judges.team-judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "judge"\n'
         'key_env = "TEAM_JUDGE_KEY"\n')


def test_the_setting_is_read_and_checked_with_the_file_named():
    assert parse_config('[server]\nmode = "team"\n').needle_lab == "reviewer"
    assert parse_config('[pages]\nneedle_lab = "admin"\n').needle_lab == "admin"
    with pytest.raises(ConfigError, match=r'^team.toml \[pages\]: needle_lab must be "reviewer" '
                                          r"or \"admin\", got 'annotator'$"):
        parse_config('[pages]\nneedle_lab = "annotator"\n', "team.toml")
    with pytest.raises(ConfigError, match=r"^team.toml: unknown key pages.needle "
                                          r"\(expected pages.needle_lab\)$"):
        parse_config("[pages]\nneedle = 1\n", "team.toml")


def test_who_may_open_the_lab():
    ana, rita, lead = (User(1, "ana", "annotator"), User(2, "rita", "reviewer"),
                       User(3, "lead", "admin"))
    assert may_open_needle_lab(None) and may_open_needle_lab(rita) and may_open_needle_lab(lead)
    assert not may_open_needle_lab(ana)
    assert not may_open_needle_lab(rita, "admin") and may_open_needle_lab(lead, "admin")
    assert needle_lab_refusal(rita, "admin") == (
        "rita is a reviewer and may not open the Needle lab: it needs the admin role "
        "(needlework.toml, [pages] needle_lab).")
    assert not may_open_needle_lab(User(2, "rita", "reviewer", disabled=True))
    with pytest.raises(ValueError):
        may_open_needle_lab(rita, "annotator")


def st_errors(at: AppTest) -> str:
    """Every error and caption text on the page, unescaped."""
    return " ".join(e.value.replace("\\", "") for e in [*at.error, *at.caption])


def registered(at: AppTest, page: str) -> bool:
    try:
        at.switch_page(page)
    except ValueError:
        return False
    return True


@pytest.mark.slow
def test_a_reviewer_opens_the_lab_and_types_no_judge_address(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch, config=JUDGE)
    import_bytes(db, jsonl([dict(NEEDLE, id=f"n{i}") for i in range(3)]), "needles.jsonl",
                 format="needle", dataset="needles")
    at = open_as(db, "rita", "app_pages/needle.py", "needles")
    assert [t.value for t in at.title] == ["🔎 Needle lab"]
    assert not [e for e in at.error if "Needle lab" in e.value]
    # the judge form (step 2's "judge it with an LLM"): the admin's connection by name only
    assert at.selectbox(key="jd_named").options[0].startswith("team-judge: judge at ")
    keys = {w.key for w in at.text_input if w.key}
    assert "jd_base_url" not in keys and not {"jd_key_env", "jd_secret"} & keys
    # building a needle set imports a dataset: an admin's, as on the Import page
    before = {r[0] for r in db.execute("select name from datasets")}
    at.button(key="nb_build").click().run()
    assert not at.exception, at.exception
    assert "Nothing built: 1 problem(s)." in st_errors(at)
    (problem,) = at.session_state["nb_errors"]  # drawn as text in a box
    assert problem.startswith("rita is a reviewer and may not import datasets in dataset ")
    assert problem.endswith(": that needs the admin role")
    assert {r[0] for r in db.execute("select name from datasets")} == before
    at = open_as(db, "ana")
    assert not registered(at, "app_pages/needle.py")  # annotators: never


@pytest.mark.slow
def test_admins_only_when_the_file_says_so(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch, config='[pages]\nneedle_lab = "admin"\n')
    assert not registered(open_as(db, "rita"), "app_pages/needle.py")
    at = open_as(db, "lead", "app_pages/needle.py")
    assert [t.value for t in at.title] == ["🔎 Needle lab"]
    # the page's own check: a session that reaches the script anyway (a role changed while
    # the page was open) is refused before anything is drawn
    page = AppTest.from_file(str(ROOT / "app_pages" / "needle.py"), default_timeout=60)
    page.session_state[SIGNED_IN] = accounts.get_user(db, "rita")
    page.run()
    assert [e.value for e in page.error] == [
        "rita is a reviewer and may not open the Needle lab: it needs the admin role "
        "(needlework.toml, [pages] needle_lab)."]
    assert not page.title
