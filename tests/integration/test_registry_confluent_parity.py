"""The Schema Registry against Confluent's answers (issue 29's table, one test a row), over
HTTP on the stack's registry and broker: references resolved transitively in each format,
Protobuf imports of Google's bundled types, canonical identity and `normalize=true`,
JSON Schema drafts and compatibility, and the error codes Confluent gives. Issue 39's
behaviours close the module: Protobuf compatibility across imports and by scalar groups,
Avro's and Protobuf's canonical texts as Confluent prints them, and Confluent's messages.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest
import requests
from proxy_http import REGISTRY_V1

from workbench import kafka
from workbench.stack import Stack


@pytest.fixture(scope="module")
def url(stack: Stack) -> str:
    assert stack.registry_url, "the local profile runs a Schema Registry"
    return stack.registry_url.rstrip("/")


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _post(url: str, body: Any, **params: str) -> requests.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return requests.post(url, data=data, params=params, headers={"Content-Type": REGISTRY_V1}, timeout=60)


def _register(url: str, subject: str, schema: str, schema_type: str = "AVRO", refs: Any = (), **params: str) -> Any:
    body: dict[str, Any] = {"schema": schema, "schemaType": schema_type}
    if refs:
        body["references"] = list(refs)
    return _post(f"{url}/subjects/{subject}/versions", body, **params)


def _ok_id(answer: requests.Response) -> int:
    assert answer.status_code == 200, answer.text
    return int(answer.json()["id"])


def _code(answer: requests.Response) -> tuple[int, int]:
    return answer.status_code, answer.json()["error_code"]


def _ref(name: str, subject: str, version: int = 1) -> dict[str, Any]:
    return {"name": name, "subject": subject, "version": version}


# -- references, per format -------------------------------------------------------------
def test_avro_references_resolve_transitively(url: str) -> None:
    ns = _name("geo").replace("-", "_")
    country, address, person = _name("p-country"), _name("p-address"), _name("p-person")
    country_schema = {
        "type": "record",
        "name": "Country",
        "namespace": ns,
        "fields": [{"name": "code", "type": "string"}],
    }
    address_schema = {
        "type": "record",
        "name": "Address",
        "namespace": ns,
        "fields": [{"name": "street", "type": "string"}, {"name": "country", "type": f"{ns}.Country"}],
    }
    person_schema = {"type": "record", "name": "Person", "fields": [{"name": "home", "type": f"{ns}.Address"}]}
    _ok_id(_register(url, country, json.dumps(country_schema)))
    _ok_id(_register(url, address, json.dumps(address_schema), refs=[_ref(f"{ns}.Country", country)]))
    person_id = _ok_id(_register(url, person, json.dumps(person_schema), refs=[_ref(f"{ns}.Address", address)]))
    stored = requests.get(f"{url}/schemas/ids/{person_id}", timeout=30).json()
    assert stored["references"] == [_ref(f"{ns}.Address", address)]
    # Stored in Avro's canonical form: compact JSON in Avro's key order.
    assert stored["schema"] == json.dumps(person_schema, separators=(",", ":"))
    # Without the reference, Country is unknown: 42201 naming it.
    missing = _register(url, _name("p-person"), json.dumps(address_schema))
    assert _code(missing) == (422, 42201) and "Country" in missing.json()["message"]


def test_json_schema_references_resolve_transitively(url: str) -> None:
    country, address, person = _name("j-country"), _name("j-address"), _name("j-person")
    _ok_id(_register(url, country, json.dumps({"type": "object", "properties": {"code": {"type": "string"}}}), "JSON"))
    address_schema = {"type": "object", "properties": {"country": {"$ref": "country.json"}}}
    _ok_id(_register(url, address, json.dumps(address_schema), "JSON", [_ref("country.json", country)]))
    person_schema = {"type": "object", "properties": {"home": {"$ref": "address.json"}}}
    _ok_id(_register(url, person, json.dumps(person_schema), "JSON", [_ref("address.json", address)]))
    unresolved = _register(url, _name("j-person"), json.dumps(person_schema), "JSON")
    assert _code(unresolved) == (422, 42201) and "address.json" in unresolved.json()["message"]


PROTO_COUNTRY = 'syntax = "proto3";\npackage geo;\nmessage Country { string code = 1; }\n'
PROTO_ADDRESS = (
    'syntax = "proto3";\npackage geo;\nimport "country.proto";\n'
    "message Address { string street = 1; Country country = 2; }\n"
)
PROTO_PERSON = (
    'syntax = "proto3";\npackage people;\nimport "address.proto";\n'
    "message Person { string name = 1; geo.Address home = 2; }\n"
)


def _proto_chain(url: str) -> tuple[str, str, str, int]:
    country, address, person = _name("pb-country"), _name("pb-address"), _name("pb-person")
    _ok_id(_register(url, country, PROTO_COUNTRY, "PROTOBUF"))
    _ok_id(_register(url, address, PROTO_ADDRESS, "PROTOBUF", [_ref("country.proto", country)]))
    person_id = _ok_id(_register(url, person, PROTO_PERSON, "PROTOBUF", [_ref("address.proto", address)]))
    return country, address, person, person_id


def test_protobuf_imports_two_levels_deep(url: str) -> None:
    _country, address, person, person_id = _proto_chain(url)
    assert requests.get(f"{url}/subjects/{person}/versions/1", timeout=30).json()["references"] == [
        _ref("address.proto", address)
    ]
    serialized = requests.get(f"{url}/schemas/ids/{person_id}", params={"format": "serialized"}, timeout=30).json()
    from google.protobuf import descriptor_pb2

    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized["schema"]))
    assert [m.name for m in file.message_type] == ["Person"] and list(file.dependency) == ["address.proto"]
    # A referenced version is served serialized too (what confluent-kafka's deserializer asks for).
    ref = requests.get(f"{url}/subjects/{address}/versions/1", params={"format": "serialized"}, timeout=30).json()
    assert descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(ref["schema"])).message_type[0].name == (
        "Address"
    )


@pytest.mark.parametrize(
    "imported",
    ["google/type/postal_address.proto", "google/type/money.proto", "google/protobuf/timestamp.proto"],
)
def test_protobuf_imports_googles_bundled_types_without_references(url: str, imported: str) -> None:
    message = {
        "google/type/postal_address.proto": "google.type.PostalAddress",
        "google/type/money.proto": "google.type.Money",
        "google/protobuf/timestamp.proto": "google.protobuf.Timestamp",
    }[imported]
    schema = f'syntax = "proto3";\nimport "{imported}";\nmessage Customer {{ {message} field = 1; }}\n'
    _ok_id(_register(url, _name("pb-google"), schema, "PROTOBUF"))


def test_protobuf_same_schema_same_id_whitespace_normalize_and_descriptor(url: str) -> None:
    package = f"same.p{uuid.uuid4().hex[:8]}"
    text = f'syntax = "proto3";\npackage {package};\nmessage Reading {{ string device = 1; double t = 2; }}\n'
    first = _ok_id(_register(url, _name("pb-same"), text, "PROTOBUF"))
    spaced = text.replace("{ ", "{\n   // the device\n   ").replace("; ", ";\n\n  ")
    assert _ok_id(_register(url, _name("pb-same"), spaced, "PROTOBUF")) == first
    assert _ok_id(_register(url, _name("pb-same"), spaced, "PROTOBUF", normalize="true")) == first
    serialized = requests.get(f"{url}/schemas/ids/{first}", params={"format": "serialized"}, timeout=30).json()
    assert _ok_id(_register(url, _name("pb-same"), serialized["schema"], "PROTOBUF")) == first
    # The stored text is the canonical one, whatever form came first.
    assert "// the device" not in requests.get(f"{url}/schemas/ids/{first}", timeout=30).json()["schema"]


def test_json_key_order_is_one_schema_only_under_normalize(url: str) -> None:
    tag = uuid.uuid4().hex[:8]
    ordered = json.dumps({"title": tag, "type": "object", "properties": {"a": {"type": "string"}}})
    permuted = json.dumps({"properties": {"a": {"type": "string"}}, "type": "object", "title": tag})
    first = _ok_id(_register(url, _name("j-order"), ordered, "JSON"))
    assert _ok_id(_register(url, _name("j-order"), permuted, "JSON")) != first  # Confluent: canonical keeps order
    normalized = _ok_id(_register(url, _name("j-order"), ordered, "JSON", normalize="true"))
    assert _ok_id(_register(url, _name("j-order"), permuted, "JSON", normalize="true")) == normalized
    assert json.loads(requests.get(f"{url}/schemas/ids/{normalized}", timeout=30).json()["schema"]) == json.loads(
        ordered
    )


def test_compatibility_sees_a_change_in_a_referenced_protobuf_message(url: str) -> None:
    country, address, person, _ = _proto_chain(url)
    broken_address = PROTO_ADDRESS.replace("string street = 1;", "int64 street = 1;")
    requests.put(f"{url}/config/{address}", json={"compatibility": "NONE"}, timeout=30)
    assert _ok_id(_register(url, address, broken_address, "PROTOBUF", [_ref("country.proto", country)]))
    check = _post(
        f"{url}/compatibility/subjects/{person}/versions/latest",
        {"schema": PROTO_PERSON, "schemaType": "PROTOBUF", "references": [_ref("address.proto", address, 2)]},
        verbose="true",
    )
    assert check.status_code == 200, check.text
    assert check.json()["is_compatible"] is False
    # Confluent's differences: inside geo.Address (reached through Person's field 2), and that field.
    assert check.json()["messages"] == [
        "BACKWARD: FIELD_SCALAR_KIND_CHANGED at #/Address/1",
        "BACKWARD: FIELD_NAMED_TYPE_CHANGED at #/Person/2",
    ]


def test_reference_cycles_are_refused(url: str) -> None:
    a, b = _name("cyc-a"), _name("cyc-b")
    _ok_id(_register(url, a, '{"type": "object"}', "JSON"))
    _ok_id(_register(url, b, '{"type": "object"}', "JSON", [_ref("a.json", a, -1)]))
    requests.put(f"{url}/config/{a}", json={"compatibility": "NONE"}, timeout=30)
    _ok_id(_register(url, a, '{"type": "object", "title": "x"}', "JSON", [_ref("b.json", b, 1)]))
    # a@latest -> b@1 -> a@latest: refused in one line, never a recursion error.
    answer = _register(url, _name("cyc-c"), '{"type": "object"}', "JSON", [_ref("a.json", a, -1)])
    assert _code(answer) == (422, 42201) and "cycle" in answer.json()["message"]


# -- JSON Schema drafts and compatibility ----------------------------------------------
def test_json_schema_without_dollar_schema_is_draft_07(url: str) -> None:
    tuple_items = json.dumps({"type": "array", "items": [{"type": "integer"}]})
    _ok_id(_register(url, _name("j-draft"), tuple_items, "JSON"))
    # The same form under draft 2020-12 is invalid there ("items" must be a schema).
    newer = json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array", "items": [1]})
    assert _code(_register(url, _name("j-draft"), newer, "JSON")) == (422, 42201)


@pytest.mark.parametrize(
    ("old", "new", "status"),
    [
        ({"type": "string"}, {"type": "string", "maxLength": 3}, 409),  # a narrowing change
        (True, False, 409),  # Confluent: TYPE_CHANGED (Karapace accepts it)
        (False, True, 200),
        ({"type": "string", "maxLength": 3}, {"type": "string"}, 200),
    ],
    ids=["maxLength-added", "true-to-false", "false-to-true", "maxLength-removed"],
)
def test_json_schema_backward_registration(url: str, old: Any, new: Any, status: int) -> None:
    subject = _name("j-compat")
    _ok_id(_register(url, subject, json.dumps(old), "JSON"))
    answer = _register(url, subject, json.dumps(new), "JSON")
    assert answer.status_code == status, answer.text
    if status == 409:
        assert answer.json()["error_code"] == 409


# -- error codes --------------------------------------------------------------------------
def test_compatibility_against_an_unknown_subjects_version_is_40402(url: str) -> None:
    answer = _post(f"{url}/compatibility/subjects/{_name('unknown')}/versions/1", {"schema": '"string"'})
    assert _code(answer) == (404, 40402)
    assert answer.json()["message"] == "Version 1 not found."


def test_mode_of_a_subject_without_its_own_is_40409(url: str) -> None:
    subject = _name("unknown")
    answer = requests.get(f"{url}/mode/{subject}", timeout=30)
    assert _code(answer) == (404, 40409)
    assert answer.json()["message"] == f"Subject '{subject}' does not have subject-level mode configured"
    assert requests.get(f"{url}/mode/{subject}", params={"defaultToGlobal": "true"}, timeout=30).json() == {
        "mode": "READWRITE"
    }
    assert requests.get(f"{url}/mode", timeout=30).json() == {"mode": "READWRITE"}


def test_a_schema_id_that_is_no_number_is_404_404(url: str) -> None:
    assert _code(requests.get(f"{url}/schemas/ids/invalid", timeout=30)) == (404, 404)
    assert _code(requests.get(f"{url}/schemas/ids/999999", timeout=30)) == (404, 40403)


@pytest.mark.parametrize("body", [b"-1", b"[]", b'"text"'])
def test_a_body_that_is_json_but_no_object_is_422(url: str, body: bytes) -> None:
    assert _code(_post(f"{url}/subjects/{_name('s')}/versions", body)) == (422, 422)
    assert _code(_post(f"{url}/subjects/{_name('s')}/versions", b"{not json")) == (400, 400)


# -- issue 39: the last deviations from Confluent ------------------------------------------
def _protobuf_classes(files: list[Any], message: str) -> Any:
    """A message class built in a pool of its own from these `FileDescriptorProto`s, as
    protoc-generated code holds them (two versions of one message can then coexist)."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(message))


def test_protobuf_dropping_an_imported_message_with_its_field_is_compatible(
    url: str, stack: Stack, registry_client: Any, topic: Any
) -> None:
    """Confluent compares the file's own messages and reaches NoReference only through field 2:
    dropping the field and the import is FIELD_REMOVED, compatible under BACKWARD (200)."""
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import descriptor_pb2

    package = f"refs.p{uuid.uuid4().hex[:8]}"
    no_reference = f'syntax = "proto3";\npackage {package};\nmessage NoReference {{ string x = 1; }}\n'
    with_reference = (
        f'syntax = "proto3";\npackage {package};\nimport "NoReference.proto";\n'
        "message WithReference { string name = 1; NoReference ref = 2; }\n"
    )
    without = f'syntax = "proto3";\npackage {package};\nmessage WithReference {{ string name = 1; }}\n'
    referenced, subject = _name("pb-noref"), _name("pb-withref")
    _ok_id(_register(url, referenced, no_reference, "PROTOBUF"))
    _ok_id(_register(url, subject, with_reference, "PROTOBUF", [_ref("NoReference.proto", referenced)]))
    assert _ok_id(_register(url, subject, without, "PROTOBUF"))
    assert requests.get(f"{url}/subjects/{subject}/versions", timeout=30).json() == [1, 2]

    # The same through confluent-kafka's serializer: version 1 imports NoReference (registered
    # as a reference by the serializer), version 2 drops it; both deserialize as version 2.
    dependency = descriptor_pb2.FileDescriptorProto(
        name=f"{package}/no_reference.proto", package=package, syntax="proto3"
    )
    dependency.message_type.add(name="NoReference").field.add(name="x", number=1, type=9, label=1)
    first = descriptor_pb2.FileDescriptorProto(
        name=f"{package}/with_reference.proto", package=package, syntax="proto3", dependency=[dependency.name]
    )
    message = first.message_type.add(name="WithReference")
    message.field.add(name="name", number=1, type=9, label=1)
    message.field.add(name="ref", number=2, type=11, label=1, type_name=f".{package}.NoReference")
    second = descriptor_pb2.FileDescriptorProto(name=first.name, package=package, syntax="proto3")
    second.message_type.add(name="WithReference").field.add(name="name", number=1, type=9, label=1)
    old = _protobuf_classes([dependency, first], f"{package}.WithReference")
    new = _protobuf_classes([second], f"{package}.WithReference")
    name = topic()
    ctx = SerializationContext(name, MessageField.VALUE)
    conf = {"use.deprecated.format": False}
    written = [
        ProtobufSerializer(old, registry_client, conf)(old(name="a", ref={"x": "kept"}), ctx),
        ProtobufSerializer(new, registry_client, conf)(new(name="b"), ctx),
    ]
    versions = registry_client.get_versions(f"{name}-value")
    assert versions == [1, 2]
    assert [int.from_bytes((p or b"")[1:5], "big") for p in written] == [
        registry_client.get_version(f"{name}-value", v).schema_id for v in versions
    ]
    kafka.produce(stack.kafka_config("producer"), name, [(None, p) for p in written])
    read = [r.value for r in kafka.read_records(stack.kafka_config("consumer"), name)]
    decoded = [ProtobufDeserializer(new, conf)(value, ctx) for value in read]
    assert [d.name for d in decoded] == ["a", "b"]


@pytest.mark.parametrize(
    ("old", "new", "compatible"),
    [
        ("int32", "int64", True),
        ("int32", "uint64", True),
        ("uint32", "bool", True),
        ("int32", "Kind", True),
        ("sint32", "sint64", True),
        ("string", "bytes", True),
        ("fixed32", "sfixed32", True),
        ("fixed64", "sfixed64", True),
        ("int32", "sint32", False),
        ("int32", "string", False),
        ("fixed32", "fixed64", False),
    ],
)
def test_protobuf_scalar_types_compare_by_confluents_groups(url: str, old: str, new: str, compatible: bool) -> None:
    """int32, int64, uint32, uint64, bool and enums are one group; sint32/sint64, string/bytes,
    fixed32/sfixed32 and fixed64/sfixed64 are the others: a change within one is 200, across
    them 409 (`FIELD_SCALAR_KIND_CHANGED`)."""
    package = f"scalars.p{uuid.uuid4().hex[:8]}"
    schema = 'syntax = "proto3";\npackage {p};\nmessage M {{ string name = 1; {t} x = 2; }}\nenum Kind {{ A = 0; }}\n'
    subject = _name("pb-scalar")
    _ok_id(_register(url, subject, schema.format(p=package, t=old), "PROTOBUF"))
    body = {"schema": schema.format(p=package, t=new), "schemaType": "PROTOBUF"}
    check = _post(f"{url}/compatibility/subjects/{subject}/versions/latest", body, verbose="true")
    expected = [] if compatible else ["BACKWARD: FIELD_SCALAR_KIND_CHANGED at #/M/2"]
    assert check.json() == {"is_compatible": compatible, "messages": expected}
    answer = _register(url, subject, body["schema"], "PROTOBUF")
    assert answer.status_code == (200 if compatible else 409), answer.text
    if not compatible:
        assert answer.json() == {
            "error_code": 409,
            "message": f'Schema being registered is incompatible with an earlier schema for subject "{subject}", '
            "details: [BACKWARD: FIELD_SCALAR_KIND_CHANGED at #/M/2]",
        }


def test_avro_names_are_relative_to_the_namespace_and_reregistration_keeps_the_id(
    url: str, stack: Stack, registry_client: Any, topic: Any
) -> None:
    """As Avro Java's `Schema.toString`: `Address` inside `com.netapp...`, the nested `Phone`
    without a namespace of its own; that text, registered again, is the same schema."""
    from confluent_kafka.schema_registry import Schema, SchemaReference
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    namespace = f"com.netapp.t{uuid.uuid4().hex[:8]}"
    address = {
        "type": "record",
        "name": "Address",
        "namespace": namespace,
        "fields": [{"name": "street", "type": "string"}],
    }
    phone = {
        "type": "record",
        "name": "Phone",
        "namespace": namespace,
        "fields": [{"name": "number", "type": "string"}],
    }
    person = {
        "type": "record",
        "name": "Person",
        "namespace": namespace,
        "fields": [{"name": "home", "type": f"{namespace}.Address"}, {"name": "phone", "type": phone}],
    }
    address_subject = _name("avro-address")
    _ok_id(_register(url, address_subject, json.dumps(address)))
    references = [SchemaReference(f"{namespace}.Address", address_subject, 1)]
    schema_id = registry_client.register_schema(_name("avro-person"), Schema(json.dumps(person), "AVRO", references))
    stored = registry_client.get_schema(schema_id).schema_str
    assert stored == (
        f'{{"type":"record","name":"Person","namespace":"{namespace}","fields":[{{"name":"home","type":"Address"}},'
        '{"name":"phone","type":{"type":"record","name":"Phone","fields":[{"name":"number","type":"string"}]}}]}'
    )
    # The stored text (what Confluent stores for it too), registered again elsewhere: one id.
    assert registry_client.register_schema(_name("avro-person"), Schema(stored, "AVRO", references)) == schema_id
    name = topic()
    ctx = SerializationContext(name, MessageField.VALUE)
    serializer = AvroSerializer(registry_client, Schema(json.dumps(person), "AVRO", references))
    value = {"home": {"street": "Main St"}, "phone": {"number": "555"}}
    payload = serializer(value, ctx)
    assert payload is not None and int.from_bytes(payload[1:5], "big") == schema_id
    kafka.produce(stack.kafka_config("producer"), name, [(None, payload)])
    read = [r.value for r in kafka.read_records(stack.kafka_config("consumer"), name)]
    assert [AvroDeserializer(registry_client)(v, ctx) for v in read] == [value]


PROTO_LAYOUT = (
    'syntax = "proto3"; package geo.p{tag};  import "google/protobuf/timestamp.proto";\n'
    "option java_multiple_files = true; message Site {{ string name = 1; // a comment\n"
    "  map<string,Reading> last = 2; google.protobuf.Timestamp at = 3;\n"
    "  message Point {{ double lat = 1; }} }}\nmessage Reading {{ Site.Point at = 1; }}\n"
)
PROTO_LAYOUT_CANONICAL = """syntax = "proto3";
package geo.p{tag};

import "google/protobuf/timestamp.proto";

option java_multiple_files = true;

message Site {{
  string name = 1;
  map<string, Reading> last = 2;
  google.protobuf.Timestamp at = 3;

  message Point {{
    double lat = 1;
  }}
}}
message Reading {{
  Site.Point at = 1;
}}
"""


def test_protobuf_canonical_text_is_laid_out_as_confluent_prints_it(url: str) -> None:
    tag = uuid.uuid4().hex[:8]
    text, canonical = PROTO_LAYOUT.format(tag=tag), PROTO_LAYOUT_CANONICAL.format(tag=tag)
    schema_id = _ok_id(_register(url, _name("pb-layout"), text, "PROTOBUF"))
    assert requests.get(f"{url}/schemas/ids/{schema_id}", timeout=30).json()["schema"] == canonical
    assert _ok_id(_register(url, _name("pb-layout"), canonical, "PROTOBUF")) == schema_id
    # normalize=true: every type fully qualified (a map's value too).
    normalized_id = _ok_id(_register(url, _name("pb-layout"), text, "PROTOBUF", normalize="true"))
    normalized = requests.get(f"{url}/schemas/ids/{normalized_id}", timeout=30).json()["schema"]
    assert f"  map<string, .geo.p{tag}.Reading> last = 2;\n  .google.protobuf.Timestamp at = 3;\n" in normalized
    assert f"  .geo.p{tag}.Site.Point at = 1;\n" in normalized


def test_confluents_error_messages(url: str) -> None:
    referenced, user = _name("msg-ref"), _name("msg-user")
    _ok_id(_register(url, referenced, '{"type":"record","name":"Ref","fields":[]}'))
    _ok_id(
        _register(
            url,
            user,
            '{"type":"record","name":"User","fields":[{"name":"r","type":"Ref"}]}',
            refs=[_ref("Ref", referenced)],
        )
    )
    in_use = requests.delete(f"{url}/subjects/{referenced}/versions/1", timeout=30)
    assert _code(in_use) == (422, 42206)
    assert in_use.json()["message"] == (
        f"One or more references exist to the schema {{magic=1,keytype=SCHEMA,subject={referenced},version=1}}."
    )
    empty = _post(f"{url}/subjects/{_name('msg')}/versions", {"schema": ""})
    assert (_code(empty), empty.json()["message"]) == ((422, 42201), "Empty schema")
    level = requests.put(f"{url}/config/{user}", json={"compatibility": "SOMETIMES"}, timeout=30)
    assert (_code(level), level.json()["message"]) == (
        (422, 42203),
        "Invalid compatibility level. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
    )
    media = requests.post(
        f"{url}/subjects/{user}/versions", data=b"{}", headers={"Content-Type": "text/xml"}, timeout=30
    )
    assert (_code(media), media.json()["message"]) == ((415, 415), "HTTP 415 Unsupported Media Type")
    gone = _name("msg-gone")
    _ok_id(_register(url, gone, '"string"'))
    assert requests.delete(f"{url}/subjects/{gone}/versions/1", timeout=30).json() == 1
    again = requests.delete(f"{url}/subjects/{gone}/versions/1", timeout=30)
    assert (_code(again), again.json()["message"]) == (
        (404, 40406),
        f"Subject '{gone}' Version 1 was soft deleted.Set permanent=true to delete permanently",
    )
    _ok_id(_register(url, gone, '"int"'))
    assert requests.delete(f"{url}/subjects/{gone}", timeout=30).json() == [2]
    subject_again = requests.delete(f"{url}/subjects/{gone}", timeout=30)
    assert (_code(subject_again), subject_again.json()["message"]) == (
        (404, 40404),
        f"Subject '{gone}' was soft deleted.Set permanent=true to delete permanently",
    )


def test_deletes_are_checked_in_confluents_order(url: str) -> None:
    """Confluent 8.x: a soft delete of a soft-deleted version is 40406 before any reference
    check; a soft-deleted referrer holds back a hard delete only; a subject's own references
    between its versions do not hold back the subject's delete."""
    referenced, user = _name("order-ref"), _name("order-user")
    _ok_id(_register(url, referenced, '{"type":"record","name":"Ref","fields":[]}'))
    user_schema = '{"type":"record","name":"User","fields":[{"name":"r","type":"Ref"}]}'
    _ok_id(_register(url, user, user_schema, refs=[_ref("Ref", referenced)]))
    key = f"{{magic=1,keytype=SCHEMA,subject={referenced},version=1}}"
    in_use = (422, 42206), f"One or more references exist to the schema {key}."
    assert requests.delete(f"{url}/subjects/{user}/versions/1", timeout=30).json() == 1
    # The referrer is soft-deleted: a soft delete goes through, a hard delete does not.
    assert requests.delete(f"{url}/subjects/{referenced}/versions/1", timeout=30).json() == 1
    again = requests.delete(f"{url}/subjects/{referenced}/versions/1", timeout=30)
    assert (_code(again), again.json()["message"]) == (
        (404, 40406),
        f"Subject '{referenced}' Version 1 was soft deleted.Set permanent=true to delete permanently",
    )
    hard = requests.delete(f"{url}/subjects/{referenced}/versions/1", params={"permanent": "true"}, timeout=30)
    assert (_code(hard), hard.json()["message"]) == in_use
    hard_subject = requests.delete(f"{url}/subjects/{referenced}", params={"permanent": "true"}, timeout=30)
    assert (_code(hard_subject), hard_subject.json()["message"]) == in_use
    # Once the referrer is gone for good, so may the referenced version be.
    assert requests.delete(f"{url}/subjects/{user}", params={"permanent": "true"}, timeout=30).json() == [1]
    assert requests.delete(f"{url}/subjects/{referenced}", params={"permanent": "true"}, timeout=30).json() == [1]

    # Version 2 of a subject refers to its version 1: the subject goes, soft then hard.
    own = _name("order-own")
    _ok_id(_register(url, own, '{"type":"record","name":"Base","fields":[]}'))
    requests.put(f"{url}/config/{own}", json={"compatibility": "NONE"}, timeout=30)
    derived = '{"type":"record","name":"Derived","fields":[{"name":"b","type":"Base"}]}'
    _ok_id(_register(url, own, derived, refs=[_ref("Base", own)]))
    version_1 = requests.delete(f"{url}/subjects/{own}/versions/1", timeout=30)
    assert (_code(version_1), version_1.json()["message"]) == (
        (422, 42206),
        f"One or more references exist to the schema {{magic=1,keytype=SCHEMA,subject={own},version=1}}.",
    )
    assert requests.delete(f"{url}/subjects/{own}", timeout=30).json() == [1, 2]
    assert requests.delete(f"{url}/subjects/{own}", params={"permanent": "true"}, timeout=30).json() == [1, 2]
    assert _code(requests.get(f"{url}/subjects/{own}/versions", timeout=30)) == (404, 40401)
