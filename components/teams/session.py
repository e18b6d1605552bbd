"""Who is signed in: the team-mode gate ``app.py`` calls before it draws anything.

In **local** mode (no ``needlework.toml``, or ``mode = "local"``) nobody signs in and
:func:`sign_in_gate` returns ``None``: the pages work as they always did, with a typed
annotator name.

In **team** mode every run finds the signed-in account again, in this order:

1. the session token this browser session holds (:data:`TOKEN`), or, at the start of a
   browser session (a reload, a new tab), the one the browser kept in the cookie
   :data:`needlework.teams.accounts.SESSION_COOKIE`; it is handed to
   :func:`needlework.teams.accounts.resume`, which re-reads the account (a role changed,
   an account disabled or a session expired counts at once);
2. where an identity provider is configured (``[auth]`` in ``.streamlit/secrets.toml``),
   the identity Streamlit's ``st.login`` put in ``st.user``, matched to an account by
   e-mail (:func:`needlework.teams.oidc.match_account`) and accepted for
   ``sessions.hours`` after the provider issued it.

Nobody found: the sign-in form (:mod:`components.teams.signin`) is drawn in the main
area and the run stops there. Someone found: the account goes to
``components.state.SIGNED_IN`` (read with :func:`components.state.signed_in`) and its
name becomes the annotator name, so every change is saved under it.

The cookie is the server's (:mod:`needlework.teams.session_cookie`): after a sign-in a
tiny component (:data:`_COOKIE`) posts a one-time ticket, never the token, to the
server's route, which answers with the ``HttpOnly``, ``SameSite=Strict`` cookie holding
the token until the session expires (the signed-in page is drawn only once the browser
says the route answered, so a reload from any signed-in screen keeps the session) (and, after a password, the device cookie that
makes this browser one the account signed in from: lock-out, docs/security.md); after a sign-out (or a cookie whose session has
ended) the component asks the route to end the session and clear the cookie. The server
reads the cookie back from ``st.context.cookies``, which the browser sends when a session
starts. The token is the only thing in it; no script on the page can read it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components import st_dom
from components.callbacks import uninterrupted
from components.state import ANNOTATOR_KEY, SIGNED_IN, get_db, signed_in
from components.teams.first_password import ERROR as CHOOSE_ERROR
from components.teams.first_password import render_first_password
from components.teams.signin import DEVICE, render_sign_in
from components.teams.signin import ERROR as SIGN_IN_ERROR
from components.text import label
from needlework.teams import accounts, session_cookie
from needlework.teams.config import Config, ConfigError, load_config
from needlework.teams.first_password import must_choose
from needlework.teams.oidc import OIDCRefused, match_account
from needlework.teams.permissions import ADMIN, ANNOTATOR, PERMISSIONS, REVIEWER, User, can

TOKEN = "nw-session-token"  # this browser session's token (None after a sign-out)
METHOD = "nw-session-method"  # "password" or "oidc"
TICKET = "nw-session-ticket"  # the one-time ticket the page exchanges for the cookie
CLEAR = "nw-session-clear"  # set (to a fresh id) when the browser's cookie must go
NOTICE = "nw-sign-in-notice"  # a sentence for the sign-in screen (session ended, refused)
OIDC_REFUSED = "nw-oidc-refused"

#: Pages every signed-in account may open (by url_path). Every other page needs a
#: reviewer, or an admin where :data:`ADMIN_PAGES` says so: a page added later is
#: closed to annotators until it is listed here.
ANNOTATOR_PAGES = frozenset({"", "home", "annotate", "review"})  # "": the default page (Home)
#: Pages for admins only: they import, replace, delete or export datasets, manage
#: accounts, assignments and guidelines, or export the history.
ADMIN_PAGES = frozenset({"data", "suggestions", "users", "assign", "guidelines", "audit"})
#: Pages whose role is a setting: url_path -> the config's role for it ([pages] in
#: needlework.toml; the Needle lab: reviewers unless it says admin).
CONFIGURED_PAGES = {"needle": lambda config: config.needle_lab}
#: Pages that exist in team mode only.
TEAM_PAGES = frozenset({"users", "assign", "quality", "guidelines", "audit"})

_COOKIE_JS = """
export default function (component) {
  const data = component.data || {};
  const id = data.ticket || data.clear;
  if (!id || !data.route) return;
  // each ticket or clear is sent once per page; its answer is told to the server (a ticket's
  // only: the gate holds the signed-in page until then), again if the page redraws first
  const done = (window.__nwSessionDone = window.__nwSessionDone || new Map());
  const busy = (window.__nwSessionBusy = window.__nwSessionBusy || new Set());
  const tell = (answer) => { if (data.ticket) component.setTriggerValue('kept', answer); };
  if (done.has(id)) { tell(done.get(id)); return; }
  if (busy.has(id)) return;
  busy.add(id);
  const settle = (answer) => { done.set(id, answer); busy.delete(id); tell(answer); };
  const send = (tries) => fetch(data.route, {
    method: data.ticket ? 'POST' : 'DELETE',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify(data.ticket ? {ticket: data.ticket} : {}),
    credentials: 'same-origin', cache: 'no-store',
  }).then((r) => settle({id: id, ok: r.ok, status: r.status}))
    .catch(() => tries < 4 ? setTimeout(() => send(tries + 1), 250 * 2 ** tries)
                           : settle({id: id, ok: false, status: 0}));
  send(0);
}
"""
_COOKIE = st.components.v2.component("needlework.session_cookie", js=_COOKIE_JS,
                                     isolate_styles=False)
_HIDE = f"<style>{st_dom.hidden('nw-session-box')}</style>"


def team_config() -> Config:
    """The serving mode and policy (``needlework.toml``); a wrong file stops the page with
    the sentence naming the file and the key (the app never guesses a mode)."""
    try:
        return load_config()
    except ConfigError as e:
        st.error(str(e), icon=":material/error:")
        st.stop()
        raise  # st.stop() raises; this line is for the type checker


def page_role(url_path: str) -> str:
    """The least role that may open the page ``url_path`` in team mode."""
    if url_path in ANNOTATOR_PAGES:
        return ANNOTATOR
    if url_path in CONFIGURED_PAGES:
        return CONFIGURED_PAGES[url_path](team_config())
    return ADMIN if url_path in ADMIN_PAGES else REVIEWER


def may_open(user: User | None, url_path: str) -> bool:
    """Whether the page is offered: local mode (``user`` None) offers every page but the
    team ones; team mode offers a page to the roles that may use it."""
    if user is None:
        return url_path not in TEAM_PAGES
    return not user.disabled and user.at_least(page_role(url_path))


def _closed_page(url_path: str, user: User | None) -> Any:
    """What a page not offered shows when its URL is opened anyway (its script never
    runs): which role it needs, or that it belongs to team mode."""

    def closed() -> None:
        if user is None:
            st.info("This page belongs to team mode (accounts, roles, assignment): switch it on "
                    "in needlework.toml, see docs/teams.md.", icon=":material/group:")
        else:
            st.warning(f"This page is not offered to your role ({user.role}): it needs the "
                       f"{page_role(url_path)} role.", icon=":material/block:")

    return closed


def offered_pages(sections: Mapping[str, Sequence[Any]], user: User | None,
                  ) -> dict[str, list[Any]]:
    """``st.navigation``'s sections with the pages ``user`` may not open taken out of the
    menu: each is replaced by a hidden page at the same URL that says which role it
    needs, so its script never runs for them (sections left empty go)."""
    out: dict[str, list[Any]] = {}
    closed: list[Any] = []
    for title, pages in sections.items():
        kept = [p for p in pages if may_open(user, p.url_path)]
        closed += [st.Page(_closed_page(p.url_path, user), title=p.title, icon=p.icon,
                           url_path=p.url_path, visibility="hidden")
                   for p in pages if not may_open(user, p.url_path)]
        if kept:
            out[title] = kept
    if closed:
        out[next(reversed(out))] += closed
    return out


def _browser_token() -> str | None:
    """The token the browser sent in its cookie when this session started."""
    try:
        return st.context.cookies.get(accounts.SESSION_COOKIE)
    except (AttributeError, RuntimeError):  # no browser (AppTest)
        return None


def _password_session(db: Database) -> User | None:
    if TOKEN in st.session_state:
        token = st.session_state[TOKEN]
    else:  # a new browser session: the cookie, if any
        token = _browser_token()
        st.session_state[TOKEN] = token
    if not token:
        return None
    user = accounts.resume(db, token)
    if user is None:
        st.session_state[TOKEN] = None
        _forget_cookie()
        st.session_state[NOTICE] = ("Your session has ended (it expired, you signed out "
                                    "elsewhere, or an admin ended it): sign in again.")
        return None
    st.session_state[METHOD] = "password"
    return user


def oidc_configured() -> bool:
    """Whether ``st.login`` has an ``[auth]`` table to work with."""
    try:
        if not st.secrets.load_if_toml_exists():
            return False
        auth = st.secrets.get("auth")
    except Exception:  # noqa: BLE001 - an unreadable secrets file: no identity provider
        return False
    return isinstance(auth, Mapping) and all(
        auth.get(k) for k in ("redirect_uri", "cookie_secret", "client_id", "client_secret",
                              "server_metadata_url"))


def _identity() -> dict[str, Any]:
    try:
        return st.user.to_dict() if st.user.is_logged_in else {}
    except Exception:  # noqa: BLE001 - no auth configured or no browser
        return {}


def _oidc_session(db: Database, config: Config) -> User | None:
    if not oidc_configured():
        return None
    claims = _identity()
    if not claims:
        return None
    issued = claims.get("iat")
    if isinstance(issued, (int, float)) and time.time() - issued > config.policy.session_hours * 3600:
        st.session_state[NOTICE] = ("Your sign-in through the identity provider is older than "
                                    f"{config.policy.session_hours:g} hours: sign in again.")
        st.session_state[OIDC_REFUSED] = True
        return None
    try:
        user = match_account(db, claims)
    except OIDCRefused as e:
        st.session_state[NOTICE] = str(e)
        st.session_state[OIDC_REFUSED] = True
        return None
    st.session_state.pop(OIDC_REFUSED, None)
    st.session_state[METHOD] = "oidc"
    return user


def _route() -> str:
    """The cookie route under the server's base URL path."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return (f"/{base}" if base else "") + session_cookie.ROUTE


def _has_browser() -> bool:
    """Whether an HTTP request stands behind this session (a browser; not AppTest), so a
    cookie can be set at all."""
    try:
        return bool(st.context.headers)
    except (AttributeError, RuntimeError):
        return False


def _noop() -> None:
    """A trigger needs a change callback; the value is read where the component is drawn."""


def _mount_cookie() -> bool:
    """Ask the server for the cookie once after a sign-in (:data:`TICKET`), or to clear it
    once after a sign-out (:data:`CLEAR`). True when no ticket waits any more: the browser
    said the server answered it (or there is no browser to set a cookie in)."""
    ticket, clear = st.session_state.get(TICKET), st.session_state.get(CLEAR)
    if not (ticket or clear):
        return True
    with st.container(key="nw-session-box"):
        st.html(_HIDE)
        result = _COOKIE(key="nw-session-cookie", on_kept_change=_noop,
                         data={"route": _route(), "ticket": ticket,
                               "clear": None if ticket else clear})
    if not ticket:
        return True
    answer = result.get("kept") if hasattr(result, "get") else None
    if isinstance(answer, dict) and answer.get("id") == ticket:
        st.session_state.pop(TICKET, None)
        return True
    return not _has_browser()


def _hold_for_cookie(sections: Mapping[str, Sequence[Any]]) -> None:
    """The signed-in page waits for the cookie: a reload once anything signed-in shows
    keeps the session (the sign-in form's run cannot set a cookie itself, see
    :mod:`needlework.teams.session_cookie`). A short line, then the end of this run; the
    browser's answer reruns the app."""
    st.navigation([p for pages in sections.values() for p in pages], position="hidden")
    _, middle, _ = st.columns([1, 2, 1])
    middle.caption("Signing you in…")
    st.stop()


def _forget_cookie() -> None:
    """The browser's cookie is to be cleared (and its session ended) by the server."""
    st.session_state.pop(TICKET, None)
    st.session_state[CLEAR] = secrets.token_hex(8)


def sign_in_gate(db: Database, sections: Mapping[str, Sequence[Any]]) -> User | None:
    """Local mode: ``None``. Team mode: the signed-in account, or the sign-in form in the
    main area and the end of this run (``st.stop``).

    ``sections`` are the app's pages: while the form is shown they are declared to the
    router, hidden and not run, so the page the browser asked for (``/annotate?dataset=…``)
    is the one that opens after the sign-in."""
    config = team_config()
    if not config.team:
        st.session_state.pop(SIGNED_IN, None)
        return None
    user = _password_session(db) or _oidc_session(db, config)
    if user is None:
        st.navigation([p for pages in sections.values() for p in pages], position="hidden")
        st.session_state.pop(SIGNED_IN, None)
        _mount_cookie()
        render_sign_in(config.policy, start_session, notice=st.session_state.get(NOTICE),
                       oidc=oidc_configured(), refused=bool(st.session_state.get(OIDC_REFUSED)),
                       trusted_proxies=config.trusted_proxies)
        st.stop()
    if st.session_state.get(METHOD) == "password" and not _mount_cookie():
        _hold_for_cookie(sections)
    if must_choose(db, user):  # a one-time password: the person chooses their own first
        st.navigation([p for pages in sections.values() for p in pages], position="hidden")
        render_first_password(user, config.policy, start_session, _sign_out)
        st.stop()
    for done_with in (NOTICE, SIGN_IN_ERROR, CHOOSE_ERROR):  # signed in: no old refusal waits
        st.session_state.pop(done_with, None)
    st.session_state[SIGNED_IN] = user
    st.session_state[ANNOTATOR_KEY] = user.name
    return user


def start_session(signed: accounts.SignIn) -> None:
    """Keep a new session (after the password form): this run and the next ones resume
    it, and the cookie keeps it across reloads; a new device token replaces this
    browser's (in the session state and its cookie)."""
    st.session_state[TOKEN] = signed.token
    st.session_state[METHOD] = "password"
    st.session_state.pop(NOTICE, None)
    st.session_state.pop(CLEAR, None)
    device = None
    if signed.device_token:  # this browser is now one the account signed in from
        st.session_state[DEVICE] = signed.device_token
        device = (signed.device_token, accounts.seconds_left(signed.device_expires_at))
    st.session_state[TICKET] = session_cookie.offer(
        signed.token, accounts.seconds_left(signed.expires_at), device=device, db=get_db())


@uninterrupted
def _sign_out() -> None:
    """The sign-out button's callback: end the session here and in the database."""
    token = st.session_state.get(TOKEN)
    if token:
        accounts.sign_out(get_db(), token)
    st.session_state[TOKEN] = None
    _forget_cookie()
    st.session_state.pop(SIGNED_IN, None)
    st.session_state.pop(ANNOTATOR_KEY, None)
    st.session_state[NOTICE] = "You are signed out."
    if st.session_state.pop(METHOD, None) == "oidc":
        st.logout()


def render_account(user: User) -> None:
    """Who is signed in, their role, and the sign-out button (the sidebar's top)."""
    with st.container(key="nw-account", horizontal=True, vertical_alignment="center",
                      gap="small"):
        st.markdown(f":material/account_circle: **{label(user.name, 60)}** · {user.role}")
        st.button("Sign out", key="nw-sign-out", on_click=_sign_out, icon=":material/logout:",
                  type="tertiary")



def require_page(verb: str) -> User | None:
    """The signed-in account when it may ``verb`` (a :data:`PERMISSIONS` name; local mode:
    ``None``, allowed); otherwise a sentence and the end of the run. Pages are offered
    by role already: this covers a role changed while the page was open."""
    user = signed_in()
    if not can(user, verb):
        st.error(f"This page needs the {PERMISSIONS[verb][0]} role.", icon=":material/block:")
        st.stop()
    return user
