"""Issue 50 (H6): the annotator's day and small faults, in plain logic over a real
SQLite file: Markdown drawn without HTML, links or images of the data's own; the
annotator's own pace today; a question only marked is not started; Home's words true
for the reader; a run picker says its count once; instructions follow the role; each
link builder emits each parameter once."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urlsplit

from needlework.actions import service as actions
from needlework.datasets.transfer import import_bytes
from needlework.grounding import progress as gp
from needlework.teams.permissions import User
from needlework.view.markdown import to_html
from needlework.view.pace import BREAK_SECONDS, Pace, pace_of, pace_text, today_pace
from needlework.view.picker_words import with_count
from store.own_work import marked_only
from tests.conftest import GARAGE_RECORD

HOSTILE = """### Heading
**bold** <script>alert(1)</script> <img src=x onerror=alert(1)>
[click me](javascript:alert(1)) and [site](https://evil.example/x)
![tracker](https://evil.example/pixel.png)
<a href="javascript:alert(2)">raw link</a> <iframe src="https://evil.example"></iframe>
| a | b |
|---|---|
| <b>1</b> | 2 |
"""


def _tags(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Tags().feed(html)
    return found


def test_markdown_is_formatting_only_never_html_links_or_images_of_the_data():
    html = to_html(HOSTILE)
    assert "<h3>Heading</h3>" in html and "<strong>bold</strong>" in html and "<table>" in html
    for tag in ("<script", "<img", "<a ", "<a>", "<iframe", "<b>"):
        assert tag not in html, tag
    tags = _tags(html)
    assert {t for t, _ in tags} <= {"h3", "p", "strong", "span", "table", "thead", "tbody", "tr",
                                     "th", "td"}, tags
    assert all(a == "class" for _, attrs in tags for a, _ in attrs), tags
    # shown as the characters typed, escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;iframe src=&quot;https://evil.example&quot;&gt;" in html
    # a link is its words and its address in plain text; an image is never loaded
    assert '<span class="nw-md-link">click me</span>' in html and "(javascript:alert(1))" in html
    assert "[image: tracker — https://evil.example/pixel.png]" in html


def test_markdown_of_plain_text_keeps_its_words():
    assert to_html("$5 and $10, no markup") == "<p>$5 and $10, no markup</p>\n"


def _at(minutes: float) -> datetime:
    return datetime(2026, 11, 28, 9, tzinfo=UTC) + timedelta(minutes=minutes)


def test_pace_counts_items_and_takes_the_median_of_visits_leaving_breaks_out():
    saves = [("d", "1", _at(0)), ("d", "1", _at(0.5)),  # one visit to item 1
             ("d", "2", _at(1.5)),                      # 60 s after item 1's last save
             ("d", "3", _at(3.5)),                      # 120 s
             ("d", "4", _at(60)),                       # a break: left out
             ("d", "1", _at(61.5)),                     # 90 s; item 1 again is not a new item
             ("e", "1", _at(63))]                       # another dataset's item 1: 90 s
    pace = pace_of(saves)
    assert pace == Pace(items=5, median=90.0, timed=4)
    assert pace_text(pace) == "Today: 5 items · median 1 min 30 s per item"
    assert pace_of([]) == Pace(0, None, 0) and pace_text(Pace(0, None, 0)) == "Today: nothing saved yet"
    assert pace_text(pace_of([("d", "1", _at(0))])) == "Today: 1 item · no time per item yet"
    assert pace_of([("d", "1", _at(0)), ("d", "2", _at(BREAK_SECONDS / 60 + 1))]).median is None


def _grounding(db) -> None:
    records = [dict(GARAGE_RECORD, sample_id=f"q{n}") for n in range(3)]
    import_bytes(db, "\n".join(json.dumps(r) for r in records).encode(), "g.jsonl", dataset="g")


def _set(db, who: str, item: str, field: str, value) -> None:
    actions.submit(db, {"kind": "set", "dataset": "g", "item": item, "annotator": who,
                        "field": field, "value": value})


def test_today_pace_reads_only_that_persons_saves_of_that_day(db):
    _grounding(db)
    _set(db, "ana", "q0", "label:1", "OUTDATED")
    _set(db, "ana", "q1", "label:1", "OUTDATED")
    _set(db, "bob", "q2", "label:1", "OUTDATED")
    today = datetime.now(UTC).date()
    assert today_pace(db, "ana", today).items == 2
    assert today_pace(db, "bob", today).items == 1
    assert today_pace(db, "ana", today - timedelta(days=1)).items == 0
    assert today_pace(db, "cy", today) == Pace(0, None, 0)
    assert isinstance(today, date)


def test_a_question_only_skipped_or_flagged_is_not_started(db):
    _grounding(db)
    _set(db, "ana", "q0", "skipped", "skipped")
    _set(db, "ana", "q1", "flag", "flagged")
    _set(db, "ana", "q1", "comment", "odd passage")
    _set(db, "ana", "q2", "label:1", "OUTDATED")
    _set(db, "ana", "q2", "skipped", "skipped")
    assert marked_only(db, "g", "ana") == 2
    assert gp.progress(db, "g", "ana") == (0, 1, 3)
    rows = {r["key"]: r for r in gp.make_list(db, "g", "ana", gp.ItemFilter(), 0).window(db, "q0", 0)}
    states = {k: gp.item_state(r["fields"], bool(r["done"]), r["marks"]) for k, r in rows.items()}
    assert states == {"q0": gp.UNLABELED, "q1": gp.UNLABELED, "q2": gp.IN_PROGRESS}
    people = [{"annotator": "ana", "started": 3, "done": 0}]
    assert gp.without_marked_only(db, "g", people) == [{"annotator": "ana", "started": 1, "done": 0}]
    _set(db, "bob", "q0", "skipped", "skipped")
    assert gp.without_marked_only(db, "g", [{"annotator": "bob", "started": 1, "done": 0}]) == []
    # the question list's state filter says the same as the picker's rows
    for states, keys in (({gp.IN_PROGRESS}, ["q2"]), ({gp.UNLABELED}, ["q0", "q1"])):
        found = gp.make_list(db, "g", "ana", gp.ItemFilter(states=states), 0)
        assert found.keys == keys, (states, found.keys)


def test_the_team_table_and_home_count_only_skipped_as_not_started(db):
    """The lead's progress table (started, not done) and Home's line for a person with a
    queue: an item only skipped or flagged is not started; one with a label is."""
    from needlework.teams.assignment import annotator_progress, assign_dataset  # noqa: PLC0415
    from needlework.view.progress import counted  # noqa: PLC0415
    from store.facts import progress_by_dataset  # noqa: PLC0415
    from tests.teams_fixtures import team  # noqa: PLC0415

    _grounding(db)
    users = team(db, annotators=("ana",))
    assign_dataset(db, "g", ["ana"], per_item=1, actor=users["boss"])
    _set(db, "ana", "q0", "skipped", "skipped")
    _set(db, "ana", "q1", "flag", "flagged")
    [row] = annotator_progress(db, "g", actor=users["boss"])
    assert (row.assigned, row.done, row.started, row.remaining) == (3, 0, 0, 3)
    home = progress_by_dataset(db)["g"]
    assert counted(db, "g", "grounding", home, team=True) == []
    assert counted(db, "g", "grounding", home, team=False) == []
    _set(db, "ana", "q1", "label:1", "OUTDATED")
    [row] = annotator_progress(db, "g", actor=users["boss"])
    assert (row.done, row.started) == (0, 1)
    home = progress_by_dataset(db)["g"]
    [ana] = counted(db, "g", "grounding", home, team=True)
    assert (ana["done"], ana["started"], ana["total"]) == (0, 1, 3)
    [local] = counted(db, "g", "grounding", home, team=False)
    assert (local["done"], local["started"]) == (0, 1)


def test_home_words_are_true_for_the_reader():
    from components.home.tables import progress_lines  # noqa: PLC0415

    row = {"kind": "grounding", "items": 16}
    ana = {"annotator": "ana", "done": 3, "started": 5}
    # an annotator sees their own line only: the others are counted, not named
    assert progress_lines(row, [], None, reader="cy", others=2) == ["you have not started; 2 others have"]
    assert progress_lines(row, [], None, reader="cy", others=1) == ["you have not started; 1 other has"]
    assert progress_lines(row, [ana], None, reader="ana", others=2) == [
        "3 of 16 items done by ana · 2 more started"]
    # local mode: everyone's lines, and the reader who has not started is told so first
    assert progress_lines(row, [ana], None, reader="cy")[0] == "you have not started; 1 other has"
    assert progress_lines(row, [], None, reader="cy") == [
        "not started: nobody has labeled or reviewed anything yet"]
    assert progress_lines(row, [ana], None) == ["3 of 16 items done by ana · 2 more started"]


def test_a_run_picker_says_its_count_once():
    assert with_count("judge m · selection · 28 items (every item)", 28) == \
        "judge m · selection · 28 items (every item)"
    assert with_count("judge m · 1,028 items", 1028) == "judge m · 1,028 items"
    assert with_count("m · raw · reward model", 28) == "m · raw · reward model · 28 items"
    assert with_count("judge m · 10 items", 28) == "judge m · 10 items · 28 items"
    assert with_count("judge m · 128 items", 28) == "judge m · 128 items · 28 items"
    assert with_count("m · raw · reward model", 1) == "m · raw · reward model · 1 item"
    assert with_count("judge m · selection · 1 item", 1) == "judge m · selection · 1 item"


def test_instructions_follow_the_role():
    from components.hints import import_words  # noqa: PLC0415

    annotator = User(id=1, name="ana", role="annotator", email="", disabled=False)
    admin = User(id=2, name="root", role="admin", email="", disabled=False)
    assert "Import & export" in import_words(None) and "Import & export" in import_words(admin)
    assert "Import & export" not in import_words(annotator)
    assert import_words(annotator).startswith("ask an admin")


def _once(url: str) -> dict[str, str]:
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    names = [k for k, _ in pairs]
    assert len(names) == len(set(names)), url
    return dict(pairs)


def test_every_link_builder_emits_each_parameter_once():
    from urllib.parse import urlencode  # noqa: PLC0415

    from components.home.tables import dataset_url  # noqa: PLC0415
    from components.rag.answer_panel import link_params  # noqa: PLC0415
    from components.rag.failures import annotate_url  # noqa: PLC0415
    from components.rewards.results import review_query  # noqa: PLC0415

    hostile = "a&dataset=evil&item=zz#x?dataset=x"
    assert _once(dataset_url("app_pages/review.py", hostile, hostile)) == {
        "dataset": hostile, "item": hostile}
    row = {"item_key": hostile, "model": "m&dataset=y", "sentences": []}
    assert _once(annotate_url(hostile, "run", row, 0))["dataset"] == hostile
    assert _once("x?" + urlencode(link_params(hostile, hostile, "r", "m", 2)))["sentence"] == "3"
    assert _once("x?" + urlencode(review_query(hostile, hostile, (0, 2)))) == {
        "dataset": hostile, "item": hostile, "i": "1", "j": "3"}


def test_the_throughput_axis_names_each_day_once():
    import re  # noqa: PLC0415

    import vl_convert as vlc  # noqa: PLC0415

    from components.teams.quality import throughput_chart  # noqa: PLC0415

    daily = [("ana", "2026-11-28", 3), ("bo", "2026-11-28", 2), ("ana", "2026-11-29", 4)]
    svg = vlc.vegalite_to_svg(throughput_chart(daily, "items").properties(width=400).to_dict())
    labels = re.findall(r">(2026-11-\d\d)<", svg)
    assert sorted(labels) == ["2026-11-28", "2026-11-29"], labels
