"""What a data format costs: the same readings produced as binary, JSON, Avro, JSON Schema
and Protobuf, natively (confluent-kafka's serializers) and through the REST proxy.

One logical record (a device reading: id, two measurements, a sequence number and a
free-text note that brings it to about `record_bytes` as JSON; no key) is written in every
format, so the differences are the format's: bytes on the wire (Avro and Protobuf do not
repeat field names; the schema formats add a 5-byte frame), CPU per record, records per
second, and the first call's cost (registering the schema) against later calls (the
id cached by the serializer or the proxy).

    workbench bench format_produce --param format=avro --param path=proxy
"""

from __future__ import annotations

import importlib
import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, cast

import orjson

from workbench import kafka
from workbench.bench._run import TOPIC_PREFIX, bench_topic, result_row
from workbench.errors import BenchError
from workbench.kafka.producing import Outgoing, send
from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack
from workbench.topics.strategies import device_ids

__all__ = ["FORMAT_PATHS", "format_points", "format_produce", "readings"]

#: The formats each path can write (natively, binary and json are the same bytes).
FORMAT_PATHS = {
    "native": ("json", "avro", "jsonschema", "protobuf"),
    "proxy": ("binary", "json", "avro", "jsonschema", "protobuf"),
}


def format_points(stack: Stack, records: int, proxy_records: int) -> tuple[list[dict[str, Any]], str | None]:
    """The (path, format) points this stack can measure, and one line on what it cannot.

    The schema formats need a Schema Registry (the embedded one, or the profile's
    `schema_registry.url`); without one only binary and JSON are measured, and the line
    says what the rest would need, so the notebook runs on any profile.
    """
    with_registry = stack.registry_url is not None
    points = [
        {"path": path, "format": fmt, "records": records if path == "native" else proxy_records}
        for path, formats in FORMAT_PATHS.items()
        for fmt in formats
        if with_registry or fmt not in ("avro", "jsonschema", "protobuf")
    ]
    missing = (
        None
        if with_registry
        else (
            "Avro, JSON Schema and Protobuf need a Schema Registry: set `schema_registry.url` in the profile (and "
            "`schema.registry.url` on your REST proxies); this run measures binary and JSON only."
        )
    )
    return points, missing


_AVRO = {
    "type": "record",
    "name": "Reading",
    "namespace": "workbench.bench",
    "fields": [
        {"name": "device", "type": "string"},
        {"name": "temp", "type": "double"},
        {"name": "hum", "type": "double"},
        {"name": "seq", "type": "long"},
        {"name": "note", "type": "string"},
    ],
}
_JSON_SCHEMA = {
    "type": "object",
    "title": "Reading",
    "additionalProperties": False,
    "properties": {
        "device": {"type": "string"},
        "temp": {"type": "number"},
        "hum": {"type": "number"},
        "seq": {"type": "integer"},
        "note": {"type": "string"},
    },
    "required": ["device", "temp", "hum", "seq", "note"],
}
_PROTO = (
    'syntax = "proto3";\npackage workbench.bench;\nmessage Reading { string device = 1; double temp = 2; '
    "double hum = 3; int64 seq = 4; string note = 5; }\n"
)


def readings(count: int, record_bytes: int) -> list[dict[str, Any]]:
    """`count` distinct readings of about `record_bytes` bytes each as compact JSON."""
    base = len(orjson.dumps({"device": "device-00000", "temp": -12.34, "hum": 56.7, "seq": 123456, "note": ""}))
    note = "n" * max(0, record_bytes - base)
    devices = device_ids(1000, width=5)
    return [
        {
            "device": devices[i % 1000],
            "temp": round(-20 + (i * 7 % 6500) / 100, 2),
            "hum": round((i * 13 % 1000) / 10, 1),
            "seq": i,
            "note": note,
        }
        for i in range(count)
    ]


def format_produce(
    stack: Stack,
    *,
    format: str = "avro",
    path: str = "native",
    records: int = 20_000,
    record_bytes: int = 200,
    records_per_call: int = 500,
    partitions: int = 1,
    max_seconds: float = 30.0,
    topic_prefix: str = TOPIC_PREFIX,
) -> dict[str, Any]:
    """Produce `records` readings in `format` over `path` ("native" or "proxy"); one row.

    Args:
        format: binary (proxy only), json, avro, jsonschema or protobuf.
        path: "native" (one librdkafka producer with confluent-kafka's serializer) or
            "proxy" (v2 produce calls of `records_per_call` through the stack's proxy).
        records, record_bytes: how many readings, and their size as compact JSON.
        records_per_call: the proxy's array size.
        partitions: of the fresh topic.
        max_seconds: stop producing after this long.

    Returns:
        One row with `wire_bytes_per_record` (key + value as stored), `cpu_us_per_record`
        (client + proxy + broker), `first_call_ms` (schema registration included) and
        `later_call_ms` (median of the rest; one serializer call natively, one HTTP call
        through the proxy).

    Raises:
        BenchError: an unknown format or path, or no Schema Registry for a schema format.
    """
    if path not in FORMAT_PATHS or format not in FORMAT_PATHS[path]:
        raise BenchError(
            f"path must be one of {sorted(FORMAT_PATHS)} and format one of its formats "
            f"{FORMAT_PATHS}, got path={path!r} format={format!r}"
        )
    if records < 1 or record_bytes < 1 or records_per_call < 1:
        raise BenchError("records, record_bytes and records_per_call must each be at least 1")
    if format in ("avro", "jsonschema", "protobuf") and stack.registry_url is None:
        raise BenchError(f"the {format} format needs a Schema Registry; the profile has none")
    data = readings(min(records, 10_000), record_bytes)
    if path == "native":
        _import_serializer(format)
    with bench_topic(stack, partitions, topic_prefix) as topic:
        run = _native if path == "native" else _proxy
        with ResourceMonitor(stack.services) as monitor:
            sent, seconds, calls = run(stack, topic, format, data, records, records_per_call, max_seconds)
        stored = list(kafka.read_records(stack.kafka_config("consumer"), topic))
    wire = sum(len(r.key or b"") + len(r.value or b"") for r in stored)
    first = 1 if path == "native" else min(records_per_call, records)  # records the first call carried
    resources = monitor.columns()
    cpu = sum(v for k, v in resources.items() if k in ("client_cpu_s", "proxy_cpu_s", "broker_cpu_s") and v == v)
    return result_row(
        stack,
        experiment="format_produce",
        params={
            "format": format,
            "path": path,
            "records": records,
            "record_bytes": record_bytes,
            "records_per_call": records_per_call,
        },
        records=sent,
        payload_bytes=wire,
        seconds=seconds,
        latencies=calls,
        latency_of="serializer call" if path == "native" else "HTTP produce call",
        resources=resources,
        extra={
            "landed": len(stored),
            "wire_bytes_per_record": wire / len(stored) if stored else float("nan"),
            "cpu_us_per_record": cpu / sent * 1e6 if sent else float("nan"),
            "first_call_ms": calls[0] * 1000 if calls else float("nan"),
            "later_call_ms": statistics.median(calls[1:]) * 1000 if len(calls) > 1 else float("nan"),
            # Without the first call (schema registration, caches filling): the steady rate.
            "steady_msg_s": (sent - first) / (seconds - calls[0])
            if len(calls) > 1 and seconds > calls[0]
            else float("nan"),
        },
    )


#: The module of each schema format's serializer, imported on first use.
_SERIALIZER_MODULES = {
    "avro": "confluent_kafka.schema_registry.avro",
    "jsonschema": "confluent_kafka.schema_registry.json_schema",
    "protobuf": "confluent_kafka.schema_registry.protobuf",
}


def _import_serializer(format: str) -> None:
    """Import the format's serializer before the measurement: a process's first run paid
    the import in its CPU per record, so whichever format a notebook measured first looked
    the dearest (avro, 5,000 records: 50 µs against 16 µs for the next run; 30 against 18
    with the import done first, the rest being the first run's other one-time work)."""
    if format in _SERIALIZER_MODULES:
        importlib.import_module(_SERIALIZER_MODULES[format])


def _serializer(client: Any, format: str, reading: Any) -> Callable[[Any, Any], bytes]:
    if format == "json":
        return lambda value, _ctx: orjson.dumps(value)
    if format == "avro":
        from confluent_kafka.schema_registry.avro import AvroSerializer

        return cast(Callable[[Any, Any], bytes], AvroSerializer(client, json.dumps(_AVRO)))
    if format == "jsonschema":
        from confluent_kafka.schema_registry.json_schema import JSONSerializer

        return cast(Callable[[Any, Any], bytes], JSONSerializer(json.dumps(_JSON_SCHEMA), client))
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    return cast(Callable[[Any, Any], bytes], ProtobufSerializer(reading, client, {"use.deprecated.format": False}))


def _reading_class() -> Any:
    """The protobuf message class protoc would generate for `_PROTO` (built from its descriptor)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    name = f"bench_{uuid.uuid4().hex[:8]}"  # a fresh file and package per run: the default pool keeps every one
    file = descriptor_pb2.FileDescriptorProto(name=f"{name}.proto", package=name, syntax="proto3")
    message = file.message_type.add(name="Reading")
    for number, (field, kind) in enumerate((("device", 9), ("temp", 1), ("hum", 1), ("seq", 3), ("note", 9)), 1):
        message.field.add(name=field, number=number, type=kind, label=1)
    pool = descriptor_pool.Default()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{name}.Reading"))


def _native(
    stack: Stack, topic: str, format: str, data: list[dict[str, Any]], records: int, _per_call: int, max_seconds: float
) -> tuple[int, float, list[float]]:
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.serialization import MessageField, SerializationContext

    reading = _reading_class() if format == "protobuf" else None
    client = SchemaRegistryClient(stack.registry_config()) if format != "json" else None
    try:
        return _native_load(
            topic,
            _serializer(client, format, reading),
            reading,
            stack,
            data,
            records,
            max_seconds,
            SerializationContext(topic, MessageField.VALUE),
            Producer,
        )
    finally:
        if client is not None:
            client.close()


def _native_load(
    topic: str,
    serialize: Callable[[Any, Any], bytes],
    reading: Any,
    stack: Stack,
    data: list[dict[str, Any]],
    records: int,
    max_seconds: float,
    ctx: Any,
    producer_class: Any,
) -> tuple[int, float, list[float]]:
    producer = producer_class(stack.kafka_config("producer"))
    calls: list[float] = []
    clock = time.perf_counter
    started = clock()
    deadline = started + max_seconds

    def serialized() -> Iterator[Outgoing]:
        for i in range(records):
            if clock() >= deadline:
                return
            value = data[i % len(data)]
            if reading is not None:
                value = reading(**value)
            before = clock()
            payload = serialize(value, ctx)
            calls.append(clock() - before)
            yield Outgoing(topic, payload)

    sent = send(producer, serialized(), flush_timeout_s=60).sent
    return sent, clock() - started, calls


def _proxy(
    stack: Stack, topic: str, format: str, data: list[dict[str, Any]], records: int, per_call: int, max_seconds: float
) -> tuple[int, float, list[float]]:
    from workbench.proxy import ProxyClient, encode_records

    schema = {"avro": json.dumps(_AVRO), "jsonschema": json.dumps(_JSON_SCHEMA), "protobuf": _PROTO}.get(format)
    count = min(per_call, records)
    items: list[Any] = [orjson.dumps(r) if format == "binary" else {"value": r} for r in data[:count]]
    body = encode_records(items, format, value_schema=schema)  # type: ignore[arg-type]
    calls: list[float] = []
    sent = 0
    with ProxyClient.for_stack(stack) as client:
        started = time.perf_counter()
        deadline = started + max_seconds
        while sent < records and time.perf_counter() < deadline:
            before = time.perf_counter()
            result = client.produce(topic, body)
            calls.append(time.perf_counter() - before)
            if result.failed:
                raise BenchError(f"the proxy refused {result.failed} records: {result.errors[0].error}")
            sent += body.count
        seconds = time.perf_counter() - started
    return sent, seconds, calls
