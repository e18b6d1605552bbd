"""Several app processes behind HAProxy (needlework.teams.serve_team): the configuration
written from a plan (affinity cookie, WebSocket timeouts, health checks, redispatch,
X-Forwarded-For, TLS when a certificate is given), checked by HAProxy itself, and the
refusals (local mode, fewer than one worker, a port in use, a certificate that is not one)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from needlework.cli import main
from needlework.teams.config import parse_config
from needlework.teams.haproxy import TUNNEL_TIMEOUT, check_haproxy_config, haproxy_config
from needlework.teams.serve_team import worker_command, worker_env
from needlework.teams.team_plan import (
    AFFINITY_COOKIE,
    ServeTeamError,
    TeamPlan,
    Worker,
    check_ports,
    make_plan,
    port_in_use,
    trusted_proxy_note,
)

TEAM = parse_config('[server]\nmode = "team"\naddress = "0.0.0.0"\n'
                    'trusted_proxies = ["127.0.0.1"]\n', "team.toml")
LOCAL = parse_config("", "local.toml")


def directives(text: str, section: str) -> list[str]:
    """The lines of one section (``frontend needlework``, ``backend workers``, ...) without
    comments, whitespace collapsed."""
    out, inside = [], False
    for line in text.splitlines():
        if line and not line.startswith(" "):
            inside = line.strip() == section
            continue
        bare = " ".join(line.split("#")[0].split())
        if inside and bare:
            out.append(bare)
    return out


def self_signed(folder: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 and its key in one PEM file."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    both = folder / "needlework.pem"
    both.write_text(cert.read_text() + key.read_text())
    return both


def haproxy_or_skip() -> str:
    from needlework.teams.haproxy import find_haproxy  # noqa: PLC0415

    try:
        return find_haproxy()
    except ServeTeamError:
        pytest.skip("haproxy is not installed (make haproxy)")


def test_plan_names_each_worker_and_gives_it_the_next_port():
    plan = make_plan(TEAM, 3, 8501)
    assert plan == TeamPlan("0.0.0.0", 8501, (Worker("w1", 8502), Worker("w2", 8503),
                                              Worker("w3", 8504)))
    assert plan.url == "http://127.0.0.1:8501"
    assert [w.port for w in make_plan(TEAM, 2, 8501, worker_port=9000).workers] == [9000, 9001]
    free = make_plan(TEAM, 2, 8501, worker_port=0).workers
    assert len({w.port for w in free}) == 2 and 8501 not in {w.port for w in free}


def test_config_keeps_a_person_on_one_worker_by_an_inserted_cookie():
    text = haproxy_config(make_plan(TEAM, 2, 8501))
    backend = directives(text, "backend workers")
    assert (f'cookie {AFFINITY_COOKIE} insert indirect nocache httponly attr "SameSite=Lax"'
            in backend)
    assert "server w1 127.0.0.1:8502 cookie w1" in backend
    assert "server w2 127.0.0.1:8503 cookie w2" in backend
    assert "http-response set-header X-Needlework-Worker %s" in backend


def test_config_keeps_websockets_open_and_checks_health_and_redispatches():
    text = haproxy_config(make_plan(TEAM, 2, 8501))
    defaults, backend = directives(text, "defaults"), directives(text, "backend workers")
    assert "mode http" in defaults  # HAProxy passes the WebSocket upgrade through in http mode
    assert f"timeout tunnel {TUNNEL_TIMEOUT}" in defaults
    assert TUNNEL_TIMEOUT == "1h"
    assert "option redispatch 1" in defaults and "retries 3" in defaults
    assert "option forwardfor" in defaults
    assert {"option httpchk", "http-check send meth GET uri /_stcore/health",
            "http-check expect status 200"} <= set(backend)
    assert any(line.startswith("default-server check inter 2s fall 3 rise 2") for line in backend)
    assert "timeout check 5s" in backend  # a busy process is late, not down


def test_plain_http_binds_without_tls_and_says_so_to_the_app():
    frontend = directives(haproxy_config(make_plan(TEAM, 1, 8501)), "frontend needlework")
    assert frontend[0] == "bind 0.0.0.0:8501"
    assert "http-request set-header X-Forwarded-Proto http" in frontend
    assert "ssl" not in haproxy_config(make_plan(TEAM, 1, 8501))


def test_a_certificate_makes_the_proxy_serve_tls_with_secure_cookies(tmp_path):
    pem = self_signed(tmp_path)
    plan = make_plan(TEAM, 2, 8443, certificate=pem)
    assert plan.certificate == pem.resolve() and plan.url == "https://127.0.0.1:8443"
    text = haproxy_config(plan)
    frontend = directives(text, "frontend needlework")
    assert frontend[0] == f"bind 0.0.0.0:8443 ssl crt {pem.resolve()} alpn http/1.1"
    assert "http-request set-header X-Forwarded-Proto https" in frontend
    assert (f'cookie {AFFINITY_COOKIE} insert indirect nocache httponly secure '
            f'attr "SameSite=Lax"') in directives(text, "backend workers")
    assert "ssl-default-bind-options ssl-min-ver TLSv1.2" in directives(text, "global")


def test_haproxy_accepts_the_config_it_is_given(tmp_path):
    haproxy = haproxy_or_skip()
    for name, plan in {"plain": make_plan(TEAM, 4, 18501),
                       "tls": make_plan(TEAM, 2, 18443, certificate=self_signed(tmp_path))}.items():
        path = tmp_path / f"{name}.cfg"
        path.write_text(haproxy_config(plan))
        check_haproxy_config(haproxy, path)  # raises with HAProxy's alert
    broken = tmp_path / "broken.cfg"
    broken.write_text(haproxy_config(make_plan(TEAM, 1, 18501)).replace("balance leastconn",
                                                                      "balance nowhere"))
    with pytest.raises(ServeTeamError, match=r"^serve-team: haproxy refuses .*broken.cfg: .*"):
        check_haproxy_config(haproxy, broken)


def test_an_ipv6_address_binds_with_its_port_after_the_last_colon():
    config = parse_config('[server]\nmode = "team"\naddress = "::"\n')
    plan = make_plan(config, 1, 8501)
    assert directives(haproxy_config(plan), "frontend needlework")[0] == "bind :::8501"
    assert plan.url == "http://[::1]:8501"


def test_local_mode_is_refused_in_one_line():
    with pytest.raises(ServeTeamError) as refused:
        make_plan(LOCAL, 2, 8501)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("serve-team: local mode has no sign-in, so it runs one process "
                              "on 127.0.0.1 (make run); switch team mode on in local.toml")


@pytest.mark.parametrize("workers", [0, -1])
def test_fewer_than_one_worker_is_refused(workers):
    with pytest.raises(ServeTeamError, match=rf"^serve-team: --workers must be 1 or more, "
                                             rf"got {workers}$"):
        make_plan(TEAM, workers, 8501)


def test_impossible_ports_are_refused():
    with pytest.raises(ServeTeamError, match="the proxy's port .* must be a port from 1 to "
                                             "65535, got 70000"):
        make_plan(TEAM, 1, 70000)
    with pytest.raises(ServeTeamError, match="3 worker ports from 65534 go past 65535"):
        make_plan(TEAM, 3, 8501, worker_port=65534)
    with pytest.raises(ServeTeamError, match="worker port 8501 is the proxy's port"):
        make_plan(TEAM, 2, 8501, worker_port=8500)


def test_a_port_in_use_is_refused_naming_it():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert port_in_use("127.0.0.1", port)
        plan = TeamPlan("127.0.0.1", port - 1 if port > 1024 else port + 2,
                        (Worker("w1", port),))
        with pytest.raises(ServeTeamError, match=rf"^serve-team: port {port} on 127.0.0.1 "
                                                 r"\(worker w1\) is in use"):
            check_ports(plan, in_use=lambda a, p: p == port)
        with pytest.raises(ServeTeamError, match=rf"port {port} on 127.0.0.1 \(worker w1\)"):
            check_ports(plan)
        proxy_taken = TeamPlan("127.0.0.1", port, (Worker("w1", port + 1),))
        with pytest.raises(ServeTeamError, match=rf"port {port} on 127.0.0.1 \(the proxy\)"):
            check_ports(proxy_taken, in_use=lambda a, p: p == port)
    check_ports(plan, in_use=lambda a, p: False)


def test_a_certificate_that_is_not_one_is_refused(tmp_path):
    with pytest.raises(ServeTeamError, match="certificate .*none.pem: cannot read it"):
        make_plan(TEAM, 1, 8501, certificate=tmp_path / "none.pem")
    (tmp_path / "junk.pem").write_text("hello")
    with pytest.raises(ServeTeamError, match="not a PEM file with a certificate"):
        make_plan(TEAM, 1, 8501, certificate=tmp_path / "junk.pem")
    (tmp_path / "cert.pem").write_text("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
    with pytest.raises(ServeTeamError, match="its private key is neither in the file nor beside "
                                             "it as cert.pem.key"):
        make_plan(TEAM, 1, 8501, certificate=tmp_path / "cert.pem")
    (tmp_path / "cert.pem.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    assert make_plan(TEAM, 1, 8501, certificate=tmp_path / "cert.pem").certificate


def test_the_note_when_trusted_proxies_misses_the_proxy():
    assert trusted_proxy_note(TEAM) is None
    assert trusted_proxy_note(parse_config('[server]\nmode = "team"\ntrusted_proxies = '
                                           '["127.0.0.0/8"]\n')) is None
    note = trusted_proxy_note(parse_config('[server]\nmode = "team"\n', "t.toml"))
    assert note is not None and "\n" not in note
    assert 't.toml does not list the proxy in [server] trusted_proxies' in note
    assert 'trusted_proxies = ["127.0.0.1"]' in note


def test_every_worker_reads_the_same_config_database_and_cookie_secret(tmp_path):
    env = worker_env({"PATH": "/bin"}, config_file=Path("needlework.toml"),
                     db_path=Path("data/x.db"))
    assert Path(env["NEEDLEWORK_CONFIG"]).is_absolute() and env["NEEDLEWORK_CONFIG"].endswith(
        "needlework.toml")
    assert Path(env["NEEDLEWORK_DB"]).is_absolute()
    assert re.fullmatch(r"[0-9a-f]{64}", env["STREAMLIT_SERVER_COOKIE_SECRET"])
    kept = worker_env({"STREAMLIT_SERVER_COOKIE_SECRET": "mine"}, config_file=tmp_path / "c",
                      db_path=tmp_path / "d")
    assert kept["STREAMLIT_SERVER_COOKIE_SECRET"] == "mine"
    command = worker_command("/py", Worker("w2", 9002))
    assert command[:4] == ["/py", "-m", "streamlit", "run"] and command[4].endswith("serve.py")
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
    assert command[command.index("--server.port") + 1] == "9002"


def test_the_verb_refuses_in_one_line_and_exits_1(tmp_path, capsys):
    local = tmp_path / "local.toml"
    local.write_text('[server]\nmode = "local"\n')
    assert main(["serve-team", "--workers", "2", "--config", str(local)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("serve-team: local mode has no sign-in")
    team = tmp_path / "team.toml"
    team.write_text('[server]\nmode = "team"\n')
    assert main(["serve-team", "--workers", "0", "--config", str(team)]) == 1
    assert capsys.readouterr().err == "serve-team: --workers must be 1 or more, got 0\n"
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[server]\nmode = "tem"\n')
    assert main(["serve-team", "--config", str(wrong)]) == 1
    assert capsys.readouterr().err.startswith("serve-team: ")


def test_the_verb_refuses_a_port_in_use_before_starting_anything(tmp_path, capsys):
    team = tmp_path / "team.toml"
    team.write_text('[server]\nmode = "team"\naddress = "127.0.0.1"\n'
                    'trusted_proxies = ["127.0.0.1"]\n')
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve-team", "--workers", "1", "--port", str(port), "--worker-port", "0",
                     "--config", str(team), "--db", str(tmp_path / "x.db")]) == 1
    assert capsys.readouterr().err == (f"serve-team: port {port} on 127.0.0.1 (the proxy) is in "
                                       "use: stop what listens there, or choose another PORT / "
                                       "--worker-port\n")
    assert not (tmp_path / "x.db").exists() and not (tmp_path / "serve-team").exists()


def test_print_config_prints_what_haproxy_would_run_and_starts_nothing(tmp_path, capsys):
    team = tmp_path / "team.toml"
    team.write_text('[server]\nmode = "team"\naddress = "127.0.0.1"\n')
    assert main(["serve-team", "--workers", "3", "--port", "9100", "--config", str(team),
                 "--print-config", "--db", str(tmp_path / "x.db")]) == 0
    out = capsys.readouterr().out
    assert out == haproxy_config(make_plan(parse_config(team.read_text()), 3, 9100))
    assert "server w3 127.0.0.1:9103 cookie w3" in out
    assert not (tmp_path / "x.db").exists()
