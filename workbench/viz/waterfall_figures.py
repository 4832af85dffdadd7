"""The waterfall's figures: where a record's time went, hop by hop, read left to right like its path.

The bars stack each hop's *mean*: hops telescope, so their means add up to the mean
end-to-end time and a bar's length is that mean. Percentiles do not add; each segment's
hover gives its p50, p95 and p99, and `hop_distribution_figure` draws every record's hop.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import pandas as pd
import plotly.graph_objects as go

from workbench.measure.hops import hop_name
from workbench.viz.figures import TEMPLATE

__all__ = ["hop_distribution_figure", "loop_figure", "row_label", "waterfall_figure"]

_STATS = ("mean_ms", "p50_ms", "p95_ms", "p99_ms")


def row_label(row: pd.Series, by: Sequence[str] = ("offered_msg_s", "path", "reader")) -> str:
    """A bar's name: `1,000/s · proxy → spark` from the row's parameters (those it has)."""
    parts = []
    if "offered_msg_s" in by and "offered_msg_s" in row:
        parts.append(f"{float(row['offered_msg_s']):,.0f}/s")
    route = [str(row[k]) for k in ("path", "reader") if k in by and k in row]
    if route:
        parts.append(" → ".join(route))
    parts += [f"{k}={row[k]}" for k in by if k not in ("offered_msg_s", "path", "reader") and k in row]
    return " · ".join(parts)


def _hops(row: pd.Series, path_column: str) -> list[tuple[str, str]]:
    stamps = [s.strip().replace(" ", "_") for s in str(row.get(path_column) or "").split("→") if s.strip()]
    return list(pairwise(stamps))


def waterfall_figure(
    rows: pd.DataFrame,
    *,
    to: str = "reader",
    by: Sequence[str] = ("offered_msg_s", "path", "reader"),
    title: str | None = None,
) -> go.Figure:
    """Stacked per-hop bars, one bar per `latency_waterfall` row, hops left to right in path order.

    Args:
        rows: `latency_waterfall` rows (one per offered rate, path, reader, setting...).
        to: "reader" (the path to the read) or "ack" (the path to the producer's acknowledgement).
        by: the parameters that name each bar.
    """
    path_column = "read_path" if to == "reader" else "ack_path"
    figure = go.Figure()
    labels = [row_label(row, by) for _, row in rows.iterrows()]
    order: list[str] = []
    for _, row in rows.iterrows():
        order += [hop_name(a, b) for a, b in _hops(row, path_column) if hop_name(a, b) not in order]
    for hop in order:
        values: dict[str, list[float]] = {stat: [] for stat in _STATS}
        for _, row in rows.iterrows():
            start, end = hop.replace(" ", "_").split("_→_")
            for stat in _STATS:
                values[stat].append(float(row.get(f"hop_{start}_{end}_{stat}", float("nan"))))
        figure.add_trace(
            go.Bar(
                name=hop,
                y=labels,
                x=values["mean_ms"],
                orientation="h",
                customdata=list(zip(values["p50_ms"], values["p95_ms"], values["p99_ms"], strict=True)),
                hovertemplate=(
                    f"<b>{hop}</b><br>mean %{{x:,.2f}} ms<br>p50 %{{customdata[0]:,.2f}} ms · "
                    "p95 %{customdata[1]:,.2f} ms · p99 %{customdata[2]:,.2f} ms<extra>%{y}</extra>"
                ),
            )
        )
    where = "read" if to == "reader" else "acknowledgement"
    figure.update_layout(
        barmode="stack",
        title=title or f"Where a record's time goes, to the {where} (mean ms per hop)",
        xaxis_title="ms (each hop's mean; the bar is the mean end to end)",
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": -0.25},
        template=TEMPLATE,
    )
    return figure


def loop_figure(rows: pd.DataFrame, *, by: Sequence[str] = ("offered_msg_s", "path", "reader")) -> go.Figure:
    """Open-loop (from the due time) beside closed-loop (from the actual send) p50 and p99, same records.

    A closed-loop tool times from the send, so it never sees the wait of a record whose
    sender was busy; the gap between the two bars is that wait on this stack.
    """
    labels = [row_label(row, by) for _, row in rows.iterrows()]
    figure = go.Figure()
    for column, name in (
        ("latency_p50_ms", "open loop p50"),
        ("closed_loop_p50_ms", "closed loop p50"),
        ("latency_p99_ms", "open loop p99"),
        ("closed_loop_p99_ms", "closed loop p99"),
    ):
        figure.add_trace(go.Bar(name=name, x=labels, y=rows[column], texttemplate="%{y:,.1f}", textposition="auto"))
    figure.update_layout(
        barmode="group",
        title="Open loop vs closed loop, the same records (ms to the reader)",
        yaxis_title="ms",
        template=TEMPLATE,
    )
    return figure


def hop_distribution_figure(hops: pd.DataFrame, *, title: str = "Every record's hops") -> go.Figure:
    """A box per hop over every counted record (`Waterfall.read_hops` or `.ack_hops`), path order."""
    figure = go.Figure()
    for hop in hops.columns:
        figure.add_trace(go.Box(x=hops[hop].dropna(), name=hop, boxpoints=False, orientation="h"))
    figure.update_layout(
        title=title,
        xaxis_title="ms",
        xaxis_type="log",
        yaxis={"autorange": "reversed"},
        showlegend=False,
        template=TEMPLATE,
    )
    return figure
