"""Every strategy puts each device's records where it says, and its subscriptions find them all."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator

import pytest

from workbench.stack import Stack
from workbench.topics import BucketedTopics, KeyedTopic, TopicPerDevice, TopicStrategy, device_io

DEVICES = [f"dev{i:03d}" for i in range(12)]
RECORDS = 25  # per device


def _strategies(run: str) -> list[TopicStrategy]:
    return [
        KeyedTopic(f"keyed-{run}", partitions=4),
        TopicPerDevice(f"dev-{run}."),
        BucketedTopics(f"bucket-{run}-", topics=3, partitions=2),
    ]


@pytest.fixture(params=["keyed", "per-device", "bucketed"])
def written(request: pytest.FixtureRequest, stack: Stack) -> Iterator[tuple[TopicStrategy, device_io.DeviceWrite]]:
    """A strategy with its topics created and every device's records written, then deleted."""
    index = ["keyed", "per-device", "bucketed"].index(request.param)
    strategy = _strategies(uuid.uuid4().hex[:8])[index]
    with stack.temporary_topics(strategy.topics(DEVICES)):
        yield strategy, device_io.write_devices(stack.kafka_config("producer"), strategy, DEVICES, RECORDS)


def test_every_record_lands_on_the_predicted_topic_and_partition(
    written: tuple[TopicStrategy, device_io.DeviceWrite],
) -> None:
    strategy, result = written
    assert (result.records, result.acknowledged, result.misplaced) == (300, 300, 0)
    predicted = Counter((r.topic, r.expected_partition) for r in map(strategy.route, DEVICES))
    assert result.landed == {where: devices * RECORDS for where, devices in predicted.items()}


def test_one_devices_history_is_complete_in_order_and_only_its_own(
    stack: Stack, written: tuple[TopicStrategy, device_io.DeviceWrite]
) -> None:
    strategy, result = written
    conf = stack.kafka_config("consumer")
    for device in (DEVICES[0], DEVICES[7]):
        read = device_io.read_device(conf, strategy, device)
        assert [r.value for r in read.records] == [device_io.device_value(device, i, 100) for i in range(RECORDS)]
        assert {r.key for r in read.records} == {device.encode()}
        route = strategy.route(device)
        assert read.scanned == result.landed[(route.topic, route.expected_partition)]
        everything = device_io.read_device(conf, strategy, device, full_scan=True)
        assert len(everything.records) == RECORDS
        assert everything.scanned == 300  # a full scan reads every device's records to find one's


def test_the_all_devices_subscription_finds_every_record_through_a_group(
    stack: Stack, written: tuple[TopicStrategy, device_io.DeviceWrite]
) -> None:
    strategy, _ = written
    subscription = strategy.subscription()
    read = device_io.read_group(stack.kafka_config("consumer"), subscription, expected=300)
    assert len(read.records) == 300
    assert Counter(r.key for r in read.records) == {d.encode(): RECORDS for d in DEVICES}
    assert read.assigned_partitions == sum(strategy.topics(DEVICES).values())
    kinds = {"keyed": "topics", "per-device": "pattern", "bucketed": "topics"}
    assert subscription.kind in kinds.values()
