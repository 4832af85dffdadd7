"""The schema formats (avro, jsonschema, protobuf): the Schema Registry, the wire format, encoding.

With `schema.registry.url` set, a v2 produce in a schema format registers its
`key_schema` / `value_schema` under TopicNameStrategy subjects (`<topic>-key`,
`<topic>-value`; the registry answers an identical schema with its existing id, as
kafka-rest's lookup-then-register does) or takes `*_schema_id`, encodes every record
before any is sent, and writes Confluent's wire format: magic byte 0, the 4-byte
big-endian schema id, then the payload (Avro binary; JSON text; for protobuf the
message-index path, `[0]` as the single byte 0, then the message). Consumers of those
formats decode the framing and render what upstream renders: Avro in Avro's JSON
encoding (tagged unions), JSON Schema as the JSON, protobuf in its JSON mapping.

Errors, as upstream: an invalid schema or an id the registry does not know is 422 /
42205; a registry that cannot be reached is 408 / 40801; a schema incompatible with
the subject is the registry's 409; data that does not fit its schema is 400 and
nothing is written.

Registry answers are cached per process (subject + schema -> id, id -> parsed schema),
so only a request's first use of a schema goes over HTTP, off the event loop.
A schema with references is built with every referenced schema, fetched transitively
(`GET /subjects/{s}/versions/{v}`, Protobuf as `format=serialized`); Google's common
and well-known Protobuf types are bundled (`workbench.protobuf_types`). A schema id may
come as a JSON number or a string of digits (Jackson coerces it in kafka-rest), and on
v2 as on v3 it must be registered under the subject the request writes to, else 42205.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import orjson
import requests

from workbench.httpserver.errors import RestError

__all__ = [
    "CACHE_MAX",
    "SCHEMA_TYPE",
    "SchemaFormats",
    "Serializer",
    "coerce_schema_id",
    "encode_schema_records",
    "encode_v3_part",
]

log = logging.getLogger("workbench.restproxy")

#: The registry's `schemaType` for each embedded format.
SCHEMA_TYPE = {"avro": "AVRO", "jsonschema": "JSON", "protobuf": "PROTOBUF"}
_FORMAT = {v: k for k, v in SCHEMA_TYPE.items()}
#: Parsed schemas kept per process; past it the cache starts again.
CACHE_MAX = 10_000


@dataclass(frozen=True)
class Serializer:
    """One schema, ready to encode data with and to decode its payloads."""

    schema_id: int
    fmt: str
    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]

    def frame(self, data: Any, what: str) -> bytes:
        """Confluent's wire format for one key or value; 400 when the data does not fit."""
        try:
            payload = self.encode(data)
        except RestError:
            raise
        except Exception as exc:  # each library raises its own types; the message says which field
            reason = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            raise RestError(
                400, 400, f"Bad Request: {what} does not fit its {self.fmt} schema (id {self.schema_id}): {reason}"
            ) from None
        return b"\x00" + self.schema_id.to_bytes(4, "big") + payload


class SchemaFormats:
    """One proxy process's client of its Schema Registry, with the caches."""

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._session = requests.Session()
        self._lock = threading.Lock()
        self._ids: dict[tuple[str, str, str], int] = {}
        self._serializers: dict[int, Serializer] = {}

    def close(self) -> None:
        self._session.close()

    def warm_up(self) -> None:
        """Build one serializer of each library before serving (jsonschema's first use
        loads its metaschemas, about 2 s), so the first client does not wait for it."""
        _build(0, "avro", '{"type": "record", "name": "WarmUp", "fields": [{"name": "a", "type": "int"}]}')
        _build(0, "jsonschema", '{"type": "object", "properties": {"a": {"type": "integer"}}}').encode({"a": 1})
        import google.protobuf.json_format  # noqa: F401

    # -- the registry ------------------------------------------------------------------
    def _call(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None) -> Any:
        try:
            answer = self._session.request(
                method,
                self.url + path,
                json=body,
                params=params,
                timeout=self.timeout_s,
                headers={"Accept": "application/vnd.schemaregistry.v1+json"},
            )
        except requests.RequestException as exc:
            raise RestError(
                408, 40801, f"Schema Registry at {self.url} cannot be reached: {type(exc).__name__}"
            ) from None
        try:
            data = answer.json()
        except ValueError:
            data = None
        if answer.status_code == 200:
            return data
        code = data.get("error_code") if isinstance(data, dict) else None
        message = data.get("message") if isinstance(data, dict) else answer.text[:200]
        if answer.status_code == 409:
            raise RestError(409, 409, f"Schema Registry: {message}")
        if (
            answer.status_code in (404, 422) and code in (40401, 40402, 40403, 42201, 42202, 42208)
        ) or answer.status_code == 413:
            raise RestError(422, 42205, f"Invalid schema: {message}")
        raise RestError(408, 40801, f"Schema Registry error {answer.status_code}/{code}: {message}")

    def register_blocking(self, subject: str, fmt: str, schema: str) -> int:
        key = (subject, fmt, schema)
        with self._lock:
            known = self._ids.get(key)
        if known is not None:
            return known
        body: dict[str, Any] = {"schema": schema}
        if fmt != "avro":
            body["schemaType"] = SCHEMA_TYPE[fmt]
        schema_id = int(self._call("POST", f"/subjects/{quote(subject, safe='')}/versions", body)["id"])
        with self._lock:
            if len(self._ids) > CACHE_MAX:
                self._ids.clear()
            self._ids[key] = schema_id
        return schema_id

    def serializer_blocking(self, schema_id: int, fmt: str | None = None) -> Serializer:
        """The schema with this id, parsed; 42205 when unknown or of another format."""
        with self._lock:
            known = self._serializers.get(schema_id)
        if known is None:
            params = {"format": "serialized"}
            found = self._call("GET", f"/schemas/ids/{schema_id}", params=params)
            schema_fmt = _FORMAT.get(str(found.get("schemaType") or "AVRO"))
            if schema_fmt is None:
                raise RestError(422, 42205, f"Schema {schema_id} has a type this proxy cannot use")
            references = self._references(found.get("references"), set(), 0)
            try:
                known = _build(schema_id, schema_fmt, str(found.get("schema")), references)
            except RestError:
                raise
            except Exception as exc:  # a schema this proxy cannot build (e.g. protobuf imports of other subjects)
                raise RestError(
                    422,
                    42205,
                    f"Schema {schema_id} cannot be used by this proxy: {type(exc).__name__}: {str(exc)[:200]}",
                ) from None
            with self._lock:
                if len(self._serializers) > CACHE_MAX:
                    self._serializers.clear()
                self._serializers[schema_id] = known
        if fmt is not None and known.fmt != fmt:
            raise RestError(422, 42205, f"Schema {schema_id} is a {known.fmt} schema, not {fmt}")
        return known

    def _references(self, refs: Any, seen: set[str], depth: int) -> list[tuple[str, str]]:
        """(name, schema) of every schema `refs` names, transitively, dependencies first."""
        if not isinstance(refs, list) or not refs:
            return []
        if depth > _MAX_REFERENCE_DEPTH:
            raise RestError(422, 42205, f"Invalid schema: references nested deeper than {_MAX_REFERENCE_DEPTH}")
        out: list[tuple[str, str]] = []
        for ref in refs:
            if not isinstance(ref, dict) or not isinstance(ref.get("name"), str) or ref["name"] in seen:
                continue
            seen.add(ref["name"])
            subject, version = str(ref.get("subject")), str(ref.get("version"))
            found = self._call(
                "GET", f"/subjects/{quote(subject, safe='')}/versions/{quote(version)}", params={"format": "serialized"}
            )
            out += self._references(found.get("references"), seen, depth + 1)
            out.append((ref["name"], str(found.get("schema"))))
        return out

    # -- the event loop's entry points: HTTP only on a cache miss, in a worker thread ---
    async def serializer(self, fmt: str, subject: str, field: str, schema: Any, schema_id: Any) -> Serializer:
        """The serializer of a produce request's key or value schema (`field`: key or value),
        registered under `subject` when given as text."""
        if schema is not None:
            if not isinstance(schema, str):
                raise RestError(422, 42205, f"{field}_schema must be the schema as a string")
            with self._lock:
                cached = self._ids.get((subject, fmt, schema))
            if cached is None:
                cached = await asyncio.to_thread(self.register_blocking, subject, fmt, schema)
            schema_id = cached
        else:
            schema_id = coerce_schema_id(schema_id)
            if schema_id is None:
                raise RestError(422, 42205, f"{field}_schema_id must be a schema id (a positive integer)")
            if self.cached_version(subject, schema_id) is None:  # v3's check too: the id is the subject's
                await asyncio.to_thread(self.lookup_blocking, subject, schema_id)
        with self._lock:
            known = self._serializers.get(schema_id)
        if known is not None and known.fmt == fmt:
            return known
        return await asyncio.to_thread(self.serializer_blocking, schema_id, fmt)

    def version_blocking(self, subject: str, version: int | None) -> tuple[int, int]:
        """(schema id, version) of a subject's version (None: the latest); 42205 when missing."""
        path = f"/subjects/{quote(subject, safe='')}/versions/{'latest' if version is None else version}"
        found = self._call("GET", path)
        return int(found["id"]), int(found["version"])

    def cached_version(self, subject: str, schema_id: int) -> int | None:
        with self._lock:
            return self._ids.get((subject, "#version", str(schema_id)))

    def lookup_blocking(self, subject: str, schema_id: int) -> int:
        """The version of `subject` that holds schema `schema_id` (for v3 answers); cached."""
        key = (subject, "#version", str(schema_id))
        with self._lock:
            known = self._ids.get(key)
        if known is None:
            serializer = self.serializer_blocking(schema_id)
            found = self._call("GET", f"/schemas/ids/{schema_id}/versions")
            known = next((int(v["version"]) for v in found if v.get("subject") == subject), 0)
            if not known:
                raise RestError(
                    422, 42205, f"Schema {schema_id} ({serializer.fmt}) is not registered under subject {subject!r}"
                )
            with self._lock:
                self._ids[key] = known
        return known

    def decode(self, data: bytes | None, fmt: str) -> Any:
        """A framed key or value as the consumer's format renders it (blocking on a miss).

        Raises:
            ValueError: not in the wire format, an unknown id, or a payload that does not decode.
        """
        if data is None:
            return None
        if len(data) < 5 or data[0] != 0:
            raise ValueError("not in the Schema Registry wire format")
        try:
            serializer = self.serializer_blocking(int.from_bytes(data[1:5], "big"), fmt)
        except RestError as exc:
            raise ValueError(exc.message) from None
        return serializer.decode(data[5:])


#: Requests with more records than this are encoded in a worker thread.
_ENCODE_IN_THREAD = 1000


async def encode_schema_records(
    schemas: SchemaFormats, fmt: str, topic: str, data: dict[str, Any], records: list[Any]
) -> tuple[list[Any], tuple[int | None, int | None]]:
    """The records with keys and values in the wire format, and the (key, value) schema ids.

    Every record is encoded before any is sent, so data that does not fit writes nothing.
    """
    key = value = None
    if data.get("key_schema") is not None or data.get("key_schema_id") is not None:
        key = await schemas.serializer(fmt, f"{topic}-key", "key", data.get("key_schema"), data.get("key_schema_id"))
    if data.get("value_schema") is not None or data.get("value_schema_id") is not None:
        value = await schemas.serializer(
            fmt, f"{topic}-value", "value", data.get("value_schema"), data.get("value_schema_id")
        )

    def encode() -> list[Any]:
        out = []
        for index, record in enumerate(records):
            framed = dict(record)
            if key is not None and record.get("key") is not None:
                framed["key"] = key.frame(record["key"], f"records[{index}].key")
            if value is not None and record.get("value") is not None:
                framed["value"] = value.frame(record["value"], f"records[{index}].value")
            out.append(framed)
        return out

    encoded = await asyncio.to_thread(encode) if len(records) > _ENCODE_IN_THREAD else encode()
    return encoded, (key.schema_id if key else None, value.schema_id if value else None)


_SELECTORS = ("subject", "subject_name_strategy", "schema_id", "schema_version", "schema")
_V3_TYPES = {"AVRO": "avro", "JSONSCHEMA": "jsonschema", "PROTOBUF": "protobuf"}


async def encode_v3_part(
    schemas: SchemaFormats, topic: str, part: Any, what: str
) -> tuple[bytes | None, dict[str, Any]] | None:
    """A v3 record's schema-based key or value: (framed bytes, the result's description), or
    None when it is not schema-based (BINARY, JSON, STRING), as kafka-rest decides:

    `schema_id` or `schema_version` come without `type`; a raw `schema` needs `type` AVRO,
    JSONSCHEMA or PROTOBUF; no `type` and no selector means the subject's latest schema.
    The subject is `subject`, else TopicNameStrategy's `<topic>-key|value`.

    Raises:
        RestError: the per-record error (400 for a bad combination or data, 42205, 40801).
    """
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    selectors = [k for k in _SELECTORS if part.get(k) is not None]
    upper = str(kind).upper() if kind is not None else None
    if upper in ("BINARY", "JSON", "STRING"):
        if selectors:
            raise RestError(400, 400, f"Bad Request: {what} of type {upper} takes no schema fields ({selectors})")
        return None
    if upper is not None and upper not in _V3_TYPES:
        return None  # an unknown type: the plain path names it
    strategy = str(part.get("subject_name_strategy") or "TOPIC_NAME").upper()
    if strategy != "TOPIC_NAME" and part.get("subject") is None:
        raise RestError(
            400,
            400,
            f"Bad Request: subject_name_strategy {strategy} is not supported by this proxy; "
            "give `subject` or use TOPIC_NAME",
        )
    given = part.get("subject")
    subject: str = given if isinstance(given, str) and given else f"{topic}-{what}"
    schema_id, version = part.get("schema_id"), part.get("schema_version")
    alone = kind is None and part.get("schema") is None and (schema_id is None or version is None)
    if (schema_id is not None or version is not None) and not alone:
        raise RestError(
            400, 400, f"Bad Request: {what}: schema_id or schema_version come alone, without type or schema"
        )
    if schema_id is not None:
        coerced = coerce_schema_id(schema_id)
        if coerced is None:
            raise RestError(400, 400, f"Bad Request: {what}.schema_id must be a positive integer")
        serializer = await asyncio.to_thread(schemas.serializer_blocking, coerced)
    elif part.get("schema") is not None:
        if upper is None:
            raise RestError(400, 400, f"Bad Request: {what}: a raw schema needs type AVRO, JSONSCHEMA or PROTOBUF")
        serializer = await schemas.serializer(_V3_TYPES[upper], subject, what, part["schema"], None)
    else:
        if version is not None and (type(version) is not int or not 1 <= version < 2**31) and version != -1:
            raise RestError(400, 400, f"Bad Request: {what}.schema_version must be a positive integer")
        found_id, _ = await asyncio.to_thread(
            schemas.version_blocking, subject, None if version in (None, -1) else version
        )
        serializer = await asyncio.to_thread(schemas.serializer_blocking, found_id)
    if upper is not None and _V3_TYPES[upper] != serializer.fmt:
        raise RestError(422, 42205, f"{what}: schema {serializer.schema_id} is {serializer.fmt}, not {upper}")
    data = part.get("data")
    framed = None if data is None else serializer.frame(data, what)
    number = schemas.cached_version(subject, serializer.schema_id)
    if number is None:
        number = await asyncio.to_thread(schemas.lookup_blocking, subject, serializer.schema_id)
    info = {
        "type": {v: k for k, v in _V3_TYPES.items()}[serializer.fmt],
        "subject": subject,
        "schema_id": serializer.schema_id,
        "schema_version": number,
        "size": len(framed or b""),
    }
    return framed, info


def coerce_schema_id(value: Any) -> int | None:
    """A schema id as a client sends it: a JSON number, or a string of digits (Jackson
    coerces `"8"` to 8 in kafka-rest); None when it is neither or out of 1..2^31-1."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
        value = int(value)
    if type(value) is not int or not 1 <= value < 2**31:
        return None
    return value


#: How deep a schema's references may nest before the proxy refuses to fetch more.
_MAX_REFERENCE_DEPTH = 32


def _build(schema_id: int, fmt: str, schema: str, references: Sequence[tuple[str, str]] = ()) -> Serializer:
    """A serializer for one schema; `references` are (name, schema) of what it references,
    transitively, dependencies first."""
    if fmt == "avro":
        return _avro(schema_id, schema, references)
    if fmt == "jsonschema":
        return _jsonschema(schema_id, schema, references)
    return _protobuf(schema_id, schema, references)


def _avro(schema_id: int, text: str, references: Sequence[tuple[str, str]]) -> Serializer:
    import fastavro

    named: dict[str, Any] = {}
    for _name, ref_text in references:
        fastavro.parse_schema(json.loads(ref_text), named_schemas=named)
    document = json.loads(text)
    parsed = fastavro.parse_schema(document, named_schemas=named)
    unions = _has_union(document)

    def encode(data: Any) -> bytes:
        datum = _avro_datum(parsed, data) if unions else data  # without unions the two encodings agree
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, datum, strict_allow_default=True)
        return out.getvalue()

    def decode(payload: bytes) -> Any:
        datum = fastavro.schemaless_reader(io.BytesIO(payload), parsed, None)
        out = io.StringIO()
        fastavro.json_writer(out, parsed, [datum])  # Avro's JSON encoding, as Confluent renders it
        return orjson.Fragment(out.getvalue().strip().encode())

    return Serializer(schema_id, "avro", encode, decode)


def _has_union(node: Any) -> bool:
    """True when an Avro schema has a union anywhere (a list where a type goes)."""
    if isinstance(node, list):
        return True
    if isinstance(node, dict):
        fields = node.get("fields")
        inner = [f.get("type") for f in fields if isinstance(f, dict)] if isinstance(fields, list) else []
        inner += [node.get(k) for k in ("type", "items", "values") if not isinstance(node.get(k), str | type(None))]
        return any(_has_union(child) for child in inner)
    return False


def _avro_datum(parsed: Any, data: Any) -> Any:
    """The datum for Avro JSON (tagged unions, as Confluent expects) or plain JSON (as Karapace
    also accepts): the JSON encoding is tried first, then the plain value is validated."""
    import fastavro
    import fastavro.validation

    try:
        return next(iter(fastavro.json_reader(io.StringIO(json.dumps(data)), parsed)))
    except Exception:  # not in Avro's JSON encoding: try it as a plain value
        fastavro.validation.validate(data, parsed, raise_errors=True)
        return data


def _jsonschema(schema_id: int, text: str, references: Sequence[tuple[str, str]]) -> Serializer:
    import jsonschema

    from workbench.json_schemas import json_validator

    document = json.loads(text)
    resources: dict[str, Any] = {}
    for name, ref_text in references:
        referenced = json.loads(ref_text)
        resources[name] = referenced
        if isinstance(referenced, dict) and isinstance(referenced.get("$id"), str):
            resources.setdefault(referenced["$id"], referenced)
    validator = json_validator(document, resources)

    def encode(data: Any) -> bytes:
        error = jsonschema.exceptions.best_match(validator.iter_errors(data))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            raise ValueError(f"at {where}: {error.message[:200]}")
        return orjson.dumps(data)

    def decode(payload: bytes) -> Any:
        orjson.loads(payload)
        return orjson.Fragment(payload)

    return Serializer(schema_id, "jsonschema", encode, decode)


def _protobuf(schema_id: int, text: str, references: Sequence[tuple[str, str]]) -> Serializer:
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

    from workbench.protobuf_types import bundled_closure

    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text))
    registered = []
    for name, ref_text in references:
        dep = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(ref_text))
        dep.name = name
        registered.append(dep)
    names = {d.name for d in registered}
    imports = [i for f in (file, *registered) for i in f.dependency]
    pool = descriptor_pool.DescriptorPool()
    for known in (*bundled_closure(imports, skip=names), *registered):
        pool.Add(known)
    pool.Add(file)
    if not file.message_type:
        raise RestError(422, 42205, f"Schema {schema_id} defines no message")
    prefix = f"{file.package}." if file.package else ""
    classes = [message_factory.GetMessageClass(pool.FindMessageTypeByName(prefix + m.name)) for m in file.message_type]

    def encode(data: Any) -> bytes:
        if not isinstance(data, dict):
            raise ValueError("a protobuf message is a JSON object")
        message = json_format.ParseDict(data, classes[0]())
        serialized: bytes = message.SerializeToString()
        return b"\x00" + serialized  # message indexes [0]: the first message

    def decode(payload: bytes) -> Any:
        indexes, offset = _message_indexes(payload)
        cls = classes[indexes[0]] if indexes and indexes[0] < len(classes) else None
        if cls is None or len(indexes) > 1:
            raise ValueError(f"message index {indexes} is not a top-level message of schema {schema_id}")
        message = cls.FromString(payload[offset:])
        # Fields at their default value are printed, as kafka-rest's JsonFormat printer does.
        return json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )

    return Serializer(schema_id, "protobuf", encode, decode)


def _zigzag(payload: bytes, offset: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if offset >= len(payload) or shift > 63:
            raise ValueError("truncated message index")
        byte = payload[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), offset


def _message_indexes(payload: bytes) -> tuple[list[int], int]:
    count, offset = _zigzag(payload, 0)
    if count == 0:
        return [0], offset
    if not 0 < count <= 100:
        raise ValueError(f"bad message index count {count}")
    indexes = []
    for _ in range(count):
        index, offset = _zigzag(payload, offset)
        indexes.append(index)
    return indexes, offset
