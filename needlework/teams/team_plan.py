"""What ``serve-team`` runs, decided before anything starts: the proxy's address and port,
the app processes (*workers*) and their ports, the certificate, each checked
(:class:`ServeTeamError` names what to change). Pure but for the port probes; the proxy's
configuration is made from a plan by :mod:`needlework.teams.haproxy`, and the processes
are started by :mod:`needlework.teams.serve_team`.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from needlework.teams.config import CONFIG_FILE, Config

AFFINITY_COOKIE = "needlework_worker"
WORKER_HEADER = "X-Needlework-Worker"  # each response names the worker that answered
HEALTH = "/_stcore/health"
WORKER_ADDRESS = "127.0.0.1"
MAX_WORKERS = 64


class ServeTeamError(ValueError):
    """Why the processes cannot be started (one line, naming what to change)."""


@dataclass(frozen=True)
class Worker:
    """One app process: its name (the affinity cookie's value) and its port on 127.0.0.1."""

    name: str
    port: int
    address: str = WORKER_ADDRESS

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"


@dataclass(frozen=True)
class TeamPlan:
    """What to run: the proxy on ``address:port`` (TLS with ``certificate``, a PEM file
    holding the certificate chain and its key, or the key beside it as ``FILE.key``), in
    front of ``workers``."""

    address: str
    port: int
    workers: tuple[Worker, ...]
    certificate: Path | None = None
    cookie: str = AFFINITY_COOKIE

    @property
    def url(self) -> str:
        """The address people open (a wildcard address shown as this machine)."""
        host = self.address
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1" if host == "0.0.0.0" else "::1"
        if ":" in host:
            host = f"[{host}]"
        return f"{'https' if self.certificate else 'http'}://{host}:{self.port}"


def _port(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise ServeTeamError(f"serve-team: {what} must be a port from 1 to 65535, got {value!r}")
    return value


def any_free_port(address: str = WORKER_ADDRESS) -> int:
    """A port the system says is free on ``address`` now."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def make_plan(config: Config, workers: int, port: int, *, worker_port: int | None = None,
              certificate: str | Path | None = None) -> TeamPlan:
    """The plan for ``workers`` processes behind a proxy on ``port`` (at the config's team
    address), or :class:`ServeTeamError` saying why not. Worker ports are ``worker_port``,
    ``worker_port + 1``, ... (default: from ``port + 1``); ``worker_port=0`` takes ports
    the system says are free."""
    if not config.team:
        raise ServeTeamError(
            "serve-team: local mode has no sign-in, so it runs one process on 127.0.0.1 "
            f"(make run); switch team mode on in {config.source or CONFIG_FILE} "
            "([server] mode = \"team\", docs/teams.md) to run several behind a proxy")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ServeTeamError(f"serve-team: --workers must be 1 or more, got {workers!r}")
    if workers > MAX_WORKERS:
        raise ServeTeamError(f"serve-team: --workers must be at most {MAX_WORKERS}, got {workers}")
    _port(port, "the proxy's port (PORT, --port)")
    if worker_port == 0:
        ports: list[int] = []
        while len(ports) < workers:
            candidate = any_free_port()
            if candidate != port and candidate not in ports:
                ports.append(candidate)
    else:
        first = port + 1 if worker_port is None else _port(worker_port, "--worker-port")
        if first + workers - 1 > 65535:
            raise ServeTeamError(f"serve-team: {workers} worker ports from {first} go past 65535")
        ports = list(range(first, first + workers))
        if port in ports:
            raise ServeTeamError(f"serve-team: worker port {port} is the proxy's port: choose "
                                 "another --worker-port")
    cert = None
    if certificate is not None and str(certificate) != "":
        cert = Path(certificate).expanduser().resolve()
        try:
            text = cert.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise ServeTeamError(f"serve-team: certificate {certificate}: cannot read it "
                                 f"({e.strerror or e})") from None
        if "-----BEGIN CERTIFICATE-----" not in text:
            raise ServeTeamError(f"serve-team: certificate {certificate}: not a PEM file with a "
                                 "certificate (-----BEGIN CERTIFICATE-----)")
        if "PRIVATE KEY-----" not in text and not Path(f"{cert}.key").is_file():
            raise ServeTeamError(f"serve-team: certificate {certificate}: its private key is "
                                 f"neither in the file nor beside it as {cert.name}.key")
    return TeamPlan(address=config.team_address, port=port,
                    workers=tuple(Worker(f"w{i}", p) for i, p in enumerate(ports, start=1)),
                    certificate=cert)


def port_in_use(address: str, port: int) -> bool:
    """Whether something listens on ``address:port`` (a bind there fails)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
        try:
            s.bind((address, port))
        except OSError:
            return True
    return False


def check_ports(plan: TeamPlan, in_use: Callable[[str, int], bool] = port_in_use) -> None:
    """:class:`ServeTeamError` naming the first port of the plan that is taken."""
    wanted = [(plan.address, plan.port, "the proxy")] + [
        (w.address, w.port, f"worker {w.name}") for w in plan.workers]
    for address, port, what in wanted:
        if in_use(address, port):
            raise ServeTeamError(f"serve-team: port {port} on {address} ({what}) is in use: stop "
                                 "what listens there, or choose another PORT / --worker-port")


def trusted_proxy_note(config: Config) -> str | None:
    """A line to print when ``[server] trusted_proxies`` does not list the proxy (127.0.0.1):
    the app would then record every person's address as 127.0.0.1."""
    loopback = ipaddress.ip_address("127.0.0.1")
    if any(loopback in net for net in config.trusted_proxies if net.version == 4):
        return None
    return (f"serve-team: note: {config.source or CONFIG_FILE} does not list the proxy in "
            "[server] trusted_proxies, so the audit trail will name 127.0.0.1 as every "
            "person's address; add trusted_proxies = [\"127.0.0.1\"] (docs/scaling.md)")

