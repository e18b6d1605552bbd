"""Simulated annotators for Locust: team mode through the proxy, pages over Streamlit's WebSocket.

    .venv/bin/locust -f benchmarks/locustfile.py --headless -u 25 -r 5 --host http://127.0.0.1:8501 \\
        --accounts accounts.json [--measure-seconds 40] [--key-seconds 1.0] [--samples-out FILE]

``benchmarks/bench_team.py`` starts ``serve-team``, makes the accounts and runs this file for each
cell of its table; run by hand, it needs a team-mode server and ``--accounts``, a JSON list of
``{"name": ..., "password": ...}`` of annotators who have ``--dataset`` (default
``demo-grounding``) assigned: each simulated user takes the next one.

**What one simulated user does**, all through the proxy, one cookie jar for HTTP and WebSocket
(HAProxy's affinity cookie, then the session and device cookies the app sets):

1. *Signs in as the page does.* ``GET /`` (the page's HTML: the proxy answers with the affinity
   cookie naming a process), opens Streamlit's WebSocket ``/_stcore/stream`` with those cookies
   and asks for a run (a ``rerun_script`` BackMsg, Streamlit's own protobuf classes); the run
   draws the sign-in form, whose widget ids it reads from the ForwardMsg deltas. It submits the
   form (a rerun carrying the name, the password and the submit button's trigger, as the form
   does), reads the one-time ticket from the run's session-cookie component
   (``components/teams/session.py``), POSTs it to ``/_nw/session`` with the page's Origin (the
   answer sets the HttpOnly session cookie), and tells the run that the cookie is kept (the
   component's ``kept`` trigger), whose run then draws the signed-in Home page. Timed: ``sign
   in`` (form submitted -> ticket drawn: the password check).
2. *Opens its queue* (``page load``): ``GET /annotate?dataset=...`` (the HTML), then a new
   WebSocket session, as a reload or a link does, asking for the Annotate page with that query
   string (``page_name`` "annotate"); loaded when its ``script_finished`` arrives (timed from
   opening the WebSocket). The run that follows, as in the browser, is the outbox telling the
   server its tab id (the outbox component's state), so that the server keeps the tab's place.
3. *Labels at a human pace*: a key every ``--key-seconds`` (1 s, ±30 % jitter), each a label
   action for the next passage of the question on screen, POSTed to the action route
   (``/_nw/actions``, the JSON the key script sends); ``press -> committed`` is the time from
   sending it to the answer that acknowledges its id as applied. An answer that asks the
   outbox to send again (the database busy, the proxy's 503, no answer) is a *resend*,
   counted apart from errors: the action goes again after the outbox's pause, and its
   press -> committed runs until the acknowledgement. As the outbox does, once
   the key is acknowledged and 300 ms after it, it asks for a redraw (a rerun whose outbox
   state carries a new nonce; ``redraw``: sent -> a run answering that nonce finished), and
   goes on typing without waiting for it (a newer rerun may cut an older one short, as in
   the browser).
4. *Moves to the next question* after its last passage (N): a ``move`` action to the route,
   then at once the redraw rerun with the next question's query string; ``page move`` is the
   time from sending the move (the key press) to the ``script_finished`` of the run that draws
   the new question (checked: the key script's data in that run names it). Then it reads on
   (the next key a key-time later) and labels that question.

Errors (Locust failures not marked ``resend:``): an answer that is not a success (an HTTP
error, an action refused, or not acknowledged within 60 s of resends), a run that ends with
a compile error or draws an exception or an error box, a page that does not draw the
question it moved to, a WebSocket that closes or sends nothing for 60 s (the user then opens
its queue again, as a reloaded page would). A sign-in or page load that fails is tried again
after a pause (1 s, doubling up to 8 s), as a person reloads, until it works.

**What it skips**: the page's static files (JavaScript, CSS, fonts: the browser caches them),
every widget's state but the ones it changes (the server keeps the others as they are), the
browser's heartbeat, drawing anything, keys typed while an action is in flight (it waits for
each answer before the next key, where the outbox would send them together), and the
outbox's 2.5 s abort of a POST with no answer yet (it waits for the answer; the action is
idempotent, so the server's work is the same).

Every rerun carries, as the browser's does, the hashes of the large elements this session
already received (Streamlit's message cache), so that the server sends a reference instead
of an element that did not change.

With ``--samples-out FILE`` it writes, when Locust stops, every timing (name, milliseconds,
when it ended, whether it succeeded, the account, bytes received) and every error, and
``ready_at``: when the last user had its queue open. With ``--measure-seconds S`` Locust
stops S seconds after that moment (the steady state that bench_team.py reports; sign-ins
and page loads before it are ramp-up).
"""

from __future__ import annotations

import itertools
import json
import random
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from typing import Any
from urllib.parse import urlencode, urlsplit

import gevent
import websocket
from gevent.event import Event
from locust import FastHttpUser, constant, events, task
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ACTION_ROUTE = "/_nw/actions"  # needlework.actions.route.ROUTE
SESSION_ROUTE = "/_nw/session"  # needlework.teams.session_cookie.ROUTE
STREAM = "/_stcore/stream"
LABELS = ["irrelevant", "ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN"]
QUIET = 0.3  # the outbox asks for a redraw once the keys pause this long (outbox_core.js)
RUN_TIMEOUT = 60.0  # seconds a run may take before it counts as an error
COMMIT_TIMEOUT = 60.0  # seconds an action may wait for its acknowledgement, resends included
#: Streamlit's key for a v2 component's trigger widget (streamlit.components.v2.bidi_component)
TRIGGER_ID = "$$STREAMLIT_INTERNAL_KEY_{base}__events"
OK, EARLY = 0, 2  # ForwardMsg.ScriptFinishedStatus: FINISHED_SUCCESSFULLY, FINISHED_EARLY_FOR_RERUN
ERROR_ALERT = 1  # Alert.Format.ERROR


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    parser.add_argument("--accounts", default="", help="JSON list of {name, password}")
    parser.add_argument("--dataset", default="demo-grounding", help="the dataset each one labels")
    parser.add_argument("--key-seconds", type=float, default=1.0,
                        help="mean time between two keys of one annotator")
    parser.add_argument("--measure-seconds", type=float, default=0.0,
                        help="stop this long after every user has its queue open (0: never)")
    parser.add_argument("--samples-out", default="", help="write every timing and error here")


#: What this process measured (written to --samples-out when Locust stops).
RECORD: dict[str, Any] = {"samples": [], "errors": [], "ready_at": None, "users_ready": 0,
                          "started_at": time.time()}
_ACCOUNTS: Any = None


@events.request.add_listener
def _sample(request_type: str, name: str, response_time: float, response_length: int,
            exception: Any = None, context: Any = None, **_: Any) -> None:
    now = time.time()
    who = (context or {}).get("user", "")
    RECORD["samples"].append([name, round(response_time, 2), round(now, 3), exception is None,
                              who, response_length or 0])
    if exception is not None:
        RECORD["errors"].append([round(now, 3), name, str(exception)[:300], who])


@events.user_error.add_listener
def _user_error(user_instance: Any, exception: Exception, tb: Any, **_: Any) -> None:
    who = getattr(user_instance, "account", {}).get("name", "")
    RECORD["errors"].append([round(time.time(), 3), "task", repr(exception)[:300], who])


@events.quitting.add_listener
def _write(environment: Any, **_: Any) -> None:
    out = getattr(environment.parsed_options, "samples_out", "")
    if out:
        RECORD.setdefault("stopped_at", time.time())
        with open(out, "w", encoding="utf-8") as f:
            json.dump(RECORD, f)


_OPENED: set[str] = set()


def _ready(environment: Any, account: str) -> None:
    """``account`` has its queue open: when every user has, the measure starts."""
    _OPENED.add(account)
    RECORD["users_ready"] = len(_OPENED)
    runner = environment.runner
    target = getattr(runner, "target_user_count", None) or environment.parsed_options.num_users
    if RECORD["ready_at"] is None and len(_OPENED) >= target:
        RECORD["ready_at"] = time.time()
        seconds = environment.parsed_options.measure_seconds
        if seconds > 0:
            def stop() -> None:
                RECORD["stopped_at"] = time.time()
                runner.quit()

            gevent.spawn_later(seconds, stop)


def _account(environment: Any) -> dict[str, str]:
    global _ACCOUNTS
    if _ACCOUNTS is None:
        path = environment.parsed_options.accounts
        if not path:
            raise SystemExit("locustfile: --accounts FILE is required (a JSON list of "
                             "{name, password})")
        with open(path, encoding="utf-8") as f:
            _ACCOUNTS = itertools.cycle(json.load(f))
    return next(_ACCOUNTS)


class PageError(Exception):
    """The page did not do what the simulated person waits for (``counted``: the failed
    request already counts as the error)."""

    def __init__(self, message: str, *, counted: bool = False) -> None:
        super().__init__(message)
        self.counted = counted


@dataclass
class Run:
    """One script run as the browser receives it: what it drew that this user reads."""

    widgets: dict[str, str] = field(default_factory=dict)  # user key -> widget id
    components: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (id, json)
    problems: list[str] = field(default_factory=list)
    status: int | None = None
    finished: float = 0.0
    size: int = 0  # bytes of its ForwardMsgs as they came over the socket

    def data(self, component: str) -> dict[str, Any] | None:
        found = self.components.get(component)
        if not found:
            return None
        try:
            value = json.loads(found[1] or "null")
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def seen(self) -> float:
        answer = self.data("needlework.outbox_answer_data") or {}
        value = answer.get("seen")
        return float(value) if isinstance(value, (int, float)) else 0.0


class Stream:
    """A Streamlit WebSocket session: a greenlet reads every ForwardMsg and keeps the finished
    runs; :meth:`rerun` asks for a run, :meth:`wait` waits for one that fits."""

    def __init__(self, base: str, cookies: str, *, timeout: float = RUN_TIMEOUT) -> None:
        parts = urlsplit(base)
        scheme = "wss" if parts.scheme == "https" else "ws"
        self.base = base.rstrip("/")
        self.ws = websocket.create_connection(
            f"{scheme}://{parts.netloc}{STREAM}", subprotocols=["streamlit"], cookie=cookies,
            origin=f"{parts.scheme}://{parts.netloc}", timeout=timeout, enable_multithread=True)
        self.runs: list[Run] = []
        self.current = Run()
        self.cache: OrderedDict[str, ForwardMsg] = OrderedDict()  # the browser's message cache
        self.error: str | None = None
        self.keys: dict[str, Any] = {}  # the annotate key script's data, as last drawn
        self.news = Event()
        self.reader = gevent.spawn(self._read)

    def close(self) -> None:
        self.reader.kill(block=False)
        try:
            self.ws.close(timeout=1)
        except Exception:  # noqa: BLE001 - closing a socket the server already closed
            pass

    def _read(self) -> None:
        while True:
            try:
                raw = self.ws.recv()
            except Exception as e:  # noqa: BLE001 - closed, reset, or silent for too long
                self.error = f"WebSocket: {type(e).__name__}: {e}"[:300]
                self.news.set()
                return
            if not isinstance(raw, bytes):
                continue
            self.current.size += len(raw)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "ref_hash":  # a message this browser said it has cached
                cached = self.cache.get(msg.ref_hash)
                if cached is None:
                    self.current.problems.append("a cached message the client never had")
                    continue
                msg, kind = cached, cached.WhichOneof("type")
            elif msg.metadata.cacheable and msg.hash:
                self.cache[msg.hash] = msg
                while len(self.cache) > 200:
                    self.cache.popitem(last=False)
            if kind == "new_session":
                self.current = Run()
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg.delta.new_element)
            elif kind == "script_finished":
                self.current.status = msg.script_finished
                self.current.finished = time.perf_counter()
                keys = self.current.data("needlework.annotate_keys_data")
                if msg.script_finished == OK and keys is not None:
                    self.keys = keys
                self.runs.append(self.current)
                self.current = Run()
                self.news.set()

    def _element(self, element: Any) -> None:
        kind = element.WhichOneof("type")
        run = self.current
        if kind == "bidi_component":
            c = element.bidi_component
            run.components[c.component_name] = (c.id, c.json)
        elif kind in ("text_input", "button"):
            wid = getattr(element, kind).id
            run.widgets[wid.rsplit("-", 1)[-1] if wid.startswith("$$ID-") else wid] = wid
        elif kind == "exception":
            run.problems.append(f"exception on the page: {element.exception.type}: "
                                f"{element.exception.message}"[:300])
        elif kind == "alert" and element.alert.format == ERROR_ALERT:
            run.problems.append(f"error box: {element.alert.body}"[:300])

    def rerun(self, query: str = "", page: str = "", widgets: tuple[WidgetState, ...] = ()) -> int:
        """Ask for a run, as the browser does; returns how many runs had finished before."""
        if self.error:
            raise PageError(self.error)
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = query
        state.page_name = page
        state.context_info.url = f"{self.base}/{page}" + (f"?{query}" if query else "")
        state.cached_message_hashes.extend(self.cache.keys())
        state.widget_states.widgets.extend(widgets)
        self.ws.send_binary(msg.SerializeToString())
        return len(self.runs)

    def wait(self, fits: Any, since: int, timeout: float = RUN_TIMEOUT) -> Run:
        """The first run finished after ``since`` that completed and ``fits(run)``; a run
        that failed, a closed socket or ``timeout`` raise :class:`PageError`."""
        deadline = time.monotonic() + timeout
        while True:
            for run in self.runs[since:]:
                if run.status not in (OK, EARLY):
                    raise PageError(f"a run ended with status {run.status}")
                if run.problems:
                    raise PageError(run.problems[0])
                if run.status == OK and fits(run):
                    return run
            since = len(self.runs)
            if self.error:
                raise PageError(self.error)
            self.news.clear()
            left = deadline - time.monotonic()
            if left <= 0 or not self.news.wait(left):
                raise PageError(f"no run finished as expected within {timeout:g} s")


def string_state(wid: str, value: str) -> WidgetState:
    state = WidgetState(id=wid)
    state.string_value = value
    return state


def trigger_state(wid: str) -> WidgetState:
    state = WidgetState(id=wid)
    state.trigger_value = True
    return state


class Annotator(FastHttpUser):
    """One annotator of the team (the module says what it does and what it skips)."""

    wait_time = constant(0)
    network_timeout = RUN_TIMEOUT
    connection_timeout = 30.0

    def on_start(self) -> None:
        options = self.environment.parsed_options
        self.account = _account(self.environment)
        self.dataset = options.dataset
        self.key_seconds = options.key_seconds
        self.tab = uuid.uuid4().hex[:16]  # the outbox's tab id (its session storage)
        self.nonce = 0.0
        self.counter = 0
        self.stream: Stream | None = None
        self.origin = self.host.rstrip("/")
        self._until_done(self.sign_in)
        self._until_done(self.open_queue)
        _ready(self.environment, self.account["name"])

    def context(self) -> dict[str, Any]:
        """Every timing names the account (bench_team.py's test counts per user)."""
        return {"user": getattr(self, "account", {}).get("name", "")}

    def on_stop(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None

    # -- helpers -------------------------------------------------------------------------

    def _until_done(self, step: Any) -> None:
        """``step`` again until it works, as a person reloads a page that failed: each
        failure counts (once), then a pause of 1 s, doubling up to 8 s."""
        pause = 1.0
        while True:
            try:
                step()
                return
            except (PageError, OSError, websocket.WebSocketException) as e:
                if not getattr(e, "counted", False):
                    self._failed(step.__name__.replace("_", " "), e)
                gevent.sleep(pause * random.uniform(0.8, 1.2))
                pause = min(8.0, pause * 2)

    def _failed(self, name: str, error: BaseException, started: float | None = None,
                kind: str = "WS") -> None:
        took = (time.perf_counter() - started) * 1000 if started is not None else 0.0
        self.environment.events.request.fire(
            request_type=kind, name=name, response_time=took, response_length=0,
            exception=error, context=self.context())

    def _timed(self, name: str, started: float, run: Run | None = None,
               kind: str = "WS") -> None:
        """A timing from ``started`` to now, or to ``run``'s end (its size as the length)."""
        ended = run.finished if run is not None else time.perf_counter()
        self.environment.events.request.fire(
            request_type=kind, name=name, response_time=(ended - started) * 1000,
            response_length=run.size if run is not None else 0, exception=None,
            context=self.context())

    def _cookies(self) -> str:
        jar: CookieJar = self.client.cookiejar
        return "; ".join(f"{c.name}={c.value}" for c in jar)

    def _connect(self) -> Stream:
        if self.stream is not None:
            self.stream.close()
        self.stream = Stream(self.origin, self._cookies())
        return self.stream

    @property
    def keys(self) -> dict[str, Any]:
        """The annotate key script's data, as the page last drew it."""
        return self.stream.keys if self.stream is not None else {}

    def _pause(self, scale: float = 1.0) -> None:
        gevent.sleep(self.key_seconds * scale * random.uniform(0.7, 1.3))

    def _query(self, item: str | None = None) -> str:
        return urlencode({"dataset": self.dataset, **({"item": item} if item else {})})

    def _outbox_state(self) -> WidgetState:
        """The outbox's state as its redraw sets it: the tab, and a new nonce."""
        self.nonce = max(self.nonce + 1, time.time() * 1000)
        outbox = self.stream_run_component("needlework.outbox")
        state = WidgetState(id=outbox)
        state.json_value = json.dumps({"outbox": {"tab": self.tab, "nonce": self.nonce,
                                                  "named": False}})
        return state

    def stream_run_component(self, name: str) -> str:
        assert self.stream is not None
        for run in reversed(self.stream.runs):
            if name in run.components:
                return run.components[name][0]
        raise PageError(f"the page drew no {name} component")

    def _html(self, path: str) -> None:
        with self.client.get(path, name=f"GET {path.split('?')[0]}", catch_response=True) as r:
            if r.status_code != 200:
                r.failure(f"HTTP {r.status_code}")
                raise PageError(f"GET {path}: HTTP {r.status_code}", counted=True)

    def _post(self, route: str, body: dict[str, Any], name: str) -> Any:
        return self.client.post(route, data=json.dumps(body), name=name, catch_response=True,
                                headers={"Content-Type": "application/json",
                                         "Origin": self.origin})

    # -- what the person does ------------------------------------------------------------

    def sign_in(self) -> None:
        self._html("/")
        stream = self._connect()
        form = stream.wait(lambda r: "login" in r.widgets, stream.rerun())
        widgets = (string_state(form.widgets["login"], self.account["name"]),
                   string_state(form.widgets["password"], self.account["password"]),
                   trigger_state(form.widgets["go"]))
        started = time.perf_counter()

        def has_ticket(run: Run) -> bool:
            if "login" in run.widgets:  # the form again: refused (the error box says why)
                raise PageError("the sign-in form came back: the password was refused")
            return bool((run.data("needlework.session_cookie") or {}).get("ticket"))

        held = stream.wait(has_ticket, stream.rerun(widgets=widgets))
        self._timed("sign in", started)
        ticket = held.data("needlework.session_cookie")["ticket"]  # type: ignore[index]
        with self._post(SESSION_ROUTE, {"ticket": ticket}, f"POST {SESSION_ROUTE}") as r:
            if r.status_code != 200:
                r.failure(f"HTTP {r.status_code}: {(r.text or '')[:200]}")
                raise PageError(f"the ticket was not taken: HTTP {r.status_code}",
                                counted=True)
        kept = WidgetState(id=TRIGGER_ID.format(base=held.components["needlework.session_cookie"][0]))
        kept.json_trigger_value = json.dumps(
            [{"event": "kept", "value": {"id": ticket, "ok": True, "status": 200}}])
        stream.wait(lambda r: "needlework.outbox" in r.components, stream.rerun(widgets=(kept,)))
        stream.close()
        self.stream = None

    def open_queue(self, item: str | None = None) -> None:
        """A page load of Annotate (the queue, or ``item``), then the outbox names its tab."""
        query = self._query(item)
        self._html(f"/annotate?{query}")
        started = time.perf_counter()
        stream = self._connect()
        drawn = stream.wait(lambda r: r.data("needlework.annotate_keys_data") is not None,
                            stream.rerun(query, "annotate"))
        self._timed("page load", started, drawn)
        self.redraw(wait=True)

    def redraw(self, query: str | None = None, *, wait: bool = False, item: str | None = None,
               name: str | None = "redraw") -> Run | None:
        """The outbox's redraw: a rerun with a new nonce (and ``query``, the address the key
        script keeps); with ``wait``, until a run answering it (drawing ``item``) finished.
        Timed as ``name`` (None: not timed here)."""
        assert self.stream is not None
        stream = self.stream
        started = time.perf_counter()
        since = stream.rerun(query if query is not None else self._query(self.keys.get("item")),
                             "annotate", (self._outbox_state(),))
        nonce = self.nonce

        def answers(run: Run) -> bool:
            if run.seen() < nonce:
                return False
            drawn = run.data("needlework.annotate_keys_data") or {}
            if item is not None and drawn.get("item") != item:
                raise PageError(f"the page drew {drawn.get('item')} after a move to {item}")
            return True

        def follow() -> Run:
            run = stream.wait(answers, since)
            if name:
                self._timed(name, started, run)
            return run

        if wait:
            return follow()

        def later() -> None:
            try:
                follow()
            except PageError as e:
                if stream is self.stream:  # not a page this user already left
                    self._failed(name or "redraw", e, started)

        gevent.spawn(later)
        return None

    def _action(self, action: dict[str, Any], name: str) -> dict[str, Any] | None:
        """Send one action as the outbox does until the route acknowledges it: each POST is a
        Locust request (``POST /_nw/actions``); an answer that asks to send again (the
        database busy, a 5xx, 429, no answer) is a failure marked ``resend:`` and the action
        goes again after the outbox's pause (0.5 s doubling up to 10 s; 0.25 s up to 2 s
        with no answer). ``name`` is timed from the first POST to the acknowledgement (the
        press -> committed the person waits for); never acknowledged within
        :data:`COMMIT_TIMEOUT`, refused or unauthorised, it is an error."""
        self.counter += 1
        action = {"id": f"{int(time.time() * 1000):x}-{self.tab[:8]}-{self.counter}-"
                        f"{random.getrandbits(24):06x}", "dataset": self.dataset,
                  "annotator": self.account["name"], **action, "t": int(time.time() * 1000)}
        started, backoff = time.perf_counter(), 0.0
        while True:
            again: str | None = None
            problem: str | None = None
            answer: dict[str, Any] = {}
            with self._post(ACTION_ROUTE, {"actions": [action]}, f"POST {ACTION_ROUTE}") as r:
                try:
                    answer = r.json() if r.status_code else {}
                except ValueError:
                    answer = {}
                error = answer.get("error") if isinstance(answer, dict) else None
                if not r.status_code:
                    again = "no answer"
                    backoff = min(2.0, backoff * 2 if backoff else 0.25)
                elif r.status_code == 429 or r.status_code >= 500 or error in (
                        "busy", "full", "failed"):
                    again = f"HTTP {r.status_code} {error or ''}".strip()
                    backoff = min(10.0, backoff * 2 if backoff else 0.5)
                elif r.status_code != 200 or error:
                    problem = f"HTTP {r.status_code}: {str(answer)[:200]}"
                elif action["id"] not in answer.get("acks", []):
                    problem = "the action was not acknowledged"
                else:
                    refused = [x for x in answer.get("rejected", [])
                               if x.get("id") == action["id"]]
                    if refused:
                        problem = f"refused: {refused[0].get('message')}"
                if again:
                    r.failure(f"resend: {again}")
                elif problem:
                    r.failure(problem)
                else:
                    r.success()
            if problem:
                self._failed(name, PageError(problem), started, "ACTION")
                return None
            if not again:
                self._timed(name, started, kind="ACTION")
                return answer
            if time.perf_counter() - started + backoff > COMMIT_TIMEOUT:
                self._failed(name, PageError(f"not committed in {COMMIT_TIMEOUT:g} s "
                                             f"(last: {again})"), started, "ACTION")
                return None
            gevent.sleep(backoff)

    @task
    def question(self) -> None:
        """Label every passage of the question on screen from its cursor, then move on."""
        try:
            if self.stream is None or self.stream.error or not self.keys.get("item"):
                self.open_queue()
            item = self.keys["item"]
            n = int(self.keys.get("n") or 1)
            for passage in range(int(self.keys.get("cursor") or 1), n + 1):
                self._pause()
                pressed = time.perf_counter()
                if self._action({"kind": "set", "item": item, "field": f"label:{passage}",
                                 "value": random.choice(LABELS), "toggle": False},
                                "press -> committed") is not None:
                    gevent.sleep(max(0.0, QUIET - (time.perf_counter() - pressed)))
                    self.redraw()
            self._pause()
            moves = self.keys.get("moves") or {}
            target = (moves.get("next") or moves.get("previous") or {}).get("item")
            if not target:  # a queue of one question: open it again
                self.open_queue()
                return
            seek = moves.get("next") or moves.get("previous")
            pressed = time.perf_counter()
            if self._action({"kind": "move", "tab": self.tab, "page": "annotate", "item": target,
                             "cursor": int(seek.get("cursor") or 1)}, "move -> committed") is None:
                return
            # the move is acknowledged: the outbox asks for the redraw at once
            drawn = self.redraw(self._query(target), wait=True, item=target, name=None)
            assert drawn is not None
            self._timed("page move", pressed, drawn)
        except (PageError, OSError, websocket.WebSocketException) as e:
            if not getattr(e, "counted", False):
                self._failed("page", e)
            if self.stream is not None:
                self.stream.close()
                self.stream = None
            gevent.sleep(1.0)
