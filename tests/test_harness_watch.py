"""The browser tests' watch of a page (tests/browser/harness.py) reads Streamlit's own
messages, serialized here by Streamlit's protobuf classes, under node: a run counts as
over only at its ``script_finished``, and not when it was stopped for a rerun, so
``wait_idle`` cannot return between a stopped run and the one that replaces it."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.browser.harness import PROTO_FIELDS, RUN_FINISHED


def _node(script: str) -> object:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: `make test` installs it (the identity provider needs it too)")
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def _bytes(msg) -> list[int]:
    return list(msg.SerializeToString())


def _delta(text: str) -> ForwardMsg:
    msg = ForwardMsg()
    msg.hash = "a" * 32  # a 32-character hash first, as the server sends every message
    msg.metadata.delta_path[:] = [0, 1, 2]
    msg.delta.new_element.markdown.body = text
    return msg


def _finished(status: int) -> ForwardMsg:
    msg = ForwardMsg()
    msg.hash = "b" * 32
    msg.script_finished = status  # type: ignore[assignment]
    return msg


def test_fields_of_streamlit_messages() -> None:
    status = ForwardMsg()
    status.session_status_changed.script_is_running = True
    messages = [_delta("hello"), _delta("x" * 300), _finished(ForwardMsg.FINISHED_SUCCESSFULLY),
                status]
    got = _node(f"const fields = {PROTO_FIELDS};\n"
                f"console.log(JSON.stringify({json.dumps([_bytes(m) for m in messages])}"
                ".map((b) => [...fields(Uint8Array.from(b)).entries()])));")
    assert got == [[[1, None], [2, None], [5, None]], [[1, None], [2, None], [5, None]],
                   [[1, None], [6, 0]], [[9, None]]]


def test_a_run_is_over_at_its_finish_not_when_stopped_for_a_rerun() -> None:
    messages = {
        "delta": _delta("Question of sample-1?"),
        "long delta": _delta("y" * 5000),  # a length of two bytes
        "finished": _finished(ForwardMsg.FINISHED_SUCCESSFULLY),
        "compile error": _finished(ForwardMsg.FINISHED_WITH_COMPILE_ERROR),
        "fragment": _finished(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY),
        "stopped for a rerun": _finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN),
    }
    got = _node(f"const over = {RUN_FINISHED};\n"
                f"const m = {json.dumps({k: _bytes(v) for k, v in messages.items()})};\n"
                "console.log(JSON.stringify(Object.fromEntries(Object.entries(m)"
                ".map(([k, b]) => [k, over(Uint8Array.from(b))]))));")
    assert got == {"delta": False, "long delta": False, "finished": True, "compile error": True,
                   "fragment": True, "stopped for a rerun": False}


def test_a_rerun_request_starts_with_the_byte_the_watch_looks_for() -> None:
    msg = BackMsg()
    msg.rerun_script.query_string = "dataset=queue-p"
    assert msg.SerializeToString()[0] == 0x5A  # field 11, length-delimited
