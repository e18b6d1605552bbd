"""The demo's data files ship in a wheel, and an installed package reads them.

Builds a real wheel from a copy of the logic packages and ``pyproject.toml``
(pip with the venv's setuptools, no network), installs it into a temporary
folder and, from outside the repository, builds the demo from it: the result
has the same hashes as the checkout's (tests/test_demo_identity.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.test_demo_identity import EXPECTED

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json
import needlework
from needlework import demo
from tests_probe import digest
print(json.dumps({"file": needlework.__file__,
                  "haystack": digest(demo.haystack_paragraphs()),
                  "corpus": digest(demo.corpus_texts())}))
"""


def _pip(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
                   cwd=cwd, check=True, capture_output=True, timeout=300)


@pytest.mark.slow
def test_installed_wheel_builds_the_same_demo(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    for package in ("needlework", "store"):
        shutil.copytree(ROOT / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _pip("wheel", ".", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), cwd=src)
    (wheel,) = (tmp_path / "dist").glob("needlework-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "needlework/demo/data").rglob("*")
                  if p.suffix in (".json", ".md"))
    assert data and set(data) <= set(names)

    site = tmp_path / "site"
    _pip("install", "--no-deps", "--no-index", "--target", str(site), str(wheel), cwd=tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    # The identity test's digest, without importing the repository's tests package.
    (run / "tests_probe.py").write_text(
        "import hashlib, json\n"
        "def digest(value):\n"
        "    data = json.dumps(value, ensure_ascii=False, separators=(',', ':')).encode()\n"
        "    return hashlib.sha256(data).hexdigest()\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = f"{site}{os.pathsep}{run}"
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=run, env=env, check=True,
                         capture_output=True, text=True, timeout=120)
    result = json.loads(out.stdout)
    assert result["file"].startswith(str(site))  # the installed copy, not the checkout
    assert result["haystack"] == EXPECTED["haystack"]
    assert result["corpus"] == EXPECTED["corpus"]
