"""`ProxyClient` and `ProxyConsumer` against the real embedded REST proxy.

What went through the proxy is checked with the native client (and the other way
round), with exact counts.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlparse

import psutil
import pytest
from proxy_http import BINARY_V2

from workbench import kafka
from workbench.errors import ProxyError
from workbench.proxy import ProxyClient, ProxyRecord, ProxyUnavailableError, Retries, Timeout, proxy_urls
from workbench.stack import Stack


@pytest.fixture
def proxy(stack: Stack) -> Iterator[ProxyClient]:
    """The workbench's own client of the stack's proxies, in place of the conftest's URL."""
    with ProxyClient.for_stack(stack) as client:
        yield client


def _dead_url() -> str:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_records_array_lands_once_each_in_request_order(
    stack: Stack, proxy: ProxyClient, topic: Callable[..., str]
) -> None:
    name = topic(partitions=3)
    sent = [(f"k{i}".encode(), f"v{i}".encode()) for i in range(300)]
    result = proxy.produce(name, sent)
    assert (result.acknowledged, result.failed, result.errors) == (300, 0, [])
    by_partition: dict[int, list[int]] = {}
    for offset in result.offsets:
        by_partition.setdefault(offset.partition, []).append(offset.offset)  # type: ignore[arg-type]
    assert all(offsets == list(range(len(offsets))) for offsets in by_partition.values())

    read = list(kafka.read_records(stack.kafka_config("consumer"), name))
    assert sorted((r.key, r.value) for r in read) == sorted(sent)
    assert sum(kafka.end_offsets(stack.kafka_config("admin"), name).values()) == 300


def test_produce_to_a_partition_puts_every_record_there(
    stack: Stack, proxy: ProxyClient, topic: Callable[..., str]
) -> None:
    name = topic(partitions=4)
    result = proxy.produce(name, [b"a", b"b", b"c"], partition=2)
    assert {o.partition for o in result.offsets} == {2}
    assert kafka.end_offsets(stack.kafka_config("admin"), name) == {
        (name, 0): 0,
        (name, 1): 0,
        (name, 2): 3,
        (name, 3): 0,
    }


def test_json_records_round_trip_through_a_proxy_consumer(proxy: ProxyClient, topic: Callable[..., str]) -> None:
    name = topic(partitions=2)
    values = [{"device": i, "temp": 20.5 + i, "tags": ["a", "b"]} for i in range(50)]
    proxy.produce(name, [{"value": v} for v in values], format="json")
    with proxy.consumer("json-readers", partitions=[(name, 0), (name, 1)], format="json") as consumer:
        read = list(consumer.iter_records(timeout_ms=1000, max_records=50, max_empty=5))
    assert sorted(r.value["device"] for r in read) == list(range(50))
    assert all(isinstance(r.value, dict) for r in read)


def test_subscribe_iterate_commit_and_the_group_remembers(proxy: ProxyClient, topic: Callable[..., str]) -> None:
    name = topic(partitions=2)
    proxy.produce(name, [(f"k{i}".encode(), f"v{i}".encode()) for i in range(40)])
    with proxy.consumer("committers", topics=[name]) as consumer:
        read = list(consumer.iter_records(timeout_ms=1000, max_records=40, max_empty=15))
        committed = consumer.commit()
        stored = consumer.committed([(name, 0), (name, 1)])
        assert consumer.subscription() == [name]
    assert len(read) == 40 and len({(r.partition, r.offset) for r in read}) == 40
    assert {p: o + 1 for p, o in committed.items()} == stored  # the proxy stores the next offset to read
    assert sum(stored.values()) == 40


def test_pattern_subscription_reads_every_matching_topic(proxy: ProxyClient, topic: Callable[..., str]) -> None:
    first, second = topic(prefix="pattern-xq"), topic(prefix="pattern-xq")
    proxy.produce(first, [b"1", b"2"])
    proxy.produce(second, [b"3"])
    with proxy.consumer("patterns", pattern=r"pattern-xq-.*") as consumer:
        read = list(consumer.iter_records(timeout_ms=1000, max_records=3, max_empty=15))
    assert sorted(r.value for r in read) == [b"1", b"2", b"3"]
    assert {r.topic for r in read} == {first, second}


def test_the_instance_is_deleted_on_exit_even_when_the_block_raises(
    proxy: ProxyClient, topic: Callable[..., str]
) -> None:
    name = topic()
    consumer = proxy.consumer("leavers", partitions=[(name, 0)])
    with pytest.raises(RuntimeError, match="boom"), consumer:
        base_uri = consumer.base_uri
        assert base_uri is not None and base_uri.startswith("http")
        raise RuntimeError("boom")
    assert consumer.base_uri is None
    with pytest.raises(ProxyError) as gone:
        proxy.request("GET", f"{base_uri}/records", headers={"Accept": BINARY_V2})
    assert (gone.value.status, gone.value.error_code) == (404, 40403)


def test_max_bytes_limits_one_records_response(proxy: ProxyClient, topic: Callable[..., str]) -> None:
    """The first answer that has records holds at most 3,500 bytes of them (1 to 3 of 1,000 B);
    the rest follow, each once. On a loaded machine the first fetch after the assignment can
    take longer than one request's wait, so the test asks again until records come."""
    name = topic()
    proxy.produce(name, [b"x" * 1000 for _ in range(20)])
    deadline = time.monotonic() + 60
    with proxy.consumer("budgeted", partitions=[(name, 0)]) as consumer:
        first: list[ProxyRecord] = []
        while not first and time.monotonic() < deadline:
            first = consumer.poll(timeout_ms=1000, max_bytes=3_500)
        rest: list[ProxyRecord] = []
        while len(first) + len(rest) < 20 and time.monotonic() < deadline:
            rest += consumer.poll(timeout_ms=1000, max_bytes=1_000_000)
        rest += consumer.poll(timeout_ms=500)  # nothing beyond the 20
    assert 1 <= len(first) <= 3
    assert sorted(r.offset for r in first + rest) == list(range(20)), "each record once"


def test_unknown_topic_is_a_proxy_error_with_the_proxy_error_code(proxy: ProxyClient) -> None:
    with pytest.raises(ProxyError) as error:
        proxy.produce("no-such-topic-here", [b"x"])
    assert error.value.status == 404 and error.value.error_code in (40401, 40403)
    assert "no-such-topic-here" in str(error.value) and "\n" not in str(error.value)


def test_mapr_stream_names_reach_the_proxy_as_one_decoded_name(proxy: ProxyClient) -> None:
    with pytest.raises(ProxyError) as error:
        proxy.produce("/streams/test:topic1", [b"x"])
    # Sent unencoded, the slashes would make another route (404 / error_code 404).
    assert error.value.error_code in (40401, 40403)
    assert "/streams/test:topic1" in error.value.message


def test_metadata_calls_describe_the_topic(stack: Stack, proxy: ProxyClient, topic: Callable[..., str]) -> None:
    name = topic(partitions=3)
    proxy.produce(name, [b"a", b"b"], partition=1)
    assert all(isinstance(b, int) for b in proxy.brokers()) and proxy.brokers()
    assert name in proxy.topics()
    assert proxy.topic(name)["name"] == name
    assert [p["partition"] for p in proxy.partitions(name)] == [0, 1, 2]
    assert proxy.partition_offsets(name, 1) == (0, 2)


def test_v3_admin_and_streaming_produce(stack: Stack, proxy: ProxyClient) -> None:
    name = "v3-admin-" + stack.profile.name
    proxy.create_topic(name, partitions=2)
    try:
        assert proxy.describe_topic(name)["partitions_count"] == 2
        assert name in proxy.list_topics()
        with pytest.raises(ProxyError) as exists:
            proxy.create_topic(name, partitions=2)
        assert exists.value.status == 400 and exists.value.error_code == 40002
        results = list(
            proxy.produce_stream(name, [b"one", "two", {"value": {"type": "JSON", "data": {"n": 3}}}], partition=1)
        )
        assert [r["error_code"] for r in results] == [200, 200, 200]
        assert [r["offset"] for r in results] == [0, 1, 2] and {r["partition_id"] for r in results} == {1}
        assert sum(kafka.end_offsets(stack.kafka_config("admin"), name).values()) == 3
    finally:
        proxy.delete_topic(name)
    assert name not in kafka.list_topics(stack.kafka_config("admin"))


def test_failover_skips_a_dead_proxy_and_round_robin_uses_every_url(stack: Stack, topic: Callable[..., str]) -> None:
    name = topic()
    live = proxy_urls(stack)[0]
    with ProxyClient([_dead_url(), live], timeout=Timeout(1, 10)) as client:
        for _ in range(4):  # the dead URL comes first on every other call
            assert client.produce(name, [b"v"]).acknowledged == 1
    assert sum(kafka.end_offsets(stack.kafka_config("admin"), name).values()) == 4


def test_no_proxy_answering_is_one_actionable_line() -> None:
    dead = _dead_url()
    with (
        ProxyClient([dead], retries=Retries(attempts=2, backoff=0.01)) as client,
        pytest.raises(ProxyUnavailableError) as error,
    ):
        client.topics()
    message = str(error.value)
    assert dead in message and "connection refused" in message and "workbench status" in message
    assert "\n" not in message


def _open_local_ports(url: str) -> set[int]:
    port = urlparse(url).port
    return {
        c.laddr.port
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    }


@pytest.mark.parametrize(("reuse", "connections_kept"), [(True, 1), (False, 0)])
def test_session_reuse_keeps_one_connection_and_no_reuse_keeps_none(
    stack: Stack, topic: Callable[..., str], reuse: bool, connections_kept: int
) -> None:
    name = topic()
    url = proxy_urls(stack, balanced=False)[0]
    before = _open_local_ports(url)
    kept: set[int] = set()
    with ProxyClient(url, session_reuse=reuse) as client:
        for _ in range(10):
            client.produce(name, [b"v"])
            kept |= _open_local_ports(url) - before
    assert len(kept) == connections_kept  # with reuse: the same connection after every call
    assert sum(kafka.end_offsets(stack.kafka_config("admin"), name).values()) == 10
