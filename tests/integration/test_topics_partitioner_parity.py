"""partition_for agrees with where confluent-kafka really puts keyed records on the broker.

For each librdkafka `partitioner` setting, keyed records are produced to a fresh topic
with an odd partition count (so hashes that differ only by a factor of two would
disagree), read back, and each record's partition is compared with the prediction.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from workbench import kafka
from workbench.stack import Stack
from workbench.topics import PARTITIONERS, partition_for

HASHING = [p for p in PARTITIONERS if p != "random"]
KEYS = [f"device-{i}".encode() for i in range(300)] + [b"\x00\xff binary \xfe", "ünïcode-clé".encode()]


@pytest.mark.parametrize("partitioner", HASHING)
def test_every_keyed_record_lands_where_partition_for_says(
    stack: Stack, topic: Callable[..., str], partitioner: str
) -> None:
    name = topic(partitions=7)
    result = kafka.produce(
        stack.kafka_config("producer"), name, ((k, b"v") for k in KEYS), settings={"partitioner": partitioner}
    )
    assert (result.acknowledged, result.failed) == (len(KEYS), 0)

    landed = {r.key: r.partition for r in kafka.read_records(stack.kafka_config("consumer"), name)}
    assert len(landed) == len(KEYS)
    predicted = {k: partition_for(k, 7, partitioner) for k in landed}
    assert {k: p for k, p in landed.items() if p != predicted[k]} == {}
    assert len(set(landed.values())) == 7  # the keys reach every partition


@pytest.mark.parametrize("partitioner", ["murmur2", "consistent", "fnv1a"])
def test_an_empty_key_is_hashed_by_the_non_random_partitioners(
    stack: Stack, topic: Callable[..., str], partitioner: str
) -> None:
    name = topic(partitions=7)
    kafka.produce(stack.kafka_config("producer"), name, [(b"", b"v")] * 20, settings={"partitioner": partitioner})
    partitions = {r.partition for r in kafka.read_records(stack.kafka_config("consumer"), name)}
    assert partitions == {partition_for(b"", 7, partitioner)}
