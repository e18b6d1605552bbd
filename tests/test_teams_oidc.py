"""Sign-in through an identity provider: a real OpenID Connect provider (panva's
oidc-provider, tests/oidc/, installed by ``make test``) on 127.0.0.1, driven by a small
client built on Authlib (the library st.login uses) from the settings our writer puts in
``.streamlit/secrets.toml``: discovery, the code flow with PKCE, the email claim in the
ID token, and the account matched by it."""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from urllib.parse import parse_qs, urljoin, urlparse

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from needlework.teams import accounts
from needlework.teams.oidc import (
    OIDCConfigError,
    OIDCRefused,
    configured,
    match_account,
    read_auth_settings,
    write_auth_secrets,
)
from tests.conftest import ROOT

# every test here talks to the OpenID provider started as a node process (make check leaves them out)
pytestmark = pytest.mark.slow

OIDC_DIR = ROOT / "tests" / "oidc"
CLIENT_ID = "needlework-test"
CLIENT_SECRET = "client-secret-7c1f0e9a4b2d"
REDIRECT = "http://127.0.0.1:8599/oauth2callback"  # the app's callback: never called here
USERS = {"ana@example.org": {"password": "ana-at-the-idp-1", "name": "Ana"},
         "zed@example.org": {"password": "zed-at-the-idp-1", "name": "Zed",
                             "email_verified": False}}


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if selector.select(timeout=0.5):
            return proc.stdout.readline()
        if proc.poll() is not None:
            break
    return ""


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    """The provider on a free port of 127.0.0.1; yields its issuer URL."""
    node = shutil.which("node")
    if node is None or not (OIDC_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("the test OpenID provider is not installed: run `make test` (it runs "
                    "`npm ci` in tests/oidc)")
    config = tmp_path_factory.mktemp("oidc") / "provider.json"
    config.write_text(json.dumps({
        "clients": [{"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                     "redirect_uris": [REDIRECT], "grant_types": ["authorization_code"],
                     "response_types": ["code"]}],
        "users": USERS,
    }))
    proc = subprocess.Popen([node, str(OIDC_DIR / "provider.mjs"), str(config)], cwd=OIDC_DIR,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        line = _read_line(proc, 60)
        if not line:
            state = (f"exited with code {proc.returncode}" if proc.poll() is not None
                     else "still running, silent")
            proc.kill()
            pytest.fail(f"the OpenID provider did not start ({state} after "
                        f"{time.monotonic() - started:.0f} s): {proc.stderr.read()[-2000:]}")
        yield json.loads(line)["issuer"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def secrets_file(tmp_path, provider):
    """The [auth] settings written by our writer, next to a table it must keep."""
    path = tmp_path / ".streamlit" / "secrets.toml"
    path.parent.mkdir()
    path.write_text('api_key = "kept"\n\n[auth]\nclient_id = "old"\n\n[auth.google]\n'
                    'client_id = "old-google"\n\n[other]\nvalue = 1\n')
    write_auth_secrets(path, server_metadata_url=f"{provider}/.well-known/openid-configuration",
                       client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=REDIRECT)
    return path


def start_flow(auth: dict, **extra):
    """An Authlib client as st.login makes one from [auth]; returns it, the metadata, the
    authorization URL, the PKCE verifier and the nonce."""
    metadata = requests.get(auth["server_metadata_url"], timeout=10).json()
    client = OAuth2Session(auth["client_id"], auth["client_secret"],
                           scope=auth["client_kwargs"]["scope"], redirect_uri=auth["redirect_uri"],
                           code_challenge_method="S256")
    verifier, nonce = generate_token(48), generate_token(20)
    url, _state = client.create_authorization_url(metadata["authorization_endpoint"],
                                                  code_verifier=verifier, nonce=nonce, **extra)
    return client, metadata, url, verifier, nonce


def sign_in_at_provider(url: str, login: str, password: str) -> requests.Response | str:
    """Follow the provider's pages as a browser would, posting the sign-in form; returns
    the URL it finally sends the browser to (the app's callback), or the page it stops on."""
    browser = requests.Session()
    response = browser.get(url, allow_redirects=False, timeout=10)
    for _ in range(10):
        if response.status_code in (302, 303):
            target = urljoin(response.url, response.headers["location"])
            if target.startswith(REDIRECT):
                return target
            response = browser.get(target, allow_redirects=False, timeout=10)
            continue
        form = re.search(r'<form method="post" action="([^"]+)"', response.text)
        if response.status_code != 200 or form is None or "wrong e-mail" in response.text:
            return response
        response = browser.post(urljoin(response.url, form.group(1)),
                                data={"login": login, "password": password},
                                allow_redirects=False, timeout=10)
    raise AssertionError("the provider kept redirecting")


def test_discovery_offers_the_code_flow_with_pkce_s256(provider):
    metadata = requests.get(f"{provider}/.well-known/openid-configuration", timeout=10).json()
    assert metadata["issuer"] == provider
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert "code" in metadata["response_types_supported"]
    assert {"email", "email_verified"} <= set(metadata["claims_supported"])
    for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        assert metadata[name].startswith(provider + "/")
    keys = requests.get(metadata["jwks_uri"], timeout=10).json()["keys"]
    assert [k["alg"] for k in keys] == ["RS256"] and all("d" not in k for k in keys)


def test_code_flow_with_pkce_gives_the_email_that_finds_the_account(db, secrets_file, provider):
    auth = read_auth_settings(secrets_file)
    client, metadata, url, verifier, nonce = start_flow(auth)
    query = parse_qs(urlparse(url).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0] != verifier
    callback = sign_in_at_provider(url, "ana@example.org", USERS["ana@example.org"]["password"])
    assert isinstance(callback, str) and "code=" in callback
    token = client.fetch_token(metadata["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier)
    keys = KeySet.import_key_set(requests.get(metadata["jwks_uri"], timeout=10).json())
    claims = jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims
    jwt.JWTClaimsRegistry(iss={"essential": True, "value": provider},
                          aud={"essential": True, "value": CLIENT_ID},
                          nonce={"essential": True, "value": nonce}).validate(claims)
    assert claims["email"] == "ana@example.org" and claims["email_verified"] is True
    # the account an admin made with that e-mail (any case) is the one signed in
    accounts.add_user(db, "ana", "annotator", email="Ana@Example.org")
    user = match_account(db, {"is_logged_in": True, **claims})
    assert (user.name, user.role) == ("ana", "annotator")
    accounts.set_disabled(db, "ana")
    with pytest.raises(OIDCRefused, match="disabled"):
        match_account(db, claims)


def claims_from_provider(auth: dict, login: str) -> dict:
    """The verified ID-token claims of one sign-in at the provider."""
    client, metadata, url, verifier, _ = start_flow(auth)
    callback = sign_in_at_provider(url, login, USERS[login]["password"])
    token = client.fetch_token(metadata["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier)
    keys = KeySet.import_key_set(requests.get(metadata["jwks_uri"], timeout=10).json())
    return dict(jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims)


def test_identities_without_an_account_or_a_verified_email_are_refused(db, secrets_file):
    auth = read_auth_settings(secrets_file)
    ana = claims_from_provider(auth, "ana@example.org")
    with pytest.raises(OIDCRefused, match="no account has the e-mail 'ana@example.org': ask an "
                                          "admin to add it"):
        match_account(db, ana)
    zed = claims_from_provider(auth, "zed@example.org")
    assert zed["email"] == "zed@example.org" and zed["email_verified"] is False
    accounts.add_user(db, "zed", "annotator", email="zed@example.org")
    with pytest.raises(OIDCRefused, match="has not verified 'zed@example.org'"):
        match_account(db, zed)
    with pytest.raises(OIDCRefused, match="no e-mail"):
        match_account(db, {"is_logged_in": True, "sub": "x"})
    with pytest.raises(OIDCRefused, match="not signed in"):
        match_account(db, {"is_logged_in": False})


def test_the_provider_requires_pkce_and_the_right_verifier(secrets_file):
    auth = read_auth_settings(secrets_file)
    # no code_challenge at all: the provider refuses before any sign-in
    client, metadata, url, _verifier, _ = start_flow(auth)
    query = {k: v for k, v in parse_qs(urlparse(url).query).items()
             if not k.startswith("code_challenge")}
    bare = metadata["authorization_endpoint"] + "?" + "&".join(f"{k}={requests.utils.quote(v[0])}"
                                                              for k, v in query.items())
    refused = requests.get(bare, allow_redirects=False, timeout=10)
    target = refused.headers.get("location", "")
    assert target.startswith(REDIRECT) and "error=invalid_request" in target
    assert "code=" not in target
    # a code exchanged with another verifier is refused
    client, metadata, url, _verifier, _ = start_flow(auth)
    callback = sign_in_at_provider(url, "ana@example.org", USERS["ana@example.org"]["password"])
    with pytest.raises(Exception, match="invalid_grant"):
        client.fetch_token(metadata["token_endpoint"], authorization_response=callback,
                           code_verifier=generate_token(48))


def test_a_wrong_password_at_the_provider_gets_no_code(secrets_file):
    _, _, url, _, _ = start_flow(read_auth_settings(secrets_file))
    page = sign_in_at_provider(url, "ana@example.org", "not-her-password")
    assert isinstance(page, requests.Response) and "wrong e-mail or password" in page.text


def test_the_writer_keeps_other_tables_and_makes_the_file_private(secrets_file, provider):
    data = tomllib.loads(secrets_file.read_text())
    assert data["api_key"] == "kept" and data["other"] == {"value": 1}
    assert set(data["auth"]) == {"redirect_uri", "cookie_secret", "client_id", "client_secret",
                                 "server_metadata_url", "client_kwargs"}  # old [auth.google] gone
    assert data["auth"]["client_id"] == CLIENT_ID
    assert data["auth"]["client_kwargs"] == {"scope": "openid email profile"}
    assert len(data["auth"]["cookie_secret"]) >= 32
    assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
    assert configured(secrets_file)
    with pytest.raises(OIDCConfigError, match="must end with /oauth2callback"):
        write_auth_secrets(secrets_file, server_metadata_url=f"{provider}/x", client_id="a",
                           client_secret="b", redirect_uri="http://127.0.0.1:8501/")
    with pytest.raises(OIDCConfigError, match="server_metadata_url must be an http"):
        write_auth_secrets(secrets_file, server_metadata_url="file:///etc/passwd", client_id="a",
                           client_secret="b", redirect_uri=REDIRECT)
    assert tomllib.loads(secrets_file.read_text()) == data  # a refusal changes nothing
    # values with quotes, backslashes and control characters stay valid TOML
    write_auth_secrets(secrets_file, server_metadata_url=f"{provider}/x", client_id='a"b\\c\td',
                       client_secret="s\u007f\u00e9\U0001f600", redirect_uri=REDIRECT)
    auth = tomllib.loads(secrets_file.read_text())["auth"]
    assert (auth["client_id"], auth["client_secret"]) == ('a"b\\c\td', "s\u007f\u00e9\U0001f600")


def test_streamlit_reads_the_settings_st_login_needs(secrets_file):
    """Streamlit itself, started in the folder of the written secrets, finds [auth]."""
    script = (
        "import json\n"
        "from streamlit.auth_util import (get_secrets_auth_section, get_validated_redirect_uri,\n"
        "    generate_default_provider_section, is_authlib_installed)\n"
        "section = get_secrets_auth_section()\n"
        "print(json.dumps({'authlib': is_authlib_installed(),\n"
        "                  'redirect': get_validated_redirect_uri(),\n"
        "                  'provider': generate_default_provider_section(section)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=secrets_file.parent.parent,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "HOME": str(secrets_file.parent.parent)})
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["authlib"] is True and seen["redirect"] == REDIRECT
    assert seen["provider"]["client_id"] == CLIENT_ID
    assert seen["provider"]["client_secret"] == CLIENT_SECRET
    assert seen["provider"]["server_metadata_url"].endswith("/.well-known/openid-configuration")
    assert seen["provider"]["client_kwargs"] == {"scope": "openid email profile"}


@pytest.mark.slow
def test_cli_oidc_config_reads_the_secret_from_stdin(tmp_path, provider):
    path = tmp_path / "secrets.toml"
    args = [sys.executable, "-m", "needlework", "oidc-config", "--metadata-url",
            f"{provider}/.well-known/openid-configuration", "--client-id", CLIENT_ID,
            "--redirect-uri", REDIRECT, "--secrets", str(path)]
    out = subprocess.run(args + ["--client-secret-stdin"], input=CLIENT_SECRET + "\n",
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert CLIENT_SECRET not in out.stdout + out.stderr
    assert read_auth_settings(path)["client_secret"] == CLIENT_SECRET
    out = subprocess.run(args, input="", capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 1 and "--client-secret-stdin" in out.stderr
