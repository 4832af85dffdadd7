"""Spark's own Kafka connector and the workbench's source, differentially: the same query over
the same topic returns the same rows, every column (key, value, topic, partition, offset,
timestamp, timestampType, headers), for each way of choosing partitions and offsets.

The topic is written once per module with record timestamps set by the producer, 10 ms
apart, so the timestamp options have exact answers; keys, values and headers include nulls.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from workbench import kafka
from workbench.kafka.admin import create_partitions
from workbench.stack import Stack
from workbench.streaming import Connector, kafka_source
from workbench.streaming.pipelines import stopping, write_memory

CONNECTORS: tuple[Connector, Connector] = ("kafka", "workbench")
PARTITIONS = 3
PER_PARTITION = 20
#: Record i of partition p has timestamp BASE_MS + (i * PARTITIONS + p) * STEP_MS.
STEP_MS = 10
PATIENCE_S = 120


@pytest.fixture(scope="module")
def written(stack: Stack) -> Iterator[tuple[str, int]]:
    """A topic of 3 x 20 records with known timestamps, keys, values and headers; and its base time."""
    name = f"parity-{uuid.uuid4().hex[:8]}"
    stack.create_topics({name: PARTITIONS})
    base = int(time.time() * 1000) - 3_600_000  # an hour ago: no clock question
    client = kafka.producer(stack.kafka_config("producer"))
    for i in range(PER_PARTITION):
        for p in range(PARTITIONS):
            n = i * PARTITIONS + p
            headers: list[tuple[str, str | bytes | None]] | None = (
                [("n", str(n).encode()), ("empty", None)] if n % 3 else None
            )
            client.produce(
                name,
                key=None if n % 5 == 0 else f"k{n}",
                value=None if n % 7 == 0 else f"v{n}",
                partition=p,
                timestamp=base + n * STEP_MS,
                headers=headers,
            )
    assert client.flush(30) == 0
    yield name, base
    kafka.delete_topics(stack.kafka_config("admin"), [name])


def _rows(spark: SparkSession, stack: Stack, connector: Connector, **options: Any) -> list[dict[str, Any]]:
    frame = kafka_source(spark, stack, connector=connector, streaming=False, includeHeaders=True, **options)
    rows = [row.asDict(recursive=True) for row in frame.collect()]
    return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["offset"]))


def _both(spark: SparkSession, stack: Stack, **options: Any) -> list[dict[str, Any]]:
    """The rows both connectors read with `options`, after asserting they are the same."""
    ours, theirs = (_rows(spark, stack, c, **options) for c in ("workbench", "kafka"))
    assert ours == theirs
    return theirs


def _offsets(rows: list[dict[str, Any]]) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for row in rows:
        found.setdefault(row["partition"], []).append(row["offset"])
    return found


def test_every_column_of_every_record(spark: SparkSession, stack: Stack, written: tuple[str, int]) -> None:
    name, base = written
    rows = _both(spark, stack, subscribe=name)
    assert len(rows) == PARTITIONS * PER_PARTITION
    first = rows[0]  # partition 0, offset 0: record 0, null key (0 % 5), null value (0 % 7), no headers
    assert (first["key"], first["value"], first["headers"], first["timestampType"]) == (None, None, None, 0)
    assert int(first["timestamp"].timestamp() * 1000) == base
    with_headers = next(r for r in rows if r["headers"])
    assert [h["key"] for h in with_headers["headers"]] == ["n", "empty"] and with_headers["headers"][1]["value"] is None


def test_subscribe_pattern_and_assign(spark: SparkSession, stack: Stack, written: tuple[str, int]) -> None:
    name, _ = written
    assert len(_both(spark, stack, subscribePattern=f"{name[:-2]}.*")) == PARTITIONS * PER_PARTITION
    assigned = _both(spark, stack, assign={name: [0, 2]})
    assert sorted(_offsets(assigned)) == [0, 2]


def test_starting_and_ending_offsets_as_json(spark: SparkSession, stack: Stack, written: tuple[str, int]) -> None:
    name, _ = written
    rows = _both(
        spark,
        stack,
        subscribe=name,
        startingOffsets={name: {"0": 2, "1": -2, "2": 5}},
        endingOffsets={name: {"0": 8, "1": -1, "2": 6}},
    )
    assert _offsets(rows) == {0: list(range(2, 8)), 1: list(range(PER_PARTITION)), 2: [5]}


def test_offsets_by_timestamp_per_partition_and_for_all(
    spark: SparkSession, stack: Stack, written: tuple[str, int]
) -> None:
    """A timestamp between two records starts at the later one; an ending timestamp past
    every record ends at the log's end."""
    name, base = written

    def at(i: int, p: int) -> int:  # the timestamp of record i of partition p
        return base + (i * PARTITIONS + p) * STEP_MS

    rows = _both(
        spark,
        stack,
        subscribe=name,
        startingOffsetsByTimestamp={name: {"0": at(3, 0), "1": at(3, 1) + 1, "2": 0}},
        endingOffsetsByTimestamp={name: {"0": at(10, 0), "1": at(10, 1) - 1, "2": at(99, 2)}},
    )
    assert _offsets(rows) == {0: list(range(3, 10)), 1: list(range(4, 10)), 2: list(range(PER_PARTITION))}

    everywhere = _both(spark, stack, subscribe=name, startingTimestamp=str(at(15, 0)), endingTimestamp=str(at(17, 0)))
    assert _offsets(everywhere) == {0: [15, 16], 1: [15, 16], 2: [15, 16]}


def test_a_starting_timestamp_past_every_record(spark: SparkSession, stack: Stack, written: tuple[str, int]) -> None:
    """Spark's default strategy fails such a query; `latest` starts those partitions at their end.
    A per-partition timestamp that leaves a partition out fails too; both say so in Spark's words."""
    name, base = written
    late = str(base + 3_600_000 * 2)
    assert (
        _both(spark, stack, subscribe=name, startingTimestamp=late, startingOffsetsByTimestampStrategy="latest") == []
    )
    for options, message in (
        ({"startingTimestamp": late}, "No offset matched from request of topic-partition"),
        (
            {"startingOffsetsByTimestamp": {name: {"0": base}}},
            "Partitions specified for Kafka timestamp based start offsets don't match what are assigned",
        ),
    ):
        for connector in CONNECTORS:
            # Spark's connector fails through py4j (an IllegalStateException) or PySpark, ours through PySpark.
            with pytest.raises((PySparkException, Py4JJavaError)) as caught:
                _rows(spark, stack, connector, subscribe=name, **options)
            assert message in " ".join(str(caught.value).split()), (connector, str(caught.value)[:500])


def test_min_partitions_splits_into_the_same_tasks(spark: SparkSession, stack: Stack, written: tuple[str, int]) -> None:
    name, _ = written
    assert len(_both(spark, stack, subscribe=name, minPartitions=7)) == PARTITIONS * PER_PARTITION
    tasks = {
        c: kafka_source(
            spark, stack, connector=c, streaming=False, subscribe=name, minPartitions=7
        ).rdd.getNumPartitions()
        for c in CONNECTORS
    }
    assert tasks["kafka"] == tasks["workbench"] == 6  # each 20-record range in round(20 / 60 x 7) = 2 parts


def _stream(
    spark: SparkSession, stack: Stack, connector: Connector, checkpoint: Path, trigger: dict[str, Any], **options: Any
) -> tuple[Any, str]:
    table = f"parity_{connector}_{uuid.uuid4().hex[:8]}"
    frame = kafka_source(spark, stack, connector=connector, **options).select("partition", "offset", "value")
    return write_memory(frame, table, checkpoint=checkpoint / table, trigger=trigger), table


def test_max_offsets_per_trigger_plans_the_same_batches(
    spark: SparkSession, stack: Stack, written: tuple[str, int], tmp_path: Path
) -> None:
    name, _ = written
    sizes = {}
    for connector in CONNECTORS:
        query, table = _stream(
            spark,
            stack,
            connector,
            tmp_path,
            {"availableNow": True},
            subscribe=name,
            startingOffsets="earliest",
            maxOffsetsPerTrigger=25,
        )
        with stopping(query):
            query.awaitTermination(PATIENCE_S)
        sizes[connector] = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        assert spark.table(table).count() == PARTITIONS * PER_PARTITION
    assert sizes["kafka"] == sizes["workbench"] and max(sizes["kafka"]) <= 25


def test_a_partition_added_mid_stream_is_read_from_its_start(
    spark: SparkSession, stack: Stack, topic: Callable[..., str], tmp_path: Path
) -> None:
    """Both queries run while the topic grows from 2 to 3 partitions; each reads every record
    of the new partition once, from offset 0, as it reads the old ones."""
    name = topic(partitions=2)
    producer = stack.kafka_config("producer")
    records = [(None, f"before-{i}") for i in range(40)]
    assert kafka.produce(producer, name, iter(records)).acknowledged == 40
    running = {
        c: _stream(
            spark,
            stack,
            c,
            tmp_path,
            {"processingTime": "200 milliseconds"},
            subscribe=name,
            startingOffsets="earliest",
        )
        for c in CONNECTORS
    }
    try:
        for connector, (query, table) in running.items():
            _wait(partial(_holds, spark, table, 40), query, f"{connector}: the first 40 rows")
        create_partitions(stack.kafka_config("admin"), name, 3)
        added = [(None, f"after-{i}") for i in range(30)]
        assert kafka.produce(producer, name, iter(added), partition=2).acknowledged == 30
        for connector, (query, table) in running.items():
            _wait(partial(_holds, spark, table, 70), query, f"{connector}: the new partition's rows")
        seen = {c: sorted(map(tuple, spark.table(t).collect())) for c, (_, t) in running.items()}
    finally:
        for query, _ in running.values():
            query.stop()
    assert seen["kafka"] == seen["workbench"]
    assert [(o, v) for p, o, v in seen["kafka"] if p == 2] == [(i, f"after-{i}".encode()) for i in range(30)]


def _holds(spark: SparkSession, table: str, rows: int) -> bool:
    return spark.table(table).count() >= rows


def _wait(condition: Callable[[], bool], query: Any, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        if query.exception() is not None:
            raise AssertionError(f"{what}: the query failed: {query.exception()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}; last progress: {query.lastProgress}")
        time.sleep(0.2)
