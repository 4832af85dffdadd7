"""The acknowledgements call's verdicts, per partition, when librdkafka or the broker
does not take everything: a client is told "applied" only for what was applied.

librdkafka's part is played by a stand-in with its two answers that matter here: an
offset it no longer holds is refused at once (`RD_KAFKA_RESP_ERR__STATE`), and the
commit answers per partition. Kafka itself is met by tests/integration/test_restproxy_share.py.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from workbench.restproxy.share_instances import ACK_TYPES, ShareInstance, acknowledge

pytestmark = pytest.mark.unit


class HeldRecords:
    """What a share consumer holds (`held`), the types it was given, and what its commit
    answers (every partition acknowledged, unless named in `silent`)."""

    def __init__(self, held: set[tuple[str, int, int]], silent: frozenset[tuple[str, int]] = frozenset()) -> None:
        self.held = held
        self.silent = silent
        self.types: dict[tuple[str, int, int], Any] = {}

    def acknowledge_offset(self, topic: str, partition: int, offset: int, kind: Any) -> None:
        if (topic, partition, offset) not in self.held:
            raise KafkaException(KafkaError(KafkaError._STATE))
        self.types[(topic, partition, offset)] = kind

    def commit_sync(self, timeout: float) -> dict[TopicPartition, KafkaException | None]:
        partitions = {(t, p) for t, p, _ in self.types} - self.silent
        self.held -= set(self.types)
        return {TopicPartition(t, p): None for t, p in partitions}


def _instance(consumer: HeldRecords, acks: list[tuple[str, int, int, str]]) -> ShareInstance:
    instance = ShareInstance(group="g", name="i", format="binary", expires=time.monotonic() + 60, consumer=consumer)  # type: ignore[arg-type]
    instance.outstanding = {(t, p, o): 1 for t, p, o, _ in acks}
    return instance


def _errors(rows: list[dict[str, Any]]) -> dict[tuple[str, int], int | None]:
    return {(row["topic"], row["partition"]): row["error_code"] for row in rows}


def test_every_record_held_is_applied_and_each_partition_answers_once() -> None:
    acks = [("t", 0, 5, "accept"), ("t", 0, 6, "reject"), ("t", 1, 9, "release")]
    consumer = HeldRecords({("t", 0, 5), ("t", 0, 6), ("t", 1, 9)})
    rows = acknowledge(_instance(consumer, acks), acks)
    assert _errors(rows) == {("t", 0): None, ("t", 1): None}
    assert consumer.types == {
        ("t", 0, 5): ACK_TYPES["accept"],
        ("t", 0, 6): ACK_TYPES["reject"],
        ("t", 1, 9): ACK_TYPES["release"],
    }


def test_a_partition_librdkafka_dropped_in_part_is_refused_whole_and_its_records_released() -> None:
    """Offset 6 is no longer held (its partition was fetched again, or moved): none of
    partition 0's acknowledgements may count, so 5 is released, not accepted, and comes
    again with 6. Partition 1 is untouched."""
    acks = [("t", 0, 5, "accept"), ("t", 0, 6, "accept"), ("t", 1, 9, "accept")]
    consumer = HeldRecords({("t", 0, 5), ("t", 1, 9)})
    rows = acknowledge(_instance(consumer, acks), acks)
    assert _errors(rows) == {("t", 0): 50002, ("t", 1): None}
    assert "no longer holds 1 of them" in rows[0]["error"]
    assert consumer.types == {("t", 0, 5): ACK_TYPES["release"], ("t", 1, 9): ACK_TYPES["accept"]}


def test_a_partition_librdkafka_dropped_whole_is_refused_not_left_out() -> None:
    """Before, no acknowledgement of it reached the commit, the answer had no row for it,
    and a client read the missing row as applied: its records came again, accepted twice."""
    acks = [("t", 2, 100, "accept"), ("t", 2, 101, "accept")]
    rows = acknowledge(_instance(HeldRecords(set()), acks), acks)
    assert _errors(rows) == {("t", 2): 50002}


def test_a_partition_the_commit_does_not_answer_for_is_refused() -> None:
    acks = [("t", 0, 1, "accept"), ("t", 3, 1, "accept")]
    consumer = HeldRecords({("t", 0, 1), ("t", 3, 1)}, silent=frozenset({("t", 3)}))
    rows = acknowledge(_instance(consumer, acks), acks)
    assert _errors(rows) == {("t", 0): None, ("t", 3): 50002}
    assert "did not name this partition" in rows[1]["error"]
