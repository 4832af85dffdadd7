"""The one-time-axis figure: a row per series given, one shared x-axis, the burst shaded."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench import viz
from workbench.measure.lag import LagTick
from workbench.viz.time_axis import latency_bins


def _lag() -> pd.DataFrame:
    rows = [(t, "orders", p, 100 + t, 90 + t, 10 * p + t) for t in range(5) for p in range(2)]
    return pd.DataFrame(rows, columns=["t", "topic", "partition", "end_offset", "position", "lag"])


def _series() -> dict[str, pd.DataFrame]:
    return {
        "producer": pd.DataFrame(
            {"t": [1, 2, 3], "achieved_msg_s": [100, 900, 100], "offered_msg_s": [100, 1000, 100]}
        ),
        "offered": pd.DataFrame({"t": [0, 1, 1, 3], "offered_msg_s": [100, 100, 1000, 1000]}),
        "lag": _lag(),
        "consumer": pd.DataFrame({"t": [1, 2, 3], "msg_s": [100, 500, 500]}),
    }


def _axes(figure: object) -> list[str]:
    layout = figure.layout  # type: ignore[attr-defined]
    return sorted(name for name in layout.to_plotly_json() if name.startswith("xaxis"))


def test_every_series_gets_a_row_on_one_shared_x_axis_with_the_burst_shaded() -> None:
    batches = pd.DataFrame(
        {
            "t": [0.0, 1.0],
            "t_end": [0.4, 1.6],
            "rows": [10, 50],
            "duration_ms": [400, 600],
            "input_msg_s": [10.0, 50.0],
            "processed_msg_s": [25.0, 83.0],
        }
    )
    latency = pd.DataFrame({"t": np.linspace(0, 4, 1_000), "latency_ms": np.linspace(1, 50, 1_000)})
    figure = viz.time_axis_figure(**_series(), batches=batches, latency=latency, burst=(1.0, 3.0), per_partition=True)
    names = [trace.name for trace in figure.data]
    assert names == [
        "offered", "achieved", "lag (total)", "lag p0", "lag p1", "consumed",
        "Spark input rows/s", "Spark processing rows/s", "batch duration",
        "latency p50", "latency p99", "latency max",
    ]  # fmt: skip
    assert [a.text for a in figure.layout.annotations][:5] == [
        "producer (records/s)", "consumer lag (records)", "consumer (records/s)",
        "Spark batch duration (ms)", "end-to-end latency (ms)",
    ]  # fmt: skip
    axes = _axes(figure)
    assert len(axes) == 5
    bottom = figure.layout[axes[-1]]
    assert bottom.title.text == "seconds since the start"
    # One x-axis for all: every row's axis follows the same one.
    assert {figure.layout[a].matches for a in axes} - {None} == {"x5"}
    shades = [s for s in figure.layout.shapes if s.type == "rect"]
    assert len(shades) == 5 and {(s.x0, s.x1) for s in shades} == {(1.0, 3.0)}
    total = figure.data[2]
    assert list(total.y) == [10, 12, 14, 16, 18]  # the partitions summed at each reading


def test_rows_without_a_series_are_left_out_and_no_series_is_an_error() -> None:
    figure = viz.time_axis_figure(lag=_lag())
    assert [t.name for t in figure.data] == ["lag (total)"] and len(_axes(figure)) == 1
    with pytest.raises(ValueError, match="at least one series"):
        viz.time_axis_figure()
    two_topics = pd.concat([_lag(), _lag().assign(topic="returns")])
    named = [t.name for t in viz.time_axis_figure(lag=two_topics, per_partition=True).data]
    assert named == ["lag (total)", "lag orders[0]", "lag orders[1]", "lag returns[0]", "lag returns[1]"]


def test_latency_samples_become_percentiles_per_bin() -> None:
    latency = pd.DataFrame({"t": [0.0, 0.1, 0.2, 1.0, 1.1], "latency_ms": [1.0, 2.0, 3.0, 10.0, 20.0]})
    bins = latency_bins(latency, 0.5)
    assert bins["t"].tolist() == [0.25, 1.25]
    assert bins["max"].tolist() == [3.0, 20.0] and bins["p50"].tolist() == [2.0, 15.0]
    many = pd.DataFrame({"t": np.linspace(0, 1_000, 100_000), "latency_ms": 1.0})
    assert len(latency_bins(many, 0.001)) <= 400  # a bin never narrower than the span over 400


def test_the_live_figure_follows_lag_readings() -> None:
    chart, add = viz.live_time_axis(burst=(1.0, 2.0), offered=lambda t: 100.0, per_partition=True, max_points=50)
    parts = [("orders", 0), ("orders", 1)]
    for step in range(3):
        t = float(step)
        add(LagTick(t, {p: 100 * step + 10 for p in parts}, {p: 50 * step for p in parts}))
    by_name = {trace.name: trace for trace in chart.data}
    assert list(by_name["lag (total)"].y) == [20, 120, 220]
    assert list(by_name["landed"].y) == [200.0, 200.0] and list(by_name["consumed"].y) == [100.0, 100.0]
    assert list(by_name["offered"].y) == [100.0] * 3
    assert list(by_name["lag p1"].y) == [10, 60, 110]
    assert len([s for s in chart.layout.shapes if s.type == "rect"]) == 3
    for step in range(60):
        add(LagTick(3.0 + step, {p: 0 for p in parts}, {p: 0 for p in parts}))
    assert len(chart.data[2].x) == 50 and chart.data[2].x[-1] == 62.0  # the latest points only
