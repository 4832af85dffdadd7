"""Replay: a group rewound to the beginning, to an offset or to a moment, and how fast it
reads the past again against reading along with the writes.

Kafka keeps records whatever has read them, so a group can read them again: the reason a
log, unlike a queue, can rebuild a table or re-run a job. There are two ways to rewind,
and the experiment `replay` takes the one each path has: natively, the group's committed
offsets are set while no member runs (Kafka's OffsetCommit through the admin client, what
`kafka-consumer-groups.sh --reset-offsets --to-earliest | --to-offset | --to-datetime`
does) and a member resumes there; through the REST proxy, the v2 consumer instance seeks
(`POST …/positions/beginning`, `…/positions` with an offset or a timestamp). A moment is
turned into an offset by Kafka's offsets-for-times: the first record stamped at or after it.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from workbench.errors import KafkaError
from workbench.retention.errors import RetentionError
from workbench.retention.reading import PartitionReader, Read
from workbench.retention.writing import proxy_for

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["REWIND_TARGETS", "replay"]

#: Where `replay` rewinds to: the first record kept, the middle offset, the middle record's timestamp.
REWIND_TARGETS = ("beginning", "offset", "timestamp")


def replay(
    stack: Stack,
    *,
    to: str = "beginning",
    through: str = "native",
    records: int = 20_000,
    record_bytes: int = 100,
    topic_prefix: str = "wb-replay",
) -> dict[str, Any]:
    """Write `records` records while a group reads along, rewind the group `to` a target,
    and read from there to the end again (the registered experiment `replay`).

    Returns:
        A contract row whose `msg_s` is the replay's records/s (from the rewind to the last
        record), with `live_msg_s` (reading along with the writes, from the first write),
        `expected_offset` (where the target is, from the records read live), `landed_offset`
        (the first record the replay read), `replayed` and `duplicates` (within the replay).

    Raises:
        RetentionError: an unknown target or path, or a size out of range.
        KafkaError: a record was not acknowledged, or the rewind was refused.
    """
    if to not in REWIND_TARGETS:
        raise RetentionError(f"to must be one of {list(REWIND_TARGETS)}, got {to!r}")
    if not 2 <= records <= 10_000_000 or not 1 <= record_bytes <= 1_000_000:
        raise RetentionError(
            f"records must be from 2 to 10,000,000 and record_bytes from 1 to 1,000,000, "
            f"got {records} and {record_bytes}"
        )
    topic, group = f"{topic_prefix}-{uuid.uuid4().hex[:10]}", f"{topic_prefix}-group-{uuid.uuid4().hex[:8]}"
    with stack.temporary_topics({topic: 1}), proxy_for(stack, through) as proxy:
        reader = PartitionReader(stack, topic, group, reset="earliest", proxy=proxy).__enter__()
        try:
            live, live_s = _read_along(stack, reader, topic, records, record_bytes)
            target, expected = _target(to, live, records)
            started = time.perf_counter()
            if proxy is None:
                reader.__exit__(None, None, None)
                _rewind_group(stack, topic, group, to, target)
                reader = PartitionReader(stack, topic, group, reset="earliest").__enter__()
            else:
                _seek(reader, to, target)
            again = reader.read(records - expected, timeout_s=120, idle_s=5.0)  # offsets 0 to records - 1
            replay_s = time.perf_counter() - started
        finally:
            reader.__exit__(None, None, None)
    offsets = [o for o, _ in again]
    params = {"to": to, "through": through, "records": records, "record_bytes": record_bytes}
    return _row(stack, params, offsets, expected, replay_s, len(live) / live_s if live_s > 0 else float("nan"))


def _read_along(
    stack: Stack, reader: PartitionReader, topic: str, records: int, record_bytes: int
) -> tuple[list[Read], float]:
    """The group reads while a native producer writes `records` records: what it read, and
    the seconds from the first write to the last record read (a live reader's pace is
    the writer's)."""
    from workbench.kafka.clients import produce

    failure: list[Exception] = []

    def write() -> None:
        try:
            produce(
                stack.kafka_config("producer"),
                topic,
                ((None, b"r" * record_bytes) for _ in range(records)),
                partition=0,
            )
        except Exception as exc:  # reported below, in the caller's thread
            failure.append(exc)

    writer = threading.Thread(target=write, name=f"replay-writer-{topic}")
    started = time.perf_counter()
    writer.start()
    live = reader.read(records, timeout_s=120, idle_s=10.0)
    seconds = time.perf_counter() - started
    writer.join()
    if failure:
        raise failure[0]
    if len(live) != records:
        raise KafkaError(
            f"the group read {len(live)} of the {records} records written to {topic} while they were written"
        )
    reader.commit(live[-1][0] + 1)
    return live, seconds


def _target(to: str, live: list[Read], records: int) -> tuple[int, int]:
    """(the target as the rewind takes it, the offset it must land on), from the records read live."""
    middle = records // 2
    if to == "beginning":
        return 0, live[0][0]
    if to == "offset":
        return middle, middle
    stamp = live[middle][1]
    return stamp, next(offset for offset, ts in live if ts >= stamp)


def _rewind_group(stack: Stack, topic: str, group: str, to: str, target: int) -> None:
    """Set the group's committed offset while no member runs (as `--reset-offsets` does)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition

    from workbench.kafka.admin import admin_client
    from workbench.kafka.offsets import OffsetReader

    with OffsetReader(stack.kafka_config("admin")) as offsets:
        if to == "beginning":
            offset = offsets.reported([(topic, 0)], "earliest")[(topic, 0)]
        elif to == "timestamp":
            found = offsets.by_timestamp({(topic, 0): target})[(topic, 0)]
            offset = found if found is not None else offsets.ends([(topic, 0)])[(topic, 0)]
        else:
            offset = target
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, offset)])
    try:
        with admin_client(stack.kafka_config("admin")) as admin:
            admin.alter_consumer_group_offsets([request], request_timeout=15)[group].result()
    except KafkaException as exc:
        raise KafkaError(f"cannot rewind group {group} on {topic}-0 to {offset}: {exc.args[0].str()}") from None


def _seek(reader: PartitionReader, to: str, target: int) -> None:
    if to == "beginning":
        reader.seek_to_beginning()
    elif to == "timestamp":
        reader.seek_to_time(target)
    else:
        reader.seek(target)


def _row(
    stack: Stack, params: dict[str, Any], offsets: list[int], expected: int, seconds: float, live_msg_s: float
) -> dict[str, Any]:
    from workbench.measure.contract import NOT_MEASURED, result_row

    landed = offsets[0] if offsets else None
    return result_row(
        stack,
        experiment="replay",
        params=params,
        records=len(offsets),
        payload_bytes=len(offsets) * int(params["record_bytes"]),
        seconds=seconds,
        extra={
            "live_msg_s": live_msg_s,
            "expected_offset": expected,
            "landed_offset": landed if landed is not None else NOT_MEASURED,
            "landed_right": landed == expected,
            "replayed": len(offsets),
            "duplicates": len(offsets) - len(set(offsets)),
        },
    )
