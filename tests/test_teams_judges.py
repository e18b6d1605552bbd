"""Judge endpoints and keys belong to admins (issue 26, point 1): named connections in
needlework.toml, the reviewer's form that picks one by name, and the model picker's
refusal of folders outside the data folder and hub ids. Requests go over HTTP to real
local listeners that record their headers."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from needlework.datasets.transfer import import_bytes
from needlework.judge_settings import NamedJudge
from needlework.judges.connection import named_connection
from needlework.teams.config import ConfigError, parse_config
from needlework.teams.permissions import User, model_source_refusal
from tests.conftest import jsonl
from tests.judges_fixtures import FakeJudgeServer
from tests.teams_fixtures import open_as, team_mode_db

SECRET = "sk-server-SECRET-9876"


def _config(extra: str = "") -> str:
    return '[server]\nmode = "team"\n' + extra


def test_named_judges_are_read_from_the_config() -> None:
    config = parse_config(_config('[judges.team-gpt]\nbase_url = "https://api.example.com/v1/"\n'
                                  'model = "gpt-x"\nkey_env = "TEAM_KEY"\nmax_tokens = 1024\n'
                                  'context_window = 8192\n'), "nw.toml")
    [judge] = config.judges
    assert judge == NamedJudge("team-gpt", "https://api.example.com/v1", "gpt-x", "TEAM_KEY",
                               max_tokens=1024, context_window=8192)
    conn = named_connection(judge, max_tokens=100_000, concurrency=50, temperature=0.5)
    assert (conn.max_tokens, conn.concurrency, conn.key_env) == (1024, 4, "TEAM_KEY")
    assert "key from $TEAM_KEY" in judge.describe() and "TEAM_KEY=" not in judge.describe()
    assert parse_config(_config(), "nw.toml").judges == ()


@pytest.mark.parametrize("table, message", [
    ('base_url = "file:///etc/passwd"\nmodel = "m"', "base_url must be an http:// or https://"),
    ('base_url = "https://u:p@h/v1"\nmodel = "m"', "must carry no user, password"),
    ('base_url = "https://h/v1"', "model must be the model's name"),
    ('base_url = "https://h/v1"\nmodel = "m"\nkey_env = "A B"', "key_env must be an environment"),
    ('base_url = "https://h/v1"\nmodel = "m"\nkey = "sk-1"', "unknown key key"),
    ('base_url = "https://h/v1"\nmodel = "m"\ncontext_window = 100', "must exceed max_tokens"),
    ('base_url = "https://h/v1"\nmodel = "m"\nmax_tokens = 0', "max_tokens must be a whole number above 0"),
])
def test_a_wrong_named_judge_names_the_file_and_the_key(table: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(_config(f"[judges.j]\n{table}\n"), "nw.toml")
    assert str(caught.value).startswith("nw.toml [judges.j]:") and message in str(caught.value)


def test_models_outside_the_data_folder_and_hub_ids_need_an_admin(tmp_path) -> None:
    data = tmp_path / "data"
    (data / "m").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (data / "link").symlink_to(tmp_path / "elsewhere")
    reviewer = User(2, "rita", "reviewer")
    admin = User(1, "lead", "admin")
    assert model_source_refusal(str(data / "m"), reviewer, data) is None
    for name in (str(tmp_path / "elsewhere"), str(data / "link"), "gpt2", "org/model",
                 str(data / "m" / ".." / ".." / "elsewhere"), "/etc"):
        refusal = model_source_refusal(name, reviewer, data)
        assert refusal and refusal.startswith("Only an admin loads a model from outside"), name
    assert model_source_refusal("org/model", admin, data) is None
    assert model_source_refusal("/etc", None, data) is None  # local mode


@pytest.fixture
def team(tmp_path, monkeypatch):
    """Team mode with an admin's named connection to ``listener`` (its key in a server
    environment variable), a second listener nobody configured, and a preference set."""
    with FakeJudgeServer() as named, FakeJudgeServer() as stranger:
        db = team_mode_db(tmp_path, monkeypatch, people={"lead": "admin", "rita": "reviewer"},
                          config=f'[judges.team-judge]\nbase_url = "{named.base_url}"\n'
                                 'model = "judge"\nkey_env = "TEAM_JUDGE_KEY"\nmax_tokens = 64\n')
        monkeypatch.setenv("TEAM_JUDGE_KEY", SECRET)
        monkeypatch.setenv("OTHER_SECRET", "sk-other-SECRET-1111")
        import_bytes(db, jsonl([{"id": "q0", "subset": "QA", "prompt": "P?", "chosen": ["a"],
                                 "rejected": ["b"]}]), "p.jsonl", dataset="prefs", format="lfrb")
        yield db, named, stranger


def _page(db, who: str) -> AppTest:
    return open_as(db, who, "app_pages/rewards.py", "prefs")


def _auth(request: dict) -> str | None:
    return {k.lower(): v for k, v in request["headers"].items()}.get("authorization")


def _keys(at: AppTest, kind: str) -> set[str]:
    return {w.key for w in getattr(at, kind) if w.key}


@pytest.mark.slow
def test_a_reviewer_picks_the_admins_connection_and_types_no_address(team) -> None:
    db, named, stranger = team
    at = _page(db, "rita")
    assert "jd_base_url" not in _keys(at, "text_input")
    assert not {"jd_key_env", "jd_secret"} & _keys(at, "text_input")
    assert "jd_key_from" not in _keys(at, "selectbox")
    picker = at.selectbox(key="jd_named")
    assert picker.options == ["team-judge: judge at " + named.base_url + " (key from $TEAM_JUDGE_KEY)"]
    # what a hostile session could leave in the form's remembered values changes nothing
    at.session_state["jd_saved"] = {**at.session_state["jd_saved"], "base_url": stranger.base_url,
                                    "key_from": "env", "key_env": "OTHER_SECRET", "model": "judge"}
    at.number_input(key="jd_max_tokens").set_value(30000)
    at.run()
    at.button(key="jd_test").click()
    at.run()
    assert not at.exception, at.exception
    assert stranger.requests == []
    [request] = named.chat_requests()
    assert _auth(request) == f"Bearer {SECRET}"
    assert request["body"]["max_tokens"] <= 64  # held to the connection's limit


def test_an_admin_keeps_the_whole_form(team) -> None:
    db, named, _ = team
    at = _page(db, "lead")
    assert {"jd_base_url", "jd_model"} <= _keys(at, "text_input")
    at.text_input(key="jd_base_url").set_value(named.base_url)
    at.text_input(key="jd_model").set_value("judge")
    at.run()
    at.button(key="jd_test").click()
    at.run()
    [request] = named.chat_requests()
    assert _auth(request) != f"Bearer {SECRET}"  # no key source chosen: the key stays home


@pytest.mark.slow
def test_a_reviewer_is_refused_a_model_outside_data_and_a_load_is_audited(team, tmp_path) -> None:
    from needlework.rewards import registry  # noqa: PLC0415
    from needlework.teams.audit import event_records  # noqa: PLC0415
    from tests.rewards_fixtures import save_tiny_model  # noqa: PLC0415

    db, _, _ = team
    outside = tmp_path / "outside-model"
    save_tiny_model(outside)
    registry.MODELS.clear()
    at = _page(db, "rita")
    box = at.text_input(key="rw_model")
    assert box.label == "Model folder (in the data folder)" and "hub id" not in box.help
    at.text_input(key="rw_model").set_value(str(outside)).run()
    at.button(key="rw_load").click().run()
    assert any("Only an admin loads a model from outside the data folder" in e.value
               for e in at.error)
    at = _page(db, "lead")
    assert at.text_input(key="rw_model").label == "Model folder or hub id"
    at.text_input(key="rw_model").set_value(str(outside)).run()
    try:
        at.button(key="rw_load").click().run()
    finally:
        registry.MODELS.clear()  # the registry is the process's: leave it as found
    assert not at.exception, at.exception
    [loaded] = [e for e in event_records(db) if e["action"] == "model.loaded"]
    assert (loaded["by"], loaded["target"]) == ("lead", str(outside.resolve()))


def test_the_auth_secrets_section_is_never_a_key(team, tmp_path) -> None:
    from components.models import judge  # noqa: PLC0415

    assert judge._secret("auth") is None
