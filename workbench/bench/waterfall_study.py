"""Reading `latency_waterfall` rows: the slow hop named, which hop a knob moved, what a stack cannot split.

Notebook 12 runs the waterfall at several offered rates and settings; these functions
turn its rows into the sentences an engineer paged for a slow pipeline wants: the hop
that takes the time, with the number that proves it.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

import pandas as pd

from workbench.measure.hops import hop_name

__all__ = [
    "UNSPLIT_REASONS",
    "conclusions",
    "hops_of",
    "knob_effect",
    "knob_effects",
    "knob_sentence",
    "limits_sentence",
    "loop_sentence",
    "slowest_hop",
    "slowest_hops_sentence",
]

#: Why a stamp is missing from a run, by stamp: what the stack could not take.
UNSPLIT_REASONS = {
    "appended": "the broker did not keep the topic's log-append time (`message.timestamp.type=LogAppendTime`)",
    "proxy_received": "the proxy did not trace the calls (only the workbench's proxy answers `Workbench-Trace`)",
    "proxy_handed": "the proxy did not trace the calls (only the workbench's proxy answers `Workbench-Trace`)",
    "delivered": "no delivery report was stamped",
    "answered": "no HTTP answer was timed",
}


def hops_of(row: pd.Series, to: str = "reader") -> list[tuple[str, str]]:
    """The hops of one row, in path order, as (start stamp, end stamp) pairs."""
    path = str(row.get("read_path" if to == "reader" else "ack_path") or "")
    return list(pairwise(s.strip() for s in path.split("→") if s.strip()))


def _hop_value(row: pd.Series, hop: tuple[str, str], stat: str) -> float:
    return float(row.get(f"hop_{hop[0]}_{hop[1]}_{stat}", float("nan")))


def slowest_hop(row: pd.Series, to: str = "reader") -> tuple[str, float, float]:
    """The hop with the largest mean in this row: its name, its mean ms, and its share of the end-to-end mean."""
    hops = hops_of(row, to)
    if not hops:
        return "", float("nan"), float("nan")
    means = {hop: _hop_value(row, hop, "mean_ms") for hop in hops}
    worst = max(means, key=lambda h: means[h] if means[h] == means[h] else float("-inf"))
    total = sum(v for v in means.values() if v == v)
    return hop_name(*worst), means[worst], means[worst] / total if total > 0 else float("nan")


def slowest_hops_sentence(rows: pd.DataFrame, to: str = "reader") -> str:
    """Markdown bullets, one per row: the slowest hop, its mean and p99, its share, and the slips beside it."""
    lines = []
    for _, row in rows.iterrows():
        name, mean, share = slowest_hop(row, to)
        if not name:
            continue
        hop = next(h for h in hops_of(row, to) if hop_name(*h) == name)
        route = f"{row.get('path')} → {row.get('reader')}"
        lines.append(
            f"- {float(row['offered_msg_s']):,.0f}/s, {route}: **{name}** took {mean:,.1f} ms on average "
            f"({share:.0%} of the way; p99 {_hop_value(row, hop, 'p99_ms'):,.1f} ms); end to end p50 "
            f"{row['latency_p50_ms']:,.1f} ms, p99 {row['latency_p99_ms']:,.1f} ms, with "
            f"{int(row['schedule_slips']):,} schedule slips and {int(row['lost']):,} records lost."
        )
    return "\n".join(lines)


def knob_effects(sweeps: Mapping[str, pd.DataFrame], to: str = "reader") -> dict[str, pd.DataFrame]:
    """`knob_effect` of every knob whose sweep measured at least two of its values; a knob
    whose sweep could not run on this stack (an empty frame: a proxy the workbench does not
    start) is left out, for the caller to name as not measured.

    Usage: `knob_effects({"linger.ms": linger_rows, "trigger": trigger_rows})`.
    """
    return {
        knob: knob_effect(rows, knob, to)
        for knob, rows in sweeps.items()
        if knob in rows.columns and rows[knob].nunique() > 1
    }


def knob_effect(rows: pd.DataFrame, knob: str, to: str = "reader") -> pd.DataFrame:
    """How each hop changed between the lowest and the highest value of `knob` among `rows`.

    Args:
        rows: `latency_waterfall` rows that differ in `knob` (other parameters alike).
        knob: the parameter column (`linger.ms`, `proxy.producer.linger.ms`, `trigger`).

    Returns:
        One row per hop in path order: `hop`, mean and p50 ms at each end, and `change_ms`
        (of the mean), sorted by path; `moved` marks the hop whose mean changed most.
    """
    ordered = rows.assign(_knob=rows[knob].map(_knob_order)).sort_values("_knob")
    low, high = ordered.iloc[0], ordered.iloc[-1]
    hops = list(dict.fromkeys(hops_of(low, to) + hops_of(high, to)))
    table = pd.DataFrame(
        [
            {
                "hop": hop_name(*hop),
                f"mean_ms at {low[knob]}": _hop_value(low, hop, "mean_ms"),
                f"mean_ms at {high[knob]}": _hop_value(high, hop, "mean_ms"),
                f"p50_ms at {low[knob]}": _hop_value(low, hop, "p50_ms"),
                f"p50_ms at {high[knob]}": _hop_value(high, hop, "p50_ms"),
                "change_ms": _hop_value(high, hop, "mean_ms") - _hop_value(low, hop, "mean_ms"),
            }
            for hop in hops
        ]
    )
    table["moved"] = table["change_ms"].abs() == table["change_ms"].abs().max()
    return table


def _knob_order(value: object) -> float:
    """A knob's value as a number to sort by: ms settings as they are, Spark intervals in seconds."""
    text = str(value).strip()
    amount, _, unit = text.partition(" ")
    scale = {"millisecond": 0.001, "second": 1.0, "minute": 60.0}.get(unit.strip().removesuffix("s"), 1.0)
    try:
        return float(amount) * scale
    except ValueError:
        return float("nan")


def knob_sentence(effect: pd.DataFrame, knob: str) -> str:
    """One bullet: which hop `knob` moved, by how much, and how little it moved the rest."""
    moved = effect[effect["moved"]].iloc[0]
    others = effect[~effect["moved"]]["change_ms"].abs()
    low, high = (c.removeprefix("mean_ms at ") for c in effect.columns if c.startswith("mean_ms at "))
    rest = f"; no other hop moved more than {others.max():,.1f} ms" if len(others) else ""
    return (
        f"- `{knob}` {low} → {high} moved **{moved['hop']}** by {moved['change_ms']:+,.1f} ms on average "
        f"({moved[f'mean_ms at {low}']:,.1f} → {moved[f'mean_ms at {high}']:,.1f} ms){rest}."
    )


def limits_sentence(rows: pd.DataFrame) -> str:
    """What the runs could not split, and which hops compared two machines' clocks; empty when neither."""
    lines = []
    unsplit = _listed(rows, "unsplit", ", ")
    for stamp in unsplit:
        reason = UNSPLIT_REASONS.get(stamp, "the stack did not provide it")
        lines.append(f"- Not split here: the hops around **{stamp.replace('_', ' ')}** are one hop, because {reason}.")
    crossings = _listed(rows, "clock_crossings", "; ")
    if crossings:
        lines.append(
            "- Two clocks: " + ", ".join(f"**{h}**" for h in crossings) + " compare this machine's clock with "
            "another's. NTP keeps them within about a millisecond on a LAN, often worse: read those hops to "
            "that, not to their stamps' resolution."
        )
    return "\n".join(lines)


def _listed(rows: pd.DataFrame, column: str, separator: str) -> list[str]:
    """The distinct items of a text column that lists several per row."""
    texts = rows[column].fillna("") if column in rows else []
    return sorted({item for text in texts for item in str(text).split(separator) if item})


def loop_sentence(rows: pd.DataFrame) -> str:
    """One bullet: where open-loop and closed-loop figures of the same records were furthest apart."""
    gaps = rows["latency_p99_ms"] - rows["closed_loop_p99_ms"]
    row = rows.loc[gaps.idxmax()]
    return (
        f"- Furthest apart at {float(row['offered_msg_s']):,.0f}/s, {row['path']} → {row['reader']}: p99 "
        f"**{row['latency_p99_ms']:,.1f} ms** from the due time against {row['closed_loop_p99_ms']:,.1f} ms from "
        f"the send ({gaps.max():,.1f} ms a closed-loop tool would not have seen; {int(row['schedule_slips']):,} "
        "schedule slips). Where the two agree, the sender kept its schedule and the stack answered in time."
    )


def conclusions(rows: pd.DataFrame, into_spark: pd.DataFrame, effects: dict[str, pd.DataFrame]) -> str:
    """Notebook 12's "What the run says": the slow hop at the highest rate by path, what the proxy and
    Spark add, what each knob moved, and whether the schedule and the counts held."""
    top = rows[rows["offered_msg_s"] == rows["offered_msg_s"].max()].set_index("path")
    lines = []
    for path, row in top.iterrows():
        name, mean, share = slowest_hop(row)
        lines.append(
            f"- At {float(row['offered_msg_s']):,.0f} records/s, {path}: the slowest hop to the reader was "
            f"**{name}**, {mean:,.1f} ms on average ({share:.0%} of a record's time; end-to-end p99 "
            f"{row['latency_p99_ms']:,.1f} ms)."
        )
    if {"native", "proxy"} <= set(top.index):
        added = top.loc["proxy", "latency_p50_ms"] - top.loc["native", "latency_p50_ms"]
        lines.append(f"- Through the REST proxy a record took {added:+,.1f} ms at p50 against the native producer.")
    if len(into_spark):
        name, mean, share = slowest_hop(into_spark.iloc[0])
        lines.append(
            f"- Into Spark, **{name}** took the most: {mean:,.1f} ms on average, {share:.0%} of the way "
            f"(end-to-end p50 {into_spark['latency_p50_ms'].min():,.0f} ms)."
        )
    lines += [knob_sentence(effect, knob) for knob, effect in effects.items()]
    every = pd.concat([rows, into_spark])
    lines.append(
        f"- Every record offered was read: {int(every['lost'].sum()):,} lost and {int(every['duplicates'].sum()):,} "
        f"read twice over {int(every['expected'].sum()):,} records; the schedule slipped for "
        f"{int(every['schedule_slips'].sum()):,} of them."
    )
    return "\n".join(lines)
