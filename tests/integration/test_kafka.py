"""Native Kafka helpers against the real embedded broker: exact counts, true end offsets."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable

import pytest

from workbench import kafka
from workbench.errors import KafkaError
from workbench.stack import Stack


def test_every_produced_record_is_read_back_once_with_its_key_and_value(
    stack: Stack, topic: Callable[..., str]
) -> None:
    name = topic(partitions=4)
    sent = {f"key-{i}".encode(): f"value-{i}".encode() for i in range(20_000)}
    result = kafka.produce(stack.kafka_config("producer"), name, sent.items(), settings={"linger.ms": 20})
    assert (result.acknowledged, result.failed) == (20_000, 0)

    received = list(kafka.read_records(stack.kafka_config("consumer"), name))
    assert len(received) == 20_000
    assert len({(r.partition, r.offset) for r in received}) == 20_000
    assert {r.key: r.value for r in received} == sent
    assert {r.partition for r in received} == {0, 1, 2, 3}
    assert all(r.timestamp_type == 0 for r in received)  # CreateTime, in Kafka's numbering


def test_end_offsets_equal_the_records_produced_per_partition_after_batched_produce(
    stack: Stack, topic: Callable[..., str]
) -> None:
    name = topic(partitions=3)
    conf = stack.kafka_config("producer")
    per_partition = {0: 5_000, 1: 1_234, 2: 1}
    for partition, count in per_partition.items():
        records = ((None, b"x" * 100) for _ in range(count))
        kafka.produce(conf, name, records, partition=partition, settings={"linger.ms": 50, "batch.size": 1_000_000})

    ends = kafka.end_offsets(conf, name)
    assert ends == {(name, p): n for p, n in per_partition.items()}
    reported = kafka.reported_offsets(conf, list(ends), "latest")
    assert all(reported[p] <= ends[p] for p in ends)  # Tansu reports the last batch's base + 1
    assert kafka.total_records(conf, name) == sum(per_partition.values())


def test_a_timed_read_counts_every_record_of_uneven_partitions_and_of_none(
    stack: Stack, topic: Callable[..., str]
) -> None:
    """Not a multiple of its 10,000-record batches, one partition empty: it still ends at the end."""
    name = topic(partitions=3)
    conf = stack.kafka_config("producer")
    for partition, count in {0: 12_345, 1: 7}.items():
        kafka.produce(conf, name, ((None, b"x" * 50) for _ in range(count)), partition=partition)
    read = kafka.timed_read(stack.kafka_config("consumer"), name, pause_gc=True)
    assert read.records == 12_352 and read.seconds > 0
    assert kafka.timed_read(stack.kafka_config("consumer"), topic()).records == 0


def test_a_transactional_topic_is_read_to_its_end_past_the_commit_marker(
    stack: Stack, topic: Callable[..., str]
) -> None:
    """The last offset of a committed transaction is its marker, which no consumer receives
    (a replica MirrorMaker writes with exactly-once ends in one after every copy)."""
    from confluent_kafka import Producer

    name = topic(2)
    producer = Producer({**stack.kafka_config("producer"), "transactional.id": f"wb-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    for first in (0, 5):  # two transactions, each on both partitions: a marker after each part
        producer.begin_transaction()
        for i in range(first, first + 5):
            producer.produce(name, value=b"%d" % i, partition=i % 2)
        producer.commit_transaction(30)
    assert sum(kafka.end_offsets(stack.kafka_config(), name).values()) == 10 + 4, "ten records, four markers"
    read = sorted(int(r.value or b"-1") for r in kafka.read_records(stack.kafka_config("consumer"), name, timeout=20))
    assert read == list(range(10))


def test_end_offsets_of_an_empty_topic_are_zero(stack: Stack, topic: Callable[..., str]) -> None:
    name = topic(partitions=2)
    assert kafka.end_offsets(stack.kafka_config(), name) == {(name, 0): 0, (name, 1): 0}
    assert list(kafka.read_records(stack.kafka_config("consumer"), name)) == []


def test_one_offset_reader_follows_a_growing_log_and_a_topic_deleted_and_recreated(stack: Stack) -> None:
    """A stream's driver keeps one OffsetReader (one AdminClient) for every trigger: it must
    see every new record, and survive and answer right when its topic is deleted and made
    again under the same name (a kept consumer would crash the process on this broker)."""
    admin, producer = stack.kafka_config("admin"), stack.kafka_config("producer")
    name = f"test-reader-{uuid.uuid4().hex[:10]}"
    reader = kafka.OffsetReader(stack.kafka_config("consumer"))
    partitions = [(name, 0), (name, 1)]
    try:
        stack.create_topics({name: 2})
        assert reader.ends(partitions) == {(name, 0): 0, (name, 1): 0}
        for total in (700, 1_500):
            for partition in (0, 1):
                records = ((None, b"x") for _ in range(total // 2 - reader.ends(partitions)[(name, partition)]))
                kafka.produce(producer, name, records, partition=partition, settings={"linger.ms": 20})
            assert reader.ends(partitions) == {(name, 0): total // 2, (name, 1): total // 2}
            assert reader.ends(partitions) == {(name, 0): total // 2, (name, 1): total // 2}  # unchanged: not re-read
            assert reader.reported(partitions, "earliest") == {(name, 0): 0, (name, 1): 0}
        kafka.produce(producer, name, [(None, b"z")], partition=0)  # one record more, in a batch of its own
        assert reader.ends(partitions) == {(name, 0): 751, (name, 1): 750}
        kafka.produce(producer, name, [(None, b"z")], partition=0)
        assert reader.ends(partitions) == {(name, 0): 752, (name, 1): 750}
        kafka.delete_topics(admin, [name])
        stack.create_topics({name: 2})
        kafka.produce(producer, name, ((None, b"y") for _ in range(30)), partition=1)
        time.sleep(2)  # a consumer that had read the old topic would have crashed this process by now
        assert reader.ends(partitions) == {(name, 0): 0, (name, 1): 30}
    finally:
        reader.close()
        kafka.delete_topics(admin, [name])


def test_topics_are_created_listed_described_and_deleted(stack: Stack) -> None:
    conf = stack.kafka_config()
    kafka.create_topics(conf, {"admin-a": 3, "admin-b": 1})
    try:
        assert {"admin-a", "admin-b"} <= set(kafka.list_topics(conf))
        info = kafka.describe_topic(conf, "admin-a")
        assert [p.id for p in info.partitions] == [0, 1, 2]
        with pytest.raises(KafkaError, match="cannot create topic 'admin-a'") as caught:
            kafka.create_topic(conf, "admin-a", 3)
        assert caught.value.code == "TOPIC_ALREADY_EXISTS"
        kafka.create_topic(conf, "admin-a", 3, exist_ok=True)
    finally:
        kafka.delete_topics(conf, ["admin-a", "admin-b"])
    assert not {"admin-a", "admin-b"} & set(kafka.list_topics(conf))


def test_unknown_topic_is_a_clear_error(stack: Stack) -> None:
    with pytest.raises(KafkaError, match="cannot describe topic 'missing-topic'"):
        kafka.end_offsets(stack.kafka_config(), "missing-topic")


def test_profile_client_settings_reach_every_role(stack: Stack) -> None:
    for role in ("producer", "consumer", "admin"):
        conf = stack.kafka_config(role)
        assert conf["bootstrap.servers"] == stack.bootstrap_servers
        assert conf["allow.auto.create.topics"] is False
    assert stack.kafka_config("consumer")["session.timeout.ms"] == 6000


def test_keys_spread_over_partitions_like_the_client_puts_them(stack: Stack, topic: Callable[..., str]) -> None:
    name = topic(partitions=4)
    kafka.produce(stack.kafka_config("producer"), name, ((f"d{i % 8}", "v") for i in range(800)))
    by_key: dict[bytes | None, set[int]] = {}
    for record in kafka.read_records(stack.kafka_config("consumer"), name):
        by_key.setdefault(record.key, set()).add(record.partition)
    assert len(by_key) == 8
    assert all(len(parts) == 1 for parts in by_key.values())  # one key, one partition
    assert sum(Counter(r for parts in by_key.values() for r in parts).values()) == 8
