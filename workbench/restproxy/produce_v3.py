"""API v3 produce: `POST /v3/clusters/{cluster_id}/topics/{topic}/records`, streaming.

The body is one JSON record object or many, one after another (whitespace between,
not an array), and may stay open as a chunked upload for as long as the client likes.
Each object is produced as soon as it is parsed, and one result object per input
object is written back, in input order, each followed by `\\r\\n`, as its delivery
report arrives: reading and answering run concurrently, so a full-duplex client sees
results while it is still sending. The status is 200 once the stream starts; every
result carries its own `error_code` (200, 400, 404/40402, 413, 422, 5000x).

With `Workbench-Trace: true` (`workbench.restproxy.tracing`) each record gets two
trace headers after its own, and each record's result (a per-record error too, not an
error that ends the stream) a `trace` object (`Workbench-Trace: answer`: the `trace`
only). A record's `received_ns` is when the chunk of the body that completed it arrived
(for the first records, the body's first chunk): a streaming client sends its headers
before its first record, so the handler's start would come before the record was sent.
`answered_ns` is taken just before that record's result is written.

An empty body is 422 / 42206 before the stream starts; an unknown topic 404 / 40401; a
Content-Type other than application/json 415. An object that does not parse emits one
400 result and ends the stream, as upstream.
"""

from __future__ import annotations

import asyncio
import binascii
import codecs
import contextlib
import json
import logging
import math
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import orjson
import pybase64
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.restproxy.context import Context
from workbench.restproxy.delivery import TracedDelivery
from workbench.restproxy.errors import PARTITION_NOT_FOUND
from workbench.restproxy.produce import outcome_error
from workbench.restproxy.schemas import encode_v3_part
from workbench.restproxy.tracing import TRACE_HEADER, trace_mode, trace_object
from workbench.restproxy.v3 import check_cluster

__all__ = ["ROUTES", "StreamingProduce", "produce_records"]

log = logging.getLogger("workbench.restproxy")

_FIELDS = frozenset(("partition_id", "headers", "key", "value", "timestamp"))
_SCHEMA_TYPES = ("AVRO", "JSONSCHEMA", "PROTOBUF")
#: The charsets upstream takes for v3 produce (others: 400), by their spellings.
_CHARSETS = {
    "utf-8": "utf-8",
    "utf8": "utf-8",
    "iso-8859-1": "iso-8859-1",
    "latin1": "iso-8859-1",
    "latin-1": "iso-8859-1",
}


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class _RecordError(Exception):
    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message


def _data(part: Any, what: str) -> tuple[bytes | None, dict[str, Any] | None]:
    """A v3 key or value object → (bytes, the result's description of it)."""
    if part is None:
        return None, None
    if not isinstance(part, dict):
        raise _RecordError(400, f"Bad Request: {what} must be an object with type and data")
    kind = part.get("type")
    data = part.get("data")
    if (
        kind is None
        or str(kind).upper() in _SCHEMA_TYPES
        or any(k in part for k in ("subject", "subject_name_strategy", "schema_id", "schema_version", "schema"))
    ):
        raise _RecordError(
            422,
            f"Error: 42205 : {what} needs a Schema Registry (type {kind or 'not given'}), and "
            "this proxy has none; use type BINARY, JSON or STRING",
        )
    kind = str(kind).upper()
    if data is None:
        encoded = None
    elif kind == "BINARY":
        if not isinstance(data, str):
            raise _RecordError(400, f"Bad Request: data={orjson.dumps(data).decode()[:64]} is not a base64 string.")
        try:
            encoded = pybase64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise _RecordError(400, f"Bad Request: data={data[:64]} is not a base64 string.") from None
    elif kind == "JSON":
        try:
            encoded = orjson.dumps(data)
        except orjson.JSONEncodeError as exc:
            raise _RecordError(
                400,
                f"Bad Request: {what} cannot be written as JSON ({exc}): integers must "
                "fit in 64 bits, strings be valid Unicode, nesting stay within 255 levels",
            ) from None
    elif kind == "STRING":
        if not isinstance(data, str):
            raise _RecordError(400, f"Bad Request: {what} of type STRING needs a string")
        try:
            encoded = data.encode()
        except UnicodeEncodeError:
            raise _RecordError(400, f"Bad Request: {what} of type STRING is not valid Unicode") from None
    else:
        raise _RecordError(400, f"Bad Request: unknown {what} type {kind!r}: BINARY, JSON or STRING")
    return encoded, {"type": kind, "size": len(encoded) if encoded is not None else 0}


def _prepare(record: Any, partitions: int, limit: int, encoded: dict[str, Any] | None = None) -> tuple[Any, ...]:
    if not isinstance(record, dict):
        raise _RecordError(400, "Bad Request: each record must be a JSON object")
    unknown = record.keys() - _FIELDS
    if unknown:
        raise _RecordError(400, f"Bad Request: unrecognized field(s) {sorted(unknown)}")
    partition = record.get("partition_id")
    if partition is None:
        partition = -1
    elif type(partition) is not int:
        raise _RecordError(400, f"Bad Request: partition_id must be an integer, got {partition!r}")
    elif not 0 <= partition < partitions:
        raise _RecordError(PARTITION_NOT_FOUND, f"Partition {partition} not found.")
    encoded = encoded or {}  # schema-based parts, already framed (see `schemas.encode_v3_part`)
    key, key_info = encoded["key"] if "key" in encoded else _data(record.get("key"), "key")
    value, value_info = encoded["value"] if "value" in encoded else _data(record.get("value"), "value")
    size = len(key or b"") + len(value or b"")
    if size > limit:
        raise _RecordError(
            413, f"Error: 413 : the record is {size} bytes, over the producer's message.max.bytes of {limit}"
        )
    headers = []
    listed = record.get("headers") or []
    if not isinstance(listed, list):  # `true` or `5` is not iterable at all
        raise _RecordError(400, "Bad Request: headers must be a list of {name, value}")
    for header in listed:
        if not isinstance(header, dict) or not isinstance(header.get("name"), str):
            raise _RecordError(400, "Bad Request: headers must be a list of {name, value}")
        raw = header.get("value")
        try:
            headers.append((header["name"], None if raw is None else pybase64.b64decode(raw, validate=True)))
        except (binascii.Error, ValueError, TypeError):
            raise _RecordError(400, f"Bad Request: header value={str(raw)[:64]} is not a base64 string.") from None
    stamp = record.get("timestamp")
    if stamp is None:
        timestamp = int(time.time() * 1000)
    else:
        try:
            timestamp = int(datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            raise _RecordError(400, f"Bad Request: timestamp {stamp!r} is not ISO 8601") from None
    return key, value, partition, timestamp, headers or None, key_info, value_info


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _checked_float(text: str) -> float:
    value = float(text)
    if math.isinf(value) or (value == 0.0 and any(c in "123456789" for c in text.lower().partition("e")[0])):
        raise ValueError(f"the number {text[:40]} does not fit in a double")
    return value


class StreamingProduce:
    """The ASGI response of a v3 records request: reads, produces and answers at once.

    Bounded on every side: an object still incomplete past twice the producer's record
    limit ends the stream with 413 (nothing can grow without end in memory), the whole
    request past `api.v3.produce.request.size.limit.max.bytes` (when set) with 400,
    results not yet written back hold the reader at `api.v3.produce.streaming.max.inflight`,
    and an upload silent for `idle.timeout.ms` ends with 408.
    """

    status_code = 200

    def __init__(
        self,
        ctx: Context,
        topic: str,
        partitions: int,
        first: bytes,
        rest: AsyncIterator[bytes],
        charset: str = "utf-8",
        received_ns: int | None = None,
        stamp_records: bool = True,
    ) -> None:
        self.ctx = ctx
        self.topic = topic
        self.partitions = partitions
        self.first = first
        self.rest = rest
        self.charset = charset
        #: When the handler started, for a traced request (None: not traced).
        self.received_ns = received_ns
        #: Whether a traced request's records carry the trace headers (`Workbench-Trace: true`)
        #: or only its answer does (`answer`).
        self.stamp_records = stamp_records

    async def _objects(self, results: asyncio.Queue[Any]) -> None:
        """Parse objects as they arrive; queue a Delivery (or an error) per object."""
        settings = self.ctx.settings
        decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_checked_float)
        text = codecs.getincrementaldecoder(self.charset)("strict")
        limit = settings.message_max_bytes
        pending_max = 2 * limit + 65536
        request_max = settings.v3_request_max_bytes
        received = len(self.first)
        stamp = self.received_ns  # a traced record's received_ns: its chunk's arrival
        ended = False
        chunks = self.rest.__aiter__()
        try:
            buffer = text.decode(self.first)
            while True:
                position = 0
                length = len(buffer)
                while True:
                    while position < length and buffer[position] in " \t\r\n":
                        position += 1
                    if position >= length:
                        break
                    try:
                        record, end = decoder.raw_decode(buffer, position)
                    except json.JSONDecodeError as exc:
                        incomplete = exc.pos >= length or exc.msg.startswith("Unterminated string")
                        if ended or not incomplete:
                            await results.put(("error", 400, f"Bad Request: invalid JSON: {exc.msg}"))
                            return
                        break
                    except (ValueError, RecursionError) as exc:
                        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                        await results.put(("error", 400, f"Bad Request: invalid JSON: {reason}"))
                        return
                    position = end
                    await results.put(await self._produce(record, limit, stamp))
                buffer = buffer[position:]
                if len(buffer) > pending_max:
                    await results.put(
                        (
                            "error",
                            413,
                            f"Error: 413 : an object is over {pending_max} bytes and not "
                            f"complete; records are at most message.max.bytes ({limit})",
                        )
                    )
                    return
                if ended:
                    return
                try:
                    async with asyncio.timeout(settings.idle_timeout_ms / 1000):
                        chunk = await chunks.__anext__()
                    if stamp is not None:
                        stamp = time.time_ns()
                    received += len(chunk)
                    if request_max and received > request_max:
                        await results.put(
                            (
                                "error",
                                400,
                                f"Bad Request: the request is over "
                                f"api.v3.produce.request.size.limit.max.bytes ({request_max})",
                            )
                        )
                        return
                    buffer += text.decode(chunk)
                except StopAsyncIteration:
                    buffer += text.decode(b"", final=True)
                    ended = True
                except TimeoutError:
                    await results.put(
                        (
                            "error",
                            408,
                            f"Request Timeout: nothing arrived for idle.timeout.ms ({settings.idle_timeout_ms} ms)",
                        )
                    )
                    return
        except UnicodeDecodeError as exc:
            await results.put(("error", 400, f"Bad Request: the body is not valid {self.charset}: {exc.reason}"))
        finally:
            await results.put(None)

    async def _produce(self, record: Any, limit: int, received_ns: int | None) -> tuple[Any, ...]:
        """("record", delivery, timestamp, key_info, value_info), or ("error", code,
        message, received_ns) for a record refused before producing."""
        try:
            encoded = await self._schema_parts(record)
            key, value, partition, timestamp, headers, key_info, value_info = _prepare(
                record, self.partitions, limit, encoded
            )
        except _RecordError as exc:
            return ("error", exc.code, exc.message, received_ns)
        except RestError as exc:  # per record, as kafka-rest writes them: the status, then "Error: <code> : ..."
            message = exc.message if exc.error_code == exc.status else f"Error: {exc.error_code} : {exc.message}"
            return ("error", exc.status, message, received_ns)
        delivery = await self.ctx.producer.enqueue_one(
            self.topic,
            key,
            value,
            partition,
            timestamp,
            headers,
            received_ns=received_ns,
            stamp_records=self.stamp_records,
        )
        return ("record", delivery, timestamp, key_info, value_info)

    async def _schema_parts(self, record: Any) -> dict[str, Any]:
        """The record's schema-based key and value, framed, when the proxy has a registry."""
        schemas = self.ctx.schemas
        if schemas is None or not isinstance(record, dict):
            return {}
        encoded: dict[str, Any] = {}
        for what in ("key", "value"):
            done = await encode_v3_part(schemas, self.topic, record.get(what), what)
            if done is not None:
                encoded[what] = done
        return encoded

    def _result(self, item: tuple[Any, ...]) -> bytes:
        if item[0] == "error":
            error = {"error_code": item[1], "message": item[2]}
            if len(item) > 3 and item[3] is not None:  # a traced record's own error (not the stream's)
                error["trace"] = trace_object(item[3], None, None, time.time_ns())
            return orjson.dumps(error) + b"\r\n"
        _, delivery, timestamp, key_info, value_info = item
        outcome = delivery.outcomes[0]
        if type(outcome) is not tuple:
            code, message = outcome_error(outcome)
            failed = {"error_code": code, "message": message}
            if isinstance(delivery, TracedDelivery):
                failed["trace"] = _trace(delivery)
            return orjson.dumps(failed) + b"\r\n"
        metrics = self.ctx.metrics
        metrics.records_produced.labels("v3").inc()
        metrics.bytes_produced.labels("v3").inc((key_info or {}).get("size", 0) + (value_info or {}).get("size", 0))
        if value_info is not None and value_info["type"] in ("JSON", "BINARY", "STRING"):
            value_info = {**value_info, "subject": None, "schema_id": None, "schema_version": None}
        result = {
            "error_code": 200,
            "cluster_id": self.ctx.cluster_id,
            "topic_name": self.topic,
            "partition_id": outcome[0],
            "offset": outcome[1],
            "timestamp": _iso(timestamp),
            "key": key_info,
            "value": value_info,
        }
        if isinstance(delivery, TracedDelivery):
            result["trace"] = _trace(delivery)
        return orjson.dumps(result) + b"\r\n"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        results: asyncio.Queue[Any] = asyncio.Queue(self.ctx.settings.v3_max_inflight)
        reader = asyncio.create_task(self._objects(results))
        try:
            while True:
                item = await results.get()
                if item is None:
                    break
                if item[0] == "record":
                    await item[1].future
                await send({"type": "http.response.body", "body": self._result(item), "more_body": True})
            await reader
        except Exception as exc:  # the status is sent already: the error becomes the last result
            log.exception("v3 produce stream to %s failed", self.topic)
            line = orjson.dumps({"error_code": 50002, "message": f"Internal Server Error: {type(exc).__name__}"})
            with contextlib.suppress(Exception):  # the client may be gone already
                await send({"type": "http.response.body", "body": line + b"\r\n", "more_body": True})
        finally:
            if not reader.done():
                reader.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _trace(delivery: TracedDelivery) -> dict[str, Any]:
    """The `trace` of a one-record delivery; answered now."""
    return trace_object(delivery.received_ns, delivery.handed_ns[0], delivery.delivered_ns[0], time.time_ns())


async def produce_records(ctx: Context, request: Request, cluster: str, topic: str) -> StreamingProduce:
    tracing = trace_mode(request.headers.getlist(TRACE_HEADER))
    received_ns = time.time_ns() if tracing is not None else None
    check_cluster(ctx, cluster)
    content_type = (request.headers.get("content-type") or "").split(";")
    if content_type[0].strip().lower() != "application/json":
        raise RestError(415, 415, "HTTP 415 Unsupported Media Type: v3 produce takes application/json")
    charset = next(
        (p.split("=", 1)[1].strip().strip('"').lower() for p in content_type[1:] if "charset=" in p.lower()), "utf-8"
    )
    if charset not in _CHARSETS:
        raise RestError(400, 400, f"Unsupported charset {charset!r}: UTF-8 or ISO-8859-1")
    partitions = await ctx.metadata.partition_count(topic)
    stream = request.stream().__aiter__()
    first = b""
    try:
        async with asyncio.timeout(ctx.settings.body_timeout_ms / 1000):
            async for chunk in stream:
                first += chunk
                if first.strip():
                    break
    except TimeoutError:
        raise RestError(
            408,
            408,
            f"Request Timeout: no record arrived within request.body.timeout.ms ({ctx.settings.body_timeout_ms} ms)",
        ) from None
    if not first.strip():
        raise RestError(422, 42206, "Payload error. Request body is empty. Data is required.")
    if received_ns is not None:
        received_ns = time.time_ns()  # the first chunk's arrival (see the module's docstring)
    return StreamingProduce(
        ctx, topic, partitions, first, stream, _CHARSETS[charset], received_ns, stamp_records=tracing == "records"
    )


ROUTES = [Route("POST", "/v3/clusters/{cluster}/topics/{topic}/records", produce_records)]
