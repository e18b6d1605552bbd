"""Natural URLs (needlework/web.py): page names people type, /home, unknown paths and
repeated query parameters become redirects; Streamlit's own routes are never touched."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from needlework.web import NaturalUrls, page_routes, redirect_for, routes_of
from tests.conftest import ROOT

ROUTES = routes_of(ROOT / "app.py")


def test_routes_come_from_app_py():
    assert ROUTES["home"] == "" and ROUTES["annotate"] == "annotate"
    assert ROUTES["review-pairs"] == "review" and ROUTES["reward-model"] == "rewards"
    assert ROUTES["import-export"] == "data" and ROUTES["import"] == "data"
    assert ROUTES["needle-lab"] == "needle"
    source = 'st.Page("app_pages/x.py", title="Big Thing", url_path="big")'
    assert page_routes(source) == {"big": "big", "x": "big", "big-thing": "big"}


@pytest.mark.parametrize(("path", "query", "expected"), [
    ("/home", "", "/"),
    ("/home", "dataset=demo-grounding", "/?dataset=demo-grounding"),
    ("/Annotate", "dataset=a&item=1", "/annotate?dataset=a&item=1"),
    ("/review-pairs", "", "/review"),
    ("/Import", "", "/data"),
    ("/no-such-page", "x=1", "/?x=1"),
    ("/annotate", "dataset=x&dataset=x&item=2", "/annotate?dataset=x&item=2"),
    ("/annotate", "dataset=a%20b&dataset=c&item=%23", "/annotate?dataset=a%20b&item=%23"),
])
def test_redirects(path, query, expected):
    assert redirect_for(path, query, ROUTES) == expected


@pytest.mark.parametrize(("path", "query"), [
    ("/annotate", "dataset=x&item=1"), ("/", ""), ("/", "dataset=x"),
    ("/annotate", "dataset=a%20b&item=%23"),
    ("/_stcore/health", ""), ("/static/js/x.js", ""), ("/media/abc.png", ""),
    ("/favicon.png", ""), ("/oauth2callback", "code=1"), ("/component/x/index.html", ""),
])
def test_served_as_is(path, query):
    assert redirect_for(path, query, ROUTES) is None


def test_the_middleware_redirects_page_loads_only():
    calls: list[str] = []

    async def app(scope, receive, send):
        calls.append(scope["path"])

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    middleware = NaturalUrls(app, ROUTES)

    def request(path: str, accept: bytes) -> None:
        scope = {"type": "http", "method": "GET", "path": path, "query_string": b"",
                 "headers": [(b"accept", accept)]}
        # a thread of its own: an event loop left running by another test cannot interfere
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, middleware(scope, None, send)).result()

    request("/review-pairs", b"text/html,application/xhtml+xml")
    assert sent[0]["status"] == 307 and (b"location", b"/review") in sent[0]["headers"]
    request("/review-pairs", b"application/json")  # not a page load: left alone
    assert calls == ["/review-pairs"]
