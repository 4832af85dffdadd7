"""The shapes records take on the way into and out of a REST proxy (v2 embedded formats).

binary: keys and values travel base64-encoded; the client encodes bytes (and str, as
UTF-8) and decodes what it reads back to bytes. json: any JSON value, unchanged.
avro, jsonschema, protobuf: JSON values (Avro's JSON encoding; JSON Schema instances;
protobuf's JSON mapping) with the schema, or its registry id, in the body; the proxy
encodes them with its Schema Registry.

A traced produce (`TRACE_HEADER`, the workbench's proxy only) answers each record's
`trace` as a `ProduceTrace`; see `workbench.restproxy.tracing` for what each time means.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import orjson
import pybase64

__all__ = [
    "EncodedRecords",
    "FORMATS",
    "Format",
    "ProduceResult",
    "ProduceTrace",
    "ProxyRecord",
    "RecordOffset",
    "SCHEMA_FORMATS",
    "TRACE_HEADER",
    "decode_value",
    "encode_records",
    "parse_records",
]

Format = Literal["binary", "json", "avro", "jsonschema", "protobuf"]
FORMATS: tuple[str, ...] = ("binary", "json", "avro", "jsonschema", "protobuf")
SCHEMA_FORMATS: tuple[str, ...] = ("avro", "jsonschema", "protobuf")
#: The request header that asks the workbench's proxy to trace a produce's records.
TRACE_HEADER = "Workbench-Trace"


@dataclass(frozen=True)
class EncodedRecords:
    """A produce body built once, so a benchmark can send it many times without re-encoding."""

    body: bytes
    count: int
    format: Format


class RecordOffset(NamedTuple):
    """Where one produced record landed, or why it did not (`error_code` set).

    A named tuple: a 500-record call makes 500 of them, and a frozen dataclass cost
    the client more to build than the call's JSON did to parse.
    """

    partition: int | None
    offset: int | None
    error_code: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ProduceTrace:
    """Where one record's time went inside the proxy: wall-clock `time.time_ns()` stamps.

    received (the request reached its handler) ≤ handed (to librdkafka) ≤ delivered
    (its delivery report) ≤ answered (the answer was about to be written). `handed_ns`
    is None for a record librdkafka never took; `delivered_ns` for one that had no
    report and no refusal (refused before producing, v3).
    """

    received_ns: int
    handed_ns: int | None
    delivered_ns: int | None
    answered_ns: int

    @classmethod
    def from_json(cls, trace: Mapping[str, Any]) -> ProduceTrace:
        """The `trace` object of an answer's record (v2 `offsets[i]`, a v3 result)."""
        return cls(trace["received_ns"], trace.get("handed_ns"), trace.get("delivered_ns"), trace["answered_ns"])


@dataclass(frozen=True)
class ProduceResult:
    """The proxy's answer to a produce: one `RecordOffset` per record, in request order.

    A traced produce (`ProxyClient.produce(..., trace=True)`) also has one `ProduceTrace`
    per record in `traces`, aligned with `offsets`, and the client's own wall-clock
    stamps of the call: `client_sent_ns` just before the request was sent,
    `client_received_ns` once the answer's body was read. Untraced: `()` and None.
    """

    offsets: tuple[RecordOffset, ...]
    key_schema_id: int | None = None
    value_schema_id: int | None = None
    traces: tuple[ProduceTrace, ...] = ()
    client_sent_ns: int | None = None
    client_received_ns: int | None = None

    @property
    def errors(self) -> list[RecordOffset]:
        """The records the proxy could not write, with why (Confluent keeps HTTP 200 for partial failures)."""
        return [o for o in self.offsets if o.error_code is not None]

    @property
    def failed(self) -> int:
        """How many records the proxy could not write: a count, as in `workbench.kafka.ProduceResult`."""
        return sum(1 for o in self.offsets if o.error_code is not None)

    @property
    def acknowledged(self) -> int:
        """How many records the proxy wrote."""
        return len(self.offsets) - self.failed


class ProxyRecord(NamedTuple):
    """One record read through a proxy consumer; binary keys and values are bytes.

    A named tuple, not a dataclass: a client builds one per record read, and a frozen
    dataclass took 2.1 µs to build against 0.5 µs (500 records: 1.0 ms of a 2.1 ms parse)."""

    topic: str
    partition: int
    offset: int
    key: Any
    value: Any
    timestamp: int | None = None
    #: Share groups only: 1 on the first delivery, one more each time it is acquired again.
    delivery_count: int | None = None


def parse_records(content: bytes, format: str) -> list[ProxyRecord]:
    """The records of a v2 or share records answer, keys and values decoded for `format`."""
    decode = pybase64.b64decode if format == "binary" else _same
    return [
        ProxyRecord(
            item["topic"],
            int(item["partition"]),
            int(item["offset"]),
            None if (key := item.get("key")) is None else decode(key),
            None if (value := item.get("value")) is None else decode(value),
            item.get("timestamp"),
            item.get("delivery_count"),
        )
        for item in (orjson.loads(content) if content else [])
    ]


def encode_records(
    records: Iterable[Any],
    format: Format = "binary",
    *,
    partition: int | None = None,
    key_schema: str | None = None,
    key_schema_id: int | None = None,
    value_schema: str | None = None,
    value_schema_id: int | None = None,
) -> EncodedRecords:
    """Build a v2 produce body `{"records": [...]}` from values, (key, value) pairs or dicts.

    Args:
        records: each a value, a `(key, value)` tuple, or a dict with `key`, `value`,
            `partition` (already in wire shape for json; bytes or str for binary).
        format: "binary" (base64 on the wire) or "json".
        partition: pin every record to this partition (a per-record one wins, as on the proxy).
        key_schema, key_schema_id, value_schema, value_schema_id: the schema formats' schema
            (text, registered by the proxy under `<topic>-key|value`) or registry id.

    Raises:
        ValueError: an unknown format, a binary value that is neither bytes, str nor None,
            or schema fields with a format that has no schema.

    Usage: `encode_records([b"a", b"b"])`; `encode_records([{"value": {"x": 1}}], "json")`.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    convert = _b64 if format == "binary" else _same
    out = []
    for item in records:
        if isinstance(item, Mapping):
            record = {k: v for k, v in item.items() if k in ("key", "value", "partition")}
            for field in ("key", "value"):
                if field in record:
                    record[field] = convert(record[field])
        elif isinstance(item, tuple):
            record = {"key": convert(item[0]), "value": convert(item[1])}
        else:
            record = {"value": convert(item)}
        if partition is not None:
            record.setdefault("partition", partition)
        out.append(record)
    schemas = {
        name: given
        for name, given in (
            ("key_schema", key_schema),
            ("key_schema_id", key_schema_id),
            ("value_schema", value_schema),
            ("value_schema_id", value_schema_id),
        )
        if given is not None
    }
    if schemas and format not in SCHEMA_FORMATS:
        raise ValueError(f"{sorted(schemas)} only go with the schema formats {SCHEMA_FORMATS}, not {format!r}")
    body = json.dumps({**schemas, "records": out}, separators=(",", ":")).encode()
    return EncodedRecords(body=body, count=len(out), format=format)


def decode_value(value: Any, format: str) -> Any:
    """A key or value from a records response: bytes for binary, unchanged for json."""
    if format == "binary" and value is not None:
        return pybase64.b64decode(value)
    return value


def _b64(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.encode()
    if not isinstance(value, bytes | bytearray | memoryview):
        raise ValueError(f"binary format needs bytes, str or None, got {type(value).__name__}")
    encoded: str = pybase64.b64encode_as_string(value)
    return encoded


def _same(value: Any) -> Any:
    return value
