"""What every burst run must show, whichever consumer read it: shared by the burst tests here
and their Spark half in tests/integration/streaming."""

from __future__ import annotations

import pytest

from workbench.bench.burst import BurstRun
from workbench.bench.burst_plan import BurstPlan
from workbench.measure.contract import contract_problems
from workbench.measure.lag import total_lag


def check_burst(run: BurstRun, plan: BurstPlan) -> None:
    """Every record read once; the lag rose, came back, and `clear_s` is where the readings say."""
    row = run.row
    assert contract_problems(row) == []
    # Every record sent was read, none twice, counted.
    assert row["sent"] == row["read"] == row["records"] > 0
    assert row["lost"] == 0 and row["duplicates"] == 0
    totals = total_lag(run.lag)
    assert int(totals["end_offset"].iloc[-1]) == row["sent"]  # what the log holds is what was sent
    assert int(totals["lag"].iloc[-1]) == 0  # and the consumer ends with nothing left
    # The baseline is the largest total of the lead-in after the warm-up.
    start, end = plan.burst_window
    lead_in = totals[(totals["t"] >= plan.warm_up_s) & (totals["t"] < start)]
    assert len(lead_in) >= 2 and row["baseline_lag"] == lead_in["lag"].max()
    # The lag rose in the burst, above the baseline...
    assert row["lag_peak"] == totals["lag"].max() > row["baseline_lag"]
    assert start <= row["lag_peak_s"] < end + row["clear_s"]
    # ... and came back: the first reading from the burst's end at or below the baseline is
    # at end + clear_s, and every reading between the two is above it.
    assert row["cleared"] is True
    after = totals[totals["t"] >= end]
    first = after[after["lag"] <= row["baseline_lag"]].iloc[0]
    assert first["t"] == pytest.approx(end + row["clear_s"], abs=1e-9)
    assert (after[after["t"] < first["t"]]["lag"] > row["baseline_lag"]).all()
    # Per partition: the peaks are the readings' own.
    peaks = run.lag.groupby("partition")["lag"].max()
    assert row["partition_peak_max"] == peaks.max() and row["partition_peak_min"] == peaks.min()
    assert row["partition_peaks"] == ", ".join(f"p{p}={n}" for p, n in peaks.items())
    # The series share the run's clock.
    assert run.burst == (start, end) and not run.producer.empty and not run.consumer.empty
    assert run.offered["t"].iloc[0] == 0.0 and run.lag["t"].min() >= 0.0
