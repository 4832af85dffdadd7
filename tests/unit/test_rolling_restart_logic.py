"""The rolling restart's arithmetic on made-up deliveries: gaps, re-reads, losses, properties."""

from __future__ import annotations

import math
from typing import Any

import pytest

from workbench.bench.rolling_clients import Delivery
from workbench.bench.rolling_restart import RollingRestart, protocol_properties, record_waits
from workbench.errors import BenchError


def test_a_gap_is_the_longest_wait_of_a_record_acknowledged_in_the_window() -> None:
    acked_at = {(0, 0): 0.0, (0, 1): 0.2, (1, 0): 1.1, (1, 1): 1.5, (1, 2): 2.9}
    deliveries = [
        Delivery(0.1, 0, 0, 0),
        Delivery(0.3, 0, 1, 1),
        Delivery(2.6, 1, 0, 2),  # waited 1.5 s: the restart's gap
        Delivery(2.6, 1, 1, 3),
        Delivery(2.7, 1, 0, 2),  # read again later: the first delivery counts
    ]  # (1, 2) was never read: lost, counted elsewhere, no wait
    assert record_waits(acked_at, deliveries, [(0.0, 1.0), (1.0, 3.0)]) == [
        pytest.approx(0.1),
        pytest.approx(1.5),
    ]
    assert math.isnan(record_waits(acked_at, deliveries, [(5.0, 6.0)])[0]), "nothing written: no wait, not a gap"


def _run(deliveries: list[Delivery], acknowledged: dict[tuple[int, int], int]) -> RollingRestart:
    return RollingRestart(
        params={},
        started_at=0.0,
        acknowledged=acknowledged,
        acked_at=dict.fromkeys(acknowledged, 0.0),
        deliveries=deliveries,
        restarts=[],
        reading_at=0.0,
        stopped_writing_at=3.0,
        written_at=[(0.5, len(acknowledged))],
        produce_failed=0,
        instances_made=1,
    )


def test_re_reads_losses_and_records_written_twice_are_counted_exactly() -> None:
    acknowledged = {(0, 0): 10, (0, 1): 11, (1, 0): 12, (1, 1): 10}  # number 10 written twice
    deliveries = [
        Delivery(0.1, 0, 0, 10),
        Delivery(0.2, 0, 1, 11),
        Delivery(0.3, 0, 1, 11),  # read again after a rebalance
        Delivery(0.4, 1, 1, 10),
    ]
    run = _run(deliveries, acknowledged)
    assert (run.redelivered(), run.lost(), run.written_twice()) == (1, 1, 1)
    timeline = run.timeline()
    assert timeline["read_per_s"].sum() * 0.5 == 4 and timeline["written_per_s"].sum() * 0.5 == 4


def test_the_protocols_proxy_properties() -> None:
    assert protocol_properties("classic") == {}
    assert protocol_properties("classic", 500) == {"consumer.heartbeat.interval.ms": "500"}
    kip848 = protocol_properties("consumer", 500)
    assert kip848["consumer.group.protocol"] == "consumer"
    assert kip848["consumer.session.timeout.ms"] == kip848["consumer.heartbeat.interval.ms"] == "", "unset"
    with pytest.raises(BenchError, match=r"protocol must be one of \['classic', 'consumer'\], got 'eager'"):
        protocol_properties("eager")


@pytest.mark.parametrize(
    ("profile", "params", "message"),
    [
        ("local", {"proxies": 1}, r"^a rolling restart needs two or more proxies \(at most 8 here\), got proxies=1$"),
        ("local", {"partitions": 2}, r"^partitions must be 3 to 64 \(partitions: at least one per proxy\), got 2$"),
        ("local", {"heartbeat_ms": 100}, r"^heartbeat_ms must be 0 \(each protocol's default\) or 500 to 5,000"),
        ("cluster.example", {}, r"^rolling_restart restarts proxies, and the workbench restarts only proxies"),
    ],
)
def test_what_cannot_run_is_one_line_before_anything_starts(profile: str, params: dict[str, Any], message: str) -> None:
    from workbench.bench import rolling_restart_run
    from workbench.config import load_profile
    from workbench.stack import Stack

    with pytest.raises(BenchError, match=message):
        rolling_restart_run(Stack(load_profile(profile)), **params)


def test_the_sentences_compare_the_protocols_from_the_rows_alone() -> None:
    import pandas as pd

    from workbench.bench.rolling_restart import rolling_restart_sentences

    def row(protocol: str, gap: float) -> dict[str, Any]:
        return {
            "protocol": protocol,
            "heartbeat_ms": 500,
            "gap_median_s": gap,
            "gap_before_s": 0.2,
            "redelivered": 10,
            "lost": 0,
            "produce_failed": 3,
        }

    halved = rolling_restart_sentences(pd.DataFrame([row("classic", 2.0), row("consumer", 0.5)]))
    assert halved[0].startswith("With the classic protocol, a record written during a restart waited up to 2.00 s")
    assert halved[-1] == (
        "KIP-848's gap, both heartbeating every 500 ms, was at most half the classic one (0.25 of it): "
        "the guide's pause shrank."
    )
    slower = rolling_restart_sentences(pd.DataFrame([row("classic", 0.5), row("consumer", 0.7)]))
    assert "no shorter than the classic one (1.40 of it)" in slower[-1]
