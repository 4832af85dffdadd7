"""The client against several proxy processes: round-robin, and consumers found again by base_uri."""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from workbench import kafka
from workbench.bench import side_stack
from workbench.errors import ProxyError
from workbench.proxy import ProxyClient
from workbench.stack import Stack


@pytest.fixture(scope="module")
def two_proxies(stack: Stack) -> Iterator[Stack]:
    with side_stack(stack, instances=2, label="client-tests") as side:
        yield side


def test_round_robin_spreads_consumer_instances_over_both_processes(two_proxies: Stack) -> None:
    name = kafka.create_topic(two_proxies.kafka_config("admin"), "rr-topic", 2)
    urls = two_proxies.proxy_urls
    assert len(urls) == 2
    with ProxyClient(urls) as client:
        first = client.consumer("rr-group", partitions=[(name, 0)])
        second = client.consumer("rr-group", partitions=[(name, 1)])
        with first, second:
            ports = {urlparse(c.base_uri or "").port for c in (first, second)}
            assert ports == {urlparse(u).port for u in urls}
        assert client.produce(name, [b"a"]).acknowledged == 1 and client.produce(name, [b"b"]).acknowledged == 1
    assert sum(kafka.end_offsets(two_proxies.kafka_config("admin"), name).values()) == 2


def test_a_consumer_created_through_nginx_is_used_at_its_own_process(two_proxies: Stack) -> None:
    name = kafka.create_topic(two_proxies.kafka_config("admin"), "lb-topic", 1)
    balancer = two_proxies.balancer_url
    assert balancer is not None
    with ProxyClient(balancer) as client:
        client.produce(name, [b"x", b"y", b"z"])
        with client.consumer("lb-group", partitions=[(name, 0)]) as consumer:
            assert consumer.base_uri is not None
            assert urlparse(consumer.base_uri).port in {urlparse(u).port for u in two_proxies.proxy_urls}
            values = [r.value for r in consumer.iter_records(timeout_ms=1000, max_records=3, max_empty=5)]
    assert values == [b"x", b"y", b"z"]


def test_a_side_stack_runs_its_proxies_with_the_properties_asked(stack: Stack) -> None:
    """The properties travel in the copied profile's `proxy.overrides`, not through os.environ."""
    with side_stack(stack, proxy_properties={"producer.max.records.per.request": 2}, label="props") as side:
        name = kafka.create_topic(side.kafka_config("admin"), "props-topic", 1)
        with ProxyClient(side.proxy_urls) as client:
            assert client.produce(name, [b"a", b"b"]).acknowledged == 2
            with pytest.raises(ProxyError) as refused:
                client.produce(name, [b"a", b"b", b"c"])
        assert refused.value.status == 413
        assert sum(kafka.end_offsets(side.kafka_config("admin"), name).values()) == 2
    assert not any(key.startswith("KAFKA_REST_") for key in os.environ)
