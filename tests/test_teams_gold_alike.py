"""A gold item's Annotate page is the page of any other item (issue 47), under every
combination of the lead's settings (the file's labels shown or not, suggestions always,
after the annotator's own label or never, the annotator in the test group or not): every
element Streamlit sends, its text, HTML and the key scripts' data, is the same once the
item's own marks are taken out (its key, its marker, its place in the list, save times).
The Chromium test (tests/browser/test_teams_blind.py) compares the drawn page for some of
these combinations."""

from __future__ import annotations

import difflib
import html
import json
import re

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from needlework.teams import accounts
from needlework.teams.blind import set_suggestion_timing, set_visibility
from tests.page_keys import messages
from tests.teams_fixtures import GOLD, PLAIN, item_tag, look_alike, open_as, team_mode_db

GOLDEN = "vault"
COMBINATIONS = [(file_labels, when, group) for file_labels in (False, True)
                for when in ("always", "after", "never") for group in (True, False)]


@pytest.fixture
def vault(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    look_alike(db, [GOLDEN], GOLDEN)
    return db


#: What the key scripts' data says of the item's neighbours (the items before and after
#: it in the queue): the item's place in the list, not the item.
PLACE = ("moves", "line")


def own_marks_out(value):
    """``value`` (a proto's fields as a dict) without the item's place in the list: the
    question picker's choice and the neighbours in the key scripts' data."""
    if isinstance(value, dict):
        if value.get("label") == "Question" and "options" in value:
            return {k: v for k, v in value.items() if k != "default"}
        return {k: own_marks_out(v) for k, v in value.items()}
    if isinstance(value, list):
        return [own_marks_out(v) for v in value]
    if isinstance(value, str) and value.startswith("{") and '"moves"' in value:
        data = json.loads(value)
        return own_marks_out({k: v for k, v in data.items() if k not in PLACE})
    return value


def sent(at: AppTest, key: str) -> str:
    """Every element of the run, one per line, with the item's own marks taken out: its
    key, its marker, its place in the list (:func:`own_marks_out`), the times of saves,
    and Streamlit's widget ids (hashes of each widget's arguments)."""
    lines = []
    for node in messages(at):
        if getattr(node, "children", None):
            continue  # a block: its elements have lines of their own
        fields = own_marks_out(MessageToDict(node.proto))
        fields.pop("id", None)
        lines.append(f"{type(node).__name__}: "
                     f"{json.dumps(fields, sort_keys=True, ensure_ascii=False)}")
    text = "\n".join(lines)
    text = text.replace(key, "ITEM").replace(item_tag(GOLDEN, key), "TAG")
    text = re.sub(r"\d\d:\d\d:\d\d", "HH:MM:SS", text)
    text = re.sub(r"\bQ\d+ · ", "QN · ", text)  # the question's number, then its place
    return re.sub(r"\b[Q#]?\d+\s*(/|of)\s*4\b", "N of 4", text)


def words(at: AppTest) -> str:
    """The page's words: its HTML, Markdown and captions without tags and styles."""
    shown = html.unescape("\n".join([h.proto.body for h in at.get("html")]
                                     + [m.value for m in at.markdown]
                                     + [c.value for c in at.caption]))
    return re.sub(r"<[^>]+>", "", re.sub(r"<style>.*?</style>", "", shown, flags=re.S))


def item_page(db, key: str) -> AppTest:
    """Ana's Annotate page opened by a link to ``key`` (a fresh session)."""
    at = open_as(db, "ana")
    at.switch_page("app_pages/annotate.py")
    at.query_params["dataset"] = GOLDEN
    at.query_params["item"] = key
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["item"] == key
    return at


@pytest.mark.slow
def test_a_gold_item_sends_what_any_other_item_sends_whatever_the_settings(vault) -> None:
    lead = accounts.get_user(vault, "lead")
    for file_labels, when, in_group in COMBINATIONS:
        set_visibility(vault, GOLDEN, "annotators_see_file_labels", file_labels, actor=lead)
        set_suggestion_timing(vault, GOLDEN, when, ["ana"] if in_group else ["bob"], actor=lead)
        where = f"file labels {file_labels}, {when}, ana {'in' if in_group else 'not in'} the group"
        plain_page, gold_page = item_page(vault, PLAIN), item_page(vault, GOLD)
        plain, gold = sent(plain_page, PLAIN), sent(gold_page, GOLD)
        assert gold == plain, where + "\n" + "\n".join(difflib.unified_diff(
            plain.splitlines(), gold.splitlines(), "plain", "gold", n=2, lineterm=""))
        text = words(gold_page)
        assert "file's label" not in text and "gold" not in text.lower(), where
        assert "Reviewer's decision" not in text, where
        # the suggestions are there when the setting says so, on both alike
        shown = in_group and when != "never"
        assert ("suggested: Answer (judge 0.75)" in text) is (shown and when == "always"), where
        assert ("model: Answer (judge 0.75)" in text) is (shown and when == "after"), where
        assert [t.label for t in gold_page.toggle if t.key == "nw-hide-imported"] == (
            ["Hide the model suggestions (H)"] if shown else []), where
