"""Both Kafka sources, Spark's own connector and the workbench's, against the embedded broker
and a real Spark: exact counts. A test taking `connector` runs once with each, with the same
assertions: where they differ, one of them is wrong."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from workbench import kafka
from workbench.stack import Stack
from workbench.streaming import FORMAT_NAME, KAFKA_FORMAT, Connector, KafkaOptionError, kafka_source, source_options
from workbench.streaming.offsets import to_json
from workbench.streaming.pipelines import stopping, write_memory, write_parquet
from workbench.streaming.progress import offsets_behind

#: Upper bound on waiting for a running query to reach a state; a hang fails, never blocks.
PATIENCE_S = 120


def _produce(stack: Stack, topic: str, count: int, start: int = 0) -> None:
    result = kafka.produce(
        stack.kafka_config("producer"), topic, ((f"k{i}", f"v{i}") for i in range(start, start + count))
    )
    assert result.acknowledged == count


def _all_offsets(stack: Stack, topic: str) -> set[tuple[int, int]]:
    ends = kafka.end_offsets(stack.kafka_config("admin"), topic)
    return {(p, o) for (_, p), end in ends.items() for o in range(end)}


def _wait_for(condition: Callable[[], bool], what: str, query: StreamingQuery) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        if query.exception() is not None:
            raise AssertionError(f"query failed while waiting for {what}: {query.exception()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}; last progress: {query.lastProgress}")
        time.sleep(0.2)


def test_available_now_reads_every_record_exactly_once(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str], checkpoint: Path
) -> None:
    name = topic(partitions=3)
    before_ms = int(time.time() * 1000) - 1_000  # the producer's and this clock may differ by a tick
    _produce(stack, name, 6_000)
    after_ms = int(time.time() * 1000) + 1_000
    frame = kafka_source(spark, stack, connector=connector, subscribe=name, startingOffsets="earliest")
    assert frame.kafka_connector == connector

    with stopping(write_memory(frame, "available_now", checkpoint=checkpoint)) as query:
        query.awaitTermination()
    table = spark.table("available_now")
    rows = table.select("key", "value", "partition", "offset", "timestampType").collect()
    bounds = table.selectExpr("unix_millis(min(timestamp))", "unix_millis(max(timestamp))").first()
    assert bounds is not None
    first_ms, last_ms = bounds

    assert len(rows) == 6_000
    assert {(r.partition, r.offset) for r in rows} == _all_offsets(stack, name)
    assert {r.value for r in rows} == {f"v{i}".encode() for i in range(6_000)}
    assert {r.timestampType for r in rows} == {0}  # CreateTime, in Kafka's Java numbering
    assert before_ms <= first_ms <= last_ms <= after_ms  # the record timestamps the producer set
    assert sum(p["numInputRows"] for p in query.recentProgress) == 6_000


def test_restart_from_checkpoint_neither_skips_nor_repeats(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str], tmp_path: Path
) -> None:
    name = topic(partitions=2)
    _produce(stack, name, 3_000)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    frame = kafka_source(
        spark, stack, connector=connector, subscribe=name, startingOffsets="earliest", maxOffsetsPerTrigger=500
    )
    columns = frame.select("partition", "offset", "value")

    # Six batches of 500 are due; stop after two have committed: mid-stream.
    with stopping(write_parquet(columns, output, checkpoint, trigger={"processingTime": "1 second"})) as first:
        _wait_for(lambda: len(first.recentProgress) >= 2, "two committed batches", first)
    landed = spark.read.parquet(str(output)).count()
    assert 0 < landed < 3_000

    _produce(stack, name, 1_000, start=3_000)
    with stopping(write_parquet(columns, output, checkpoint, trigger={"availableNow": True})) as second:
        second.awaitTermination()

    result = spark.read.parquet(str(output))
    assert result.count() == 4_000
    assert result.select("partition", "offset").distinct().count() == 4_000
    assert {(r.partition, r.offset) for r in result.collect()} == _all_offsets(stack, name)


def test_max_offsets_per_trigger_bounds_each_batch(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str], checkpoint: Path
) -> None:
    name = topic(partitions=2)
    for partition in (0, 1):
        records = ((None, f"v{partition}-{i}") for i in range(1_000))
        assert kafka.produce(stack.kafka_config("producer"), name, records, partition=partition).acknowledged == 1_000
    frame = kafka_source(
        spark, stack, connector=connector, subscribe=name, startingOffsets="earliest", maxOffsetsPerTrigger=300
    )

    with stopping(write_memory(frame, "bounded", checkpoint=checkpoint)) as query:
        query.awaitTermination()
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]

    assert sum(sizes) == spark.table("bounded").count() == 2_000
    assert max(sizes) <= 300
    assert len(sizes) == 7  # 1,000 per partition, 150 per partition per batch: 6 x 300 + 200


def test_subscribe_pattern_picks_up_a_topic_created_after_the_start(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str], checkpoint: Path
) -> None:
    prefix = f"pattern{time.monotonic_ns() % 1_000_000}"
    first = topic(partitions=2, prefix=prefix)
    _produce(stack, first, 100)
    frame = kafka_source(spark, stack, connector=connector, subscribePattern=f"{prefix}-.*", startingOffsets="earliest")
    table = "by_pattern"

    def rows() -> int:
        return spark.table(table).count()

    trigger = {"processingTime": "500 milliseconds"}
    with stopping(write_memory(frame, table, checkpoint=checkpoint, trigger=trigger)) as query:
        _wait_for(lambda: rows() == 100, "the first topic's 100 rows", query)
        second = topic(partitions=1, prefix=prefix)
        _produce(stack, second, 50)
        _wait_for(lambda: rows() == 150, "the new topic's 50 rows", query)

    counts = {r["topic"]: r["count"] for r in spark.table(table).groupBy("topic").count().collect()}
    assert counts == {first: 100, second: 50}


def test_batch_read_honours_offsets_json_and_min_partitions(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str]
) -> None:
    name = topic(partitions=2)
    _produce(stack, name, 1_000)
    ends = kafka.end_offsets(stack.kafka_config("admin"), name)

    everything = kafka_source(spark, stack, connector=connector, streaming=False, subscribe=name, minPartitions=6)
    assert everything.count() == 1_000
    assert everything.rdd.getNumPartitions() == 6

    window = kafka_source(
        spark,
        stack,
        connector=connector,
        streaming=False,
        subscribe=name,
        startingOffsets={name: {"0": 10, "1": -2}},
        endingOffsets={name: {"0": 20, "1": -1}},
    )
    assert window.count() == 10 + ends[(name, 1)]


def test_headers_round_trip_and_are_null_when_absent(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str]
) -> None:
    name = topic(partitions=1)
    client = kafka.producer(stack.kafka_config("producer"))
    client.produce(name, value=b"with", headers=[("source", b"sensor"), ("empty", None)])
    client.produce(name, value=b"without")
    assert client.flush(30) == 0

    frame = kafka_source(spark, stack, connector=connector, streaming=False, subscribe=name, includeHeaders=True)
    assert frame.schema["headers"].dataType.simpleString() == "array<struct<key:string,value:binary>>"
    rows = {r.value: r.headers for r in frame.collect()}
    assert [(h.key, h.value) for h in rows[b"with"]] == [("source", b"sensor"), ("empty", None)]
    assert rows[b"without"] is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "One of the following options must be specified for Kafka source"),
        ({"subscribe": "a", "assign": '{"a":[0]}'}, "Only one of the following options can be specified"),
        ({"subscribe": " , "}, "No topics to subscribe to"),
        ({"assign": "a:0"}, "No topicpartitions to assign"),
        ({"subscribe": "a", "startingOffsets": '{"a": {"0": 1'}, "Expected 'earliest', 'latest' or e.g."),
        ({"subscribe": "a", "kafka.auto.offset.reset": "earliest"}, "'auto.offset.reset' is not supported"),
        ({"subscribe": "a", "endingOffsets": "latest"}, "ending offset not valid in streaming queries"),
        ({"subscribe": "a", "minPartitions": "0"}, "must be a positive integer"),
    ],
)
def test_bad_options_raise_clear_errors(
    spark: SparkSession, stack: Stack, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(KafkaOptionError, match=message):
        kafka_source(spark, stack, **options)


def test_bad_options_fail_clearly_through_spark_itself(spark: SparkSession, stack: Stack) -> None:
    """Without `kafka_source`'s own check, Spark reports the source's message."""
    options = source_options(stack, subscribe="a", subscribePattern="a.*")
    with pytest.raises(PySparkException, match="Only one of the following options can be specified"):
        spark.readStream.format(FORMAT_NAME).options(**options).load()


def test_starting_offsets_must_name_every_partition(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str], checkpoint: Path
) -> None:
    name = topic(partitions=2)
    frame = kafka_source(spark, stack, connector=connector, subscribe=name, startingOffsets={name: {"0": 0}})
    query = write_memory(frame, "partial_offsets", checkpoint=checkpoint)
    with pytest.raises(PySparkException, match="you must specify all TopicPartitions"):
        query.awaitTermination()


def test_the_connector_follows_the_profile_and_says_why(spark: SparkSession, stack: Stack) -> None:
    from workbench.config import SparkSettings
    from workbench.streaming import choose_connector

    def profile(connector: str):  # type: ignore[no-untyped-def]
        return stack.profile.model_copy(update={"spark": SparkSettings(connector=connector)})

    assert choose_connector(spark, profile("workbench"))[0] == FORMAT_NAME
    fmt, reason = choose_connector(spark, profile("auto"))  # the session was started with the connector
    assert fmt == KAFKA_FORMAT and "found on the classpath" in reason
    assert choose_connector(spark, profile("kafka"))[0] == KAFKA_FORMAT
    assert choose_connector(spark, profile("kafka"), "workbench")[0] == FORMAT_NAME  # a call's choice wins


def test_one_consumer_reads_several_ranges_exactly(stack: Stack, topic: Callable[..., str]) -> None:
    """A small micro-batch is one task reading all its ranges through one consumer: each
    partition's records come out exactly `[start, end)`, in order, however the fetches
    interleave, also where the log goes on past a range's end or a range is empty."""
    from workbench.streaming.offsets import OffsetRange
    from workbench.streaming.options import parse_options
    from workbench.streaming.range_reader import read_ranges
    from workbench.streaming.source import kafka_schema

    name = topic(partitions=3)
    for partition in (0, 1, 2):
        records = ((None, f"p{partition}-{i}") for i in range(400))
        assert kafka.produce(stack.kafka_config("producer"), name, records, partition=partition).acknowledged == 400
    ranges = [OffsetRange(name, 0, 0, 400), OffsetRange(name, 1, 123, 301), OffsetRange(name, 2, 50, 50)]
    options = parse_options(source_options(stack, subscribe=name), streaming=True)

    batches = list(read_ranges(options, ranges, kafka_schema()))
    got: dict[int, list[tuple[int, bytes]]] = {}
    for batch in batches:
        (partition,) = set(batch.column("partition").to_pylist())
        pairs = zip(batch.column("offset").to_pylist(), batch.column("value").to_pylist(), strict=True)
        got.setdefault(partition, []).extend(pairs)

    assert got == {
        0: [(i, f"p0-{i}".encode()) for i in range(400)],
        1: [(i, f"p1-{i}".encode()) for i in range(123, 301)],
    }


def test_the_reader_alone_and_the_plain_consumer_read_every_record_once(
    stack: Stack, topic: Callable[..., str]
) -> None:
    """The two reads the Spark source is measured against, on uneven partitions (one empty)."""
    from workbench.streaming.ingestion import consumer_ceiling, reader_alone

    name = topic(partitions=3)
    conf = stack.kafka_config("producer")
    for partition, count in {0: 12_345, 1: 7}.items():
        kafka.produce(conf, name, ((None, b"x" * 20) for _ in range(count)), partition=partition)
    assert reader_alone(stack, name)["records"] == 12_352
    assert consumer_ceiling(stack, name, pause_gc=True)["records"] == 12_352


def _has_rows(spark: SparkSession, table: str, count: int) -> bool:
    return spark.table(table).count() >= count


def test_queries_on_a_topic_deleted_and_recreated_each_read_it_exactly(
    spark: SparkSession, connector: Connector, stack: Stack, tmp_path: Path
) -> None:
    """Small live batches (one task, one consumer for all partitions) under a processing-time
    trigger, twice over a topic deleted and made again under the same name: every record of
    each incarnation once, none of the old one, and no Python worker lost to the deletion."""
    name = f"test-recreated-{time.monotonic_ns() % 10**9}"
    admin = stack.kafka_config("admin")
    try:
        for run, count in enumerate((900, 500)):
            stack.create_topics({name: 3})
            frame = kafka_source(spark, stack, connector=connector, subscribe=name, startingOffsets="earliest")
            table = f"recreated_{run}"
            trigger = {"processingTime": "0 seconds"}
            with stopping(write_memory(frame, table, checkpoint=tmp_path / table, trigger=trigger)) as query:
                for start in range(0, count, 100):  # in steps, so that batches stay small and live
                    _produce(stack, name, 100, start=start)
                _wait_for(partial(_has_rows, spark, table, count), f"{count} rows", query)
            rows = spark.table(table).select("partition", "offset", "value").collect()
            assert len(rows) == count
            assert {(r.partition, r.offset) for r in rows} == _all_offsets(stack, name)
            assert {r.value for r in rows} == {f"v{i}".encode() for i in range(count)}
            kafka.delete_topics(admin, [name])
            time.sleep(1)  # long enough for a consumer that knew the topic to crash its process
    finally:
        kafka.delete_topics(admin, [name])


def test_latest_on_a_live_topic_starts_once_and_reads_on_from_there(
    spark: SparkSession, connector: Connector, stack: Stack, topic: Callable[..., str], checkpoint: Path
) -> None:
    """`startingOffsets=latest` (the streaming default) while a producer writes: the query
    starts where `latest` was when it began and reads every record after it, once. Spark asks
    for the initial offsets twice; answering the second time from a log that had grown
    planned the first batch backwards, a false data-loss error (found by measuring)."""
    name = topic(partitions=2)
    admin = stack.kafka_config("admin")
    _produce(stack, name, 500)
    before = kafka.end_offsets(admin, name)

    stop = threading.Event()

    def produce_live() -> None:  # 25 records every ~25 ms, until the query has read some
        for start in range(500, 100_000, 25):
            _produce(stack, name, 25, start=start)
            if stop.wait(0.025):
                return

    writer = threading.Thread(target=produce_live, daemon=True)
    writer.start()  # before the query: its start-up happens while the log grows
    frame = kafka_source(spark, stack, connector=connector, subscribe=name, startingOffsets="latest").select(
        "partition", "offset"
    )
    trigger = {"processingTime": "100 milliseconds"}
    with stopping(write_memory(frame, "live_latest", checkpoint=checkpoint, trigger=trigger)) as query:
        try:
            _wait_for(partial(_has_rows, spark, "live_latest", 100), "100 live rows", query)
        finally:
            stop.set()
            writer.join(PATIENCE_S)
        ends = kafka.end_offsets(admin, name)
        _wait_for(partial(_read_up_to, query, ends), "the query to read up to the log's end", query)
    rows = spark.table("live_latest").collect()
    seen = {(r.partition, r.offset) for r in rows}
    assert len(seen) == len(rows)  # nothing twice
    starts = {p: min((o for q, o in seen if q == p), default=end) for (_, p), end in ends.items()}
    assert all(starts[p] >= before[(name, p)] for p in starts)  # nothing from before the query began
    assert seen == {(p, o) for (_, p), end in ends.items() for o in range(starts[p], end)}  # from there on, no gap
    assert len(seen) > 0


def _read_up_to(query: StreamingQuery, ends: dict[tuple[str, int], int]) -> bool:
    """Whether the query's last batch ended at `ends` (the log's end once the writer stopped)."""
    progress = query.lastProgress
    if not progress or not progress["sources"]:
        return False
    reached = offsets_behind(progress["sources"][0]["endOffset"], to_json(ends))
    return reached == 0
