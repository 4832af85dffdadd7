"""Topic strategies: names, routes, subscriptions and Spark options, without a broker."""

from __future__ import annotations

from collections import Counter

import pytest

from workbench.topics import (
    BucketedTopics,
    KeyedTopic,
    Subscription,
    TopicDesignError,
    TopicPerDevice,
    device_ids,
    partition_for,
)


def test_keyed_topic_routes_by_key_and_reads_one_device_from_its_partition() -> None:
    strategy = KeyedTopic("telemetry", partitions=12)
    route = strategy.route("car-7")
    expected = partition_for(b"car-7", 12, "murmur2_random")
    assert (route.topic, route.key, route.partition) == ("telemetry", b"car-7", None)
    assert route.expected_partition == expected
    assert strategy.topics(["a", "b"]) == {"telemetry": 12}
    assert strategy.subscription().for_subscribe() == ["telemetry"]
    assert strategy.spark_options() == {"subscribe": "telemetry"}
    one = strategy.subscription("car-7")
    assert (one.assignment, one.key, one.kind) == ((("telemetry", expected),), b"car-7", "assign")
    assert strategy.spark_options("car-7") == {"assign": f'{{"telemetry":[{expected}]}}'}
    assert strategy.producer_settings() == {"partitioner": "murmur2_random"}


def test_topic_per_device_names_a_topic_per_device_and_subscribes_with_a_regex() -> None:
    strategy = TopicPerDevice("car.", partitions=2)
    assert strategy.topics(["a1", "b2"]) == {"car.a1": 2, "car.b2": 2}
    assert strategy.route("a1").topic == "car.a1"
    assert strategy.subscription().for_subscribe() == ["^car\\..*"]
    assert strategy.spark_options() == {"subscribePattern": "car\\..*"}
    assert strategy.subscription("a1") == Subscription(topics=("car.a1",))
    assert strategy.spark_options("a1") == {"subscribe": "car.a1"}


def test_a_mapr_stream_prefixes_the_stream_path() -> None:
    strategy = TopicPerDevice("car-", stream="/streams/fleet")
    assert strategy.route("42").topic == "/streams/fleet:car-42"
    assert strategy.spark_options() == {"subscribePattern": "/streams/fleet:car-.*"}
    with pytest.raises(TopicDesignError, match="a MapR stream is an absolute path"):
        TopicPerDevice("car-", stream="fleet")


def test_device_ids_that_cannot_be_topic_names_are_refused_with_the_way_out() -> None:
    with pytest.raises(TopicDesignError, match=r"topic for device 'car/7' 'car\.car/7' is not a legal Kafka topic"):
        TopicPerDevice("car.").route("car/7")
    with pytest.raises(TopicDesignError, match="use BucketedTopics with keys"):
        TopicPerDevice("car.").topics(["x" * 300])
    with pytest.raises(TopicDesignError, match="must not be empty"):
        TopicPerDevice("")


def test_bucketed_topics_spread_devices_over_every_partition_of_every_bucket() -> None:
    # M = P = 4 would put bucket i's devices all in partition i if bucket and partition shared a hash.
    strategy = BucketedTopics("fleet-", topics=4, partitions=4)
    assert list(strategy.topics()) == ["fleet-0", "fleet-1", "fleet-2", "fleet-3"]
    cells = Counter((strategy.route(f"d{i}").topic, strategy.route(f"d{i}").expected_partition) for i in range(800))
    assert len(cells) == 16
    assert min(cells.values()) > 20
    assert strategy.spark_options() == {"subscribe": "fleet-0,fleet-1,fleet-2,fleet-3"}
    route = strategy.route("d1")
    assert strategy.spark_options("d1") == {"assign": f'{{"{route.topic}":[{route.expected_partition}]}}'}
    assert BucketedTopics("b-", topics=12, partitions=1).topic_name(3) == "b-03"


def test_assignments_cannot_be_subscribed() -> None:
    with pytest.raises(TopicDesignError, match="assign them"):
        KeyedTopic("t", 3).subscription("d").for_subscribe()


@pytest.mark.parametrize("partitioner", ["random", "round_robin"])
def test_strategies_need_a_hashing_partitioner(partitioner: str) -> None:
    with pytest.raises(TopicDesignError, match="cannot route devices; use a hashing one"):
        KeyedTopic("t", 3, partitioner=partitioner)


def test_bad_counts_and_names_are_clear_errors() -> None:
    with pytest.raises(TopicDesignError, match="partitions must be a whole number ≥ 1, got 0"):
        KeyedTopic("t", 0)
    with pytest.raises(TopicDesignError, match="topic name 'a b' is not a legal Kafka topic name"):
        KeyedTopic("a b", 1)
    with pytest.raises(TopicDesignError, match="a device id must be a non-empty string"):
        KeyedTopic("t", 1).route("")


def test_device_ids_are_one_scheme_padded_to_sort_in_numeric_order() -> None:
    assert device_ids(3) == ["device-000", "device-001", "device-002"]
    assert device_ids(2, width=5) == ["device-00000", "device-00001"]
    ids = device_ids(1_001)
    assert ids[-1] == "device-1000" and ids == sorted(ids)
    assert TopicPerDevice("fleet-").topics(device_ids(2)) == {"fleet-device-000": 1, "fleet-device-001": 1}
