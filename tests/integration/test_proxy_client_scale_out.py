"""The client against several proxy processes: round-robin, and consumers found again by base_uri."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from workbench import kafka
from workbench.bench import side_stack
from workbench.proxy import ProxyClient
from workbench.stack import Stack


@pytest.fixture(scope="module")
def two_proxies(stack: Stack) -> Iterator[Stack]:
    with side_stack(stack.profile, instances=2, label="client-tests") as side:
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
            values = [r.value for r in consumer.iter_records(timeout=1000, max_records=3, max_empty=5)]
    assert values == [b"x", b"y", b"z"]
