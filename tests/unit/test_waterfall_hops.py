"""The waterfall's arithmetic: hops from stamps, what is left out, what crosses two clocks, the schedule."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

from workbench.errors import BenchError
from workbench.measure.hops import (
    ACK_PATH,
    READ_PATH,
    clock_crossings,
    disordered,
    hop_columns,
    hop_durations,
    hop_table,
    present_path,
)
from workbench.measure.latency import SLIP_S, schedule_slips
from workbench.measure.schedule import OpenLoopSchedule
from workbench.viz.waterfall_figures import loop_figure, waterfall_figure


def _stamps() -> pd.DataFrame:
    """Three records through the native path: no proxy stamps, no Spark stamps."""
    return pd.DataFrame(
        {
            "scheduled": [0.0, 1.0, 2.0],
            "sent": [0.1, 1.1, 2.5],
            "proxy_received": [np.nan] * 3,
            "appended": [3.0, 4.0, 5.0],
            "delivered": [3.5, 4.6, 5.2],
            "consumed": [4.0, 6.0, np.nan],
        }
    )


def test_a_path_keeps_only_the_stamps_the_run_took() -> None:
    assert present_path(_stamps(), READ_PATH) == ["scheduled", "sent", "appended", "consumed"]
    assert present_path(_stamps(), ACK_PATH) == ["scheduled", "sent", "appended", "delivered"]


def test_hops_add_up_to_the_end_to_end_time_of_each_record() -> None:
    stamps = _stamps()
    hops = hop_durations(stamps, READ_PATH)
    assert list(hops.columns) == ["scheduled → sent", "sent → appended", "appended → consumed"]
    end_to_end = stamps["consumed"] - stamps["scheduled"]
    assert np.allclose(hops.sum(axis=1, min_count=len(hops.columns)), end_to_end, equal_nan=True)
    assert math.isnan(hops.loc[2, "appended → consumed"])  # not read: NaN, never 0


def test_the_hop_table_and_row_columns_name_each_hop_by_its_stamps() -> None:
    hops = hop_durations(_stamps(), READ_PATH)
    table = hop_table(hops)
    assert table["hop"].tolist() == list(hops.columns)
    assert table.set_index("hop").loc["appended → consumed", "records"] == 2
    columns = hop_columns(hops)
    assert columns["hop_appended_consumed_mean_ms"] == pytest.approx(1.5)
    assert set(columns) >= {f"hop_scheduled_sent_{s}_ms" for s in ("p50", "p95", "p99", "mean")}


def test_a_stamp_earlier_than_the_one_before_it_counts_beyond_its_resolution_only() -> None:
    stamps = _stamps()
    # the broker's whole milliseconds (±0.5 ms) after a µs stamp: within 0.501 ms is not disorder
    stamps.loc[0, "appended"] = stamps.loc[0, "sent"] - 0.5
    assert disordered(stamps, READ_PATH) == 0
    stamps.loc[1, "appended"] = stamps.loc[1, "sent"] - 0.6
    assert disordered(stamps, READ_PATH) == 1


def test_only_hops_between_here_and_another_machine_cross_clocks() -> None:
    path = ["scheduled", "sent", "proxy_received", "proxy_handed", "appended", "consumed"]
    assert clock_crossings(path, frozenset()) == []
    remote = frozenset({"proxy_received", "proxy_handed", "appended"})
    assert clock_crossings(path, remote) == ["sent → proxy received", "appended → consumed"]


def test_schedule_slips_count_records_sent_later_than_the_rule() -> None:
    due = np.array([0.0, 1.0, 2.0])
    assert schedule_slips(due, due + np.array([0.0, SLIP_S * 2, np.nan])) == 1


def test_an_open_loop_schedule_hands_out_every_record_once_in_order() -> None:
    schedule = OpenLoopSchedule(rate=2_000, seconds=0.05)
    handed = [seq for due in schedule.batches(max_batch=7) for seq in due]
    assert handed == list(range(schedule.total)) and schedule.total == 100
    assert schedule.due_ns(10) - schedule.due_ns(0) == 5_000_000


def test_an_overdue_schedule_hands_out_what_is_due_at_once() -> None:
    schedule = OpenLoopSchedule(rate=10_000, seconds=0.1)
    schedule.start()
    time.sleep(0.03)
    first = next(iter(schedule.batches(max_batch=10_000)))
    assert len(first) >= 250  # about 300 were due; none waits for its turn


@pytest.mark.parametrize(("rate", "seconds"), [(0, 1), (-5, 1), (float("nan"), 1), (1e9, 1), (10, 0), (10, 1e6)])
def test_a_schedule_refuses_rates_and_lengths_out_of_range(rate: float, seconds: float) -> None:
    with pytest.raises(BenchError, match="offered"):
        OpenLoopSchedule(rate, seconds)


def _row(rate: float, path: str) -> dict[str, object]:
    return {
        "offered_msg_s": rate,
        "path": path,
        "reader": "native",
        "read_path": "scheduled → sent → appended → consumed",
        "hop_scheduled_sent_mean_ms": 0.1,
        "hop_sent_appended_mean_ms": 3.0,
        "hop_appended_consumed_mean_ms": 1.0,
        "latency_p50_ms": 4.0,
        "latency_p99_ms": 9.0,
        "closed_loop_p50_ms": 3.9,
        "closed_loop_p99_ms": 8.0,
    }


def test_the_waterfall_stacks_one_segment_per_hop_in_path_order() -> None:
    rows = pd.DataFrame([_row(100, "native"), _row(1_000, "native")])
    figure = waterfall_figure(rows)
    assert [t.name for t in figure.data] == ["scheduled → sent", "sent → appended", "appended → consumed"]
    assert list(figure.data[1].y) == ["100/s · native → native", "1,000/s · native → native"]
    assert list(figure.data[1].x) == [3.0, 3.0]
    assert len(loop_figure(rows).data) == 4


def test_a_pause_while_the_schedule_starts_never_puts_a_send_before_its_due_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A made-up machine whose two clocks agree, and which takes the thread away for 5 ms
    # between the schedule's first clock read and its second.
    now = {"ns": 1_000_000_000_000}
    reads: list[str] = []

    def read(name: str) -> int:
        reads.append(name)
        if len(reads) == 2:
            now["ns"] += 5_000_000
        return now["ns"]

    monkeypatch.setattr(time, "time_ns", lambda: read("wall"))
    monkeypatch.setattr(time, "perf_counter_ns", lambda: read("perf"))
    monkeypatch.setattr(time, "sleep", lambda s: now.__setitem__("ns", now["ns"] + max(1, int(s * 1e9))))
    schedule = OpenLoopSchedule(rate=1_000, seconds=0.01)
    for due in schedule.batches(max_batch=1):
        sent_ns = time.time_ns()
        assert sent_ns >= schedule.due_ns(due.start)
