"""What every latency-waterfall run must show, whatever its path and reader (shared by the
integration tests and the Spark tier's)."""

from __future__ import annotations

import itertools

import numpy as np

from workbench.bench import Waterfall
from workbench.measure.hops import READ_PATH, hop_durations, hop_tolerance_ms


def check_stamps(run: Waterfall, read_path: list[str]) -> None:
    """Every record read once; each counted record's stamps in path order (to their resolution),
    and its hops adding up to its end-to-end time."""
    row = run.row
    assert (row["records"], row["lost"], row["duplicates"], row["failed"]) == (row["expected"], 0, 0, 0), row
    assert row["read_path"] == " → ".join(read_path)
    assert row["disordered"] == 0
    stamps = run.stamps[run.counted]
    assert len(stamps) == row["measured_records"] > 0
    for a, b in itertools.pairwise(read_path):
        assert (stamps[b] - stamps[a] >= -hop_tolerance_ms(a, b)).all(), (a, b, (stamps[b] - stamps[a]).min())
    hops = hop_durations(stamps, READ_PATH)
    end_to_end = stamps["consumed"] - stamps["scheduled"]
    assert np.allclose(hops.sum(axis=1), end_to_end, atol=1e-6)
    assert row["latency_p50_ms"] <= row["latency_p99_ms"] <= row["latency_max_ms"]
    assert (
        row["closed_loop_p50_ms"] <= row["latency_p50_ms"] + 1e-9
    )  # from the send, never longer than from the due time
