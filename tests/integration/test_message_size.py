"""Notebook 04's path for 2 MB records on Apache Kafka: refused at the default limits, with
the error named and counted; with the limits raised (`limits_for`), every record lands
and reads back byte for byte, natively and through the REST proxy."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from workbench import kafka
from workbench.bench import limit_ladder, needed_settings, proxy_setup
from workbench.bench.message_size import read_back_exact
from workbench.bench.scale import ProxySetup
from workbench.kafka.record_limits import limits_for
from workbench.proxy import ProxyClient
from workbench.stack import Stack

SIZE = 2_000_000
LIMITS = limits_for(SIZE)


@pytest.fixture(scope="module")
def raised_proxy(stack: Stack) -> Iterator[ProxySetup]:
    """A proxy started with the limits 2 MB records need, as notebook 04 starts it."""
    with proxy_setup(stack, LIMITS.proxy_raised(), label="large-records") as setup:
        yield setup


def _values(count: int) -> list[bytes]:
    return [bytes([i]) * SIZE for i in range(count)]


def test_the_ladder_counts_each_refusal_with_its_error_and_lands_the_last_step(
    stack: Stack, raised_proxy: ProxySetup
) -> None:
    ladder = limit_ladder(stack, SIZE, raised_proxy=raised_proxy, records=3).set_index(["path", "step"])
    refused = ladder[ladder["failed"] > 0]
    assert list(refused.index) == [("native", 1), ("native", 2), ("proxy", 1), ("proxy", 2)]
    assert (refused["failed"] == 3).all() and (refused["error_records"] == 3).all()
    assert (refused["acknowledged"] == 0).all() and (refused["landed"] == 0).all()
    assert refused.loc[("native", 1), "error_code"] == "MSG_SIZE_TOO_LARGE"  # librdkafka's own limit
    assert "before sending" in refused.loc[("native", 1), "error_message"]
    assert refused.loc[("native", 2), "error_message"] == "Broker: Message size too large"  # the topic's
    assert refused.loc[("proxy", 1), "error_code"] == "413"  # the proxy's producer, whole call
    assert "message.max.bytes" in refused.loc[("proxy", 1), "error_message"]
    assert refused.loc[("proxy", 2), "error_message"] == "RecordTooLargeException: Broker: Message size too large"
    for last in (("native", 3), ("proxy", 3)):
        assert (ladder.loc[last, "acknowledged"], ladder.loc[last, "landed"], ladder.loc[last, "failed"]) == (3, 3, 0)
    assert ladder.loc[("native", 3), "read_back"] == 3
    needed = needed_settings(ladder.reset_index())
    assert {"topic.max.message.bytes", "message.max.bytes"} <= set(needed["native"])
    assert set(needed["proxy"]) == {"topic.max.message.bytes", "proxy.producer.message.max.bytes"}


def test_two_megabyte_records_read_back_byte_for_byte_natively(stack: Stack, topic: Callable[..., str]) -> None:
    name = topic(partitions=2, config={k: str(v) for k, v in LIMITS.topic.items()})
    values = _values(6)
    result = kafka.produce({**stack.kafka_config("producer"), **LIMITS.producer}, name, [(None, v) for v in values])
    assert (result.acknowledged, result.failed) == (6, 0)
    assert read_back_exact(stack, name, values, LIMITS.reader) == 6


def test_two_megabyte_records_through_the_proxy_read_back_byte_for_byte(raised_proxy: ProxySetup) -> None:
    side = raised_proxy.stack  # the embedded side stack: its own broker behind the raised proxy
    values = _values(4)
    client = ProxyClient(side.proxy_urls)
    with side.temporary_topics(
        {f"large-{uuid.uuid4().hex[:8]}": 1}, config={k: str(v) for k, v in LIMITS.topic.items()}
    ) as created:
        name = created.names[0]
        try:
            for value in values:  # one record a call: the proxy's request.max.bytes carries one
                assert client.produce(name, [value]).failed == 0
            with client.consumer(f"large-{name}", partitions=[(name, 0)], config=LIMITS.reader) as consumer:
                read = [r.value for r in consumer.iter_records(timeout_ms=2_000, max_records=len(values))]
        finally:
            client.close()
        assert read == values
        assert read_back_exact(side, name, values, LIMITS.reader) == 4
