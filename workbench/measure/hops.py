"""A record's path in stamps, and the hops between them: the waterfall's arithmetic.

A stamp is a moment in one record's life, taken where it happens: the schedule's due
time and the send at the client, the proxy's receipt and hand-over to librdkafka, the
broker's log-append time, the delivery report, the HTTP answer, a Spark batch's planning
and start, and the read. A hop is the time between two consecutive stamps on a path;
consecutive differences telescope, so a record's hops add up to its end-to-end time
exactly, and the means of the hops add up to the mean end-to-end time (percentiles do
not add: the p50s of the hops are not the p50 of their sum).

A stamp a stack cannot take (a proxy that does not trace, a broker without log-append
time) is left out of the path, and the hop around it is one hop: what cannot be split is
shown unsplit, under both ends' names.

Stamps are wall-clock milliseconds since the schedule started. Each has a resolution, how
far it may be from its moment either way: the broker's log-append time is a whole
millisecond (the waterfall puts it at the middle, so ±0.5 ms), Spark's plan time is the sum
of two whole-millisecond figures from its progress (±2 ms), the others are taken with
`time.time_ns()` in a Python process (microseconds, in practice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

__all__ = [
    "ACK_PATH",
    "READ_PATH",
    "STAMPS",
    "Stamp",
    "clock_crossings",
    "disordered",
    "hop_columns",
    "hop_durations",
    "hop_name",
    "hop_table",
    "hop_tolerance_ms",
    "present_path",
]


@dataclass(frozen=True)
class Stamp:
    """One moment on a record's path: its column name, what it is, and whose clock took it."""

    name: str
    label: str
    #: The process whose clock takes it: "client", "proxy", "broker", "producer" or "consumer".
    clock: str
    #: How far it may be from its moment, either way, in ms: a hop is trusted to the sum of
    #: its two ends' (`hop_tolerance_ms`).
    resolution_ms: float = 0.001


STAMPS: dict[str, Stamp] = {
    s.name: s
    for s in (
        Stamp("scheduled", "due by the schedule", "client"),
        Stamp("sent", "sent by the client", "client"),
        Stamp("proxy_received", "received by the proxy", "proxy"),
        Stamp("proxy_handed", "handed to librdkafka by the proxy", "proxy"),
        Stamp("appended", "appended to the log by the broker", "broker", 0.5),
        Stamp("delivered", "delivery report", "producer"),
        Stamp("answered", "HTTP answer read by the client", "client"),
        Stamp("batch_planned", "Spark batch planned (its offsets fixed)", "consumer", 2.0),
        Stamp("batch_started", "Spark batch handed to the sink", "consumer"),
        Stamp("consumed", "read by the consumer (Spark: written by the sink)", "consumer"),
    )
}

#: The write path to the producer's acknowledgement (native: the delivery report is the answer).
ACK_PATH = ("scheduled", "sent", "proxy_received", "proxy_handed", "appended", "delivered", "answered")
#: The path to the reader.
READ_PATH = (
    *ACK_PATH[:5],
    "batch_planned",
    "batch_started",
    "consumed",
)


def hop_name(start: str, end: str) -> str:
    """`"sent → appended"`: a hop named by its two stamps, as the waterfall's legend shows it."""
    return f"{start.replace('_', ' ')} → {end.replace('_', ' ')}"


def hop_tolerance_ms(start: str, end: str) -> float:
    """How far below zero a hop from `start` to `end` may measure without being wrong: the
    two stamps' resolutions added, since each may be off its moment by its own, either way."""
    return STAMPS[start].resolution_ms + STAMPS[end].resolution_ms


def present_path(stamps: pd.DataFrame, path: Sequence[str]) -> list[str]:
    """The stamps of `path` this run took (a column with at least one value), in path order."""
    return [name for name in path if name in stamps and stamps[name].notna().any()]


def hop_durations(stamps: pd.DataFrame, path: Sequence[str]) -> pd.DataFrame:
    """Per record, the ms between consecutive stamps of `path` that the run took; one column per hop.

    A record missing a stamp the run took elsewhere (a record not read) has NaN in the
    hops around it, and its row still sums to nothing false: NaN, not 0.
    """
    taken = present_path(stamps, path)
    return pd.DataFrame(
        {hop_name(a, b): stamps[b] - stamps[a] for a, b in pairwise(taken)},
        index=stamps.index,
    )


def hop_table(durations: pd.DataFrame) -> pd.DataFrame:
    """p50, p95, p99 and mean ms of each hop (rows in path order) and how many records each counts."""
    rows = []
    for hop in durations.columns:
        values = durations[hop].dropna().to_numpy()
        p50, p95, p99 = np.percentile(values, [50, 95, 99]) if values.size else (np.nan,) * 3
        mean = float(values.mean()) if values.size else np.nan
        rows.append({"hop": hop, "p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "mean_ms": mean, "records": values.size})
    return pd.DataFrame(rows, columns=["hop", "p50_ms", "p95_ms", "p99_ms", "mean_ms", "records"])


def hop_columns(durations: pd.DataFrame) -> dict[str, float]:
    """A result row's hop columns: `hop_<start>_<end>_{p50,p95,p99,mean}_ms` for each hop."""
    columns: dict[str, float] = {}
    for row in hop_table(durations).itertuples():
        start, end = str(row.hop).split(" → ")
        key = f"hop_{start.replace(' ', '_')}_{end.replace(' ', '_')}"
        for stat in ("p50_ms", "p95_ms", "p99_ms", "mean_ms"):
            columns[f"{key}_{stat}"] = float(getattr(row, stat))
    return columns


def disordered(stamps: pd.DataFrame, path: Sequence[str]) -> int:
    """How many records have a stamp earlier than the one before it by more than `hop_tolerance_ms`.

    Zero on a sound run: a record cannot be appended before it was handed over. On one
    machine a nonzero count is a bug in the stamping; across machines it is clock skew.
    """
    taken = present_path(stamps, path)
    bad = np.zeros(len(stamps), dtype=bool)
    for a, b in pairwise(taken):
        bad |= ((stamps[b] - stamps[a]) < -hop_tolerance_ms(a, b)).to_numpy()
    return int(bad.sum())


def clock_crossings(path: Sequence[str], remote: set[str] | frozenset[str]) -> list[str]:
    """The hops of `path` between a stamp taken here and one taken on another machine (`remote`).

    On one machine `remote` is empty and so is the answer. On a cluster, the client and
    the reader run here and the proxy and the broker elsewhere: a hop between them
    compares two clocks, which NTP keeps within about a millisecond on a LAN and often
    worse; such a hop is trusted to that, not to its stamps' resolution.
    """
    return [hop_name(a, b) for a, b in pairwise(path) if (a in remote) != (b in remote)]
