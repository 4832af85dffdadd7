"""The proxy's schema formats as Confluent's clients use them (issue 29's proxy rows):
schema ids as strings, the same subject check on v2 and v3, protobuf records with their
default-valued fields, and schemas with references produced and consumed through the
proxy, read and written by confluent-kafka's `SchemaRegistryClient` and serializers
(`Schema(references=[...])`) in both directions. Real broker, registry and proxy.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import requests
from proxy_http import error, media, post
from test_restproxy_schema_formats import native_values, proxy_records

from workbench import kafka
from workbench.stack import Stack

READING = 'syntax = "proto3";\npackage wbref;\nmessage Reading { int32 query = 1; Speed speed = 2; }\n' + (
    "enum Speed { LOW = 0; HIGH = 1; }\n"
)


def _register(client: Any, subject: str, text: str, kind: str, refs: Any = ()) -> int:
    from confluent_kafka.schema_registry import Schema, SchemaReference

    references = [SchemaReference(name, ref_subject, version) for name, ref_subject, version in refs]
    return int(client.register_schema(subject, Schema(text, kind, references)))


def test_v2_schema_id_as_a_string_is_coerced(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic()
    first = post(
        http, f"{proxy}/topics/{name}", {"value_schema": '"string"', "records": [{"value": "a"}]}, media("avro")
    )
    assert first.status_code == 200, first.text
    schema_id = first.json()["value_schema_id"]
    again = post(
        http, f"{proxy}/topics/{name}", {"value_schema_id": str(schema_id), "records": [{"value": "b"}]}, media("avro")
    )
    assert again.status_code == 200, again.text
    assert again.json()["value_schema_id"] == schema_id
    bad = post(http, f"{proxy}/topics/{name}", {"value_schema_id": "8x", "records": [{"value": "b"}]}, media("avro"))
    error(bad, 422, 42205)


def test_a_schema_id_of_another_subject_is_refused_on_v2_and_v3(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    name = topic()
    tag = uuid.uuid4().hex[:8]
    other_id = _register(
        registry_client, f"other-{tag}-value", json.dumps({"type": "record", "name": f"O{tag}", "fields": []}), "AVRO"
    )
    v2 = post(http, f"{proxy}/topics/{name}", {"value_schema_id": other_id, "records": [{"value": {}}]}, media("avro"))
    assert "not registered under subject" in error(v2, 422, 42205)
    cluster = requests.get(f"{proxy}/v3/clusters", timeout=30).json()["data"][0]["cluster_id"]
    v3 = http.post(
        f"{proxy}/v3/clusters/{cluster}/topics/{name}/records",
        data=json.dumps({"value": {"schema_id": other_id, "data": {}}}),
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    # v3 streams HTTP 200 and the record's error, its code in kafka-rest's "Error: <code>" form.
    assert v3.status_code == 200 and "42205" in v3.json()["message"], v3.text
    assert list(kafka.read_records(stack.kafka_config("consumer"), name)) == []


def test_protobuf_records_are_rendered_with_default_valued_fields(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic()
    records = [{"value": {"query": 5, "speed": "LOW"}}, {"value": {"query": 0, "speed": "HIGH"}}]
    answer = post(http, f"{proxy}/topics/{name}", {"value_schema": READING, "records": records}, media("protobuf"))
    assert answer.status_code == 200, answer.text
    rows = proxy_records(http, proxy, name, "protobuf", 2)
    assert [r["value"] for r in rows] == [{"query": 5, "speed": "LOW"}, {"query": 0, "speed": "HIGH"}]


def test_protobuf_produce_with_a_schema_importing_another_subject(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    name, tag = topic(), uuid.uuid4().hex[:8]
    country = f'syntax = "proto3";\npackage geo{tag};\nmessage Country {{ string code = 1; }}\n'
    address = (
        f'syntax = "proto3";\npackage geo{tag};\nimport "country.proto";\n'
        "message Address { string street = 1; Country country = 2; }\n"
    )
    person = (
        f'syntax = "proto3";\npackage people{tag};\nimport "address.proto";\nimport "google/type/money.proto";\n'
        f"message Person {{ string name = 1; geo{tag}.Address home = 2; google.type.Money pay = 3; }}\n"
    )
    _register(registry_client, f"country-{tag}", country, "PROTOBUF")
    _register(registry_client, f"address-{tag}", address, "PROTOBUF", [("country.proto", f"country-{tag}", 1)])
    person_id = _register(
        registry_client, f"{name}-value", person, "PROTOBUF", [("address.proto", f"address-{tag}", 1)]
    )
    value: dict[str, Any] = {
        "name": "Ada",
        "home": {"street": "Main", "country": {"code": "UK"}},
        "pay": {"currency_code": "GBP", "units": "3"},
    }
    answer = post(
        http, f"{proxy}/topics/{name}", {"value_schema_id": person_id, "records": [{"value": value}]}, media("protobuf")
    )
    assert answer.status_code == 200, answer.text
    rows = proxy_records(http, proxy, name, "protobuf", 1)
    # Money's `nanos` is at its default: printed all the same.
    assert rows[0]["value"] == {**value, "pay": {"currency_code": "GBP", "units": "3", "nanos": 0}}


def _avro_chain(client: Any, tag: str, subject: str) -> tuple[int, dict[str, Any]]:
    ns = f"geo{tag}"
    country = {"type": "record", "name": "Country", "namespace": ns, "fields": [{"name": "code", "type": "string"}]}
    address = {
        "type": "record",
        "name": "Address",
        "namespace": ns,
        "fields": [{"name": "street", "type": "string"}, {"name": "country", "type": f"{ns}.Country"}],
    }
    person = {
        "type": "record",
        "name": "Person",
        "namespace": ns,
        "fields": [{"name": "home", "type": f"{ns}.Address"}],
    }
    _register(client, f"country-{tag}", json.dumps(country), "AVRO")
    _register(client, f"address-{tag}", json.dumps(address), "AVRO", [(f"{ns}.Country", f"country-{tag}", 1)])
    person_id = _register(client, subject, json.dumps(person), "AVRO", [(f"{ns}.Address", f"address-{tag}", 1)])
    return person_id, person


def test_avro_with_references_from_the_proxy_to_confluent_kafka(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    name, tag = topic(), uuid.uuid4().hex[:8]
    person_id, _ = _avro_chain(registry_client, tag, f"{name}-value")
    value = {"home": {"street": "Main", "country": {"code": "UK"}}}
    answer = post(
        http, f"{proxy}/topics/{name}", {"value_schema_id": person_id, "records": [{"value": value}]}, media("avro")
    )
    assert answer.status_code == 200, answer.text
    assert native_values(stack, name, AvroDeserializer(registry_client)) == [value]


def test_avro_with_references_from_confluent_kafka_to_the_proxy(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    from confluent_kafka.schema_registry import Schema, SchemaReference
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    name, tag = topic(), uuid.uuid4().hex[:8]
    person_id, person = _avro_chain(registry_client, tag, f"{name}-value")
    schema = Schema(json.dumps(person), "AVRO", [SchemaReference(f"geo{tag}.Address", f"address-{tag}", 1)])
    serializer = AvroSerializer(
        registry_client, schema, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    value = {"home": {"street": "Main", "country": {"code": "UK"}}}
    payload = serializer(value, SerializationContext(name, MessageField.VALUE))
    assert payload is not None and int.from_bytes(payload[1:5], "big") == person_id
    kafka.produce(stack.kafka_config("producer"), name, [(None, payload)])
    assert [r["value"] for r in proxy_records(http, proxy, name, "avro", 1)] == [value]


def test_json_schema_with_references_both_directions(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], registry_client: Any
) -> None:
    from confluent_kafka.schema_registry import Schema, SchemaReference
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    name, tag = topic(), uuid.uuid4().hex[:8]
    _register(
        registry_client,
        f"jcountry-{tag}",
        json.dumps({"type": "object", "properties": {"code": {"type": "string"}}}),
        "JSON",
    )
    address = {"type": "object", "properties": {"country": {"$ref": "country.json"}}, "required": ["country"]}
    _register(registry_client, f"jaddress-{tag}", json.dumps(address), "JSON", [("country.json", f"jcountry-{tag}", 1)])
    person = {"type": "object", "properties": {"home": {"$ref": "address.json"}}, "required": ["home"]}
    refs = [SchemaReference("address.json", f"jaddress-{tag}", 1)]
    person_id = _register(
        registry_client, f"{name}-value", json.dumps(person), "JSON", [("address.json", f"jaddress-{tag}", 1)]
    )
    value = {"home": {"country": {"code": "UK"}}}
    answer = post(
        http,
        f"{proxy}/topics/{name}",
        {"value_schema_id": person_id, "records": [{"value": value}]},
        media("jsonschema"),
    )
    assert answer.status_code == 200, answer.text
    # Data that breaks a referenced schema is refused by the proxy: the reference is enforced.
    bad = {"value_schema_id": person_id, "records": [{"value": {"home": {"country": {"code": 5}}}}]}
    error(post(http, f"{proxy}/topics/{name}", bad, media("jsonschema")), 400, 400)
    serializer = JSONSerializer(
        Schema(json.dumps(person), "JSON", refs),
        registry_client,
        conf={"auto.register.schemas": False, "use.latest.version": True},
    )
    payload = serializer({"home": {"country": {"code": "FR"}}}, SerializationContext(name, MessageField.VALUE))
    kafka.produce(stack.kafka_config("producer"), name, [(None, payload)])
    assert [r["value"] for r in proxy_records(http, proxy, name, "jsonschema", 2)] == [
        value,
        {"home": {"country": {"code": "FR"}}},
    ]
    assert native_values(stack, name, JSONDeserializer(None, schema_registry_client=registry_client)) == [
        value,
        {"home": {"country": {"code": "FR"}}},
    ]
