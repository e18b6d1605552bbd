"""Browser harness: a real ``streamlit run`` on a free port with a temporary
database, driven by Playwright in Debian's Chromium headless shell (no ``playwright
install``): the same Blink and V8 as the Chromium browser without the desktop browser
around them, as Playwright runs headless tests, at about a third less CPU per page.
``NEEDLEWORK_CHROMIUM`` names another Chromium executable."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("NEEDLEWORK_CHROMIUM", "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # V8 compiles no function past its baseline tier (Sparkplug): a test's page lives
    # seconds, too short to repay optimizing compilation. Chromium's CPU over three
    # browser test files: 85.6 s with every tier, 77.4 s so.
    "--js-flags=--max-opt=1",
]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def page_paths() -> list[str]:
    """Every page's url_path, read from app.py's explicit st.Page entries."""
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    return re.findall(r'url_path="([^"]+)"', source)


class AppServer:
    """``streamlit run serve.py`` on a fixed localhost port, which a test may kill (even
    with SIGKILL, or freeze with SIGSTOP) and start again on the same port and database."""

    def __init__(self, db_path: Path, env: dict[str, str] | None = None,
                 port: int | None = None) -> None:
        self.db_path = Path(db_path)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # PyTorch is imported when a page first needs it, not by the warm-up thread at
        # every start (7 s of CPU that the browser on the same cores would wait for);
        # tests/browser/test_startup.py runs the warm-up
        self.env = {**os.environ, "NEEDLEWORK_DB": str(db_path), "PYTHONUNBUFFERED": "1",
                    "NEEDLEWORK_WARM_UP": "0", **(env or {})}
        self.env.pop("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", None)  # the app's own config
        self.log_path = self.db_path.parent / f"streamlit-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> str:
        log = open(self.log_path, "a")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends what it started too
        )
        log.close()
        deadline = time.time() + timeout
        while True:
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return self.url
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("streamlit did not start:\n" + self.log())
            time.sleep(0.2)

    def signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is flushed or closed."""
        if self.proc is not None:
            self.signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM to the server and every process it started (a local judge server), then
        SIGKILL to what is left after 10 s."""
        if self.proc is None:
            return
        group = self.proc.pid  # start_new_session: the group's id is the server's pid
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        try:
            os.killpg(group, signal.SIGKILL)  # what the server started and left behind
        except ProcessLookupError:
            pass

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@contextmanager
def streamlit_server(db_path: Path, env: dict[str, str] | None = None):
    """Run the app on a free localhost port; yields its base URL."""
    server = AppServer(db_path, env)
    try:
        yield server.start()
    finally:
        server.stop()


class SharedContext:
    """A browser context, and one tab in it, handed to one test after another.

    Between tests, :meth:`reset` closes every other tab the test opened, clears what the
    app's origins stored (cookies, local and session storage, IndexedDB) and takes the tab
    back to ``about:blank`` with the context's window size: the next test starts as in a
    new browser, except for the HTTP cache and the scripts compiled from it. A new tab
    costs the browser about twice what a page costs in a tab that is open already (a new
    renderer process each time). A tab given a script to run on every page
    (``add_init_script``) or a function (``expose_function``, ``expose_binding``) cannot be
    taken back, so it is closed and the next test gets a new one; so is a tab whose reset
    fails. A test that closed the context gets a new one."""

    STORAGE = "cookies,local_storage,session_storage,indexeddb,cache_storage,service_workers"
    VIEWPORT = {"width": 1400, "height": 1000}
    _KEPT_FOREVER = ("add_init_script", "expose_function", "expose_binding")

    def __init__(self, browser) -> None:
        self.browser = browser
        self.context = None
        self.closed = True  # no context yet, or the test closed it
        self.tab = None
        self.origins: set[str] = set()

    def _open(self) -> None:
        self.context = self.browser.new_context(viewport=self.VIEWPORT)
        self.closed = False
        self.tab = None
        self.context.on("close", lambda _: setattr(self, "closed", True))
        self.context.on("page", lambda tab: tab.on(
            "framenavigated", lambda frame: self.origins.add(_origin(frame.url))))
        self.keeper = self.context.new_page()  # the context's own tab: its CDP session
        self.cdp = self.context.new_cdp_session(self.keeper)

    def new_page(self):
        """The tab for the next test: the one kept from the last test when it could be
        reset, else a new one."""
        if self.closed:
            self._open()
        if self.tab is None or self.tab.is_closed():
            self.tab = tab = self.context.new_page()
            tab.kept = True
            for name in self._KEPT_FOREVER:  # these stay with the tab: not to be reused
                setattr(tab, name, self._marking(tab, getattr(tab, name)))
        return self.tab

    @staticmethod
    def _marking(tab, method):
        def call(*args, **kwargs):
            tab.kept = False
            return method(*args, **kwargs)
        return call

    def reset(self) -> None:
        """Close the test's other tabs, wipe every origin they reached, and take the kept
        tab back to a blank page (or close it, when it cannot be taken back). Clearing an
        origin's local storage clears every tab's session storage for it too."""
        if self.closed:
            return
        for tab in list(self.context.pages):
            if tab is not self.keeper and tab is not self.tab:
                tab.close()
        tab, origins = self.tab, sorted(o for o in self.origins if o)
        if tab is not None and not tab.is_closed():
            try:
                if not tab.kept:
                    raise RuntimeError("the test gave the tab something it keeps")
                tab.goto("about:blank")
                tab.unroute_all(behavior="ignoreErrors")
                for key in ("Shift", "Control", "Alt", "Meta"):
                    tab.keyboard.up(key)
                tab.set_viewport_size(self.VIEWPORT)
            except Exception:  # noqa: BLE001 - whatever went wrong, a new tab is clean
                tab.close()
        for origin in origins:
            self.cdp.send("Storage.clearDataForOrigin", {"origin": origin,
                                                         "storageTypes": self.STORAGE})
        self.origins.clear()
        self.context.clear_cookies()
        self.context.clear_permissions()

    def close(self) -> None:
        if not self.closed:
            self.context.close()


def watch(page, script: str) -> None:
    """Run ``script`` on every page the tab opens from now on, once per tab. For scripts
    that only watch (they record what each page shows, from a fresh start on each load):
    the shared tab keeps them for later tests, which they cost almost nothing, so it stays
    reusable (``page.add_init_script`` makes the tab unfit to hand on)."""
    installed = page.__dict__.setdefault("nw_watches", set())
    if script not in installed:
        type(page).add_init_script(page, script)
        installed.add(script)


def _origin(url: str) -> str:
    """``scheme://host:port`` of an http(s) URL, or "" for any other."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else ""


def launch_browser(playwright):
    """Chromium for the tests: every context it opens (and every page of its own) watches
    the app's runs from the first moment (:data:`WATCH`, for :func:`wait_idle`)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                         headless=True)
    new_context = browser.new_context

    def watched_context(*args, **kwargs):
        context = new_context(*args, **kwargs)
        context.add_init_script(WATCH)
        return context

    def watched_page(*args, **kwargs):
        context = watched_context(*args, **kwargs)
        page = context.new_page()
        page.on("close", lambda _: context.close())
        return page

    browser.new_context = watched_context
    browser.new_page = watched_page
    return browser


#: How long the page must stay quiet (no script run, no WebSocket message either way) before
#: it counts as idle, as a margin: a component may ask for a run a little after the event
#: that caused it (the outbox's redraw timer is seen; a widget's own debounce is not).
#: The run a click or a key asked for is waited for by its message, not by this window.
QUIET_MS = 300

#: A JS function: the top-level fields of a protobuf message's bytes, as a ``Map`` of field
#: number to the value of a varint field (``null`` for the others, not decoded).
PROTO_FIELDS = """(b) => {
    const found = new Map();
    let i = 0;
    const varint = () => { let v = 0, m = 1, c; do { c = b[i++]; v += (c & 127) * m; m *= 128; }
                           while (c & 128 && i < b.length); return v; };
    while (i < b.length) {
      const tag = varint(), wire = tag % 8;
      found.set(Math.floor(tag / 8), null);
      if (wire === 0) found.set(Math.floor(tag / 8), varint());
      else if (wire === 2) { const n = varint(); i += n; }  // not `i += varint()`: i read first
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else break;
    }
    return found;
}"""

#: A JS function of a ``ForwardMsg``'s bytes: true for a ``script_finished`` (field 6) that
#: ends the runs asked for, so not ``FINISHED_EARLY_FOR_RERUN`` (2): a run stopped for a
#: rerun asked meanwhile is followed by "not running" until the next run starts, which a
#: loaded server can take longer than the quiet window to do.
RUN_FINISHED = """(b) => { const f = (""" + PROTO_FIELDS + """)(b);
    return f.has(6) && f.get(6) !== 2; }"""

#: Installs the page's watch of the app (once per document; :func:`launch_browser` adds it to
#: every context, :data:`IDLE` installs it late where it is missing). It counts the
#: ``rerun_script`` messages the page sends (a ``BackMsg`` whose first field is number 11:
#: its first byte is 0x5A) and the runs the server says are over (:data:`RUN_FINISHED`),
#: notes the time of every message either way and of every ``fetch`` that starts or ends,
#: and counts the fetches under way.
WATCH_INSTALL = """() => {
    if (window.__nwIdle) return window.__nwIdle;
    const s = window.__nwIdle = {activity: performance.now(), sockets: new WeakSet(),
                                 fetching: 0, asked: 0, finished: 0, finishedAtAsk: 0,
                                 opened: 0, closed: 0};
    const mark = () => { s.activity = performance.now(); };
    const bytes = (data) => (data instanceof ArrayBuffer ? new Uint8Array(data)
      : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : null);
    const finishedRun = """ + RUN_FINISHED + """;
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (...args) {
      mark();
      const b = bytes(args[0]);
      if (b && b.length && b[0] === 0x5a) { s.asked += 1; s.finishedAtAsk = s.finished; }
      if (!s.sockets.has(this)) {
        s.sockets.add(this);
        s.opened += 1;  // sockets seen, and closed: a reconnect shows in a failure's report
        this.addEventListener('close', () => { s.closed += 1; });
        this.addEventListener('message', (e) => {
          mark();
          const b = bytes(e.data);
          try { if (b && finishedRun(b)) s.finished += 1; } catch (err) { /* not ours */ }
        });
      }
      return send.apply(this, args);
    };
    const fetch = window.fetch;
    window.fetch = function (...args) {
      s.fetching += 1;
      mark();
      return fetch.apply(this, args).finally(() => { s.fetching -= 1; mark(); });
    };
    return s;
}"""

#: The init script every test context gets (:func:`launch_browser`).
#: Ends CSS animations and transitions at once in the tests' pages (an animation's delay is
#: kept: the badge still fades 3 s after "all saved"), as Playwright's screenshots do with
#: ``animations="disabled"``: a spinner or a fade repaints every frame, and Chromium's
#: painting was the largest share of the suite's CPU on 2 cores.
STILL_CSS = ("*, *::before, *::after { animation-duration: 0s !important; "
             "transition-duration: 0s !important; transition-delay: 0s !important; }")
NO_MOTION = f"""(() => {{
  const add = () => {{
    const style = document.createElement("style");
    style.textContent = {STILL_CSS!r};
    (document.head || document.documentElement).appendChild(style);
  }};
  if (document.documentElement) add();
  else document.addEventListener("DOMContentLoaded", add, {{once: true}});
}})();"""
WATCH = f"({WATCH_INSTALL})();" + NO_MOTION

#: True once the app has drawn, the server says no script runs (Streamlit's own
#: ``data-test-script-state``, set from the server's session status), every run the page
#: asked for has been answered by a finished run after it (:data:`WATCH_INSTALL`), no
#: request of the page's own ``fetch`` is under way, the outbox (which sends the key actions
#: from a Web Worker, seen only as its ``inFlight``) has nothing to send and no redraw to
#: ask for, and no WebSocket message was sent or received and no request ended for
#: ``quiet`` ms. A page opened outside :func:`launch_browser`'s contexts is watched from
#: the first call on it.
IDLE = f"""(quiet) => {{
    const s = ({WATCH_INSTALL})();
    // the outbox (components/js/outbox_core.js): nothing being sent, and no rerun it means
    // to ask for once the keys pause; actions kept while the server is down leave it idle
    const outboxIdle = (c) => !c || (!c.inFlight && !c.redrawTimer
      && (c.queue.length === 0 || !!c.error));
    const app = document.querySelector('[data-testid="stApp"]');
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const idle = !!app && app.getAttribute('data-test-script-state') === 'notRunning'
      && app.getAttribute('data-test-connection-state') === 'CONNECTED'
      && !!main && main.querySelector('[data-testid="stElementContainer"]') !== null
      && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
      // an element whose code is still loading shows Streamlit's grey box, not itself
      && !document.querySelector('[data-testid="stSkeleton"]')
      && (s.asked === 0 || s.finished > s.finishedAtAsk)
      && s.fetching === 0 && outboxIdle(window.__nwCore);
    const now = performance.now();
    if (!idle) s.activity = now;
    return idle && now - s.activity >= quiet;
}}"""


def wait_idle(page, timeout: float = 30_000) -> None:
    """Wait until the app has drawn (every element's code loaded: no grey placeholder
    box), no script run is in progress or asked for, and the page has been quiet for
    :data:`QUIET_MS` (:data:`IDLE`), at most ``timeout`` ms."""
    page.wait_for_function(IDLE, arg=QUIET_MS, timeout=timeout, polling=25)


#: True once the main area's elements have kept their boxes for ``quiet`` ms: after a
#: resize Streamlit lays out again over a few frames (its ResizeObserver callbacks).
LAYOUT = """(quiet) => {
    const boxes = [...document.querySelectorAll(
        '[data-testid="stMain"] [data-testid="stElementContainer"]')].map((el) => {
      const b = el.getBoundingClientRect();
      return `${b.x},${b.y},${b.width},${b.height}`;
    }).join(';') + '|' + window.innerWidth + 'x' + window.innerHeight;
    const now = performance.now();
    const s = window.__nwLayout;
    if (!s || s.boxes !== boxes) { window.__nwLayout = {boxes, since: now}; return false; }
    return now - s.since >= quiet;
}"""


def wait_layout(page, quiet_ms: float = 100, timeout: float = 10_000) -> None:
    """Wait until the page's layout has settled (:data:`LAYOUT`), e.g. after
    ``set_viewport_size``, then until it is idle (:func:`wait_idle`)."""
    page.evaluate("() => { window.__nwLayout = undefined; }")
    page.wait_for_function(LAYOUT, arg=quiet_ms, timeout=timeout, polling="raf")
    wait_idle(page, timeout)


#: True once every element ``selector`` finds has kept its box for ``quiet`` ms (and there is one).
STILL = """([selector, quiet]) => {
  const found = [...document.querySelectorAll(selector)];
  const boxes = found.map(e => { const b = e.getBoundingClientRect();
    return `${b.x},${b.y},${b.width},${b.height}`; }).join(';');
  const now = performance.now(), seen = window.__nwStill || (window.__nwStill = {});
  const s = seen[selector];
  if (!found.length || !s || s.boxes !== boxes) { seen[selector] = {boxes, since: now}; return false; }
  return now - s.since >= quiet;
}"""


def wait_still(page, selector: str, quiet_ms: float = 150, timeout: float = 30_000) -> None:
    """Wait until the elements ``selector`` finds keep their boxes for ``quiet_ms`` (:data:`STILL`),
    e.g. charts Vega draws again at a new size a few frames after their container changed."""
    page.evaluate("(selector) => { if (window.__nwStill) delete window.__nwStill[selector]; }",
                  selector)
    page.wait_for_function(STILL, arg=[selector, quiet_ms], timeout=timeout, polling="raf")


def submit(page, field, value: str, timeout: float = 60_000) -> None:
    """Type ``value`` in ``field`` and press Enter, then wait until the run that asks for
    has finished and the page is idle (:func:`wait_idle` waits for every run the page
    asked for)."""
    field.fill(value)
    field.press("Enter")
    wait_idle(page, timeout)


def assert_no_exception(page) -> None:
    """Fail when the page shows a Streamlit exception box (visitors see a redacted notice:
    the traceback is in the server's log, ``streamlit-PORT.log`` beside its database)."""
    boxes = page.locator('[data-testid="stException"]')
    if boxes.count():
        raise AssertionError("Streamlit exception on the page (the traceback is in the server "
                             "log beside the test database):\n" + boxes.first.inner_text())


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def load_model(page, path: Path | str, architecture: str = "LlamaForSequenceClassification") -> None:
    """Load the reward model at ``path`` through the page's model picker, as a person
    would: the picker is folded ("Load another model") when this server already holds
    a model (an earlier test loaded one), and a rerun may fold it again between the
    field and the button."""
    field = page.get_by_role("textbox", name="Model folder or hub id")
    folded = page.get_by_test_id("stExpander").get_by_text("Load another model")
    field.or_(folded).first.wait_for(timeout=240_000)  # a cold start imports the engine first
    if not field.is_visible():
        folded.first.click()
        wait_idle(page)
    field.fill(str(path))
    field.press("Enter")
    wait_idle(page)
    button = page.get_by_role("button", name="Load model")
    if not button.is_visible() and folded.first.is_visible():
        folded.first.click()
        wait_idle(page)
    button.click()
    page.get_by_text(architecture).first.wait_for(timeout=120_000)
    wait_idle(page)


TEAM_CONFIG = '[server]\nmode = "team"\naddress = "127.0.0.1"\n'


@contextmanager
def team_server(db_path: Path, extra: str = "") -> Iterator[AppServer]:
    """A team-mode server of its own over ``db_path``, started and stopped after: its
    ``needlework.toml`` (team mode on 127.0.0.1, then ``extra``, e.g. more keys of
    ``[server]`` and other tables) is written beside the database."""
    config = Path(db_path).parent / "needlework.toml"
    config.write_text(TEAM_CONFIG + extra, encoding="utf-8")
    app = AppServer(db_path, env={"NEEDLEWORK_CONFIG": str(config)})
    app.start()
    try:
        yield app
    finally:
        app.stop()
