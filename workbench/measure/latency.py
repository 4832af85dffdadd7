"""Latency samples and their summary: the p50/p95/p99/max columns of every result row."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["LATENCY_COLUMNS", "SLIP_S", "WARM_UP_S", "after_warm_up", "latency_summary", "schedule_slips"]

#: The latency columns every result row carries, in milliseconds.
LATENCY_COLUMNS = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms")

#: Seconds at the start of an offered load whose records are left out of latency figures.
WARM_UP_S = 5.0

#: A record sent more than this many seconds after it was due is a schedule slip: the load
#: generator, not the system under test, fell behind (k6 calls them dropped iterations).
SLIP_S = 0.050


def after_warm_up(sent_s: Sequence[float] | np.ndarray, started_s: float, warm_up_s: float = WARM_UP_S) -> np.ndarray:
    """Which samples count: those of records sent `warm_up_s` seconds or more after the load began.

    The one warm-up rule for open-loop latency. The first seconds of a run measure what
    is still starting (a query's first batches, a JIT compiling, connections, a consumer's
    first fetch), not the steady state; Spark's own benchmark drops its first batch for the
    same reason. The rule is by send time, not by sample count, so it leaves out the same
    stretch at any offered rate.

    Args:
        sent_s: each record's send time, seconds on the clock of `started_s`.
        started_s: when the offered load began.
    """
    return np.asarray(sent_s, dtype=float) >= started_s + warm_up_s


def latency_summary(seconds: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Percentiles of latency samples given in seconds, as milliseconds.

    Empty input gives NaN rather than zero, so a plot or a comparison never mistakes
    "not measured" for "instant".

    Usage: `row.update(latency_summary(call_seconds))`.
    """
    samples = np.asarray(seconds, dtype=float)
    if samples.size == 0:
        return dict.fromkeys(LATENCY_COLUMNS, float("nan"))
    p50, p95, p99 = np.percentile(samples, [50, 95, 99]) * 1000.0
    return {
        "latency_p50_ms": float(p50),
        "latency_p95_ms": float(p95),
        "latency_p99_ms": float(p99),
        "latency_max_ms": float(samples.max() * 1000.0),
    }


def schedule_slips(due_s: Sequence[float] | np.ndarray, sent_s: Sequence[float] | np.ndarray) -> int:
    """How many records were sent more than `SLIP_S` after they were due (NaN sends are not counted).

    Printed beside every open-loop percentile: a run with slips offered less than it says,
    and its percentiles hold the load generator's own delay.
    """
    late = np.asarray(sent_s, dtype=float) - np.asarray(due_s, dtype=float)
    return int(np.count_nonzero(late > SLIP_S))
