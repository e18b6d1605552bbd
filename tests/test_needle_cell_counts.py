"""A heatmap cell's count is in pairs for a reward model and a judge alike, on the page's
panel, the exported chart and the tooltip, singular for one (issue 59, point 2)."""

from __future__ import annotations

from needlework.needle import analysis, charts
from tests.test_needle_judge_bias import _trials


def _data(chart) -> dict[tuple[int, int], dict]:
    spec = chart.to_dict()
    data = next(iter(spec["datasets"].values()))
    return {(d["length_tokens"], d["bucket"]): d for d in data}


def _shown_thin(chart) -> str:
    """The expression the thin cells' text layer draws (the page's panel)."""
    spec = chart.to_dict()
    texts = [layer for layer in spec["layer"] if layer["mark"].get("type") == "text"
             and any(t.get("filter") == "datum.thin" for t in layer.get("transform", []))]
    assert len(texts) == 1
    return str(texts[0])


def test_a_judges_cells_count_pairs_as_the_classifiers_do() -> None:
    # 250 tokens, bucket 3: 1 pair (2 trials), thin; 500 tokens, bucket 0: 6 pairs (12 trials)
    judge = _trials({(250, 3, 0): [(True, False)],
                     (500, 0, 0): [(True, True)] * 5 + [(True, False)]})
    model = analysis.results_frame(
        [{"id": f"m{k}", "chosen_score": 1.0, "rejected_score": 0.0, "length_tokens": 250,
          "tagged_position": 0.35} for k in range(1)]
        + [{"id": f"n{k}", "chosen_score": 1.0, "rejected_score": 0.0, "length_tokens": 500,
            "tagged_position": 0.05} for k in range(6)])
    for chart in (charts.heatmap(judge), charts.heatmap_panel(judge),
                  charts.heatmap_panel(judge, slide=True, font=24)):
        cells = _data(chart)
        thin, wide = cells[(250, 3)], cells[(500, 0)]
        assert thin["label"] == "n=1" and thin["short"] == "n=1", thin  # 1 pair, not 2 trials
        assert wide["label"] == "92 %\nn=6", wide  # 11 of 12 trials right, over 6 pairs
        assert thin["count"] == "1 (2 trials), too few to read (under 5 pairs)", thin
        assert wide["count"] == "6 (12 trials)", wide
        assert "1 pairs" not in str(chart.to_dict())
    # the page's narrow panel draws the same words, never the trials
    assert "thin_short" not in _shown_thin(charts.heatmap_panel(judge))
    tooltip = {t["field"]: t["title"] for t in
               charts.heatmap_panel(judge).to_dict()["layer"][0]["encoding"]["tooltip"]}
    assert tooltip["count"] == "pairs (n)"
    cells = _data(charts.heatmap_panel(model))
    assert cells[(250, 3)]["label"] == "n=1" and cells[(500, 0)]["label"] == "100 %\nn=6"
    assert cells[(250, 3)]["count"] == "1, too few to read (under 5 pairs)"
