"""Throughput over time: readings of (seconds since the load started, records so far).

Every experiment that follows a load over time keeps its readings in this one shape
and turns them into rates by one rule: the rate of a reading is the records added since
the previous reading over the seconds since it. The first reading has no rate, and two
readings at the same instant give no rate (NaN), never a division by zero. A consumer
loop fills a timeline itself (`timed_reads`); `ThroughputMeter` fills one from the
topics' end offsets in a background thread.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Reading", "Timeline", "mean_rate", "rate_between", "timed_reads", "timeline_cv", "timeline_rates"]

#: One reading: (seconds since the load started, records so far).
Reading = tuple[float, int]
#: Readings in time order; a list, so a caller can pass one in and read it afterwards.
Timeline = list[Reading]


def rate_between(earlier: Reading, later: Reading) -> float:
    """Records per second from `earlier` to `later`; NaN when no time passed between them."""
    seconds = later[0] - earlier[0]
    return (later[1] - earlier[1]) / seconds if seconds > 0 else math.nan


def mean_rate(readings: Sequence[Reading]) -> float:
    """Records per second between the first and the last reading (NaN with fewer than two)."""
    if len(readings) < 2:
        return math.nan
    return rate_between(readings[0], readings[-1])


def timeline_rates(readings: Sequence[Reading], **labels: Any) -> pd.DataFrame:
    """A timeline as a table of `t`, `total` and `msg_s`, the rate since the previous reading.

    The first reading has nothing to be a rate since, so it is not a row. Extra keyword
    arguments become constant columns, to tell timelines apart in one plot.

    Usage: `timeline_rates(samples, setting="small fetches")`.
    """
    import pandas as pd

    rows = [(later[0], later[1], rate_between(earlier, later)) for earlier, later in pairwise(readings)]
    return pd.DataFrame(rows, columns=["t", "total", "msg_s"]).assign(**labels)


def timeline_cv(readings: Sequence[Reading]) -> float:
    """Coefficient of variation of the rate between successive readings (0 = steady)."""
    import numpy as np

    rates = np.array([rate_between(earlier, later) for earlier, later in pairwise(readings)])
    rates = rates[~np.isnan(rates)]
    if rates.size < 2 or rates.mean() == 0:
        return math.nan
    return float(rates.std() / rates.mean())


def timed_reads(
    read: Callable[[int], int],
    records: int,
    max_seconds: float,
    sample_interval: float,
    timeline: Timeline,
    start: Callable[[], object] | None = None,
) -> tuple[int, float, list[float]]:
    """Call `read(still_missing)` (returns how many records it got) until `records` arrived
    or time is up. A read is told how many are missing so that it never waits for more:
    librdkafka's `consume(n, timeout)` returns when it has n records or the timeout is up,
    and asking 10,000 of the last 5,000 added the whole timeout to the measured time.

    `start` (assign the partitions, open the consumer) runs once the clock runs: a
    consumer assigned before it prefetched up to 64 MiB that the clock never saw.

    Appends a reading to `timeline` at the start, every `sample_interval` and at the end,
    and returns (records read, seconds, the duration of each read that returned records).
    """
    polls: list[float] = []
    count = 0
    started = last_sample = time.perf_counter()
    timeline.append((0.0, 0))
    deadline = started + max_seconds
    if start is not None:
        start()
    while count < records and time.perf_counter() < deadline:
        before = time.perf_counter()
        got = read(records - count)
        after = time.perf_counter()
        if got:
            polls.append(after - before)
            count += got
        if after - last_sample >= sample_interval:
            timeline.append((after - started, count))
            last_sample = after
    seconds = time.perf_counter() - started
    timeline.append((seconds, count))
    return count, seconds, polls
