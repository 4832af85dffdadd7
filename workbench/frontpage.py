"""A report's front page: each notebook's conclusions, its headline figures, and their trend.

A team lead reads the front page each Monday: what the run says first (the output of the
code cell under each notebook's "## What the run says" heading, taken from the executed
copy), then the few figures a notebook is judged by, each with a small trend over the
previous report runs of the same profile, a run marked where it was slower than the run
before it with evidence (the rule of `workbench.compare`). The full result tables sit in
collapsed sections below.

Headline figures are declared here, per notebook: the results table, the metric, whether
more or less is better, and the point the figure is taken at (a filter on the table's
columns, `path=proxy, offered_msg_s=1,000`), which the page's label states. A run's figure
is the median over that point's repeats, so one number stands for a run at a point a reader
can name; a latency is only ever taken at one such point, never the least over a sweep (the
native, lowest-rate point would stand for a proxy under load). The regression mark compares
the two runs point by point.

The page itself is written here too (`index_page`): `workbench.report` runs the notebooks
and hands over how each went, and writes the page where the report goes.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from workbench.compare import FASTER, SLOWER, Direction, compare_rows
from workbench.config import Profile
from workbench.errors import ConfigError, NotebookRunError
from workbench.results import RUN_FACTS, experiments, run_metadata
from workbench.results import load as load_results

__all__ = [
    "COMPARISON_SLOT",
    "CONCLUSIONS_HEADING",
    "HEADLINES",
    "Headline",
    "NotebookOutcome",
    "TREND_RUNS",
    "conclusions_html",
    "headline_section",
    "headlines_for",
    "index_page",
    "trend",
]

#: The heading whose next code cell computes a notebook's conclusions.
CONCLUSIONS_HEADING = "## What the run says"
#: Report runs a trend goes back over.
TREND_RUNS = 20


class NotebookOutcome(Protocol):
    """What the front page reads of an executed notebook (`workbench.report.NotebookRun`)."""

    name: str
    executed: Path
    seconds: float
    error: NotebookRunError | None
    html: Path | None
    tables: list[str]


@dataclass(frozen=True)
class Headline:
    """A figure a notebook is judged by: `metric` of results table `table` at `point`, better `direction`.

    `point` is the filter that names the rows the figure stands for: each column equals its
    value (`{"path": "proxy", "offered_msg_s": 1000}`). The run's figure is the median of that
    point's repeats. A throughput filter that leaves several points (a parameter it does not
    pin, a size quick mode changes) gives the best of them; a latency (`direction="lower"`) is
    never the least over several points: such a filter gives no figure at all.
    """

    table: str
    metric: str
    label: str
    point: Mapping[str, Any] = field(hash=False)
    direction: Direction = "higher"

    def where(self) -> str:
        """The point in words, as the front page prints it: `path=proxy, offered_msg_s=1,000`."""
        from workbench.numbers import format_number

        if not self.point:
            return "best of every point"
        return ", ".join(f"{name}={format_number(value)}" for name, value in self.point.items())


HEADLINES: dict[str, tuple[Headline, ...]] = {
    "00_quickstart": (
        Headline("quickstart", "produce_msg_s", "native produce msg/s", {"experiment": "native_round_trip"}),
        Headline("quickstart", "consume_msg_s", "native consume msg/s", {"experiment": "native_round_trip"}),
    ),
    "01_rest_proxy_tuning": (
        Headline(
            "proxy_produce",
            "msg_s",
            "proxy produce msg/s, 500 records a call, one thread",
            {"records_per_call": 500, "concurrency": 1},
        ),
        Headline(
            "latency_waterfall",
            "latency_p99_ms",
            "end-to-end latency p99 ms through the proxy at 1,000 msg/s",
            {"path": "proxy", "reader": "native", "offered_msg_s": 1000},
            "lower",
        ),
    ),
    "02_producer_tuning": (
        Headline(
            "native_produce",
            "msg_s",
            "native produce msg/s, linger.ms 5, batch.size 1 MB",
            {"linger.ms": 5, "batch.size": 1_000_000},
        ),
    ),
    "03_consumer_tuning": (
        Headline(
            "native_consume",
            "msg_s",
            "native consume msg/s, 1 MiB partition fetches",
            {"max.partition.fetch.bytes": 1_048_576, "fetch.min.bytes": 1},
        ),
        Headline(
            "proxy_consume",
            "msg_s",
            "proxy consume msg/s, 1 MiB answers",
            {"max_bytes": 1_048_576, "fetch_min_bytes": 1},
        ),
    ),
    "04_message_size": (
        Headline("native_produce", "mb_s", "native produce MB/s, 10 kB records", {"record_bytes": 10_000}),
        Headline("proxy_produce", "mb_s", "proxy produce MB/s, 10 kB records", {"record_bytes": 10_000}),
    ),
    "05_proxy_scale_out": (
        Headline("proxy_scale_out", "msg_s", "proxy produce msg/s, two proxy processes", {"proxy_instances": 2}),
    ),
    "06_topics_vs_partitions": (
        Headline("topics_vs_partitions", "topics_msg_s", "native produce msg/s over 100 topics", {"topics": 100}),
    ),
    "07_per_device_topics": (
        Headline(
            "per_device_reads",
            "msg_s",
            "one device's records read per second, a topic per device",
            {"method": "own topic"},
        ),
    ),
    "09_spark_ingestion": (
        Headline(
            "spark_parallelism",
            "msg_s",
            "Spark read msg/s into the noop sink, Spark's Kafka connector",
            {"sink": "noop", "connector": "kafka"},
        ),
        Headline(
            "spark_parallelism",
            "msg_s",
            "Spark read msg/s into the noop sink, the workbench's source",
            {"sink": "noop", "connector": "workbench"},
        ),
        Headline(
            "spark_real_time",
            "latency_p50_ms",
            "end-to-end p50 ms, real-time mode, 1,000 records/s offered",
            {"mode": "real-time", "trigger": "5 seconds", "offered_msg_s": 1000},
            "lower",
        ),
        Headline(
            "spark_trigger_latency",
            "latency_p95_ms",
            "record latency p95 ms, trigger 0 s, 2,000 msg/s offered",
            {"trigger": "0 seconds", "offered_msg_s": 2000},
            "lower",
        ),
    ),
    "11_share_groups": (
        Headline(
            "share_consume",
            "msg_s",
            "share group records/s, 8 members on 4 partitions, 20 ms per record",
            {"kind": "share group", "members": 8, "processing_ms": 20},
        ),
        Headline(
            "share_consume",
            "msg_s",
            "consumer group records/s, 8 members on 4 partitions, 20 ms per record",
            {"kind": "consumer group", "members": 8, "processing_ms": 20},
        ),
    ),
    "10_schema_formats": (
        Headline("format_produce", "msg_s", "proxy produce msg/s, json", {"path": "proxy", "format": "json"}),
        Headline("registry_lookups", "latency_p50_ms", "uncached registry lookup p50 ms", {"cached": False}, "lower"),
    ),
}


def headlines_for(notebook: str, tables: Sequence[str]) -> list[Headline]:
    """The notebook's declared headlines, or for a notebook not declared here the `msg_s` of
    each table it recorded, at its best point (tables without it have no headline)."""
    if notebook in HEADLINES:
        return list(HEADLINES[notebook])
    return [Headline(table, "msg_s", f"{table} msg/s", {}) for table in tables]


# ---------------------------------------------------------------- conclusions


def conclusions_html(executed: Path) -> str | None:
    """The output of the code cell after the "What the run says" heading, as HTML.

    None when the notebook has no such heading, was not executed that far, or printed nothing.
    """
    import nbformat

    if not executed.exists():
        return None
    cells = nbformat.read(executed, as_version=4).cells
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith(CONCLUSIONS_HEADING):
            code = next((c for c in cells[i + 1 :] if c.cell_type == "code"), None)
            parts = [_output_html(o) for o in (code.get("outputs", []) if code is not None else [])]
            text = "".join(p for p in parts if p)
            return text or None
    return None


def _output_html(output: Mapping[str, Any]) -> str:
    from nbconvert.filters import markdown2html

    if output.get("output_type") == "stream":
        return f"<pre>{html.escape(str(output.get('text', '')))}</pre>"
    data = output.get("data", {})
    if "text/markdown" in data:
        return str(markdown2html(str(data["text/markdown"])))
    if "text/html" in data:
        return str(data["text/html"])
    if "text/plain" in data:
        return f"<pre>{html.escape(str(data['text/plain']))}</pre>"
    return ""


# ---------------------------------------------------------------- headline figures and trends


def _at_point(rows: pd.DataFrame, headline: Headline) -> pd.DataFrame:
    """The rows at the headline's point: every filtered column present and equal to its value."""
    if any(name not in rows.columns for name in headline.point):
        return rows.iloc[0:0]
    keep = pd.Series(True, index=rows.index)
    for name, value in headline.point.items():
        keep &= rows[name] == value
    return rows[keep]


def _run_figure(rows: pd.DataFrame, headline: Headline) -> float:
    """One number for a run: the median of the repeats at the headline's point (the best point
    when its filter leaves several; none for a latency, which is never the least over a sweep)."""
    from workbench.compare import point_label

    rows = _at_point(rows, headline)
    values = pd.to_numeric(rows[headline.metric], errors="coerce")
    points = rows.apply(point_label, axis=1) if len(rows) else pd.Series(dtype=str)
    medians = values.groupby(points.to_numpy()).median().dropna()
    if medians.empty or (headline.direction == "lower" and len(medians) > 1):
        return math.nan
    return float(medians.max() if headline.direction == "higher" else medians.min())


def _verdict(before: pd.DataFrame, after: pd.DataFrame, headline: Headline) -> str:
    """`slower` / `faster` when some common point changed with evidence (slower wins), else the table's
    most common verdict (`no evidence of change`, `too few repeats`), or `no common point`."""
    try:
        table = compare_rows(
            _at_point(before, headline), _at_point(after, headline), {headline.metric: headline.direction}
        )
    except ConfigError:
        return "no common point"
    if table.empty:
        return "not measured"
    verdicts = table["verdict"]
    for verdict in (SLOWER, FASTER):
        if (verdicts == verdict).any():
            return f"{verdict} at {int((verdicts == verdict).sum())} of {len(verdicts)} point(s)"
    return str(verdicts.mode().iloc[0])


def trend(headline: Headline, run_ids: Sequence[str], profile: Profile) -> pd.DataFrame:
    """The headline's figure per run (in `run_ids` order) and the verdict against the run before.

    Returns:
        `run_id`, `value` and `verdict` (against the previous run that measured it), one
        line per run that recorded rows for the headline's table and metric.
    """
    rows = load_results(headline.table, profile=profile)
    lines: list[dict[str, Any]] = []
    if rows.empty or headline.metric not in rows.columns or "run_id" not in rows.columns:
        return pd.DataFrame(lines, columns=["run_id", "value", "verdict"])
    previous: pd.DataFrame | None = None
    for run_id in run_ids:
        mine = rows[rows["run_id"] == run_id]
        value = _run_figure(mine, headline) if len(mine) else math.nan
        if math.isnan(value):
            continue
        verdict = _verdict(previous, mine, headline) if previous is not None else "first run"
        lines.append({"run_id": run_id, "value": value, "verdict": verdict})
        previous = mine
    return pd.DataFrame(lines, columns=["run_id", "value", "verdict"])


def _trend_figure(points: pd.DataFrame, headline: Headline) -> str:
    """A small plotly line of the figure over runs; slower runs as red crosses (plotly.js loaded by the page)."""
    import plotly.graph_objects as go

    slower = points["verdict"].str.startswith(SLOWER)
    figure = go.Figure()
    figure.add_scatter(
        x=points["run_id"],
        y=points["value"],
        mode="lines+markers",
        name=headline.label,
        text=points["verdict"],
        hovertemplate="%{x}<br>%{y:,.4g}<br>%{text}<extra></extra>",
    )
    if slower.any():
        marked = points[slower]
        figure.add_scatter(
            x=marked["run_id"],
            y=marked["value"],
            mode="markers",
            name="slower with evidence",
            marker={"symbol": "x", "size": 12, "color": "#cf222e"},
            text=marked["verdict"],
            hovertemplate="%{x}<br>%{y:,.4g}<br>%{text}<extra></extra>",
        )
    figure.update_layout(
        title={"text": headline.label, "font": {"size": 13}},
        height=220,
        width=440,
        margin={"l": 50, "r": 10, "t": 35, "b": 30},
        showlegend=False,
        xaxis={"type": "category", "showticklabels": False, "title": "report runs, oldest first"},
        yaxis={"rangemode": "tozero"},
    )
    return str(figure.to_html(full_html=False, include_plotlyjs=False, config={"displayModeBar": False}))


def headline_section(
    notebook: str, tables: Sequence[str], run_id: str, run_ids: Sequence[str], profile: Profile
) -> tuple[str, int]:
    """The headline table of one notebook and a trend figure per headline with two runs or more.

    Returns:
        (HTML, number of trend figures drawn).
    """
    from workbench.numbers import format_number

    lines, figures = [], []
    for headline in headlines_for(notebook, tables):
        points = trend(headline, list(run_ids), profile)
        mine = points[points["run_id"] == run_id]
        if mine.empty:
            continue
        now = mine.iloc[0]
        before = points[points["run_id"] != run_id].tail(1)
        was = format_number(float(before["value"].iloc[0])) if len(before) else "-"
        css = {SLOWER: "failed", FASTER: "ok"}.get(str(now["verdict"]).split(" at ")[0], "")
        better = "more is better" if headline.direction == "higher" else "less is better"
        lines.append(
            f"<tr><td>{html.escape(headline.label)} <span class='meta'>({html.escape(headline.table)}."
            f"{html.escape(headline.metric)} at {html.escape(headline.where())}, {better})</span></td>"
            f"<td>{format_number(float(now['value']))}</td><td>{was}</td>"
            f"<td class='{css}'>{html.escape(str(now['verdict']))}</td></tr>"
        )
        if len(points) >= 2:
            figures.append(_trend_figure(points, headline))
    if not lines:
        return "<p class='meta'>no headline figure recorded in this run</p>", 0
    table = (
        "<table><tr><th>headline figure, at the point named</th><th>this run</th><th>previous run</th>"
        "<th>against the previous run</th></tr>" + "".join(lines) + "</table>"
    )
    trends = f"<div class='trends'>{''.join(figures)}</div>" if figures else ""
    return table + trends, len(figures)


#: Columns every result row carries (see `workbench.results.run_metadata`), shown once,
#: plus bookkeeping the section title already says (`experiment`, the `params` name list).
_METADATA = (*RUN_FACTS, "experiment", "params")

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.ok{color:#1a7f37}.failed{color:#cf222e;font-weight:bold}.meta{color:#555}
.scroll{overflow-x:auto}
section{border-top:1px solid #ddd;margin-top:1em}.said{max-width:900px}
.trends{display:flex;flex-wrap:wrap;gap:8px}details{margin:0.3em 0}summary{cursor:pointer}
"""


def _results_table(frame: Any) -> str:
    from workbench.numbers import format_number

    columns = [c for c in frame.columns if c not in _METADATA]
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    cells = ("".join(f"<td>{html.escape(format_number(row[c]))}</td>" for c in columns) for _, row in frame.iterrows())
    body = "".join(f"<tr>{row}</tr>" for row in cells)
    return f"<div class='scroll'><table><tr>{head}</tr>{body}</table></div>"


#: Where `--compare-to` puts its table: after the conclusions, before the full results.
COMPARISON_SLOT = "<!-- comparison -->"


def _trend_runs(profile: Profile, run_id: str) -> list[str]:
    """This run and the previous report runs of its profile, oldest first (at most `TREND_RUNS`)."""
    from workbench import catalog

    table = catalog.runs(profile, profile_name=profile.name, kind="report")
    earlier = [str(r) for r in table["run_id"] if str(r) != run_id]  # this run is catalogued when it ends
    return [*earlier, run_id][-TREND_RUNS:]


def _notebook_section(run: NotebookOutcome, run_id: str, profile: Profile, run_ids: list[str]) -> tuple[str, int]:
    """One notebook on the front page: status, its conclusions, its headline figures and their trends."""
    name = f'<a href="{run.html.name}">{html.escape(run.name)}</a>' if run.html else html.escape(run.name)
    status = "" if run.error is None else f" <span class='failed'>failed: {html.escape(run.error.ename)}</span>"
    said = conclusions_html(run.executed)
    if said is None:
        heading = html.escape(CONCLUSIONS_HEADING.lstrip("# "))
        said = f"<p class='meta'>no conclusions: the notebook has no \"{heading}\" cell, or it did not run</p>"
    figures, trends = headline_section(run.name, run.tables, run_id, run_ids, profile)
    return f"<section><h2>{name}{status}</h2><div class='said'>{said}</div>{figures}</section>", trends


def index_page(runs: Sequence[NotebookOutcome], run_id: str, profile: Profile, *, plotlyjs: str) -> tuple[str, int]:
    """A report's front page, and how many trend charts it draws.

    Notebooks and status, then each notebook's conclusions, headline figures and trends,
    then (collapsed) every result table of the run; `COMPARISON_SLOT` marks where a
    comparison goes. The page loads plotly.js from `plotlyjs` (beside it) when it draws a
    trend; writing that file is the caller's.
    """
    rows = []
    for run in runs:
        if run.error is None:
            status = "<span class='ok'>ok</span>"
        else:
            reason = html.escape(f"{run.error.ename}: {run.error.evalue}")
            status = f"<span class='failed'>failed: {reason}</span>"
        link = f'<a href="{run.html.name}">{run.name}</a>' if run.html else run.name
        rows.append(f"<tr><td>{link}</td><td>{status}</td><td>{run.seconds:,.1f} s</td></tr>")
    run_ids = _trend_runs(profile, run_id)
    notebooks, trends = [], 0
    for run in runs:
        section, drawn = _notebook_section(run, run_id, profile, run_ids)
        notebooks.append(section)
        trends += drawn
    tables = []
    for experiment in experiments(profile):
        frame = load_results(experiment, run_id=run_id, profile=profile)
        if not frame.empty:
            tables.append(
                f"<details><summary>{html.escape(experiment)} ({len(frame)} rows)</summary>"
                f"{_results_table(frame)}</details>"
            )
    full = "<h2>Full results</h2>" + "".join(tables) if tables else ""
    if trends:
        # plotly.js (4.8 MB) loads just before the first trend, so the notebooks' status and
        # the first conclusions are on screen while the browser is still parsing it.
        first = notebooks.index(next(s for s in notebooks if "<div class='trends'>" in s))
        notebooks[first] = notebooks[first].replace(
            "<div class='trends'>", f"<script src=\"{plotlyjs}\"></script><div class='trends'>", 1
        )
    meta = run_metadata(profile)
    facts = ", ".join(
        f"{key.replace('_', ' ')}: {html.escape(str(meta[key]))}"
        for key in (
            "profile",
            "replication_factor",
            "min_insync_replicas",
            "git_revision",
            "workbench_version",
            "cpu_cores",
            "python",
        )
    )
    trend_note = (
        f"<p class='meta'>Trends: the last {len(run_ids)} report run(s) of profile "
        f"{html.escape(profile.name)}; a red cross marks a run slower than the one before it with "
        "evidence (Mann-Whitney U and a bootstrap interval, see workbench compare).</p>"
    )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>Workbench report {run_id}</title>"
        f"<style>{_STYLE}</style></head><body><h1>Workbench report {run_id}</h1>"
        f"<p class='meta'>{facts}</p>"
        "<table><tr><th>notebook</th><th>status</th><th>time</th></tr>"
        + "".join(rows)
        + "</table>"
        + trend_note
        + "".join(notebooks)
        + COMPARISON_SLOT
        + full
        + "</body></html>"
    )
    return page, trends
