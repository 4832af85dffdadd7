"""The Schema Registry against Confluent's answers (issue 29's table, one test a row), over
HTTP on the stack's registry and broker: references resolved transitively in each format,
Protobuf imports of Google's bundled types, canonical identity and `normalize=true`,
JSON Schema drafts and compatibility, and the error codes Confluent gives.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest
import requests
from proxy_http import REGISTRY_V1

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
    assert any("geo.Address" in m and "street" in m for m in check.json()["messages"])


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
