"""Modes: needlework.toml says local or team; ``make run`` listens on 127.0.0.1 in local
mode and on the configured address in team mode (checked on a real server through the
Makefile's own recipe); a wrong file is refused naming the file and the key."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import listen_guard
from needlework.teams.config import (
    Config,
    ConfigError,
    Policy,
    load_config,
    mode,
    parse_config,
    serving_refusal,
    team_mode,
)
from tests.conftest import ROOT

TEAM = '[server]\nmode = "team"\naddress = "10.0.0.5"\n\n[sessions]\nhours = 8\n\n' \
       '[lockout]\nfailures = 3\nminutes = 30.5\n'


def test_no_file_means_local_mode_on_127_0_0_1(tmp_path):
    config = load_config(tmp_path / "none.toml")
    assert config == Config() and config.mode == "local" and config.address == "127.0.0.1"
    assert config.policy == Policy(session_hours=12, lock_failures=5, lock_minutes=15)
    assert mode(tmp_path / "none.toml") == "local" and not team_mode(tmp_path / "none.toml")


def test_team_mode_reads_its_address_and_policy(tmp_path, monkeypatch):
    path = tmp_path / "needlework.toml"
    path.write_text(TEAM)
    monkeypatch.setenv("NEEDLEWORK_CONFIG", str(path))
    config = load_config()
    assert (config.mode, config.address, config.team) == ("team", "10.0.0.5", True)
    assert config.policy == Policy(session_hours=8.0, lock_failures=3, lock_minutes=30.5)
    assert mode() == "team"
    # local mode ignores a configured address: it is never reachable from the network
    assert parse_config('[server]\nmode = "local"\naddress = "0.0.0.0"\n').address == "127.0.0.1"


@pytest.mark.parametrize(("text", "message"), [
    ('[server]\nmode = "tem"\n', 'cfg.toml: server.mode must be "local" or "team", got \'tem\''),
    ('[server]\nmode = "team"\naddress = "my-host"\n', "server.address must be an IP address"),
    ('[server]\naddress = 5\n', "server.address must be an IP address, got 5"),
    ('[server]\nadress = "0.0.0.0"\n', "unknown key server.adress (expected server.mode, "
                                       "server.address, server.trusted_proxies"),
    ("[sessions]\nhours = 0\n", "[sessions]: hours must be a number above 0, got 0"),
    ("[sessions]\nhours = nan\n", "hours must be a number above 0"),
    ("[lockout]\nfailures = 2.5\n", "failures must be a whole number above 0, got 2.5"),
    ("[lockout]\nfailures = true\n", "failures must be a whole number above 0"),
    ("[users]\nx = 1\n", "unknown table [users]"),
    ("server = 3\n", "[server] must be a table"),
])
def test_a_wrong_config_is_refused_naming_file_and_key(text, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        parse_config(text, "cfg.toml")
    assert str(info.value).startswith("cfg.toml")


def test_a_config_that_is_not_toml_is_refused_with_its_line():
    with pytest.raises(ConfigError, match=r"^cfg.toml: not valid TOML: .*\(at line 1, column 8\)"):
        parse_config('[server\nmode = "team"\n', "cfg.toml")


def test_an_unreadable_config_is_named(tmp_path):
    path = tmp_path / "needlework.toml"
    path.write_bytes(b'[server]\nmode = "\xff"\n')
    with pytest.raises(ConfigError, match="needlework.toml: cannot read the config"):
        load_config(path)


def mode_cli(*args: str, config: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "needlework", "mode", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "NEEDLEWORK_CONFIG": str(config)})


@pytest.mark.slow
def test_cli_mode_prints_what_make_run_uses(tmp_path):
    path = tmp_path / "needlework.toml"
    assert mode_cli(config=path).stdout == "local 127.0.0.1\n"
    path.write_text(TEAM)
    assert mode_cli(config=path).stdout == "team 10.0.0.5\n"
    assert mode_cli("--address", config=path).stdout == "10.0.0.5\n"
    path.write_text('[server]\nmode = "open"\n')
    failed = mode_cli("--address", config=path)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.strip() == (f"mode: {path}: server.mode must be \"local\" or \"team\", "
                                     "got 'open'")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listeners(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp writes them) listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                address, hexport = fields[1].rsplit(":", 1)
                if int(hexport, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                    found.add(address)
    return found


def serve_with_make(tmp_path, config_text: str | None) -> set[str]:
    """Run the Makefile's run recipe (its prerequisites taken as done) until the server
    listens; return where it listens."""
    return serve_until_listening(
        tmp_path, config_text, lambda port: ["make", "-s", "-o", "venv", "-o", "seed", "run",
                                             f"PORT={port}"])


def serve_until_listening(tmp_path, config_text: str | None, argv) -> set[str]:
    """Run ``argv(port)`` until a server listens on the port; return where it listens."""
    port = free_port()
    config = tmp_path / "needlework.toml"
    if config_text is not None:
        config.write_text(config_text)
    env = {**os.environ, "NEEDLEWORK_CONFIG": str(config),
           "NEEDLEWORK_DB": str(tmp_path / "app.db")}
    proc = subprocess.Popen(argv(port),
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            found = listeners(port)
            if found:
                return found
            time.sleep(0.5)
        raise AssertionError(f"the server did not listen on {port}: "
                             f"{proc.stdout.read() if proc.poll() is not None else ''}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.slow
def test_make_run_listens_on_127_0_0_1_in_local_mode(tmp_path):
    assert serve_with_make(tmp_path, None) == {"0100007F"}  # 127.0.0.1 only, no IPv6 any


@pytest.mark.slow
def test_make_run_listens_on_the_configured_address_in_team_mode(tmp_path):
    # a loopback address other than 127.0.0.1, so the test never opens a port to the network
    text = '[server]\nmode = "team"\naddress = "127.0.0.2"\n'
    assert serve_with_make(tmp_path, text) == {"0200007F"}


def _streamlit_run(*flags: str):
    return lambda port: [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.port",
                         str(port), "--server.headless", "true", *flags]


@pytest.mark.slow
def test_plain_streamlit_run_serves_local_mode_on_127_0_0_1_only(tmp_path):
    """`streamlit run serve.py` with no flag and no team config: this machine only."""
    assert serve_until_listening(tmp_path, None, _streamlit_run()) == {"0100007F"}


@pytest.mark.slow
def test_local_mode_refuses_another_address_in_one_line(tmp_path):
    env = {**os.environ, "NEEDLEWORK_CONFIG": str(tmp_path / "none.toml"),
           "NEEDLEWORK_DB": str(tmp_path / "app.db")}
    done = subprocess.run(_streamlit_run("--server.address", "0.0.0.0")(free_port()), cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert ("needlework: local mode has no sign-in, so it serves on 127.0.0.1 only, not on "
            "0.0.0.0.") in done.stdout + done.stderr
    assert serving_refusal(parse_config('[server]\nmode = "team"\n'), "0.0.0.0") is None
    assert serving_refusal(parse_config(""), "127.0.0.1") is None
    assert "not on every network interface" in serving_refusal(parse_config(""), None)


#: Modules of the app that serve.py loads only once the mode allows the address.
APP_MODULES = ("store", "needlework.actions.route", "needlework.web",
               "needlework.teams.session_cookie")


def imported(importtime: str) -> set[str]:
    """The modules named by ``python -X importtime``'s lines (``import time: … | NAME``)."""
    return {line.rsplit("|", 1)[1].strip() for line in importtime.splitlines()
            if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize(("argv", "args"), [
    (["/v/bin/python", "/v/bin/streamlit", "run", "serve.py", "--server.port", "1"],
     ["serve.py", "--server.port", "1"]),
    (["python3", "-X", "importtime", "-m", "streamlit", "run", "./serve.py"], ["./serve.py"]),
    (["streamlit", "run", "serve.py", "--server.address=0.0.0.0"],
     ["serve.py", "--server.address=0.0.0.0"]),
    (["python", "-m", "streamlit", "hello"], None),
    (["python", "-m", "pytest", "run", "serve.py"], None),
    (["python", "-c", "print('run')", "run", "serve.py"], None),
    (["python", "tool.py", "run", "serve.py"], None),
    (["streamlit", "run"], None),
])
def test_the_listen_guard_knows_a_streamlit_run(argv, args):
    assert listen_guard.run_arguments(argv) == args


def test_the_listen_guard_refuses_only_this_apps_server_on_a_wide_address(tmp_path, monkeypatch):
    monkeypatch.setenv("NEEDLEWORK_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("STREAMLIT_SERVER_ADDRESS", raising=False)
    wide = ["streamlit", "run", "serve.py", "--server.address", "0.0.0.0"]
    assert "not on 0.0.0.0" in listen_guard.refusal(wide, ROOT)
    assert listen_guard.refusal(wide, tmp_path) is None  # another folder's serve.py
    assert listen_guard.refusal(["streamlit", "run", "serve.py"], ROOT) is None  # config.toml
    monkeypatch.setenv("STREAMLIT_SERVER_ADDRESS", "0.0.0.0")
    assert "not on 0.0.0.0" in listen_guard.refusal(["streamlit", "run", "serve.py"], ROOT)
    assert listen_guard.refusal([*wide[:-1], "127.0.0.1"], ROOT) is None  # the flag wins
    from streamlit import config as streamlit_config  # noqa: PLC0415
    assert streamlit_config._config_options is None  # Streamlit's CLI parses afresh: no warning
    (tmp_path / "team.toml").write_text('[server]\nmode = "team"\n')
    monkeypatch.setenv("NEEDLEWORK_CONFIG", str(tmp_path / "team.toml"))
    assert listen_guard.refusal(wide, ROOT) is None


def connections_while_running(argv: list[str], host: str, port: int, env) -> tuple[int, str]:
    """Run ``argv`` and try to connect to ``host:port`` without pause until it exits;
    return how many connections succeeded, and what it printed."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    opened = 0
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex((host, port)) == 0:
                opened += 1
    if proc.poll() is None:
        proc.kill()
    return opened, proc.communicate()[0]


@pytest.mark.slow
def test_local_mode_refuses_before_the_port_is_ever_open(tmp_path):
    """Issue 57, point 5: `streamlit run serve.py` on a wide address in local mode stops
    before Streamlit opens its socket (the .pth guard), not once serve.py is imported.
    127.0.0.2 is a loopback address other than 127.0.0.1: refused in local mode, and never
    a port open to the network."""
    env = {**os.environ, "NEEDLEWORK_CONFIG": str(tmp_path / "none.toml"),
           "NEEDLEWORK_DB": str(tmp_path / "app.db")}
    port = free_port()
    opened, printed = connections_while_running(
        _streamlit_run("--server.address", "127.0.0.2")(port), "127.0.0.2", port, env)
    assert ("needlework: local mode has no sign-in, so it serves on 127.0.0.1 only, not on "
            "127.0.0.2.") in printed
    assert opened == 0


@pytest.mark.slow
def test_serve_py_refuses_too_before_anything_of_the_app_loads(tmp_path):
    """A Streamlit started without the guard (here through its CLI from ``python -c``):
    serve.py's own refusal comes before any module of the app loads."""
    env = {**os.environ, "NEEDLEWORK_CONFIG": str(tmp_path / "none.toml"),
           "NEEDLEWORK_DB": str(tmp_path / "app.db")}
    argv = _streamlit_run("--server.address", "127.0.0.2")(free_port())
    launch = ("import sys; from streamlit.web.cli import main; "
              f"sys.argv = ['streamlit', *{argv[3:]!r}]; main()")
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", launch], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert ("needlework: local mode has no sign-in, so it serves on 127.0.0.1 only, not on "
            "127.0.0.2.") in done.stderr
    loaded = imported(done.stderr)
    assert "streamlit.web.server.starlette.starlette_server" in loaded  # Streamlit got that far
    assert "needlework.teams.config" in loaded  # the refusal's own rule
    assert sorted(loaded & set(APP_MODULES)) == []


@pytest.mark.slow
def test_make_run_refuses_a_wrong_config(tmp_path):
    config = tmp_path / "needlework.toml"
    config.write_text('[server]\nmode = "team"\naddress = "everywhere"\n')
    done = subprocess.run(["make", "-s", "-o", "venv", "-o", "seed", "run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NEEDLEWORK_CONFIG": str(config)})
    assert done.returncode != 0
    assert "server.address must be an IP address" in done.stderr
    assert "streamlit" not in done.stdout
