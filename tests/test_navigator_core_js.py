"""The key scripts' navigator (moves, keys held for a page not drawn yet, catching up,
the redraw asked again) under node with a fake outbox core and clock
(tests/js/navigator_core.test.mjs): navigation bugs caught without a browser."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def test_the_navigator_under_node() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: `make test` installs it (the identity provider needs it too)")
    done = subprocess.run([node, str(ROOT / "tests" / "js" / "navigator_core.test.mjs")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok - ") >= 10, done.stdout
