"""The native client's own speed: the ceiling every proxy and Spark figure is compared with."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

from workbench import kafka
from workbench.stack import Stack

__all__ = ["native_round_trip"]


def native_round_trip(
    stack: Stack,
    *,
    records: int = 100_000,
    partitions: int = 4,
    value_bytes: int = 100,
    producer_settings: dict[str, Any] | None = None,
    keep_topic: bool = False,
) -> dict[str, Any]:
    """Produce `records` to a fresh topic with one Python producer, then read them all back.

    The topic is created explicitly and deleted afterwards (the embedded broker keeps
    everything in memory). Reading back checks the promise the rest of the workbench
    relies on: every acknowledged record is in the log, once.

    Returns:
        One row: parameters, counts and msg/s, MB/s for each direction.
    """
    topic = f"bench-native-{uuid.uuid4().hex[:8]}"
    producer_conf = stack.kafka_config("producer")
    kafka.create_topic(producer_conf, topic, partitions)
    try:
        value = os.urandom(value_bytes // 2).hex().encode()[:value_bytes].ljust(value_bytes, b"0")
        keys = [f"device-{i:05d}".encode() for i in range(1000)]
        produced = kafka.produce(
            producer_conf,
            topic,
            ((keys[i % len(keys)], value) for i in range(records)),
            settings={"linger.ms": 5, **(producer_settings or {})},
        )
        started = time.perf_counter()
        seen = {(r.partition, r.offset) for r in kafka.read_records(stack.kafka_config("consumer"), topic)}
        read_seconds = time.perf_counter() - started
        ends = kafka.end_offsets(producer_conf, topic)
    finally:
        if not keep_topic:
            kafka.delete_topics(producer_conf, [topic])
    megabytes = records * value_bytes / 1e6
    return {
        "records": records,
        "partitions": partitions,
        "value_bytes": value_bytes,
        "acknowledged": produced.acknowledged,
        "failed": produced.failed,
        "read_back": len(seen),
        "end_offsets_total": sum(ends.values()),
        "produce_seconds": produced.seconds,
        "produce_msg_s": records / produced.seconds,
        "produce_mb_s": megabytes / produced.seconds,
        "consume_seconds": read_seconds,
        "consume_msg_s": len(seen) / read_seconds if read_seconds else float("nan"),
        "consume_mb_s": len(seen) * value_bytes / 1e6 / read_seconds if read_seconds else float("nan"),
    }
