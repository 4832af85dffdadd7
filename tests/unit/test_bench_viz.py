"""Figure builders draw what the tables say: medians with spread, ratios, percentiles."""

from __future__ import annotations

import pandas as pd

from workbench import viz


def test_throughput_vs_draws_the_median_with_min_max_bars_per_group() -> None:
    frame = pd.DataFrame(
        {
            "records_per_call": [1, 1, 1, 100, 100, 100] * 2,
            "session_reuse": [True] * 6 + [False] * 6,
            "msg_s": [10, 12, 11, 100, 120, 110, 5, 6, 7, 50, 60, 70],
        }
    )
    figure = viz.throughput_vs(frame, "records_per_call", color="session_reuse")
    assert len(figure.data) == 2
    reuse = next(t for t in figure.data if t.name == "session_reuse=True")
    assert list(reuse.y) == [11, 110]
    assert list(reuse.error_y.array) == [1, 10] and list(reuse.error_y.arrayminus) == [1, 10]
    assert figure.layout.xaxis.type == "log"


def test_before_after_annotates_the_ratio() -> None:
    figure = viz.before_after(200.0, 1000.0, labels=("1 per call", "500 per call"), title="t")
    label = figure.layout.annotations[0]
    assert label.text == "<b>5.00×</b>"  # noqa: RUF001
    assert label.showarrow is False and label.font.size == 16  # a label above the bar, not an arrow
    assert list(figure.data[0].y) == [200.0, 1000.0]


def test_latency_vs_load_draws_a_line_per_percentile() -> None:
    frame = pd.DataFrame(
        {
            "offered_msg_s": [100, 1000],
            "latency_p50_ms": [1, 2],
            "latency_p95_ms": [2, 3],
            "latency_p99_ms": [3, 4],
            "latency_max_ms": [4, 5],
        }
    )
    figure = viz.latency_vs_load(frame)
    assert [t.name for t in figure.data] == ["p50", "p95", "p99", "max"]


def test_throughput_over_time_draws_a_line_per_setting() -> None:
    frame = pd.DataFrame({"t": [0, 1, 0, 1], "msg_s": [1, 2, 3, 4], "setting": ["a", "a", "b", "b"]})
    assert [t.name for t in viz.throughput_over_time(frame, color="setting").data] == ["a", "b"]


def test_panel_has_a_control_per_knob_and_a_run_button() -> None:
    box = viz.panel(
        lambda **kw: {"msg_s": 1.0, **kw},
        {"records_per_call": [1, 10], "format": ["binary", "json"], "session_reuse": True},
        lambda rows: None,
    )
    controls, buttons, _ = box.children
    assert [c.description for c in controls.children] == ["records_per_call", "format", "session_reuse"]
    assert buttons.children[0].description == "Run"


def test_panel_table_writes_numbers_as_the_workbench_does() -> None:
    from workbench.viz.widgets import _recent_runs

    frame = pd.DataFrame(
        {"records_per_call": [500], "msg_s": [11373.014577], "latency_p50_ms": [0.014196], "records": [20_000]}
    )
    shown = _recent_runs(frame, ["records_per_call", "msg_s", "latency_p50_ms", "records"]).to_html()
    assert "11,373" in shown and "0.0142" in shown and "20,000" in shown
    assert "11373.0" not in shown and "0.014196" not in shown


def test_a_closing_reading_moments_after_the_last_sample_is_not_plotted() -> None:
    from workbench.viz.figures import _plotted

    assert _plotted([], 0.0) and _plotted([0.0], 0.5)  # the first two always
    assert _plotted([0.0, 0.5, 1.0], 1.5) and _plotted([0.0, 0.5, 1.0], 1.3)
    assert not _plotted([0.0, 0.5, 1.0], 1.004)  # the meter's stop(): a few ms after the last sample


def test_the_live_chart_has_no_axes_until_its_first_reading_and_ends_without_a_drop() -> None:
    from workbench.bench.meter import Sample

    chart, add = viz.live_throughput()
    assert chart.layout.xaxis.visible is False and chart.layout.yaxis.visible is False  # not plotly's -1…6
    assert chart.layout.annotations[0].text == "waiting for the first reading"
    for t, msg_s in ((0.0, 0.0), (0.5, 1000.0), (1.0, 1100.0), (1.003, 0.0)):
        add(Sample(t, int(t * 1000), msg_s))
    assert chart.layout.xaxis.visible and chart.layout.yaxis.visible and not chart.layout.annotations
    assert list(chart.data[0].y) == [0.0, 1000.0, 1100.0]  # the closing reading is left off


def test_a_log_axis_is_labelled_at_the_values_swept() -> None:
    frame = pd.DataFrame({"records_per_call": [1, 10, 100, 500, 1000], "msg_s": [1.0, 2, 3, 4, 5]})
    axis = viz.throughput_vs(frame, "records_per_call").layout.xaxis
    assert list(axis.tickvals) == [1, 10, 100, 500, 1000]  # no stray minor "8 9" left of 1
    assert list(axis.ticktext) == ["1", "10", "100", "500", "1,000"]
    wide = pd.DataFrame({"x": range(1, 40), "msg_s": 1.0})
    assert viz.throughput_vs(wide, "x").layout.xaxis.tickvals is None  # too many points: plotly's own ticks
