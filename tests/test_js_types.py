"""The browser scripts (``components/js/*.js``) type-check: TypeScript's checker
(``tests/tsc``, pinned in its package.json, installed by ``make test``)
reads every script with its JSDoc types and ``// @ts-check`` (tests/tsc/tsconfig.json:
strict, unused names refused), so a name a file uses without importing it, a property no
type has, or an import of a name nobody exports fails here, not in a browser."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

TSC_DIR = ROOT / "tests" / "tsc"
TSC = TSC_DIR / "node_modules" / "typescript" / "bin" / "tsc"


@pytest.mark.slow
def test_the_scripts_type_check() -> None:
    node = shutil.which("node")
    if node is None or not TSC.is_file():
        pytest.fail("TypeScript's checker is not installed: run `make test` (it runs "
                    "`npm ci` in tests/tsc)")
    done = subprocess.run([node, str(TSC), "-p", str(TSC_DIR), "--pretty", "false"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_script_is_checked() -> None:
    """Each script asks for the check (TypeScript reads a file without ``// @ts-check``
    too, under checkJs; the line says so to whoever opens the file)."""
    missing = [p.name for p in sorted((ROOT / "components" / "js").glob("*.js"))
               if not p.read_text(encoding="utf-8").startswith("// @ts-check\n")]
    assert not missing, missing
