"""Natural URLs: every page answers at its own name, unknown paths land on Home.

Streamlit serves each page at its ``url_path`` and shows a "Page not found" dialog for
any other path, including ``/home?dataset=x`` (the default page lives at ``/``) and the
names a person would type (``/review-pairs``, ``/Annotate``, ``/import``). The
:class:`NaturalUrls` middleware answers a browser's page load (``GET`` asking for HTML)
of such a path with a redirect to the page it means, or to Home, before Streamlit sees
it. It also drops a query parameter repeated in a link (``?dataset=x&dataset=x``),
keeping the first value. Streamlit's own routes (``/_stcore/...``, static files, media,
components, sign-in callbacks) are never touched.

The routes are read from ``app.py``'s ``st.Page`` entries (:func:`page_routes`): the
page's ``url_path`` (canonical), its title as a slug, its file's stem and a few
common words (``import`` and ``export`` for the Import & export page).
``serve.py`` wires it into Streamlit's ASGI app (``streamlit run serve.py``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
                   Awaitable[None]]

#: First path segments that belong to Streamlit (or to files), never pages.
RESERVED = frozenset({"_stcore", "_nw", "media", "component", "static", "app", "auth", "oauth2callback",
                      "favicon.png", "robots.txt"})
_PAGE = re.compile(r'st\.Page\(\s*"app_pages/(?P<stem>[\w-]+)\.py"(?P<args>[^)]*)\)', re.S)
_ARG = re.compile(r'(?P<name>title|url_path)\s*=\s*"(?P<value>[^"]*)"')
_DEFAULT = re.compile(r"default\s*=\s*True")
#: Words people type for a page that neither its title nor its file gives.
EXTRA_WORDS = {"data": ("import", "export", "import-and-export"), "review": ("pairs",),
               "rewards": ("reward", "models", "scores"), "needle": ("needles", "haystack")}


def slug(text: str) -> str:
    """``Review pairs`` -> ``review-pairs``, ``Import & export`` -> ``import-export``."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def page_routes(app_source: str) -> dict[str, str]:
    """``{word people type (lower case): canonical url_path}`` from ``app.py``'s source;
    the default page's canonical path is ``""`` (Streamlit serves it at ``/``)."""
    routes: dict[str, str] = {}
    for match in _PAGE.finditer(app_source):
        args = {m["name"]: m["value"] for m in _ARG.finditer(match["args"])}
        path = args.get("url_path") or match["stem"]
        canonical = "" if _DEFAULT.search(match["args"]) else path
        words = {path, match["stem"], slug(args.get("title", "")),
                 *EXTRA_WORDS.get(path, ())}
        for word in words:
            if word:
                routes.setdefault(word.lower(), canonical)
    return routes


def routes_of(app_file: str | Path) -> dict[str, str]:
    """:func:`page_routes` of an ``app.py`` file."""
    return page_routes(Path(app_file).read_text(encoding="utf-8"))


def redirect_for(path: str, query: str, routes: Mapping[str, str]) -> str | None:
    """Where a page load of ``path?query`` should go instead, or ``None`` to serve it."""
    segment = path.strip("/")
    pairs = parse_qsl(query, keep_blank_values=True)
    kept: dict[str, str] = {}
    for key, value in pairs:
        kept.setdefault(key, value)
    clean = urlencode(kept, quote_via=quote)
    if "/" in segment or segment in RESERVED or "." in segment:
        return None
    target = routes.get(segment.lower(), "") if segment else ""
    if target == segment and len(kept) == len(pairs):
        return None
    return "/" + target + (f"?{clean}" if clean else "")


class NaturalUrls:
    """ASGI middleware: redirect a browser's page load of an alias or unknown path (see
    the module docstring); everything else passes through untouched."""

    def __init__(self, app: ASGIApp, routes: Mapping[str, str]) -> None:
        self.app = app
        self.routes = dict(routes)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("method") == "GET" and _wants_html(scope):
            root = scope.get("root_path", "")
            target = redirect_for(scope.get("path", "")[len(root):], _query(scope), self.routes)
            if target is not None:
                await _redirect(send, root + target)
                return
        await self.app(scope, receive, send)


def _wants_html(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"accept":
            return b"text/html" in value
    return False


def _query(scope: Scope) -> str:
    return scope.get("query_string", b"").decode("latin-1")


async def _redirect(send: Any, location: str) -> None:
    await send({"type": "http.response.start", "status": 307,
                "headers": [(b"location", location.encode("latin-1")),
                            (b"content-length", b"0"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": b""})


# --- requests that change state: only from the app's own page --------------------------


def request_origin(scheme: str, host: str) -> str:
    """``scheme://host`` as a browser writes it in ``Origin``."""
    return f"{scheme}://{host}".lower()


def is_https(scheme: str, headers: Mapping[str, str]) -> bool:
    """Whether the browser reached us over HTTPS (itself, or a proxy in front saying so)."""
    forwarded = headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return scheme == "https" or forwarded == "https"


def same_origin_refusal(scheme: str, headers: Mapping[str, str]) -> str | None:
    """Why a state-changing request is refused, or ``None`` when it comes from the app's
    own page: an ``Origin`` header equal to the request's own origin, no
    ``Sec-Fetch-Site`` other than ``same-origin``, and a JSON body (which a cross-site
    form cannot send without a preflight). ``headers`` with lower-case names."""
    origin = headers.get("origin", "").lower()
    host = headers.get("host", "")
    if not origin or not host:
        return "no Origin header: only the app's own page may do this"
    own = {request_origin(scheme, host)}
    if "x-forwarded-proto" in headers:
        own.add(request_origin("https" if is_https(scheme, headers) else "http", host))
    if origin not in own:
        return f"a request from {origin!r}, not from this app's page"
    site = headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return f"a {site} request, not from this app's page"
    if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return "the body must be JSON"
    return None
