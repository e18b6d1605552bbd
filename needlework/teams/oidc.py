"""Signing in through the organisation's identity provider with Streamlit's ``st.login``.

Streamlit runs the OpenID Connect code flow itself (with PKCE S256 when the provider
offers it) and exposes the ID token's claims as ``st.user``. It reads its settings
from the ``[auth]`` table of ``.streamlit/secrets.toml``; :func:`write_auth_secrets`
writes that table (keeping the file's other tables) and ``python -m needlework
oidc-config`` calls it. Authlib must be installed (it is pinned in requirements.txt).

An identity does not create an account: :func:`match_account` finds the account an
admin made with the same e-mail (any case). The provider must put ``email`` in the ID
token (Streamlit reads no userinfo endpoint); an ``email_verified`` claim that is
false is refused, an absent one is accepted (several enterprise providers omit it).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from sqlite_utils import Database

from needlework.files import atomic_writer
from needlework.teams.permissions import User
from store import users as store_users

log = logging.getLogger(__name__)

SECRETS_FILE = Path(".streamlit") / "secrets.toml"
DEFAULT_SCOPE = "openid email profile"


class OIDCRefused(Exception):
    """The identity is not let in (the message is safe to show)."""


class OIDCConfigError(ValueError):
    """A setting :func:`write_auth_secrets` cannot write (names the setting)."""


def match_account(db: Database, claims: Mapping[str, Any]) -> User:
    """The enabled account whose e-mail is the ``email`` claim of a signed-in identity
    (``st.user``, as a mapping); raises :class:`OIDCRefused` saying why not."""
    if not claims.get("is_logged_in", True):
        raise OIDCRefused("not signed in with the identity provider")
    email = claims.get("email")
    if not isinstance(email, str) or not email.strip():
        raise OIDCRefused("the identity provider sent no e-mail address: ask its admin to "
                          "include the email claim in the ID token")
    if claims.get("email_verified") is False:
        raise OIDCRefused(f"the identity provider has not verified {email.strip()!r}")
    row = store_users.find_by_email(db, email.strip().casefold())
    if row is None:
        log.warning("identity-provider sign-in refused: no account has that e-mail")
        raise OIDCRefused(f"no account has the e-mail {email.strip()!r}: ask an admin to add it")
    if row["disabled"]:
        log.warning("identity-provider sign-in refused: %r is disabled", row["name"])
        raise OIDCRefused("this account is disabled: ask an admin")
    return User.from_row(row)


def _url(value: str, name: str) -> str:
    if not isinstance(value, str):
        raise OIDCConfigError(f"{name} must be a URL")
    parsed = urlparse(value.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise OIDCConfigError(f"{name} must be an http(s) URL, got {value!r}")
    return value.strip()


def _toml_string(value: str) -> str:
    """A TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _without_auth(text: str) -> str:
    """``text`` less its ``[auth]`` table and ``[auth.*]`` sub-tables."""
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        match = _TABLE.match(line)
        if match:
            name = match.group(1).strip().strip('"')
            skipping = name == "auth" or name.startswith("auth.")
        if not skipping:
            kept.append(line)
    return "".join(kept).rstrip("\n")


def auth_table(*, server_metadata_url: str, client_id: str, client_secret: str,
               redirect_uri: str, cookie_secret: str | None = None,
               scope: str = DEFAULT_SCOPE) -> str:
    """The ``[auth]`` table Streamlit's ``st.login`` reads, as TOML text."""
    server_metadata_url = _url(server_metadata_url, "server_metadata_url")
    redirect_uri = _url(redirect_uri, "redirect_uri")
    if not urlparse(redirect_uri).path.endswith("/oauth2callback"):
        raise OIDCConfigError("redirect_uri must end with /oauth2callback (Streamlit's callback "
                              f"route), got {redirect_uri!r}")
    for name, value in (("client_id", client_id), ("client_secret", client_secret)):
        if not isinstance(value, str) or not value.strip():
            raise OIDCConfigError(f"{name} is empty")
    if "openid" not in scope.split():
        raise OIDCConfigError(f"scope must include openid, got {scope!r}")
    cookie_secret = cookie_secret or secrets.token_urlsafe(32)
    if len(cookie_secret) < 32:
        raise OIDCConfigError("cookie_secret must have at least 32 characters")
    lines = [
        "[auth]",
        f"redirect_uri = {_toml_string(redirect_uri)}",
        f"cookie_secret = {_toml_string(cookie_secret)}",
        f"client_id = {_toml_string(client_id.strip())}",
        f"client_secret = {_toml_string(client_secret.strip())}",
        f"server_metadata_url = {_toml_string(server_metadata_url)}",
        f"client_kwargs = {{ scope = {_toml_string(scope)} }}",
    ]
    return "\n".join(lines) + "\n"


def write_auth_secrets(path: str | Path = SECRETS_FILE, **settings: Any) -> Path:
    """Write the ``[auth]`` table (settings as :func:`auth_table`) into the secrets
    file at ``path``, keeping its other tables; the file is written whole, readable by
    its owner only (0600). Returns the path."""
    path = Path(path)
    table = auth_table(**settings)
    try:
        old = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = ""
    rest = _without_auth(old)
    text = (rest + "\n\n" if rest.strip() else "") + table
    tomllib.loads(text)  # what Streamlit will read must parse
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path, "w") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(text)
    return path


def read_auth_settings(path: str | Path = SECRETS_FILE) -> dict[str, Any]:
    """The ``[auth]`` table of a secrets file (``{}`` when absent)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    auth = data.get("auth", {})
    return auth if isinstance(auth, dict) else {}


def configured(path: str | Path = SECRETS_FILE) -> bool:
    """Whether ``st.login`` has what it needs in the secrets file."""
    auth = read_auth_settings(path)
    return all(auth.get(k) for k in ("redirect_uri", "cookie_secret", "client_id",
                                     "client_secret", "server_metadata_url"))
