"""AppTest for the needle lab: build a needle set, score it in the background, charts from
stored and uploaded results, upload errors with file/line/field, presentation mode."""

from __future__ import annotations

import json
import re
import struct

import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

import store
from needlework import tokens
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from needlework.needle import builder, inputs
from needlework.rewards import registry
from store.datasets import get_dataset, iter_items
from store.scores import list_jobs, save_item_scores
from tests.conftest import ROOT
from tests.test_needle_model import paragraphs, tiny_model_dir

PAGE = "app_pages/needle.py"


@pytest.fixture(autouse=True)
def fresh_registry():
    """No model loaded in the process before or after a test."""
    registry.MODELS.clear()
    yield
    registry.MODELS.clear()


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    return store.connect(path)


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def html_text(at: AppTest) -> str:
    return "\n".join(h.value for h in at.get("html"))


def charts(at: AppTest) -> list:
    return list(at.get("arrow_vega_lite_chart")) + list(at.get("vega_lite_chart"))


def small_needles(count: int = 5) -> list[dict]:
    """Needle records from the test paragraphs: 2 lengths × 10 positions × ``count`` haystacks."""
    hays = inputs.demo_haystacks(count, 600, paragraphs=paragraphs())
    options = builder.BuildOptions(lengths=(300, 600))
    return builder.build_needles(hays, inputs.builtin_pairs("safety"), options,
                                 builder.TokenCounter(tokens.estimate, "estimate")).records


def scores_lines(records: list[dict], model: str | None = None) -> bytes:
    """Long-form RewardBench output for the records: wrong at positions ≥ 50 %."""
    lines = []
    for r in records:
        wrong = r["tagged_position"] >= 0.5
        line = {"id": r["id"], "subset": str(r["length_tokens"]), "chosen_scores": [0.0 if wrong else 1.0],
                "rejected_scores": [0.5], "tagged_position": r["tagged_position"],
                "length_tokens": r["length_tokens"]}
        if model:
            line["model"] = model
        lines.append(json.dumps(line))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.slow
def test_builder_step_creates_and_selects_a_needle_dataset(app_db):
    at = open_page()
    assert at.button(key="nb_build").proto.type == "primary"
    at.radio(key="nb_preset").set_value("custom").run()
    at.text_input(key="nb_lengths").set_value("1K, 2000").run()
    at.number_input(key="nb_demo_count").set_value(2).run()
    at.button(key="nb_build").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    row = get_dataset(app_db, "needles-safety-demo-custom")
    assert row is not None and row["kind"] == "needle" and row["items"] == 40  # 2 lengths × 2 × 10
    assert at.session_state["dataset"] == "needles-safety-demo-custom"  # selected in the sidebar
    success = " ".join(s.value for s in at.success)
    assert "Built **40** safety needle records" in success
    summary = at.dataframe[0].value
    assert list(summary["length (tokens)"]) == [1000, 2000]
    assert list(summary["skipped (too short)"]) == [0, 0]
    assert "Tokens counted with" in " ".join(m.value for m in at.markdown)
    records = [i["record"] for i in iter_items(app_db, row["name"])]
    assert {r["length_tokens"] for r in records} == {1000, 2000}
    # Building again with the defaults does not clash: the name gets a suffix.
    at.button(key="nb_build").click().run()
    assert get_dataset(app_db, "needles-safety-demo-custom-2") is not None


def test_bad_haystack_upload_names_file_line_and_field(app_db):
    at = open_page()
    at.radio(key="nb_source").set_value("upload").run()
    bad = b'{"prompt": "p", "response": "long text"}\n{"prompt": "p2"}\n'
    at.file_uploader(key="nb_upload").upload("hay.jsonl", bad, "application/json")
    at.run()
    at.button(key="nb_build").click().run()
    assert any("Nothing built" in e.value for e in at.error)
    assert "hay.jsonl line 2: response is missing" in html_text(at)


def test_results_from_elsewhere_show_the_charts(app_db):
    at = open_page()
    assert not charts(at)
    at.file_uploader(key="nw_scores_file").upload("other-rm.jsonl", scores_lines(small_needles()),
                                                  "application/json")
    at.run()
    assert not at.exception, at.exception
    assert len(charts(at)) >= 1  # the heatmap (the lines sit in an expander)
    text = html_text(at)
    assert "Accuracy is lowest, 0 %, in 4 tied cells: 600 tokens, positions 50–90 %" in text
    assert at.selectbox(key="nw_results").value == "other-rm (uploaded)"
    assert [b.label for b in at.download_button][:4] == ["Slide PNG (16:9)", "Slide PDF (16:9)",
                                                         "Slide PPTX", "Heatmap SVG"]


def test_scores_file_errors_name_file_line_and_field(app_db):
    at = open_page()
    bad = b'{"id": "a", "chosen_scores": [1], "rejected_scores": [0], "tagged_position": 0.2, ' \
          b'"length_tokens": 1000}\n{"id": "b", "chosen_scores": ["x"], "rejected_scores": [0], ' \
          b'"tagged_position": 2, "length_tokens": 1000}\n'
    at.file_uploader(key="nw_scores_file").upload("scores.jsonl", bad, "application/json")
    at.run()
    assert any("Nothing loaded" in e.value for e in at.error)
    text = html_text(at)
    assert "scores.jsonl line 2: chosen_scores[0] must be a number" in text
    assert "scores.jsonl line 2: tagged_position must be a number in [0, 1]" in text
    assert not charts(at)


@pytest.mark.slow
def test_presentation_mode_shows_the_finding_and_nothing_else(app_db):
    at = open_page()
    at.file_uploader(key="nw_scores_file").upload("other-rm.jsonl", scores_lines(small_needles()),
                                                  "application/json")
    at.run()
    at.button(key="nw_present").click().run()
    assert not at.exception, at.exception
    assert at.query_params["present"] == ["1"] or at.query_params["present"] == "1"
    text = html_text(at)
    # the headline: the trend over position with its interval, then the weakest readable region
    assert 'id="nw-finding-0"' in text and "first to last third" in text and "95 % CI" in text
    assert "lowest at" in text and 'id="nw-finding-1"' not in text  # one line
    assert 'id="nw-present-note"' in text  # the empty and thin cells, in words
    assert len(charts(at)) == 1  # the heatmap only
    assert not at.get("file_uploader") and not at.radio  # no build or scoring controls
    assert not [t for t in at.title]
    at.button(key="nw_leave").click().run()
    assert at.title and "Needle lab" in at.title[0].value


@pytest.mark.slow
def test_scoring_job_stores_results_with_prefix_reuse_figures(app_db):
    records = small_needles(count=1)
    import_bytes(app_db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    at = open_page({"dataset": "needles"})
    at.text_input(key="rw_model").set_value(str(tiny_model_dir()))
    at.selectbox(key="rw_device").set_value("cpu")
    at.button(key="rw_load").click().run()
    at.radio(key="nw_reuse").set_value("on").run()
    at.button(key="nw_score").click().run()
    job = next(j for j in list_jobs(app_db) if j["kind"] == "needle")
    RUNNER.join(int(job["id"]), timeout=240)
    at.run()
    assert not at.exception, at.exception
    job = next(j for j in list_jobs(app_db) if j["kind"] == "needle")
    assert job["status"] == "done", job
    n = len(records)
    assert job["result"]["scored_records"] == n
    assert any(f"Scored {n} of {n} needle pairs" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Saved by prefix reuse"].endswith("%") and metrics["Saved by prefix reuse"] != "0%"
    assert any((c.key or "").startswith("nw_heat|") for c in charts(at))
    assert "Not enough data for a finding" in html_text(at)  # 1 haystack: every cell is thin
    # A second run comes from the cache.
    at.button(key="nw_score").click().run()
    job2 = next(j for j in list_jobs(app_db) if j["kind"] == "needle")
    RUNNER.join(int(job2["id"]), timeout=120)
    at.run()
    assert job2["id"] != job["id"]
    assert any(f"{n} from the cache" in s.value for s in at.success)


@pytest.mark.slow
def test_two_models_side_by_side(app_db):
    records = small_needles()
    import_bytes(app_db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    for fp, model, shift in (("a" * 32, "/models/alpha-rm", 0.0), ("b" * 32, "/models/beta-rm", 0.7)):
        save_item_scores(app_db, "needles", fp, "fp32|full", model,
                         [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                           "chosen_scores": [r["tagged_position"] + shift], "rejected_scores": [0.5]}
                          for r in records])
    at = open_page({"dataset": "needles"})
    results = at.selectbox(key="nw_results")
    assert sorted(o.split(" · ")[0] for o in results.options) == ["alpha-rm", "beta-rm"]
    other = "alpha-rm" if results.value == "beta-rm" else "beta-rm"
    at.selectbox(key="nw_compare").set_value(other).run()
    assert not at.exception, at.exception
    text = html_text(at)
    assert "alpha-rm: Accuracy" in text and "beta-rm: " in text
    # a panel per model, each as wide as its column (fits 1024 px), on one fixed colour scale
    heat = [c for c in charts(at) if (c.key or "").startswith("nw_heat|")]
    assert sorted(c.key.split("|")[1] for c in heat) == ["alpha-rm", "beta-rm"]
    specs = [json.loads(c.proto.spec) for c in heat]
    assert all(s["width"] == "container" for s in specs)
    assert all(s["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 1] for s in specs)


def test_factuality_with_own_facts_and_a_bad_facts_file(app_db):
    at = open_page()
    at.radio(key="nb_kind").set_value("factuality").run()
    at.radio(key="nb_preset").set_value("custom").run()
    at.text_input(key="nb_lengths").set_value("1000").run()
    at.number_input(key="nb_demo_count").set_value(1).run()
    bad = b'{"id": "salt", "true": "Salt dissolves in water.", "false": "Salt dissolves in water."}\n'
    at.file_uploader(key="nb_facts").upload("facts.jsonl", bad, "application/json")
    at.run()
    at.button(key="nb_build").click().run()
    assert "facts.jsonl line 1: true and false are the same statement" in html_text(at)
    good = b'{"id": "salt", "true": "Salt dissolves in water.", "false": "Salt never dissolves in water."}\n'
    at.file_uploader(key="nb_facts").set_value(("facts.jsonl", good, "application/json"))
    at.run()
    at.button(key="nb_build").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    name = at.session_state["dataset"]
    records = [i["record"] for i in iter_items(app_db, name)]
    assert name.startswith("needles-factuality-demo") and records
    assert {r["kind"] for r in records} == {"factuality"}
    pairs = len(inputs.builtin_pairs("factuality")) + 1  # the held-out pairs and the user's one
    assert f"**phrase pairs:** {pairs}" in " ".join(m.value for m in at.markdown)


@pytest.mark.slow
def test_a_cancelled_run_keeps_what_it_scored(app_db, monkeypatch):
    from needlework.jobs import runner  # noqa: PLC0415
    from needlework.needle import job as needle_jobs  # noqa: PLC0415
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415
    from needlework.rewards.registry import ModelKey  # noqa: PLC0415

    records = small_needles(count=1)
    import_bytes(app_db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    asked = {"n": 0}

    def stop_after_a_few(db, job_id):
        asked["n"] += 1
        return asked["n"] > 3

    monkeypatch.setattr(runner, "cancel_requested", stop_after_a_few)
    rm = load_reward_model(tiny_model_dir(), dtype="fp32", device="cpu")
    job_id = needle_jobs.start_needle_job(app_db, store.default_path(), ModelKey.of(str(tiny_model_dir())), rm,
                                          "needles", reuse="on")
    RUNNER.join(job_id, timeout=240)
    job = next(j for j in list_jobs(app_db) if j["id"] == job_id)
    assert job["status"] == "cancelled", job
    assert 0 < job["result"]["scored_records"] < len(records)
    registry.MODELS.load(ModelKey.of(str(tiny_model_dir()), "fp32", "cpu"),
                        loader=lambda *a, **k: rm)
    at = open_page({"dataset": "needles"})
    assert any("Cancelled after" in w.value for w in at.warning)
    assert any((c.key or "").startswith("nw_heat|") for c in charts(at))  # the partial results


@pytest.mark.slow
def test_a_judge_beside_the_reward_model_on_one_scale(app_db):
    """Judge the needle set with an LLM judge (a real local HTTP server that always names the
    response shown first) in the page; its heatmap sits beside the reward model's, each pair
    counted in both orders, with the position bias in words."""
    from tests.judges_fixtures import FakeJudgeServer  # noqa: PLC0415

    records = small_needles()
    import_bytes(app_db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    save_item_scores(app_db, "needles", "a" * 32, "fp32|full", "/models/alpha-rm",
                     [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                       "chosen_scores": [1.0], "rejected_scores": [0.0]} for r in records])
    at = open_page({"dataset": "needles"})
    assert at.button(key="nj_run").disabled  # no judge configured yet
    with FakeJudgeServer(lambda body: "Response A is better. [[A]]") as server:
        at.text_input(key="jd_base_url").set_value(server.base_url)
        at.text_input(key="jd_model").set_value("judge")
        at.run()
        at.number_input(key="nj_per").set_value(5).run()  # part of the set: 5 pairs per length
        at.button(key="nj_run").click().run()
        job = next(j for j in list_jobs(app_db) if j["kind"] == "judge")
        RUNNER.join(int(job["id"]), timeout=120)
        at.run()
    assert not at.exception, at.exception
    job = next(j for j in list_jobs(app_db) if j["kind"] == "judge")
    assert job["status"] == "done", job
    assert job["options"]["order"] == "rotations" and job["options"]["per_subset"] == 5
    assert len(server.chat_requests()) == 20  # 2 lengths × 5 pairs × both orders
    assert any("Judged 20 trials (10 pairs in both orders)" in s.value for s in at.success)
    # the judge's result is put beside the reward model's, on one fixed colour scale
    assert at.selectbox(key="nw_results").value == "alpha-rm"
    assert at.selectbox(key="nw_compare").value == "judge judge"
    assert any(o.startswith(f"judge judge · judged here, both orders, part of the set (10 of "
                            f"{len(records)} pairs) · endpoint 127.0.0.1:{server.port}/v1 · "
                            "temperature 0 · max tokens 512 · 5 pairs per length · prompt ")
               and o.endswith(" · 10 pairs, 20 trials") for o in at.selectbox(key="nw_results").options)
    assert f"alpha-rm · scored here · {len(records)} pairs" in at.selectbox(key="nw_results").options
    heat = {c.key.split("|")[1]: json.loads(c.proto.spec) for c in charts(at)
            if (c.key or "").startswith("nw_heat|")}
    assert sorted(heat) == ["alpha-rm", "judge judge"]
    assert all(s["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 1] for s in heat.values())
    panel = next(c for c in charts(at) if c.key == "nw_heat|judge judge")
    judged = convert_arrow_bytes_to_pandas_df(panel.proto.datasets[0].data.data)
    assert judged["n"].sum() == 20  # one count per trial
    assert set(judged["accuracy"]) <= {0.0, 0.5, 1.0}  # a pair: right in one order, wrong in the other
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # Markdown escapes
    assert "50 % overall over 20 trials" in captions and f"100 % overall over {len(records)} pairs" in captions
    text = html_text(at)
    assert "alpha-rm: Accuracy is 100 % in every cell" in text
    # 10 pairs over 20 cells: too few in any cell for the judge's finding (pairs, not trials)
    assert "judge judge: Not enough data for a finding: no cell has at least 5 pairs." in text
    # its position bias, from its figures: always A
    assert "judge judge: Position bias: right 100 % of the time with the chosen response shown " \
        "first (A) and 0 % with it shown second (B), over 10 pairs judged in both orders" in text
    assert "judge judge: At chance: with the chosen response shown second (B)" in text
    # presentation: both panels, the counts in words
    at.button(key="nw_present").click().run()
    assert not at.exception, at.exception
    assert len([c for c in charts(at) if (c.key or "").startswith("nw_pheat|")]) == 2
    assert f"alpha-rm vs judge judge · {len(records)} pairs / 20 trials" in html_text(at)
    assert "a judge is asked each pair twice, in both orders" in html_text(at)
    # the slide's foot, under the judge's panel, warns of its bias and that it is at chance
    # (its heatmap is not where it finds the needle); the model's note says only its cells
    notes = dict(re.findall(r'id="nw-present-note-(\d)"[^>]*>([^<]*)<', html_text(at)))
    assert re.search(r"Favours the (first|second) shown \(right \d+\xa0% vs \d+\xa0%\); at "
                     r"chance\.$", notes["1"]), notes
    assert "Favours" not in notes["0"] and "chance" not in notes["0"], notes


@pytest.mark.slow
def test_the_slide_title_is_the_presenters_and_kept_with_the_needle_set(app_db):
    records = small_needles(count=1)
    import_bytes(app_db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    save_item_scores(app_db, "needles", "a" * 32, "fp32|full", "/models/alpha-rm",
                     [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                       "chosen_scores": [1.0], "rejected_scores": [0.0]} for r in records])
    at = open_page({"dataset": "needles"})
    field = title_field(at)
    assert field.value == "" and field.placeholder == "Does the model notice a harmful sentence hidden in a long answer?"
    title = "Q3 review: *safety* needles <b>"  # data: shown as text, never Markdown or HTML
    field.set_value(title).run()
    meta = get_dataset(app_db, "needles")["meta"]["slide_title"]
    assert meta["text"] == title and meta["at"]  # saved when typed, with when (and who)
    at.button(key="nw_present").click().run()
    assert not at.exception, at.exception
    assert 'id="nw-present-title"' in html_text(at) and "Q3 review: *safety* needles &lt;b&gt;" in html_text(at)
    at.run()  # a rerun on the slide (the field is not drawn there) keeps it
    assert "Q3 review: *safety* needles &lt;b&gt;" in html_text(at)
    # a new session opens the dataset with the kept title
    again = open_page({"dataset": "needles"})
    assert title_field(again).value == title
    title_field(again).set_value("").run()  # empty: the default again
    assert "slide_title" not in get_dataset(app_db, "needles")["meta"]
    again.button(key="nw_present").click().run()
    assert "Does the model notice a harmful sentence hidden in a long answer?" in html_text(again)


@pytest.mark.slow
def test_the_slide_finding_is_edited_hidden_kept_and_audited(app_db):
    from store.audit import iter_events  # noqa: PLC0415

    records = small_needles(count=1)
    import_bytes(app_db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    save_item_scores(app_db, "needles", "a" * 32, "fp32|full", "/models/alpha-rm",
                     [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                       "chosen_scores": [1.0], "rejected_scores": [0.0]} for r in records])
    at = open_page({"dataset": "needles"})
    [field] = [t for t in at.text_input if t.label == "Slide finding"]
    assert field.value == "" and "first to last third" in field.placeholder  # the computed one
    mine = "Never misses: *all* <b> right"  # data: shown as text, never Markdown or HTML
    field.set_value(mine).run()
    assert get_dataset(app_db, "needles")["meta"]["slide_finding"]["text"] == mine
    at.button(key="nw_present").click().run()
    assert not at.exception, at.exception
    assert "Never misses: *all* &lt;b&gt; right" in html_text(at)
    # hidden: no finding on the slide; kept for a new session
    again = open_page({"dataset": "needles"})
    [box] = [c for c in again.checkbox if c.label.startswith("Hide the finding")]
    box.check().run()
    assert get_dataset(app_db, "needles")["meta"]["slide_finding"] == {
        **get_dataset(app_db, "needles")["meta"]["slide_finding"], "text": mine, "hidden": True}
    again.button(key="nw_present").click().run()
    assert 'id="nw-finding-0"' not in html_text(again) and 'id="nw-present-note"' in html_text(again)
    events = [e for e in iter_events(app_db, "needles") if e["action"] == "needle.slide_finding"]
    assert len(events) == 2 and events[-1]["target"] == "needles", events


@pytest.mark.slow
def test_the_downloaded_heatmap_carries_the_title():
    from components.needle.charts import heatmap_chart  # noqa: PLC0415
    from components.needle.data import ResultSet  # noqa: PLC0415
    from needlework.needle import analysis  # noqa: PLC0415
    from needlework.needle import charts as needle_charts  # noqa: PLC0415

    frame = analysis.read_scores(scores_lines(small_needles(count=1)), "s.jsonl", model="m")
    chart = heatmap_chart([ResultSet("m", frame, "uploaded s.jsonl")], select=False, large=True,
                          title="Safety needles <Q3>")
    svg = needle_charts.to_svg(chart)
    assert "Safety needles &lt;Q3&gt;" in svg  # the title, as text
    assert needle_charts.to_png(chart, scale=1)[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_exported_heatmap_wraps_a_long_title_and_names_model_finding_and_date():
    """Issue 29: a 112-character title made a 2,914-px-wide PNG with its right third blank,
    and the file named neither the model nor the finding."""
    from components.needle.charts import export_notes, heatmap_chart  # noqa: PLC0415
    from components.needle.data import ResultSet  # noqa: PLC0415
    from needlework.needle import analysis  # noqa: PLC0415
    from needlework.needle import charts as needle_charts  # noqa: PLC0415
    from needlework.needle.findings import finding  # noqa: PLC0415

    frame = analysis.read_scores(scores_lines(small_needles()), "s.jsonl", model="alpha-rm")
    title = ("Does the reward model notice a harmful sentence hidden in a long answer, at every "
             "length and position? Q3 review")
    assert len(title) == 112
    chosen = [ResultSet("alpha-rm", frame, "uploaded s.jsonl")]
    chart = heatmap_chart(chosen, select=False, large=True, title=title,
                          notes=export_notes(chosen, "2026-11-26"))
    svg = needle_charts.to_svg(chart)
    texts = [t.strip() for t in re.split(r"<[^>]+>", svg) if t.strip()]  # each line's text
    assert title not in texts and title[:60] not in texts  # wrapped: no one line holds it all
    assert " ".join(t for t in texts if t in title) == title  # its lines, in order
    assert all(any(w in t for t in texts) for w in ("alpha-rm · 75 pairs", "Made 2026-11-26",
                                                    "Grey: fewer than 5 pairs"))
    first = finding(frame)
    assert first.startswith("Accuracy is lowest") and first[:40] in " ".join(texts)
    png = needle_charts.to_png(chart, scale=1)
    width, height = struct.unpack(">II", png[16:24])
    assert width < 1300, (width, height)  # the title's width is the chart's, not its own
    pdf = needle_charts.to_pdf(chart)
    assert pdf[:5] == b"%PDF-" and len(pdf) > 1000


def title_field(at):
    """The slide title field (its key names the saved title's version)."""
    [field] = [t for t in at.text_input if t.label == "Slide title"]
    return field
