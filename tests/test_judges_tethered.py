"""A local judge server ends when the app that started it is gone, even killed with SIGKILL
(needlework.judges.tethered): no orphan keeps half a gigabyte after a crash."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from needlework.judges import tethered
from tests.judges_fixtures import build_tiny_causal_lm

ROOT = Path(__file__).resolve().parents[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purpose (its parent, here init, has not reaped it yet)
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, timeout: float) -> float:
    started = time.monotonic()
    while _alive(pid):
        if time.monotonic() - started > timeout:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"process {pid} still runs {timeout:g} s after its parent was killed")
        time.sleep(0.1)
    return time.monotonic() - started


def _parent(script: str, cwd: Path = ROOT) -> tuple[subprocess.Popen, int]:
    """A parent process running ``script`` in ``cwd`` (the project on its ``sys.path``, not
    in ``$PYTHONPATH``), which prints its child's pid and then waits."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(script)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=cwd, stdout=subprocess.PIPE,
                            text=True, env=env)
    line = proc.stdout.readline()
    assert line.strip().isdigit(), f"the parent printed {line!r}"
    return proc, int(line)


def test_the_command_runs_a_module_with_its_arguments_tethered_to_this_process() -> None:
    cmd = tethered.command("transformers.cli.transformers", "serve", "X")
    assert cmd[:4] == [sys.executable, "-m", "needlework.judges.tethered", str(os.getpid())]
    assert cmd[4:] == ["transformers.cli.transformers", "serve", "X"]
    out = subprocess.run(tethered.command("platform", "--terse"), capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 0 and out.stdout.strip(), out.stderr  # python -m platform --terse


def test_a_child_started_for_another_parent_refuses_to_run() -> None:
    out = subprocess.run(tethered.command("platform", parent=1), capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode != 0 and "is not this process's parent" in out.stderr
    bad = subprocess.run([sys.executable, "-m", "needlework.judges.tethered", "platform"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode != 0 and "usage:" in bad.stderr


@pytest.mark.slow
def test_a_tethered_child_ends_when_its_parent_is_killed() -> None:
    parent, child = _parent("""
        import subprocess, sys, time
        from needlework.judges import tethered
        cmd = tethered.command("http.server", "0", "--bind", "127.0.0.1")
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(child.pid, flush=True)
        time.sleep(600)
    """)
    time.sleep(1.5)
    assert _alive(child), "the tethered child ended while its parent was alive"
    parent.kill()
    parent.wait(10)
    took = _wait_gone(child, timeout=tethered.POLL_S * 3 + tethered.GRACE_S)
    assert took < tethered.POLL_S * 3 + 1, f"it took {took:.1f} s (SIGTERM was not enough?)"


@pytest.mark.slow
def test_transformers_serve_started_by_a_killed_app_does_not_outlive_it(tmp_path) -> None:
    """The real server as the app starts it (start_server), its parent killed with SIGKILL;
    the parent runs elsewhere than the project folder (the tether is still found)."""
    folder = build_tiny_causal_lm(tmp_path / "tiny")
    parent, child = _parent(cwd=tmp_path, script=f"""
        import time
        from needlework.judges.serve import start_server
        server = start_server({str(folder)!r}, threads=1)
        print(server.process.pid, flush=True)
        time.sleep(600)
    """)
    try:
        assert _alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        took = _wait_gone(child, timeout=tethered.POLL_S * 3 + tethered.GRACE_S + 5)
        print(f"\ntransformers serve ended {took:.1f} s after its parent was killed")
    finally:
        if parent.poll() is None:
            parent.kill()
