"""The browser outbox's queue, acknowledgement, refusal and back-off logic under node with
a fake fetch and clock (tests/js/outbox_core.test.mjs): what Chromium round trips test
end to end, here in milliseconds."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def test_the_outbox_core_under_node() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: `make test` installs it (the identity provider needs it too)")
    done = subprocess.run([node, str(ROOT / "tests" / "js" / "outbox_core.test.mjs")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok - ") >= 8, done.stdout
