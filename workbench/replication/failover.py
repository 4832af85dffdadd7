"""Consumer failover: a group that read part of a topic on cluster a moves to its copy on b.

MirrorMaker does not copy a group's offsets: it translates them. While it copies records it
writes **offset syncs** (an upstream offset and the downstream offset it landed at) each
time the two drift apart by `offset.lag.max` records or more, and its checkpoint connector
turns a group's committed offset on a into the downstream offset of the last sync at or
before it; with `sync.group.offsets.enabled` it commits that offset for the group on b.
A group that moves to b with its group id alone resumes there: never past a record it did
not read (nothing skipped), but up to about `offset.lag.max` records back per partition,
which it reads again.

The run models a group reading live: records carrying their sequence number are written to
a and copied to b; the group reads all of them on a, commits and stops; once b holds the
group's synced offsets, more records are written, and the same group id reads the copy on b
to the end. Every sequence number is then read once, read twice (re-read after the move)
or never (skipped: must be 0).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from confluent_kafka import Consumer, TopicPartition

from workbench import kafka
from workbench.errors import BenchError
from workbench.replication.lag import check_ranges
from workbench.replication.naming import remote_topic
from workbench.replication.numbered import numbered, seq_of, topic_total, wait_until
from workbench.replication.preflight import check_flow

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "FAILOVER_DEFAULTS",
    "FailoverRun",
    "OFFSET_LAG_MAX_DEFAULT",
    "SYNC_LIMIT_S",
    "consumer_failover",
    "consumer_failover_run",
]

#: The run's defaults: a notebook-sized topic, read half-way on a.
FAILOVER_DEFAULTS: dict[str, Any] = {"records": 20_000, "partitions": 3, "read_share": 0.5}
#: Seconds a run waits for the copy to be whole on b, and for b to hold the group's offsets.
SYNC_LIMIT_S = 60.0
#: MirrorMaker's own default for `offset.lag.max`.
OFFSET_LAG_MAX_DEFAULT = 100


@dataclass(frozen=True)
class FailoverRun:
    """A run's contract row, and per partition: the group's committed offset on a, the
    offset b holds for it, the records read on each side, re-read and skipped."""

    row: dict[str, Any]
    partitions: pd.DataFrame


def consumer_failover_run(
    stack: Stack,
    *,
    records: int = FAILOVER_DEFAULTS["records"],
    partitions: int = FAILOVER_DEFAULTS["partitions"],
    read_share: float = FAILOVER_DEFAULTS["read_share"],
    topic_prefix: str = "wb-geo-failover",
) -> FailoverRun:
    """Write `read_share` of `records` and read them on a with a group, move the group to b,
    write the rest and read them there.

    Raises:
        BenchError: a parameter out of range, the copy not whole on b or the group's offsets
            not synced to b within `SYNC_LIMIT_S` (the message says which and where to look).
        StackError: the profile has no second cluster.
    """
    check_ranges(
        ("records", records, 100, 1_000_000),
        ("partitions", partitions, 1, 64),
        ("read_share", read_share, 0, 1),
        whole=("records", "partitions"),
    )
    first = int(records * read_share)
    if not 0 < first < records:
        raise BenchError(
            f"read_share must leave records to read on a and on b; {read_share} of {records:,} leaves {first:,}"
        )
    source = f"{topic_prefix}-{uuid.uuid4().hex[:8]}"
    target, group = remote_topic(stack.profile, source), f"wb-failover-{uuid.uuid4().hex[:8]}"
    check_flow(stack, source, group=group)
    stack.create_topics({source: partitions})
    try:
        _write(stack, source, target, range(first))
        read_a, committed = _read_and_commit(stack.kafka_config("consumer"), source, group, first)
        began = time.monotonic()
        synced = _wait_synced(stack.peer_config("consumer"), target, group, sorted(committed))
        sync_s = time.monotonic() - began
        _write(stack, source, target, range(first, records))
        read_b = _read_rest(stack.peer_config("consumer"), target, group, records - first)
    finally:
        stack.delete_topics([source])
        stack.delete_topics([target], peer=True)
    table = _partitions(read_a, read_b, committed, synced)
    return FailoverRun(_row(stack, records, partitions, read_share, read_a, read_b, table, sync_s), table)


def consumer_failover(stack: Stack, *, topic_prefix: str = "wb-geo-failover", **params: Any) -> dict[str, Any]:
    """One failover run's row (the registered experiment `consumer_failover`). See `consumer_failover_run`."""
    return consumer_failover_run(stack, topic_prefix=topic_prefix, **params).row


def _write(stack: Stack, source: str, target: str, seqs: range) -> None:
    """Write records `seqs` to a and wait until b holds every record written so far."""
    kafka.produce(stack.kafka_config("producer"), source, ((None, numbered(i)) for i in seqs))
    what = f"copy of {source}'s first {seqs.stop:,} records on b"
    wait_until(lambda: topic_total(stack.peer_config("admin"), target) >= seqs.stop, what, SYNC_LIMIT_S)


def _read_and_commit(conf: dict[str, Any], topic: str, group: str, count: int) -> tuple[pd.DataFrame, dict[int, int]]:
    """Read exactly `count` records with `group`, commit what was read, close: (records, committed offsets)."""
    consumer = kafka.consumer(conf, group, {"auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    rows: list[tuple[int, int, int]] = []
    deadline = time.monotonic() + SYNC_LIMIT_S
    try:
        while len(rows) < count and time.monotonic() < deadline:
            for message in consumer.consume(min(1000, count - len(rows)), 0.5):
                if message.error() is None:
                    rows.append((seq_of(message.value()), message.partition() or 0, message.offset() or 0))
        positions: dict[int, int] = {}
        for _, partition, offset in rows:
            positions[partition] = max(positions.get(partition, 0), offset + 1)
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in positions.items()], asynchronous=False)
    finally:
        consumer.close()
    if len(rows) < count:
        raise BenchError(
            f"the group read {len(rows):,} of {count:,} records of {topic} on a within {SYNC_LIMIT_S:.0f} s"
        )
    return pd.DataFrame(rows, columns=["seq", "partition", "offset"]), positions


def _wait_synced(conf: dict[str, Any], topic: str, group: str, partitions: Sequence[int]) -> dict[int, int]:
    """The group's committed offsets on b for the copy, once each of `partitions` has one
    (MirrorMaker's sync). `partitions` are those the group committed on a: records written
    without a key may all have gone to one partition (librdkafka's sticky partitioner), and
    a partition the group read nothing of has no offset to sync."""
    probe = Consumer({**conf, "group.id": group, "enable.auto.commit": False})  # asks; never joins
    try:
        deadline = time.monotonic() + SYNC_LIMIT_S
        wanted = [TopicPartition(topic, p) for p in partitions]
        while True:
            found = {tp.partition: tp.offset for tp in probe.committed(wanted, timeout=10) if tp.offset >= 0}
            if len(found) == len(wanted):
                return found
            if time.monotonic() > deadline:
                raise BenchError(
                    f"cluster b holds no offsets of group {group} for {topic} after {SYNC_LIMIT_S:.0f} s: "
                    "is sync.group.offsets.enabled true in MirrorMaker's settings?"
                )
            time.sleep(0.2)
    finally:
        probe.close()


def _read_rest(conf: dict[str, Any], topic: str, group: str, at_least: int) -> pd.DataFrame:
    """The same group id, subscribed to the copy on b, reading from its synced offsets to the end."""
    ends = kafka.end_offsets(conf, topic)
    consumer = kafka.consumer(conf, group, {"auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    rows: list[tuple[int, int, int]] = []
    reached: dict[int, int] = {}
    deadline = time.monotonic() + SYNC_LIMIT_S
    try:
        while any(reached.get(p, -1) < end - 1 for (_, p), end in ends.items() if end) and time.monotonic() < deadline:
            for message in consumer.consume(1000, 0.5):
                if message.error() is None:
                    partition, offset = message.partition() or 0, message.offset() or 0
                    rows.append((seq_of(message.value()), partition, offset))
                    reached[partition] = max(reached.get(partition, -1), offset)
    finally:
        consumer.close()
    if len(rows) < at_least:
        raise BenchError(
            f"the group read {len(rows):,} records of {topic} on b, fewer than the {at_least:,} it had left"
        )
    return pd.DataFrame(rows, columns=["seq", "partition", "offset"])


def _partitions(
    read_a: pd.DataFrame, read_b: pd.DataFrame, committed: dict[int, int], synced: dict[int, int]
) -> pd.DataFrame:
    rows = []
    for partition in sorted(set(committed) | set(synced)):
        a = set(read_a.loc[read_a["partition"] == partition, "seq"])
        b = read_b.loc[read_b["partition"] == partition, "seq"]
        rows.append(
            {
                "partition": partition,
                "committed_on_a": committed.get(partition, 0),
                "synced_on_b": synced.get(partition, -1),
                "read_on_a": len(a),
                "read_on_b": len(b),
                "reread": len(a & set(b)),
            }
        )
    return pd.DataFrame(rows)


def _row(
    stack: Stack,
    records: int,
    partitions: int,
    read_share: float,
    read_a: pd.DataFrame,
    read_b: pd.DataFrame,
    table: pd.DataFrame,
    sync_s: float,
) -> dict[str, Any]:
    from workbench.measure.contract import result_row

    read = set(read_a["seq"]) | set(read_b["seq"])
    lag_max = int(stack.profile.replication.properties.get("offset.lag.max", OFFSET_LAG_MAX_DEFAULT))
    return result_row(
        stack,
        experiment="consumer_failover",
        params={"records": records, "partitions": partitions, "read_share": read_share},
        records=records,
        extra={
            "read_on_a": len(read_a),
            "read_on_b": len(read_b),
            "reread": int(table["reread"].sum()),
            "reread_max_partition": int(table["reread"].max()),
            "skipped": records - len(read),
            "twice_on_b": len(read_b) - read_b["seq"].nunique(),
            "offset_lag_max": lag_max,
            "sync_s": sync_s,
        },
    )
