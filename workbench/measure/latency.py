"""Latency samples and their summary: the p50/p95/p99/max columns of every result row."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["LATENCY_COLUMNS", "latency_summary"]

#: The latency columns every result row carries, in milliseconds.
LATENCY_COLUMNS = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms")


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
