"""The one interpreter of input (``components/js/input_core.js``) with Annotate's and
Review's tables (``annotate_input.js``, ``review_input.js``) under node
(tests/js/annotate_input.test.mjs, review_input.test.mjs): every key and click as an
event of one pure function,
W on a question not drawn yet, clicks that move the cursor like keys, redraws that never
take back a cursor, and random sequences that leave the same actions however the page
draws between them; Review's verdicts, reasons before and right after a verdict, and
moves that drop a draft and say so."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def test_the_input_interpreter_under_node() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: `make test` installs it (the identity provider needs it too)")
    done = subprocess.run([node, str(ROOT / "tests" / "js" / "annotate_input.test.mjs")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok - ") >= 11, done.stdout
    assert "not ok" not in done.stdout, done.stdout


def test_reviews_table_under_node() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: `make test` installs it (the identity provider needs it too)")
    done = subprocess.run([node, str(ROOT / "tests" / "js" / "review_input.test.mjs")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok - ") >= 6 and "not ok" not in done.stdout, done.stdout
