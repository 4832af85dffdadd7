"""What a record of a given size needs raised, by Kafka's own names."""

from __future__ import annotations

import pytest

from workbench.bench._run import split_topic_settings
from workbench.kafka.record_limits import DEFAULTS, limits_for


def test_small_records_need_nothing_raised() -> None:
    limits = limits_for(100_000, records_per_call=5)
    assert limits.raised() == {}
    assert limits.columns() == DEFAULTS


def test_a_one_megabyte_record_needs_the_producer_raised_but_not_the_topic() -> None:
    raised = limits_for(1_000_000).raised()
    assert set(raised) == {
        "message.max.bytes",
        "batch.size",
        "proxy.producer.message.max.bytes",
    }
    assert raised["message.max.bytes"] > 1_000_000 and raised["batch.size"] >= raised["message.max.bytes"]


def test_a_two_megabyte_record_needs_the_topic_and_reader_raised_too() -> None:
    limits = limits_for(2_000_000)
    assert limits.topic["max.message.bytes"] > 2_000_000 > DEFAULTS["topic.max.message.bytes"]
    assert limits.reader["max.partition.fetch.bytes"] > 2_000_000
    assert limits.proxy["request.max.bytes"] == DEFAULTS["proxy.request.max.bytes"]  # 64 MiB carries it


def test_a_proxy_call_body_over_64_mib_raises_request_max_bytes() -> None:
    limits = limits_for(2_000_000, records_per_call=30)
    assert limits.proxy["request.max.bytes"] > 30 * 2_000_000 * 4 / 3


def test_experiment_settings_put_the_topic_apart() -> None:
    settings = limits_for(2_000_000).as_experiment_settings()
    topic, producer = split_topic_settings({**settings, "linger.ms": 5})
    assert topic == {"max.message.bytes": str(limits_for(2_000_000).topic["max.message.bytes"])}
    assert set(producer) == {"message.max.bytes", "batch.size", "linger.ms"}


@pytest.mark.parametrize("size", [0, -1])
def test_a_size_below_one_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        limits_for(size)


def test_a_proxy_variant_need_list_only_the_raised_properties() -> None:
    assert limits_for(2_000_000).proxy_raised() == {"producer.message.max.bytes": 2_016_384}
    assert limits_for(100).proxy_raised() == {}
