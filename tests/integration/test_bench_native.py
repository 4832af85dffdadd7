"""Native load generators, the meter and sweeps against the real embedded broker.

Counts are asserted exactly; speed never is (it is what the generators measure).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from workbench import kafka, results
from workbench.bench import (
    BenchError,
    ThroughputMeter,
    native_consume,
    native_produce,
    sweep,
)
from workbench.stack import Stack


def _bench_topics(stack: Stack) -> list[str]:
    return [t for t in kafka.list_topics(stack.kafka_config("admin")) if t.startswith("bench-")]


def test_native_produce_row_counts_every_record_and_leaves_no_topic(stack: Stack) -> None:
    settings: dict[str, Any] = {"linger.ms": 5, "acks": "all"}
    row = native_produce(stack, records=5_000, record_bytes=200, partitions=2, **settings)
    assert (row["records"], row["acknowledged"], row["landed"], row["failed"]) == (5_000, 5_000, 5_000, 0)
    assert row["bytes"] == 1_000_000
    assert row["latency_p50_ms"] <= row["latency_p99_ms"] <= row["latency_max_ms"]
    assert row["broker_processes"] == 1 and row["broker_cpu_s"] >= 0 and row["broker_rss_peak_mb"] > 0
    assert row["params"] == "records,record_bytes,partitions,linger.ms,acks"
    assert row["run_id"] == results.current_run_id() and row["cpu_cores"] == os.cpu_count()
    assert _bench_topics(stack) == []


def test_compression_sends_fewer_bytes_on_the_wire(stack: Stack) -> None:
    none: dict[str, Any] = {"compression.type": "none", "linger.ms": 20}
    plain = native_produce(stack, records=5_000, record_bytes=500, **none)
    zstd = native_produce(stack, records=5_000, record_bytes=500, **{**none, "compression.type": "zstd"})
    assert plain["wire_bytes"] > plain["bytes"]  # framing on top of the values
    assert zstd["wire_bytes"] < plain["wire_bytes"] / 2
    assert zstd["landed"] == 5_000


def test_an_unknown_librdkafka_setting_is_a_one_line_bench_error(stack: Stack) -> None:
    typo: dict[str, Any] = {"linger.msec": 5}
    with pytest.raises(BenchError, match=r'No such configuration property: "linger\.msec"'):
        native_produce(stack, records=10, **typo)
    assert _bench_topics(stack) == []


def test_native_consume_reads_exactly_what_was_written_with_a_timeline(stack: Stack) -> None:
    timeline: list[tuple[float, int]] = []
    fetch: dict[str, Any] = {"fetch.min.bytes": 100_000, "fetch.wait.max.ms": 50}
    row = native_consume(
        stack,
        records=6_000,
        record_bytes=100,
        partitions=3,
        timeline=timeline,
        **fetch,
    )
    assert (row["records"], row["expected"]) == (6_000, 6_000)
    assert timeline[0] == (0.0, 0) and timeline[-1][1] == 6_000
    assert all(b[1] >= a[1] for a, b in pairwise(timeline))


def test_meter_sums_true_end_offsets_while_a_load_runs(stack: Stack, topic: Callable[..., str]) -> None:
    names = [topic(partitions=2), topic(partitions=1)]
    conf = stack.kafka_config("producer")
    seen: list[int] = []
    with ThroughputMeter(
        stack.kafka_config("admin"), names, interval=0.2, on_sample=lambda s: seen.append(s.total)
    ) as meter:
        for name in names:
            kafka.produce(conf, name, ((None, b"x" * 50) for _ in range(3_000)), settings={"linger.ms": 50})
    totals = [s.total for s in meter.samples]
    assert totals[0] == 0 and totals[-1] == 6_000 and seen == totals
    assert totals == sorted(totals)
    assert meter.frame().columns.tolist() == ["t", "total", "msg_s"]
    assert meter.mean_rate() > 0


def test_meter_iterates_samples_as_they_come(stack: Stack, topic: Callable[..., str]) -> None:
    name = topic()
    meter = ThroughputMeter(stack.kafka_config("admin"), name, interval=0.1)
    collected: list[Any] = []
    reader = threading.Thread(target=lambda: collected.extend(meter))
    meter.start()
    reader.start()
    kafka.produce(stack.kafka_config("producer"), name, ((None, b"v") for _ in range(100)))
    meter.stop()
    reader.join(timeout=10)
    assert collected == meter.samples and collected[-1].total == 100


def test_a_pattern_meter_counts_topics_created_while_it_runs(stack: Stack) -> None:
    prefix = f"meter-{uuid.uuid4().hex[:6]}"
    conf = stack.kafka_config("producer")
    meter = ThroughputMeter(stack.kafka_config("admin"), pattern=rf"^{prefix}-", interval=0.1)
    with stack.temporary_topics({f"{prefix}-a": 2}) as made, meter:  # topics deleted after the meter stops
        kafka.produce(conf, f"{prefix}-a", ((None, b"v") for _ in range(1_000)))
        made.create({f"{prefix}-b": 3})
        kafka.produce(conf, f"{prefix}-b", ((None, b"v") for _ in range(2_500)))
    assert meter.samples[0].total == 0 and meter.samples[-1].total == 3_500


def test_sweep_runs_every_point_repeatedly_records_them_and_cleans_up(stack: Stack) -> None:
    before = len(results.load("native_produce", profile=stack.profile))
    rows = sweep(
        "native_produce",
        {"linger.ms": [0, 20], "acks": [1, "all"]},
        repeat=2,
        stack=stack,
        fixed={"records": 1_000, "record_bytes": 50},
        progress=False,
    )
    assert len(rows) == 8
    assert sorted(rows.groupby("point").size().tolist()) == [2, 2, 2, 2]
    assert (rows["landed"] == 1_000).all()
    assert len(results.load("native_produce", profile=stack.profile)) == before + 8
    # By run id: the table's files are not read back in the order they were written.
    stored = results.load("native_produce", run_id=str(rows["run_id"].iloc[0]), profile=stack.profile)
    assert len(stored) == 8
    spread = results.spread(stored)
    assert len(spread) == 4 and (spread["n"] == 2).all()
    assert _bench_topics(stack) == []


def test_cli_bench_runs_a_point_and_prints_its_table(stack: Stack) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "workbench.cli",
            "bench",
            "native_produce",
            "--param",
            "records=2000",
            "--param",
            "linger.ms=5",
            "--repeat",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "native_produce: 2 run(s)" in result.stdout and "spread over the repeats" in result.stdout
    assert result.stdout.count("2,000") >= 2  # counts are printed whole, with separators


def test_meter_with_a_pattern_counts_topics_that_appear_while_it_runs(stack: Stack, topic: Callable[..., str]) -> None:
    conf = stack.kafka_config("producer")
    with ThroughputMeter(stack.kafka_config("admin"), pattern=r"^meterpat-", interval=0.2) as meter:
        first = topic(prefix="meterpat")
        kafka.produce(conf, first, ((None, b"v") for _ in range(1_000)))
        second = topic(prefix="meterpat")
        kafka.produce(conf, second, ((None, b"v") for _ in range(500)))
    assert meter.samples[-1].total == 1_500
    assert [s.total for s in meter.samples] == sorted(s.total for s in meter.samples)
