"""Share consumption in the schema formats (avro, jsonschema, protobuf), as v2 consumer
instances read them: records produced through the proxy with a schema come back decoded
from an explicit share instance and from the affinity-free fetch; a record the format
cannot show is answered 422 naming it, and the instance holds it for its client to reject
(or the affinity-free member releases it), on the session stack's proxy and registry."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from proxy_http import V2, error, post
from proxy_processes import start_proxy

from workbench import kafka
from workbench.proxy import ProxyClient, ProxyRecord
from workbench.stack import Stack
from workbench.topics.share_groups import configure_share_group

GIVE_UP_S = 60.0
AVRO = json.dumps(
    {
        "type": "record",
        "name": "Job",
        "namespace": "wbshare",
        "fields": [{"name": "id", "type": "int"}, {"name": "task", "type": "string"}],
    }
)
JSON_SCHEMA = json.dumps(
    {"type": "object", "properties": {"id": {"type": "integer"}, "task": {"type": "string"}}, "required": ["id"]}
)
PROTO = 'syntax = "proto3";\npackage wbshare;\nmessage Job { int32 id = 1; string task = 2; }\n'
SCHEMAS = {"avro": AVRO, "jsonschema": JSON_SCHEMA, "protobuf": PROTO}
VALUES = [{"id": n, "task": f"task-{n}"} for n in range(5)]


@pytest.fixture(scope="module")
def proxy(stack: Stack) -> str:
    assert stack.registry_url and stack.proxy_urls, "the local profile runs a proxy and a Schema Registry"
    return stack.proxy_urls[0]


def _group(stack: Stack) -> str:
    group = f"share-fmt-{uuid.uuid4().hex[:8]}"
    configure_share_group(stack, group, lock_ms=60_000)
    return group


def _read(poll: Callable[[], list[ProxyRecord]], count: int) -> list[ProxyRecord]:
    records: list[ProxyRecord] = []
    deadline = time.monotonic() + GIVE_UP_S
    while len(records) < count and time.monotonic() < deadline:
        records += poll()
    return records


@pytest.mark.parametrize("fmt", sorted(SCHEMAS))
def test_an_explicit_share_instance_reads_a_schema_format_decoded(
    stack: Stack, proxy: str, topic: Callable[..., str], fmt: str
) -> None:
    name = topic(partitions=1, prefix=f"share-{fmt}")
    group = _group(stack)
    with ProxyClient(proxy) as client:
        client.produce(name, [{"value": v} for v in VALUES], format=fmt, value_schema=SCHEMAS[fmt])  # type: ignore[arg-type]
        with client.share_consumer(group, topics=[name], format=fmt) as instance:

            def poll() -> list[ProxyRecord]:
                records = instance.poll(timeout_ms=500)
                instance.accept(records)
                return records

            records = _read(poll, len(VALUES))
    assert [r.value for r in records] == VALUES
    assert [r.delivery_count for r in records] == [1] * len(VALUES)


def test_the_affinity_free_fetch_answers_in_the_format_its_accept_names(
    stack: Stack, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic(partitions=1, prefix="share-avro-free")
    group = _group(stack)
    with ProxyClient(proxy) as client:
        client.produce(name, [{"value": v} for v in VALUES], format="avro", value_schema=AVRO)
        records = _read(lambda: client.share_fetch(group, [name], format="avro", timeout_ms=500), len(VALUES))
    assert [r.value for r in records] == VALUES


def test_a_record_the_format_cannot_show_is_named_held_and_rejected_by_its_client(
    stack: Stack, proxy: str, topic: Callable[..., str]
) -> None:
    """Three Avro records, then one that is not Avro, then one more Avro record: the first
    answer holds the three, the next is 422 naming offset 3 (the instance holds it), the
    client rejects it, and the answer after holds the last record."""
    name = topic(partitions=1, prefix="share-avro-bad")
    group = _group(stack)
    http = requests.Session()
    with ProxyClient(proxy) as client:
        client.produce(name, [{"value": v} for v in VALUES[:3]], format="avro", value_schema=AVRO)
        kafka.produce(stack.kafka_config("producer"), name, [(None, b"not avro at all")], partition=0)
        client.produce(name, [{"value": VALUES[3]}], format="avro", value_schema=AVRO)
    created = post(http, f"{proxy}/share-consumers/{group}", {"format": "avro"}, V2).json()
    base = created["base_uri"]
    assert post(http, f"{base}/subscription", {"topics": [name]}, V2).status_code == 204
    accept = {"Accept": "application/vnd.kafka.avro.v2+json"}

    def answer() -> requests.Response:
        return http.get(f"{base}/records?timeout=500", headers=accept, timeout=30)

    first: list[dict[str, Any]] = []
    deadline = time.monotonic() + GIVE_UP_S
    while not first and time.monotonic() < deadline:
        got = answer()
        assert got.status_code == 200, got.text
        first = got.json()
    assert [r["value"] for r in first] == VALUES[:3]
    ack = [{"topic": name, "partition": 0, "offset": r["offset"], "type": "accept"} for r in first]
    assert post(http, f"{base}/acknowledgements", {"acknowledgements": ack}, V2).status_code == 200
    message = error(answer(), 422, 422)
    assert f"topic {name} partition 0 offset 3" in message and '"type":"reject"' in message
    # the instance holds it for its client: only a record it holds can be acknowledged
    reject = [{"topic": name, "partition": 0, "offset": 3, "type": "reject"}]
    assert post(http, f"{base}/acknowledgements", {"acknowledgements": reject}, V2).status_code == 200
    error(post(http, f"{base}/acknowledgements", {"acknowledgements": reject}, V2), 409, 40903)
    last: list[dict[str, Any]] = []
    while not last and time.monotonic() < deadline:
        got = answer()
        assert got.status_code == 200, got.text
        last = got.json()
    assert [(r["offset"], r["value"]) for r in last] == [(4, VALUES[3])]
    assert http.delete(base, timeout=30).status_code == 204


def test_an_affinity_free_member_releases_a_record_it_cannot_show_until_the_broker_archives_it(
    stack: Stack, tmp_path: Path, topic: Callable[..., str]
) -> None:
    """A record that is not Avro, fetched as Avro without instance affinity: the member
    releases it at each delivery (no client could acknowledge it) and answers the records
    after it; at Kafka's delivery limit (`group.share.delivery.count.limit`, 5) the broker
    archives it, so it was released exactly 5 times and never answered."""
    name = topic(partitions=1, prefix="share-avro-free-bad")
    group = _group(stack)
    kafka.produce(stack.kafka_config("producer"), name, [(None, b"not avro at all")], partition=0)
    proxy = start_proxy(stack.bootstrap_servers, tmp_path, KAFKA_REST_SCHEMA_REGISTRY_URL=str(stack.registry_url))
    try:
        with ProxyClient(proxy.url) as client:
            client.produce(name, [{"value": v} for v in VALUES], format="avro", value_schema=AVRO)
            released = f"share {group}: {name}-0@0 cannot be shown as avro; released"
            values: list[Any] = []
            deadline = time.monotonic() + GIVE_UP_S
            while (len(values) < len(VALUES) or proxy.log.read_text().count(released) < 5) and (
                time.monotonic() < deadline
            ):
                values += [r.value for r in client.share_fetch(group, [name], format="avro", timeout_ms=300)]
            for _ in range(5):  # archived: it never comes again
                values += [r.value for r in client.share_fetch(group, [name], format="avro", timeout_ms=300)]
        assert proxy.alive()
    finally:
        proxy.stop()
    assert values == VALUES
    log = proxy.log.read_text(errors="replace")
    assert log.count(released) == 5
