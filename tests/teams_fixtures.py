"""Helpers of the teams tests (tests/test_teams_*.py): a team of accounts, datasets,
and finishing items the way the pages would."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import store
from components.teams.session import TOKEN
from needlework.actions import writes
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.permissions import User
from needlework.teams.quality import mark_gold
from store.suggestions import put_suggestions
from tests.conftest import ROOT, garage_records, jsonl

LABELS3 = ("ANSWER-THE-QUESTION", "irrelevant", "RELATED-INFORMATION")


def team(db, *, annotators=("ana", "bob", "cy")) -> dict[str, User]:
    """An admin (boss), a reviewer (rita) and annotators, all signing in through the
    identity provider (e-mail accounts: no password hashing, fast)."""
    people = {"boss": "admin", "rita": "reviewer", **{a: "annotator" for a in annotators}}
    return {name: accounts.add_user(db, name, role, email=f"{name}@example.org")
            for name, role in people.items()}


def grounding(db, n: int = 6, name: str = "g") -> list[str]:
    """A grounding dataset of ``n`` three-passage items; returns the item keys."""
    import_bytes(db, jsonl(garage_records(n)), f"{name}.jsonl", dataset=name)
    return [f"sample-{i + 1}" for i in range(n)]


def lfrb_records(n: int) -> list[dict]:
    return [{"id": f"q{k}", "subset": "QA", "prompt": f"Question {k}?",
             "chosen": [f"A careful answer {k}."],
             "rejected": [f"Wrong {k}.", f"Also wrong {k}.", f"No answer {k}."]}
            for k in range(n)]


def preference(db, n: int = 4, name: str = "p") -> list[str]:
    """A Long-form RewardBench dataset (1 chosen × 3 rejected per item)."""
    import_bytes(db, jsonl(lfrb_records(n)), f"{name}.jsonl", dataset=name, format="lfrb")
    return [f"q{k}" for k in range(n)]


def finish_grounding(db, dataset: str, key: str, actor: User | None, labels=LABELS3,
                     *, annotator: str | None = None) -> None:
    """Label every passage and write an answer: the item is done for that person."""
    for number, label in enumerate(labels, start=1):
        writes.write_annotation(db, dataset, key, f"label:{number}", label, actor=actor,
                                annotator=annotator)
    writes.save_answer(db, dataset, key, "Adults pay $5 [cite_1].", actor=actor,
                       annotator=annotator)


def verdict(value: str) -> dict:
    return {"verdict": value, "reasons": [], "note": ""}


# --- team mode served by the app (AppTest): a config, a database, four accounts ----------

PASSWORDS = {"lead": "lead-passphrase-1", "rita": "rita-passphrase-1", "ana": "ana-passphrase-1",
             "bob": "bob-passphrase-1"}
ROLES = {"lead": "admin", "rita": "reviewer", "ana": "annotator", "bob": "annotator"}


def team_mode_db(tmp_path, monkeypatch, *, config: str = "", people=ROLES):
    """Team mode for the app (a needlework.toml with ``config`` after ``[server] mode``, the
    database in ``$NEEDLEWORK_DB``) with password accounts for ``people`` (name -> role,
    passwords from :data:`PASSWORDS`); returns the database."""
    path = tmp_path / "team.db"
    config_file = tmp_path / "needlework.toml"
    config_file.write_text('[server]\nmode = "team"\n' + config, encoding="utf-8")
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    monkeypatch.setenv("NEEDLEWORK_CONFIG", str(config_file))
    db = store.connect(path)
    for name, role in people.items():
        accounts.add_user(db, name, role, password=PASSWORDS[name])
    return db


def open_as(db, who: str, page: str | None = None, dataset: str | None = None) -> AppTest:
    """The app signed in as ``who`` (a real session), on ``page``, with ``dataset`` picked;
    fails on an exception."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TOKEN] = accounts.sign_in(db, who, PASSWORDS[who]).token
    if dataset is not None:
        at.query_params["dataset"] = dataset
    at.run()
    if page is not None:
        at.switch_page(page)
        if dataset is not None:
            at.query_params["dataset"] = dataset
        at.run()
    assert not at.exception, at.exception
    return at


# -- look-alike items, one of them gold (issue 47: a gold item looks like any other) -------
GOLD, PLAIN = "sample-3", "sample-2"  # both in the middle of the queue: same neighbours
A, IRR, R = "ANSWER-THE-QUESTION", "irrelevant", "RELATED-INFORMATION"
SUGGESTED = (A, IRR, R)  # on every item's passages 1-3, by "judge"
GOLD_ANSWERS = {"label:1": "OUTDATED", "label:2": "UNKNOWN", "label:3": "OUTDATED"}


def look_alike(db, names, golden: str) -> None:
    """Datasets ``names`` of four identical records (only their ids differ), each assigned
    to ana and bob (overlap 2) with a judge's suggestion on every passage; in ``golden``,
    item :data:`GOLD` gold, and on it and :data:`PLAIN` ana's label of passage 1 (as
    "after" shows it) and rita's decision on passage 2. Needs accounts lead, rita and ana."""
    lead, rita, ana = (accounts.get_user(db, n) for n in ("lead", "rita", "ana"))
    for name in names:
        import_bytes(db, jsonl(garage_records(4)), f"{name}.jsonl", dataset=name)
        assign_dataset(db, name, ["ana", "bob"], per_item=2, actor=lead)
        put_suggestions(db, [{"dataset": name, "item_key": f"sample-{i}", "field": f"label:{n}",
                              "source": "judge", "value": value, "score": 0.75}
                             for i in range(1, 5) for n, value in enumerate(SUGGESTED, start=1)],
                        by="lead")
    mark_gold(db, golden, GOLD, GOLD_ANSWERS, actor=rita)
    for key in (PLAIN, GOLD):
        writes.write_annotation(db, golden, key, "label:1", A, actor=ana)
        writes.adjudicate(db, golden, key, "final:label:2", R, actor=rita)


def item_tag(dataset: str, key: str) -> str:
    """An item's marker on the Annotate page (components.annotate.item.ItemContext.tag)."""
    import hashlib  # noqa: PLC0415

    return hashlib.sha1(f"{dataset}|{key}".encode()).hexdigest()[:12]
