"""The lost-cluster experiment's rules on made-up records: what counts as lost, and the sentence."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest

from workbench.config import load_profile
from workbench.errors import BenchError
from workbench.replication import disaster_run, disaster_sentence
from workbench.replication.disaster import recovery_point
from workbench.stack import Stack
from workbench.stack.state import ServiceRecord, StackState

KILLED_MS = 100_000.0


def _records() -> pd.DataFrame:
    """Ten records a second apart, each 40 ms to b; the last three acknowledged but not yet on b
    at the loss, and one more never acknowledged."""
    a_ms = [KILLED_MS - 9_000 + 1_000 * i for i in range(9)] + [KILLED_MS - 50]
    return pd.DataFrame(
        {
            "seq": range(10),
            "a_ms": a_ms,
            "lag_ms": [40.0] * 10,
            "acked": [True] * 9 + [False],
            "on_b_at_loss": [True] * 6 + [False] * 4,
        }
    )


def test_lost_means_acknowledged_and_not_on_b_and_the_span_runs_from_the_oldest_to_the_kill() -> None:
    point = recovery_point(_records(), KILLED_MS)
    assert point["rpo_records"] == 3  # the unacknowledged record is not the producer's loss
    assert point["rpo_s"] == pytest.approx(3.0)  # seq 6 was appended 3 s before the kill
    assert point["lag_before_p50_ms"] == 40.0  # seq 7, appended 2 s before the kill, stands for "just before"


def test_nothing_lost_is_a_recovery_point_of_zero_and_no_window_is_not_measured() -> None:
    records = _records().assign(on_b_at_loss=True)
    point = recovery_point(records, KILLED_MS + 60_000)  # nothing appended in the minute before
    assert point["rpo_records"] == 0 and point["rpo_s"] == 0.0
    assert math.isnan(point["lag_before_p99_ms"])


def _row(**changes: Any) -> dict[str, Any]:
    row = {
        "rate": 5_000.0,
        "acked": 24_985,
        "rpo_records": 53.0,
        "rpo_s": 0.003,
        "in_flight_expected": 191.0,
        "lag_before_mean_ms": 38.2,
        "lag_before_p99_ms": 182.0,
        "lost_for_good": 0,
        "restart_s": 13.9,
    }
    return {**row, **changes}


def test_the_sentence_sets_the_loss_against_the_lag_estimate() -> None:
    said = disaster_sentence(_row())
    assert "without 53 of the 24,985 records a had acknowledged (the last 3 ms" in said
    assert "fewer than the 191 that the rate times the mean lag" in said and "fetched" in said
    assert "no such second chance" in said
    assert "no fewer than" in disaster_sentence(_row(rpo_records=300.0))
    assert "b lacks 7 acknowledged records" in disaster_sentence(_row(lost_for_good=7))


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"rate": 0}, "rate must be 1 to 20,000"),
        ({"before_s": 1}, "before_s must be 2 to 300"),
        ({"partitions": 65}, "partitions must be 1 to 64"),
        ({"partitions": 1.5}, "partitions must be a whole number, got 1.5"),  # --param is YAML: 1.5 stays 1.5
        ({"rate": "fast"}, "rate must be a number from 1 to 20,000, got 'fast'"),
        ({"rate": float("nan")}, "rate must be 1 to 20,000, got nan"),
        ({"before_s": True}, "before_s must be a number"),
        ({}, "kills only a cluster it started"),  # the stack of an unstarted profile runs no node
    ],
)
def test_bad_input_and_a_foreign_cluster_are_refused_before_anything_runs(params: dict[str, Any], says: str) -> None:
    with pytest.raises(BenchError, match=says):
        disaster_run(Stack(load_profile("local-geo")), **params)


def test_another_profile_s_stack_in_a_shared_run_directory_is_never_taken_for_cluster_a(tmp_path: Path) -> None:
    # One run directory for every profile (WORKBENCH_RUN_DIR, as the test suite sets it): the state
    # file there is `local`'s. Its "broker" here is this very process: taken for cluster a, it
    # would be SIGKILLed. The geo profile's stack must find none of its services there.
    me = psutil.Process()
    broker = ServiceRecord("broker", "broker", me.pid, me.create_time(), "127.0.0.1:1", str(tmp_path / "log"))
    StackState(profile="local", services={"broker": broker}).save(tmp_path)
    local = Stack(load_profile("local").model_copy(update={"run_dir": tmp_path}))
    geo = Stack(load_profile("local-geo").model_copy(update={"run_dir": tmp_path}))
    assert local.refreshed().services == {"broker": broker}
    assert geo.refreshed().services == {}
    with pytest.raises(BenchError, match="kills only a cluster it started"):
        disaster_run(geo)
