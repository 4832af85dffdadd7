"""Plotly figure builders and ipywidgets panels shared by the notebooks.

Figures render live in JupyterLab (the plotly mimetype) and, in a report, as HTML that
loads the report's own copy of plotly.js, so an HTML report opens offline.

Modules:

    figures          one builder per kind of chart the notebooks draw
    time_axis        producer rate, lag, consumer rate and Spark's batches on one time axis
    topic_figures    the topic experiments' figures
    retention_figures  a log over time: retention, compaction, replay
    replication_figures  replication lag by offered rate and over a run
    restart_figures  records/s through a rolling restart of the proxies
    streaming_figures  a streaming query's progress, live or afterwards
    waterfall_figures  where a record's time went, hop by hop
    widgets          a panel that reruns a short experiment point and redraws its chart
"""

from workbench.numbers import format_number
from workbench.viz.figures import (
    bars,
    before_after,
    configure_renderers,
    latency_vs_load,
    live_throughput,
    throughput_over_time,
    throughput_vs,
)
from workbench.viz.replication_figures import lag_by_rate_figure, lag_over_run_figure
from workbench.viz.restart_figures import rolling_restart_figure
from workbench.viz.retention_figures import compaction_figure, log_over_time_figure, replay_figure, survival_figure
from workbench.viz.streaming_figures import follow_query, progress_figure, watch_query
from workbench.viz.time_axis import live_time_axis, time_axis_figure
from workbench.viz.topic_figures import (
    capacity_figure,
    device_read_figure,
    group_join_figure,
    growth_figure,
    partition_plan_figure,
    topic_count_figure,
)
from workbench.viz.waterfall_figures import hop_distribution_figure, loop_figure, waterfall_figure
from workbench.viz.widgets import control, panel, partition_calculator

__all__ = [
    "bars",
    "before_after",
    "capacity_figure",
    "compaction_figure",
    "configure_renderers",
    "control",
    "device_read_figure",
    "follow_query",
    "format_number",
    "group_join_figure",
    "growth_figure",
    "hop_distribution_figure",
    "lag_by_rate_figure",
    "lag_over_run_figure",
    "latency_vs_load",
    "live_throughput",
    "live_time_axis",
    "log_over_time_figure",
    "loop_figure",
    "panel",
    "partition_calculator",
    "partition_plan_figure",
    "progress_figure",
    "replay_figure",
    "rolling_restart_figure",
    "survival_figure",
    "throughput_over_time",
    "throughput_vs",
    "time_axis_figure",
    "topic_count_figure",
    "watch_query",
    "waterfall_figure",
]
