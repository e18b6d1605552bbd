"""Commit subjects are at most 72 characters (the why goes in the body; README, Development).

Counted for the commits after :data:`RULE_FROM`: the history up to it is left as it is (it
holds three 73-character subjects, 031b415, d883fac and 12c1b25). A checkout without that
history (a shallow clone, an exported tree) has nothing to check.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

RULE_FROM = "12c1b25ac93662a45181b218f9e2101aabcc4694"
LIMIT = 72


def long_subjects(log: str, limit: int = LIMIT) -> list[str]:
    """The lines of ``git log --format='%h %s'`` output whose subject is over ``limit``."""
    out = []
    for line in log.splitlines():
        short, _, subject = line.partition(" ")
        if len(subject) > limit:
            out.append(f"{short} ({len(subject)} characters): {subject}")
    return out


def test_long_subjects_are_found():
    log = "abc1234 " + "x" * 72 + "\ndef5678 " + "y" * 73 + "\n"
    assert long_subjects(log) == ["def5678 (73 characters): " + "y" * 73]


def test_new_commit_subjects_are_at_most_72_characters():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    known = subprocess.run(["git", "cat-file", "-e", f"{RULE_FROM}^{{commit}}"], cwd=ROOT,
                           capture_output=True)
    if known.returncode != 0:
        pytest.skip("the history before the rule is not in this checkout")
    log = subprocess.run(["git", "log", "--no-merges", "--format=%h %s", f"{RULE_FROM}..HEAD"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert long_subjects(log) == []
