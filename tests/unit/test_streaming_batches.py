"""How the Kafka source plans a micro-batch into tasks and turns one `consume()` batch into Arrow."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
from confluent_kafka import Message
from pyspark.sql.pandas.types import to_arrow_schema

from workbench.streaming.offsets import OffsetRange
from workbench.streaming.options import parse_options
from workbench.streaming.range_reader import _to_batch
from workbench.streaming.source import ONE_TASK_BELOW, KafkaStreamReader, kafka_schema

RANGE = OffsetRange("t", 3, 10, 20)


def _message(
    offset: int, key: bytes | None = None, kind: int = 1, headers: list[tuple[str, str | bytes | None]] | None = None
) -> Message:
    return Message(
        topic="t",
        partition=3,
        offset=offset,
        key=key,
        value=b"v%d" % offset,
        timestamp=(kind, 1_700_000_000_000 + offset),
        headers=headers,
    )


def _batch(messages: list[Message], headers: bool = False) -> pa.RecordBatch:
    schema = to_arrow_schema(kafka_schema(headers), timezone="UTC")
    batch = _to_batch(messages, RANGE, schema, headers)
    assert batch.schema.equals(schema)  # PySpark 4.3 refuses any other Arrow schema
    return batch


def test_every_column_holds_each_records_value() -> None:
    rows = _batch([_message(o, key=b"k%d" % o) for o in (10, 11, 12)]).to_pylist()

    assert [r["key"] for r in rows] == [b"k10", b"k11", b"k12"]
    assert [r["value"] for r in rows] == [b"v10", b"v11", b"v12"]
    assert {(r["topic"], r["partition"]) for r in rows} == {("t", 3)}
    assert [r["offset"] for r in rows] == [10, 11, 12]
    assert rows[0]["timestamp"] == datetime.fromtimestamp(1_700_000_000.010, tz=UTC)
    assert {r["timestampType"] for r in rows} == {0}  # librdkafka's CreateTime (1) is Java's 0


def test_keys_are_null_where_records_have_none_whether_all_or_some() -> None:
    assert _batch([_message(10), _message(11)]).column("key").to_pylist() == [None, None]
    assert _batch([_message(10), _message(11, key=b"k")]).column("key").to_pylist() == [None, b"k"]


def test_timestamp_types_are_renumbered_per_record_when_they_differ() -> None:
    kinds = _batch([_message(10, kind=0), _message(11, kind=1), _message(12, kind=2)]).column("timestampType")

    assert kinds.to_pylist() == [-1, 0, 1]


def test_offsets_with_gaps_are_taken_from_each_record() -> None:
    # Compaction or transaction markers leave holes: the column must not assume a run.
    assert _batch([_message(10), _message(13), _message(14)]).column("offset").to_pylist() == [10, 13, 14]


def test_headers_are_null_without_any_and_keep_their_order_with_some() -> None:
    batch = _batch([_message(10), _message(11, headers=[("a", b"1"), ("b", b"2")])], headers=True)

    assert batch.column("headers").to_pylist() == [None, [{"key": "a", "value": b"1"}, {"key": "b", "value": b"2"}]]


def _planned(start: dict[str, int], end: dict[str, int], **options: str) -> list[tuple[OffsetRange, ...]]:
    parsed = parse_options({"kafka.bootstrap.servers": "host:9092", "subscribe": "t", **options}, streaming=True)
    reader = KafkaStreamReader(parsed, kafka_schema())
    return [p.ranges for p in reader.partitions({"t": start}, {"t": end})]


def test_a_small_batch_is_one_task_reading_every_range_of_it() -> None:
    assert _planned({"0": 0, "1": 5, "2": 9}, {"0": 100, "1": 5, "2": 300}) == [
        (OffsetRange("t", 0, 0, 100), OffsetRange("t", 2, 9, 300))
    ]


def test_a_large_batch_or_min_partitions_keeps_one_task_per_range() -> None:
    large = {"0": ONE_TASK_BELOW, "1": 1}
    assert _planned({"0": 0, "1": 0}, large) == [
        (OffsetRange("t", 0, 0, ONE_TASK_BELOW),),
        (OffsetRange("t", 1, 0, 1),),
    ]
    assert _planned({"0": 0, "1": 0}, {"0": 10, "1": 10}, minPartitions="2") == [
        (OffsetRange("t", 0, 0, 10),),
        (OffsetRange("t", 1, 0, 10),),
    ]
