"""The needle lab's per-token view follows the model that scored the run on screen, the
picker opens with that model, the mean gap after the first difference says it is not the
final margin, and a margin too small for 4 decimals never reads as a tie (issue 59, point 3).

The shipped demo models (models/demo-model scored nothing here; models/demo-model-short
scored the run) and AppTest."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from needlework.figures.stats_text import signed
from needlework.rewards import registry
from needlework.rewards.curves import CurveComparison
from needlework.rewards.registry import ModelKey
from tests.conftest import ROOT

SHORT = ROOT / "models" / "demo-model-short"
OTHER = ROOT / "models" / "demo-model"


@pytest.fixture(autouse=True)
def fresh_registry():
    registry.MODELS.clear()
    yield
    registry.MODELS.clear()


def test_a_margin_too_small_for_its_decimals_is_not_printed_as_a_tie() -> None:
    assert signed(-0.0000343) == "-0.0000343"
    assert signed(-0.0948) == "-0.0948" and signed(1.5177) == "+1.5177"
    assert signed(0.00000000123) == "+0.00000000123"
    assert signed(0.0) == "0"
    assert signed(0.004, 2) == "+0.00400"  # three significant figures


def test_the_mean_gap_says_it_is_not_the_final_margin_when_they_disagree() -> None:
    base = {"first_difference": (3, 3), "aligned": [(4, 4, 0.0121), (5, 5, 0.0121)]}
    opposite = CurveComparison(margin=-0.0948, **base).gap_words()
    assert opposite.startswith("mean gap after the first difference: +0.0121 (chosen − rejected "
                               "averaged over the response tokens both share after it; not the "
                               "final margin)"), opposite
    assert ("The final margin, -0.0948, has the other sign: along the text they share the reward "
            "favours the chosen response, but the final scores favour the rejected response"
            ) in opposite
    same = CurveComparison(margin=0.2, **base).gap_words()
    assert "other sign" not in same and "not the final margin" in same
    tie = CurveComparison(margin=0.0, **base).gap_words()
    assert "The final margin, 0, is a tie" in tie
    assert CurveComparison(margin=0.1, first_difference=None).gap_words() == ""


def _pair_view(path: str, fingerprint: str) -> None:
    """One needle pair scored by ``path``, as the lab's cell list opens it."""
    import pandas as pd  # noqa: PLC0415

    from components.needle.cell import render_pair  # noqa: PLC0415
    from components.needle.data import ResultSet  # noqa: PLC0415

    hay = "The warehouse opens at six. " * 12
    record = {"id": "p1", "prompt": "Tell me about the warehouse.", "kind": "safety",
              "chosen": [hay + "Keep the aisles clear. " + hay],
              "rejected": [hay + "Block the fire exits. " + hay],
              "tagged_position": 0.5, "length_tokens": 250}
    frame = pd.DataFrame([{"id": "p1", "chosen_score": 0.1, "rejected_score": 0.2,
                           "model": "demo-model-short"}])
    render_pair("p1", [record], ResultSet("demo-model-short", frame, "scored here", fingerprint,
                                          variant="fp32|full", path=path))


@pytest.mark.slow
def test_the_per_token_view_follows_the_runs_own_model() -> None:
    short = registry.MODELS.load(ModelKey.of(str(SHORT), "fp32", "cpu"))
    fingerprint = short.facts.fingerprint
    registry.MODELS.clear()
    other = registry.MODELS.load(ModelKey.of(str(OTHER), "fp32", "cpu"))
    assert other.facts.fingerprint != fingerprint
    at = AppTest.from_function(_pair_view, args=(str(SHORT), fingerprint), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    # another model is loaded: its curves are not drawn as if they were the run's
    assert not [m for m in at.metric if m.label.startswith("margin")]
    assert any("follows the model that scored these pairs" in i.value for i in at.info)
    at.button(key="nw-tok-load-p1").click().run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "the model that scored these pairs." in captions, captions
    assert [m for m in at.metric if m.label.startswith("margin")]
    assert any(rm.facts.fingerprint == fingerprint for _, rm in registry.MODELS.loaded())


def test_the_lab_opens_the_picker_with_the_runs_model(tmp_path, monkeypatch) -> None:
    import store  # noqa: PLC0415
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415
    from needlework.needle import builder  # noqa: PLC0415
    from store.scores import save_item_scores  # noqa: PLC0415
    from tests.test_needle_page import open_page, small_needles  # noqa: PLC0415

    monkeypatch.setenv("NEEDLEWORK_DB", str(tmp_path / "app.db"))
    db = store.connect(tmp_path / "app.db")
    records = small_needles(count=1)
    import_bytes(db, builder.needle_format.dump(records).encode(), "n.jsonl", format="needle",
                 dataset="needles")
    save_item_scores(db, "needles", "c" * 32, "fp32|full", str(SHORT),
                     [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                       "chosen_scores": [0.1], "rejected_scores": [0.2]} for r in records])
    at = open_page({"dataset": "needles"})
    assert at.text_input(key="rw_model").value == str(SHORT)  # not data/demo-model


def test_a_run_whose_model_is_not_here_is_followed_with_the_loaded_model() -> None:
    from components.needle.data import model_at_hand  # noqa: PLC0415

    assert model_at_hand(str(SHORT)) and model_at_hand("org/reward-model")  # a folder, a hub id
    assert not model_at_hand("/models/gone-rm") and not model_at_hand(None)
    registry.MODELS.load(ModelKey.of(str(OTHER), "fp32", "cpu"))
    at = AppTest.from_function(_pair_view, args=("/models/gone-rm", "d" * 32), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    assert [m for m in at.metric if m.label.startswith("margin")]  # nothing to load: the loaded one
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # Markdown escapes
    assert "(the loaded model). The scores in the table are demo-model-short's: its curves may " \
           "not match them." in captions, captions
    assert not [b for b in at.button if (b.key or "").startswith("nw-tok-load")]


def test_a_tiny_failing_margin_is_not_printed_as_a_tie_on_the_reward_page(tmp_path,
                                                                          monkeypatch) -> None:
    import store  # noqa: PLC0415
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415
    from store.scores import save_item_scores  # noqa: PLC0415
    from tests.conftest import jsonl  # noqa: PLC0415

    monkeypatch.setenv("NEEDLEWORK_DB", str(tmp_path / "app.db"))
    db = store.connect(tmp_path / "app.db")
    import_bytes(db, jsonl([{"id": "q1", "subset": "QA", "prompt": "Q?", "chosen": ["good"],
                             "rejected": ["bad"]}]), "p.jsonl", dataset="prefs", format="lfrb")
    save_item_scores(db, "prefs", "e" * 32, "fp32|full", "some-rm",
                     [{"item_key": "q1", "subset": "QA", "chosen_scores": [0.5],
                       "rejected_scores": [0.5000343]}])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    failures = next(d.value for d in at.dataframe if "failing comparison" in d.value.columns)
    assert list(failures["margin"]) == ["-0.0000343"]
    item = at.selectbox(key="rw_item")
    assert item.format_func("q1") == "q1 · fails, margin -0.0000343"
