"""The proxy's schema formats (avro, jsonschema, protobuf) with the stack's Schema Registry.

Records produced through the proxy are read natively and decoded by confluent-kafka's
deserializers; records produced natively with confluent-kafka's serializers are read by a
proxy consumer of that format: values equal, ids equal. Without `schema.registry.url` the
formats keep answering 42205, after the topic and schema checks.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from proxy_http import V2, error, media, post
from proxy_processes import ProxyProcess, start_proxy

from workbench import kafka
from workbench.stack import Stack

AVRO = json.dumps(
    {
        "type": "record",
        "name": "Reading",
        "namespace": "wb",
        "fields": [
            {"name": "device", "type": "string"},
            {"name": "t", "type": "double"},
            {"name": "unit", "type": ["null", "string"], "default": None},
        ],
    }
)
KEY_AVRO = json.dumps({"type": "string"})
JSON_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"device": {"type": "string"}, "t": {"type": "number"}},
        "required": ["device", "t"],
    }
)
PROTO = 'syntax = "proto3";\npackage wbtest;\nmessage Reading { string device = 1; double t = 2; }\n'


@pytest.fixture(scope="module")
def proxy(proxy: str, stack: Stack) -> str:
    """The conftest's proxy, once the stack is seen to run the Schema Registry these tests need."""
    assert stack.registry_url, "the local profile runs a Schema Registry"
    return proxy


def native_values(
    stack: Stack,
    topic: str,
    deserialize: Callable[[bytes | None, Any], Any],
    key_deserialize: Callable[[bytes | None, Any], Any] | None = None,
) -> list[Any]:
    from confluent_kafka.serialization import MessageField, SerializationContext

    rows = []
    for record in kafka.read_records(stack.kafka_config("consumer"), topic):
        value = deserialize(record.value, SerializationContext(topic, MessageField.VALUE))
        if key_deserialize is not None:
            rows.append((key_deserialize(record.key, SerializationContext(topic, MessageField.KEY)), value))
        else:
            rows.append(value)
    return rows


def proxy_records(http: requests.Session, proxy: str, topic: str, fmt: str, count: int) -> list[dict[str, Any]]:
    """Read `count` records with a proxy consumer of format `fmt`, then delete it."""
    group = f"g-{uuid.uuid4().hex[:10]}"
    created = post(http, f"{proxy}/consumers/{group}", {"format": fmt, "auto.offset.reset": "earliest"}, V2)
    assert created.status_code == 200, created.text
    base = created.json()["base_uri"]
    try:
        assert post(http, f"{base}/assignments", {"partitions": [{"topic": topic, "partition": 0}]}, V2).ok
        rows: list[dict[str, Any]] = []
        for _ in range(60):
            answer = http.get(f"{base}/records", headers={"Accept": media(fmt)}, params={"timeout": 1000}, timeout=60)
            assert answer.status_code == 200, answer.text
            rows += answer.json()
            if len(rows) >= count:
                break
        return rows
    finally:
        http.delete(base, headers={"Content-Type": V2}, timeout=60)


def wire_id(payload: bytes | None) -> int:
    assert payload is not None and payload[0] == 0
    return int.from_bytes(payload[1:5], "big")


def test_avro_through_the_proxy_is_read_natively(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    name = topic()
    records = [
        {"key": f"d{i}", "value": {"device": f"d{i}", "t": i / 4, "unit": {"string": "C"} if i % 2 else None}}
        for i in range(6)
    ]
    answer = post(
        http,
        f"{proxy}/topics/{name}",
        {"key_schema": KEY_AVRO, "value_schema": AVRO, "records": records},
        media("avro"),
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert all(o["error_code"] is None for o in body["offsets"])
    assert body["value_schema_id"] == registry_client.get_latest_version(f"{name}-value").schema_id
    assert body["key_schema_id"] == registry_client.get_latest_version(f"{name}-key").schema_id
    decoded = native_values(stack, name, AvroDeserializer(registry_client), AvroDeserializer(registry_client))
    assert decoded == [(f"d{i}", {"device": f"d{i}", "t": i / 4, "unit": "C" if i % 2 else None}) for i in range(6)]
    stored = list(kafka.read_records(stack.kafka_config("consumer"), name))
    assert {wire_id(r.value) for r in stored} == {body["value_schema_id"]}
    # The same schema again, by id this time: same id, no new version.
    by_id = {"value_schema_id": body["value_schema_id"], "records": [{"value": {"device": "x", "t": 1.0}}]}
    again = post(http, f"{proxy}/topics/{name}", by_id, media("avro"))
    assert again.status_code == 200 and again.json()["value_schema_id"] == body["value_schema_id"], again.text
    # A proxy consumer renders Avro's JSON encoding (tagged unions), as Confluent's does.
    rows = proxy_records(http, proxy, name, "avro", 7)
    assert [r["value"]["unit"] for r in rows[:2]] == [None, {"string": "C"}]
    assert [r["key"] for r in rows[:2]] == ["d0", "d1"]


def test_native_serializers_are_read_by_proxy_consumers(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from workbench.bench.formats import _reading_class

    reading = _reading_class()  # device, temp, hum, seq, note
    protobuf = ProtobufSerializer(reading, registry_client, {"use.deprecated.format": False})
    for fmt, serializer in (
        ("avro", AvroSerializer(registry_client, AVRO)),
        ("jsonschema", JSONSerializer(JSON_SCHEMA, registry_client)),
        ("protobuf", lambda v, ctx: protobuf(reading(**v), ctx)),
    ):
        name = topic()
        ctx = SerializationContext(name, MessageField.VALUE)
        values: list[dict[str, Any]] = [{"device": f"d{i}", "t": float(i)} for i in range(4)]
        if fmt == "avro":
            values = [{**v, "unit": None} for v in values]
        if fmt == "protobuf":
            values = [{"device": f"d{i}", "temp": i + 0.5, "seq": str(i + 1)} for i in range(4)]  # int64: a string
        payloads = [serializer(v if fmt != "protobuf" else {**v, "seq": int(v["seq"])}, ctx) for v in values]
        kafka.produce(stack.kafka_config("producer"), name, [(None, p) for p in payloads])
        rows = proxy_records(http, proxy, name, fmt, len(values))
        if fmt == "protobuf":  # fields at their default value are printed too, as kafka-rest prints them
            values = [{**v, "hum": 0.0, "note": ""} for v in values]
        assert [r["value"] for r in rows] == values, fmt
        latest = registry_client.get_latest_version(f"{name}-value").schema_id
        assert {wire_id(p) for p in payloads} == {latest}, fmt


def test_jsonschema_through_the_proxy(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer

    name = topic()
    values = [{"device": f"d{i}", "t": i} for i in range(5)]
    body = {"value_schema": JSON_SCHEMA, "records": [{"value": v} for v in values]}
    answer = post(http, f"{proxy}/topics/{name}", body, media("jsonschema"))
    assert answer.status_code == 200, answer.text
    assert answer.json()["value_schema_id"] == registry_client.get_latest_version(f"{name}-value").schema_id
    assert native_values(stack, name, JSONDeserializer(None, schema_registry_client=registry_client)) == values
    # Data that does not fit: 400, and nothing is written.
    bad = post(
        http,
        f"{proxy}/topics/{name}",
        {"value_schema": JSON_SCHEMA, "records": [{"value": {"device": 1}}]},
        media("jsonschema"),
    )
    assert "does not fit" in error(bad, 400, 400)
    assert len(list(kafka.read_records(stack.kafka_config("consumer"), name))) == len(values)


def test_protobuf_through_the_proxy_is_read_natively(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    name = topic()
    values = [{"device": f"d{i}", "t": i + 0.5} for i in range(4)]
    answer = post(
        http,
        f"{proxy}/topics/{name}",
        {"value_schema": PROTO, "records": [{"value": v} for v in values]},
        media("protobuf"),
    )
    assert answer.status_code == 200, answer.text
    schema_id = answer.json()["value_schema_id"]
    # The message class a native consumer would have from protoc, built from the registered descriptor.
    serialized = registry_client.get_schema(schema_id, fmt="serialized").schema_str
    import base64

    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    file.name = f"proxy-{uuid.uuid4().hex[:8]}.proto"
    file.package = f"p{uuid.uuid4().hex[:8]}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    reading = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{file.package}.Reading"))
    decoded = native_values(stack, name, ProtobufDeserializer(reading, {"use.deprecated.format": False}))
    assert [{"device": m.device, "t": m.t} for m in decoded] == values
    stored = list(kafka.read_records(stack.kafka_config("consumer"), name))
    assert {wire_id(r.value) for r in stored} == {schema_id} and {(r.value or b"")[5:6] for r in stored} == {b"\x00"}
    rows = proxy_records(http, proxy, name, "protobuf", len(values))
    assert [r["value"] for r in rows] == values


def test_schema_errors_follow_upstream(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic()
    url = f"{proxy}/topics/{name}"
    error(
        post(http, f"{proxy}/topics/absent-{name}", {"value_schema": AVRO, "records": [{"value": 1}]}, media("avro")),
        404,
        40401,
    )
    error(post(http, url, {"value_schema": AVRO, "records": [{"key": 1, "value": 1}]}, media("avro")), 422, 42201)
    error(post(http, url, {"records": [{"value": 1}]}, media("avro")), 422, 42202)
    error(post(http, url, {"value_schema": '{"type": "nope"}', "records": [{"value": 1}]}, media("avro")), 422, 42205)
    error(post(http, url, {"value_schema_id": 2**31 - 1, "records": [{"value": 1}]}, media("avro")), 422, 42205)
    error(post(http, url, {"value_schema_id": -4, "records": [{"value": 1}]}, media("avro")), 422, 42205)
    error(post(http, url, {"value_schema": "message {", "records": [{"value": {}}]}, media("protobuf")), 422, 42205)
    error(post(http, url, {"value_schema": AVRO, "records": [{"value": {"device": 5}}]}, media("avro")), 400, 400)
    assert list(kafka.read_records(stack.kafka_config("consumer"), name)) == []
    # Records that are not in the wire format: the avro consumer says which and where.
    kafka.produce(stack.kafka_config("producer"), name, [(None, b"plain bytes")])
    group = f"g-{uuid.uuid4().hex[:10]}"
    base = post(http, f"{proxy}/consumers/{group}", {"format": "avro", "auto.offset.reset": "earliest"}, V2).json()[
        "base_uri"
    ]
    try:
        assert post(http, f"{base}/assignments", {"partitions": [{"topic": name, "partition": 0}]}, V2).ok
        message = error(http.get(f"{base}/records", headers={"Accept": media("avro")}, timeout=60), 422, 422)
        assert "wire format" in message and "offset 0" in message
    finally:
        http.delete(base, headers={"Content-Type": V2}, timeout=60)


@pytest.fixture(scope="module")
def bare_proxy(stack: Stack, sandbox: Path) -> Iterator[ProxyProcess]:
    """A proxy of this module's own without `schema.registry.url`."""
    started = start_proxy(stack.bootstrap_servers, sandbox / "schema-format-proxies")
    yield started
    started.stop()


@pytest.mark.parametrize("fmt", ["avro", "jsonschema", "protobuf"])
def test_without_a_registry_the_formats_answer_42205(
    http: requests.Session, bare_proxy: ProxyProcess, topic: Callable[..., str], fmt: str
) -> None:
    name, url = topic(), bare_proxy.url
    error(post(http, f"{url}/topics/absent-{name}", {"records": [{"value": 1}]}, media(fmt)), 404, 40401)
    error(
        post(http, f"{url}/topics/{name}", {"records": [{"key": 1, "value": 1}], "value_schema": '"int"'}, media(fmt)),
        422,
        42201,
    )
    error(post(http, f"{url}/topics/{name}", {"records": [{"value": 1}]}, media(fmt)), 422, 42202)
    message = error(
        post(http, f"{url}/topics/{name}", {"value_schema": '{"type": "int"}', "records": [{"value": 1}]}, media(fmt)),
        422,
        42205,
    )
    assert "Schema Registry" in message
    error(post(http, f"{url}/consumers/g-{uuid.uuid4().hex[:8]}", {"format": fmt}, V2), 422, 42205)


def test_an_unreachable_registry_is_408_40801(
    stack: Stack, http: requests.Session, sandbox: Path, topic: Callable[..., str]
) -> None:
    from workbench.stack import process

    nowhere = f"http://127.0.0.1:{process.free_port('127.0.0.1')}"
    started = start_proxy(
        stack.bootstrap_servers, sandbox / "schema-format-proxies", KAFKA_REST_SCHEMA_REGISTRY_URL=nowhere
    )
    try:
        name = topic()
        error(
            post(
                http, f"{started.url}/topics/{name}", {"value_schema": AVRO, "records": [{"value": 1}]}, media("avro")
            ),
            408,
            40801,
        )
    finally:
        started.stop()


def test_v3_produce_with_schemas(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    """v3 records: a raw schema with its type, then `schema_id`, `schema_version`, and the
    subject's latest when no type is given; each result names subject, id and version."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    name = topic()
    cluster = http.get(f"{proxy}/v3/clusters", timeout=30).json()["data"][0]["cluster_id"]
    url = f"{proxy}/v3/clusters/{cluster}/topics/{name}/records"
    first = {"device": "a", "t": 1.0, "unit": None}
    records: list[dict[str, Any]] = [
        {"value": {"type": "AVRO", "schema": AVRO, "data": first}},
        {"value": {"schema_version": 1, "data": {"device": "b", "t": 2.0, "unit": {"string": "K"}}}},
        {"value": {"data": {"device": "c", "t": 3.0}}},
        {"value": {"type": "AVRO", "data": {"device": 5}}},  # does not fit: 400, the others are written
        {"value": {"schema_id": 2**31 - 1, "data": first}},  # an unknown id: 422 / 42205
        {"value": {"type": "JSON", "schema_id": 1, "data": 1}},  # a plain type with a schema field: 400
    ]
    body = b"".join(orjson_line(r) for r in records)
    results = [
        json.loads(line)
        for line in http.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=60).iter_lines()
        if line
    ]
    assert [r["error_code"] for r in results] == [200, 200, 200, 400, 422, 400], results
    assert "42205" in results[4]["message"]
    schema_id = registry_client.get_latest_version(f"{name}-value").schema_id
    expected = {"type": "AVRO", "subject": f"{name}-value", "schema_id": schema_id, "schema_version": 1}
    assert [{k: v for k, v in r["value"].items() if k != "size"} for r in results[:3]] == [expected] * 3
    assert all(r["value"]["size"] > 5 for r in results[:3])
    decoded = native_values(stack, name, AvroDeserializer(registry_client))
    assert [d["device"] for d in decoded] == ["a", "b", "c"] and decoded[1]["unit"] == "K"


def orjson_line(record: dict[str, Any]) -> bytes:
    return json.dumps(record).encode() + b"\n"


def test_proxy_client_produces_and_consumes_the_schema_formats(stack: Stack, topic: Callable[..., str]) -> None:
    from workbench.proxy import ProxyClient

    name = topic()
    values = [{"device": f"d{i}", "t": float(i), "unit": None} for i in range(5)]
    with ProxyClient.for_stack(stack) as client:
        result = client.produce(name, [{"value": v} for v in values], format="avro", value_schema=AVRO)
        assert result.acknowledged == 5 and result.value_schema_id is not None
        again = client.produce(name, [{"value": values[0]}], format="avro", value_schema_id=result.value_schema_id)
        assert again.value_schema_id == result.value_schema_id
        with client.consumer(f"g-{uuid.uuid4().hex[:8]}", format="avro", partitions=[(name, 0)]) as consumer:
            got = [r.value for r in consumer.iter_records(timeout_ms=1000, max_records=6, max_empty=20)]
    assert got == [*values, values[0]]
