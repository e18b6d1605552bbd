"""The serving mode: *local* (one person, no sign-in) or *team* (accounts and roles).

The mode lives in ``needlework.toml`` at the repository root (or the file named by
``$NEEDLEWORK_CONFIG``). No file means local mode. Every key is optional::

    [server]
    mode = "team"          # "local" (default) or "team"
    address = "0.0.0.0"    # where team mode serves; local mode always serves on 127.0.0.1
    trusted_proxies = ["127.0.0.1", "10.0.0.0/24"]  # reverse proxies whose X-Forwarded-For
                           # names the client (needlework.teams.proxies); default: none

    [sessions]
    hours = 12             # a sign-in lasts this long, page reloads included

    [lockout]
    failures = 5           # wrong passwords in a row that pause sign-in with a name...
    minutes = 15           # ...at most this long (the pause grows from 1 minute)

    [judges.NAME]          # a judge connection reviewers may pick (needlework.judge_settings)
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-mini"
    key_env = "OPENAI_API_KEY"

``make run`` asks ``python -m needlework mode --address`` where to listen, so local
mode is never reachable from the network. A file that cannot be read or holds a
wrong value raises :class:`ConfigError` naming the file and the key: the app refuses
to start rather than guess.
"""

from __future__ import annotations

import ipaddress
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needlework.judge_settings import NamedJudge, NamedJudgeError, parse_named_judges

LOCAL, TEAM = "local", "team"
MODES = (LOCAL, TEAM)
LOCAL_ADDRESS = "127.0.0.1"
CONFIG_FILE = "needlework.toml"


class ConfigError(ValueError):
    """The config file is unreadable or holds a wrong value (the message names both)."""


@dataclass(frozen=True)
class Policy:
    """How long a sign-in lasts and when wrong passwords lock an account."""

    session_hours: float = 12.0
    lock_failures: int = 5
    lock_minutes: float = 15.0


@dataclass(frozen=True)
class Config:
    """The whole config; :attr:`address` is where ``make run`` listens."""

    mode: str = LOCAL
    team_address: str = "0.0.0.0"
    policy: Policy = field(default_factory=Policy)
    judges: tuple[NamedJudge, ...] = ()  # the admin's named judge connections
    #: Reverse proxies whose ``X-Forwarded-For`` names the client ([server] trusted_proxies).
    trusted_proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    needle_lab: str = "reviewer"  # [pages] needle_lab: the least role that opens the lab
    source: str = ""  # the file it was read from ("" = defaults)

    @property
    def team(self) -> bool:
        return self.mode == TEAM

    @property
    def address(self) -> str:
        """127.0.0.1 in local mode, the configured address in team mode."""
        return self.team_address if self.team else LOCAL_ADDRESS


def serving_refusal(config: Config, address: str | None) -> str | None:
    """Why the app may not serve on ``address`` (``None``: it may). Local mode has no
    sign-in, so it serves this machine only; team mode signs everyone in, wherever it
    listens."""
    if config.team or (address or "") in ("127.0.0.1", "localhost", "::1"):
        return None
    where = address or "every network interface"
    return (f"needlework: local mode has no sign-in, so it serves on 127.0.0.1 only, not on "
            f"{where}. To serve a team, switch team mode on in {config.source or CONFIG_FILE} "
            "([server] mode = \"team\", docs/teams.md).")


def config_path() -> Path:
    """``$NEEDLEWORK_CONFIG`` when set, else ``needlework.toml`` in the working folder."""
    return Path(os.environ.get("NEEDLEWORK_CONFIG") or CONFIG_FILE)


_KEYS = {"server": ("mode", "address", "trusted_proxies"), "sessions": ("hours",), "lockout": ("failures", "minutes"),
         "pages": ("needle_lab",)}
#: [pages] needle_lab: the least role that opens the Needle lab and its presentation
PAGE_ROLES = ("reviewer", "admin")


def _section(data: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{name}] must be a table")
    unknown = sorted(set(value) - set(_KEYS[name]))
    if unknown:
        raise ConfigError(f"{where}: unknown key {name}.{unknown[0]} (expected "
                          + ", ".join(f"{name}.{k}" for k in _KEYS[name]) + ")")
    return value


def _number(table: dict[str, Any], key: str, where: str, default: float, *, whole: bool) -> Any:
    value = table.get(key, default)
    ok = isinstance(value, int) if whole else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value <= 0:
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{where}: {key} must be {kind} above 0, got {value!r}")
    return value


def _trusted_proxies(value: Any, where: str,
                     ) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """``server.trusted_proxies``: a list of IP addresses or CIDR networks."""
    if not isinstance(value, list):
        raise ConfigError(f"{where}: server.trusted_proxies must be a list of IP addresses or "
                          f"networks such as [\"127.0.0.1\", \"10.0.0.0/24\"], got {value!r}")
    networks = []
    for i, entry in enumerate(value, start=1):
        try:
            if not isinstance(entry, str):
                raise ValueError
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ConfigError(f"{where}: server.trusted_proxies entry {i} must be an IP address "
                              f"or network such as 10.0.0.5 or 10.0.0.0/24, got {entry!r}"
                              ) from None
    return tuple(networks)


def parse_config(text: str, where: str = CONFIG_FILE) -> Config:
    """A :class:`Config` from TOML text; ``where`` names the file in errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    unknown = sorted(set(data) - set(_KEYS) - {"judges"})
    if unknown:
        raise ConfigError(f"{where}: unknown table [{unknown[0]}] (expected server, sessions, "
                          "lockout, pages, judges)")
    server = _section(data, "server", where)
    mode = server.get("mode", LOCAL)
    if mode not in MODES:
        raise ConfigError(f"{where}: server.mode must be \"local\" or \"team\", got {mode!r}")
    address = server.get("address", "0.0.0.0")
    if not isinstance(address, str):
        raise ConfigError(f"{where}: server.address must be an IP address, got {address!r}")
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise ConfigError(f"{where}: server.address must be an IP address such as 0.0.0.0 or "
                          f"192.168.1.20, got {address!r}") from None
    proxies = _trusted_proxies(server.get("trusted_proxies", []), where)
    sessions = _section(data, "sessions", where)
    lockout = _section(data, "lockout", where)
    policy = Policy(
        session_hours=float(_number(sessions, "hours", f"{where} [sessions]", 12.0, whole=False)),
        lock_failures=_number(lockout, "failures", f"{where} [lockout]", 5, whole=True),
        lock_minutes=float(_number(lockout, "minutes", f"{where} [lockout]", 15.0, whole=False)),
    )
    needle_lab = _section(data, "pages", where).get("needle_lab", "reviewer")
    if needle_lab not in PAGE_ROLES:
        raise ConfigError(f"{where} [pages]: needle_lab must be \"reviewer\" or \"admin\", "
                          f"got {needle_lab!r}")
    try:
        judges = parse_named_judges(data.get("judges"), where)
    except NamedJudgeError as e:
        raise ConfigError(str(e)) from None
    return Config(mode=mode, team_address=address, policy=policy, judges=judges,
                  trusted_proxies=proxies, needle_lab=needle_lab, source=where)


def load_config(path: str | Path | None = None) -> Config:
    """The config at ``path`` (default :func:`config_path`); defaults when there is no
    such file. Raises :class:`ConfigError`."""
    path = Path(path) if path is not None else config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config: {e}") from None
    return parse_config(text, str(path))


def mode(path: str | Path | None = None) -> str:
    """``"local"`` or ``"team"``: what the app calls to know whether to ask for sign-in."""
    return load_config(path).mode


def team_mode(path: str | Path | None = None) -> bool:
    """True when the config switches team mode on."""
    return load_config(path).team
