"""confluent-kafka's own Schema Registry client and serializers against our registry, unchanged.

Records are produced natively with each serializer, read back by a native consumer and
deserialized with confluent-kafka's deserializers; the ids in the wire format are the
registry's. The registry is a process of this module's own, on its own `_schemas` topic.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from registry_processes import RegistryProcess, start_registry

from workbench import kafka
from workbench.stack import Stack

AVRO_V1 = json.dumps(
    {
        "type": "record",
        "name": "Reading",
        "namespace": "wb",
        "fields": [{"name": "device", "type": "string"}, {"name": "t", "type": "double"}],
    }
)
JSON_SCHEMA = json.dumps(
    {"type": "object", "properties": {"device": {"type": "string"}, "t": {"type": "number"}}, "required": ["device"]}
)


@pytest.fixture(scope="module")
def registry(stack: Stack, sandbox: Path) -> Iterator[RegistryProcess]:
    topic = f"_schemas-{uuid.uuid4().hex[:10]}"
    started = start_registry(stack.bootstrap_servers, topic, sandbox / "registry-logs")
    yield started
    started.stop()
    assert started.proc.returncode in (0, -15), started.log_tail()
    kafka.delete_topics(stack.kafka_config("admin"), [topic])  # after the process that reads it


@pytest.fixture
def client(registry: RegistryProcess) -> Iterator[Any]:
    """confluent-kafka's `SchemaRegistryClient` on our registry, closed after the test."""
    from confluent_kafka.schema_registry import SchemaRegistryClient

    active = SchemaRegistryClient({"url": registry.url})
    yield active
    active.close()


Serialize = Callable[[Any, Any], bytes]


def _roundtrip(
    stack: Stack, topic: str, serialize: Serialize, deserialize: Callable[[bytes | None, Any], Any], values: list[Any]
) -> tuple[list[bytes | None], list[Any]]:
    from confluent_kafka.serialization import MessageField, SerializationContext

    ctx = SerializationContext(topic, MessageField.VALUE)
    payloads = [serialize(v, ctx) for v in values]
    kafka.produce(stack.kafka_config("producer"), topic, [(None, p) for p in payloads])
    records = list(kafka.read_records(stack.kafka_config("consumer"), topic))
    stored = [r.value for r in records]
    return stored, [deserialize(v, ctx) for v in stored]


def _schema_id(payload: bytes | None) -> int:
    assert payload is not None and payload[0] == 0, "Confluent wire format: magic byte 0"
    return int.from_bytes(payload[1:5], "big")


def test_avro_serializer_and_deserializer(stack: Stack, client: Any, topic: Callable[..., str]) -> None:
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

    name = topic()
    values = [{"device": f"d{i}", "t": i / 2} for i in range(5)]
    stored, decoded = _roundtrip(stack, name, AvroSerializer(client, AVRO_V1), AvroDeserializer(client), values)
    assert decoded == values
    latest = client.get_latest_version(f"{name}-value")
    assert {_schema_id(p) for p in stored} == {latest.schema_id}
    assert latest.version == 1 and latest.schema.schema_type == "AVRO"
    # Stored as Avro's canonical (compact) JSON, as Confluent stores it.
    assert client.get_schema(latest.schema_id).schema_str == json.dumps(json.loads(AVRO_V1), separators=(",", ":"))
    # The same schema under another subject keeps its id; the lookup finds it.
    assert client.register_schema("other-value", latest.schema) == latest.schema_id
    assert client.lookup_schema(f"{name}-value", latest.schema).version == 1
    assert sorted(client.get_subjects_by_schema_id(latest.schema_id)) == sorted([f"{name}-value", "other-value"])


def test_json_serializer_and_deserializer(stack: Stack, client: Any, topic: Callable[..., str]) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    name = topic()
    values = [{"device": f"d{i}", "t": i} for i in range(5)]
    serializer = JSONSerializer(JSON_SCHEMA, client)
    stored, decoded = _roundtrip(stack, name, serializer, JSONDeserializer(None, schema_registry_client=client), values)
    assert decoded == values
    latest = client.get_latest_version(f"{name}-value")
    assert latest.schema.schema_type == "JSON"
    assert {_schema_id(p) for p in stored} == {latest.schema_id}
    # A value the schema refuses never reaches Kafka.
    from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

    with pytest.raises(SerializationError):
        serializer({"t": 1}, SerializationContext(name, MessageField.VALUE))


def _reading_class() -> Any:
    """A protobuf message class built from a descriptor (what protoc-generated code holds)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    name = f"reading_{uuid.uuid4().hex[:8]}"
    file = descriptor_pb2.FileDescriptorProto(
        name=f"{name}.proto", package=name, syntax="proto3", dependency=["google/protobuf/timestamp.proto"]
    )
    message = file.message_type.add(name="Reading")
    message.field.add(name="device", number=1, type=9, label=1)
    message.field.add(name="at", number=2, type=11, label=1, type_name=".google.protobuf.Timestamp")
    pool = descriptor_pool.Default()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{name}.Reading"))


def test_protobuf_serializer_and_deserializer(stack: Stack, client: Any, topic: Callable[..., str]) -> None:
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer

    reading = _reading_class()
    name = topic()
    values = []
    for i in range(5):
        value = reading(device=f"d{i}")
        value.at.seconds = 1_700_000_000 + i
        values.append(value)
    serializer = ProtobufSerializer(reading, client, {"use.deprecated.format": False})
    deserializer = ProtobufDeserializer(reading, {"use.deprecated.format": False})
    stored, decoded = _roundtrip(stack, name, serializer, deserializer, values)
    assert decoded == values
    latest = client.get_latest_version(f"{name}-value")
    assert latest.schema.schema_type == "PROTOBUF"
    assert {_schema_id(p) for p in stored} == {latest.schema_id}
    assert {(p or b"")[5:6] for p in stored} == {b"\x00"}, "message index [0] is the single byte 0"


def test_protobuf_text_schema_with_a_reference(registry: RegistryProcess) -> None:
    """.proto text is compiled (protoc); an import resolves through `references`."""
    url = registry.url
    suffix = uuid.uuid4().hex[:8]
    common = 'syntax = "proto3";\npackage common;\nmessage Unit { string name = 1; }\n'
    first = requests.post(f"{url}/subjects/common-{suffix}/versions", json={"schema": common, "schemaType": "PROTOBUF"})
    assert first.status_code == 200, first.text
    main = (
        'syntax = "proto3";\npackage app;\nimport "common.proto";\n'
        "message Reading { string device = 1; common.Unit unit = 2; }\n"
    )
    body = {
        "schema": main,
        "schemaType": "PROTOBUF",
        "references": [{"name": "common.proto", "subject": f"common-{suffix}", "version": 1}],
    }
    answer = requests.post(f"{url}/subjects/app-{suffix}/versions", json=body)
    assert answer.status_code == 200, answer.text
    fetched = requests.get(f"{url}/schemas/ids/{answer.json()['id']}").json()
    assert fetched["references"] == body["references"] and fetched["schemaType"] == "PROTOBUF"
    serialized = requests.get(f"{url}/schemas/ids/{answer.json()['id']}", params={"format": "serialized"}).json()
    import base64

    from google.protobuf import descriptor_pb2

    descriptor = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized["schema"]))
    assert [m.name for m in descriptor.message_type] == ["Reading"]
    # Without the reference, the import does not resolve: 42201.
    alone = {"schema": main, "schemaType": "PROTOBUF"}
    unresolved = requests.post(f"{url}/subjects/app2-{suffix}/versions", json=alone)
    assert (unresolved.status_code, unresolved.json()["error_code"]) == (422, 42201)
    # A referenced version cannot be deleted while it is used: 42206.
    refused = requests.delete(f"{url}/subjects/common-{suffix}/versions/1")
    assert (refused.status_code, refused.json()["error_code"]) == (422, 42206)
