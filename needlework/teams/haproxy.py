"""HAProxy in front of the app processes: its configuration for a plan (a pure function),
where its executable is, and its own check of a configuration file. docs/scaling.md says
why HAProxy and what each part of the configuration is for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from needlework.teams.team_plan import HEALTH, WORKER_HEADER, ServeTeamError, TeamPlan

#: How long a WebSocket (Streamlit's /_stcore/stream) may stay silent before the proxy
#: closes it; the browser then connects again by itself.
TUNNEL_TIMEOUT = "1h"
_HAPROXY_PATHS = ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")


def haproxy_config(plan: TeamPlan) -> str:
    """HAProxy's configuration for ``plan`` (HAProxy 2.6, Debian bookworm's)."""
    tls = plan.certificate is not None
    bind = f"    bind {plan.address}:{plan.port}"
    if tls:
        bind += f" ssl crt {plan.certificate} alpn http/1.1"
    cookie = (f"    cookie {plan.cookie} insert indirect nocache httponly"
              + (" secure" if tls else "") + ' attr "SameSite=Lax"')
    lines = [
        "# Written by `python -m needlework serve-team` (needlework/teams/haproxy.py) at",
        "# each start: a change here is lost. docs/scaling.md says what each part is for.",
        "global",
        "    log stdout format raw local0 info",
        "    maxconn 4096",
    ]
    if tls:
        lines.append("    ssl-default-bind-options ssl-min-ver TLSv1.2")
    lines += [
        "",
        "defaults",
        "    mode http",
        "    log global",
        "    option httplog",
        "    option dontlog-normal      # log errors and retries, not every request",
        "    option forwardfor          # X-Forwarded-For: the client's address",
        "    retries 3",
        "    option redispatch 1        # a retry goes to another live worker",
        "    timeout connect 5s",
        "    timeout client 60s",
        "    timeout server 60s",
        "    timeout http-request 15s",
        "    timeout http-keep-alive 15s",
        "    timeout queue 30s",
        f"    timeout tunnel {TUNNEL_TIMEOUT}         # WebSocket (/_stcore/stream) once upgraded",
        "    timeout client-fin 30s",
        "    timeout server-fin 30s",
        "",
        "frontend needlework",
        bind,
        # the scheme the browser used, whatever the client claimed (Secure cookies, Origin)
        f"    http-request set-header X-Forwarded-Proto {'https' if tls else 'http'}",
        "    default_backend workers",
        "",
        "backend workers",
        "    balance leastconn",
        cookie,
        "    option httpchk",
        f"    http-check send meth GET uri {HEALTH}",
        "    http-check expect status 200",
        f"    http-response set-header {WORKER_HEADER} %s",
        # a busy process answers its health check late, not never: 5 s to answer and three
        # misses before it is taken out (a dead one is still marked down at its first
        # refused connection: observe layer4)
        "    timeout check 5s",
        "    default-server check inter 2s fall 3 rise 2 observe layer4 error-limit 1 "
        "on-error mark-down",
    ]
    lines += [f"    server {w.name} {w.address}:{w.port} cookie {w.name}" for w in plan.workers]
    return "\n".join(lines) + "\n"


def find_haproxy() -> str:
    """The ``haproxy`` executable (Debian puts it in /usr/sbin, which a person's PATH may
    not hold), or :class:`ServeTeamError`."""
    found = shutil.which("haproxy") or next(
        (p for p in _HAPROXY_PATHS if os.access(p, os.X_OK)), None)
    if found is None:
        raise ServeTeamError("serve-team: haproxy not found: install it (make haproxy, or "
                             "apt-get install haproxy)")
    return found


def check_haproxy_config(haproxy: str, config_file: Path) -> None:
    """HAProxy's own check of the file (``haproxy -c``): :class:`ServeTeamError` with its
    first alert when it refuses."""
    done = subprocess.run([haproxy, "-c", "-q", "-f", str(config_file)], capture_output=True,
                          text=True, timeout=30)
    if done.returncode != 0:
        said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        alert = next((line for line in said if "ALERT" in line), said[0] if said else "")
        raise ServeTeamError(f"serve-team: haproxy refuses {config_file}: {alert}")

