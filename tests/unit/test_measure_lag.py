"""Lag's figures from a sampler's rows: the baseline, the peak, the time to clear, per partition."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.measure.lag import (
    LagTick,
    baseline_lag,
    clear_time,
    lag_peak,
    partition_peaks,
    summarise_lag,
    total_lag,
)


def _rows(totals: list[tuple[float, int, int]], *, parts: int = 2) -> pd.DataFrame:
    """Rows of `parts` partitions: at each (t, lag of partition 0, lag of partition 1)."""
    rows = []
    for t, *lags in totals:
        for p in range(parts):
            rows.append((t, "orders", p, 1_000 + lags[p], 1_000, lags[p]))
    return pd.DataFrame(rows, columns=["t", "topic", "partition", "end_offset", "position", "lag"])


# Lead-in to 5 s (warm-up 2 s), burst 5-8 s, back to 4 (the baseline) at 10.5 s.
RUN = _rows(
    [
        (0.0, 50, 50),  # the warm-up: not part of the baseline
        (1.0, 30, 30),
        (2.0, 1, 2),
        (3.0, 2, 2),  # baseline: 4
        (4.0, 0, 1),
        (5.0, 1, 1),
        (6.0, 100, 120),
        (8.0, 300, 280),  # the peak: 580, at 8 s
        (9.0, 200, 150),
        (10.0, 3, 2),  # 5: still above
        (10.5, 2, 2),  # 4: cleared, 2.5 s after the burst
        (11.0, 0, 0),
    ]
)


def test_the_baseline_is_the_largest_total_after_the_warm_up_and_before_the_burst() -> None:
    totals = total_lag(RUN)
    assert totals["lag"].tolist()[:3] == [100, 60, 3]
    assert baseline_lag(totals, before=5.0, warm_up_s=2.0) == 4
    assert baseline_lag(totals, before=5.0, warm_up_s=0.0) == 100  # with no warm-up the start counts
    with pytest.raises(ValueError, match="no lag reading between"):
        baseline_lag(totals, before=2.0, warm_up_s=2.0)


def test_the_peak_and_the_time_to_clear_match_the_readings() -> None:
    totals = total_lag(RUN)
    assert lag_peak(totals) == (580.0, 8.0)
    assert clear_time(totals, after=8.0, level=4) == 2.5
    # Every reading between the burst's end and the clear one is above the baseline.
    between = totals[(totals["t"] >= 8.0) & (totals["t"] < 10.5)]
    assert (between["lag"] > 4).all()
    assert math.isnan(clear_time(totals, after=8.0, level=-1))
    assert math.isnan(lag_peak(total_lag(RUN.iloc[:0]))[0])


def test_a_summary_holds_the_baseline_peak_clear_time_and_each_partitions_peak() -> None:
    summary = summarise_lag(RUN, burst_start=5.0, burst_end=8.0, warm_up_s=2.0)
    assert (summary.baseline, summary.peak, summary.peak_s, summary.clear_s) == (4.0, 580.0, 8.0, 2.5)
    assert summary.cleared
    assert summary.by_partition == partition_peaks(RUN) == {("orders", 0): 300, ("orders", 1): 280}
    never = summarise_lag(RUN[RUN["t"] <= 9.0], burst_start=5.0, burst_end=8.0, warm_up_s=2.0)
    assert not never.cleared and math.isnan(never.clear_s)


def test_a_reading_sums_its_partitions_and_never_goes_negative() -> None:
    tick = LagTick(1.5, {("t", 0): 10, ("t", 1): 7}, {("t", 0): 4, ("t", 1): 9})
    assert tick.lags == {("t", 0): 6, ("t", 1): 0}
    assert (tick.total, tick.total_end, tick.total_position) == (6, 17, 13)
