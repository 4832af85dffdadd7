"""The v2 consumer endpoints: request bodies parsed and checked, handlers, routes.

The instances and the blocking Kafka work are `consumer_instances`; the records answer
(fetch, render, send in pieces) is `consumer_records`. A handler checks what the client
sent, then hands the blocking part to the instance's worker (`ConsumerManager.run`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from workbench._types import Partition
from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.restproxy.consumer_instances import (
    assign,
    assignment,
    commit,
    committed,
    seek,
    seek_to_beginning,
    seek_to_end,
    seek_to_times,
    subscribe,
    subscription,
    unsubscribe,
)
from workbench.restproxy.consumer_records import RecordsAnswer
from workbench.restproxy.context import (
    Context,
    empty_response,
    int_param,
    json_response,
    object_body,
    read_json,
)
from workbench.restproxy.errors import ILLEGAL_STATE
from workbench.restproxy.formats import (
    embedded_format,
    media_type,
    require_json_body_type,
)
from workbench.restproxy.instances import Instance
from workbench.restproxy.validation import (
    INT32_MAX,
    INT64_MAX,
    check_offset,
    check_topic,
)

__all__ = ["ROUTES", "check_records_accept", "consumer_body", "created_response", "parse_topics", "records_limits"]

log = logging.getLogger("workbench.restproxy")


def _partitions(body: dict[str, Any], key: str = "partitions") -> list[Partition]:
    items = body.get(key)
    if not isinstance(items, list):
        raise RestError(422, 422, f"`{key}` must be a JSON array of {{topic, partition}} objects")
    result = []
    for item in items:
        if not _names_partition(item):
            raise RestError(
                422, 422, f"each of `{key}` needs a string topic and an integer partition, got {_short(item)}"
            )
        result.append((_body_topic(item["topic"]), _body_partition(item["partition"])))
    return result


def _names_partition(item: Any) -> bool:
    """Whether a body's item is an object with a string `topic` and an integer `partition`."""
    return isinstance(item, dict) and isinstance(item.get("topic"), str) and type(item.get("partition")) is int


def _short(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 120 else text[:100] + "..."


def _body_topic(name: str) -> str:
    """A topic named in a body: 422 when Kafka could never have it."""
    return check_topic(name, 422, 422)


def _body_partition(number: int) -> int:
    if not 0 <= number <= INT32_MAX:
        raise RestError(422, 422, f"partition must be from 0 to {INT32_MAX}, got {number}")
    return number


def _offsets(body: dict[str, Any]) -> list[tuple[str, int, int, str | None]]:
    items = body.get("offsets")
    if not isinstance(items, list):
        raise RestError(422, 422, "`offsets` must be a JSON array of {topic, partition, offset} objects")
    result = []
    for item in items:
        if not _names_partition(item):
            raise RestError(422, 422, f"each offset needs a topic, a partition and an offset, got {_short(item)}")
        metadata = item.get("metadata")
        if metadata is not None and (not isinstance(metadata, str) or len(metadata) > 4096):
            raise RestError(422, 422, "metadata must be a string of at most 4096 characters")
        if metadata is not None and "\x00" in metadata:  # librdkafka takes it as a C string: it would end there
            raise RestError(422, 422, "metadata must not hold a NUL character (\\u0000)")
        result.append(
            (_body_topic(item["topic"]), _body_partition(item["partition"]), check_offset(item.get("offset")), metadata)
        )
    return result


def _timestamp_ms(value: Any) -> int:
    if type(value) is int:
        if not 0 <= value <= INT64_MAX:
            raise RestError(422, 422, f"timestamp must be epoch milliseconds from 0 to {INT64_MAX}, got {value}")
        return value
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        # Whole milliseconds by integer arithmetic, a fraction of one rounded up: record
        # timestamps are whole milliseconds, so the first record at or after 44.1231 s is
        # the one at 44.124 s or later (the float product truncated it to 44.123).
        delta = moment - _EPOCH
        ms = (delta.days * 86_400 + delta.seconds) * 1000 + -(-delta.microseconds // 1000)
    except (ValueError, OverflowError):
        raise RestError(422, 422, f"timestamp must be ISO 8601 or epoch milliseconds, got {_short(value)}") from None
    if ms < 0:  # librdkafka reads -1 and -2 as "the end" and "the beginning"
        raise RestError(422, 422, f"timestamp must not be before 1970-01-01T00:00:00Z, got {_short(value)}")
    return ms


#: Where epoch milliseconds count from.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


async def consumer_body(ctx: Context, request: Request) -> dict[str, Any]:
    """A consumer request's JSON object body (v2 and share consumers): 415 for a foreign
    Content-Type, 400 when malformed, 422 when not an object; `{}` when empty."""
    require_json_body_type(request.headers.get("content-type"))
    return object_body(await read_json(request, ctx.settings), "consumer request")


def created_response(ctx: Context, request: Request, root: str, instance: Instance) -> Response:
    """The answer to a create: the instance's name and its absolute `base_uri` under
    `/{root}` ("consumers", "share-consumers"), on this process's own base URL."""
    base = ctx.settings.base_url(request.headers.get("host"))
    uri = f"{base}/{root}/{quote(instance.group, safe='')}/instances/{quote(instance.name, safe='')}"
    return json_response({"instance_id": instance.name, "base_uri": uri})


async def _handle_create(ctx: Context, request: Request, group: str) -> Response:
    body = await consumer_body(ctx, request)
    instance = ctx.consumers.create(group, body)
    return created_response(ctx, request, "consumers", instance)


async def _handle_delete(ctx: Context, request: Request, group: str, instance: str) -> Response:
    await ctx.consumers.delete(ctx.consumers.get(group, instance))
    return empty_response()


async def _handle_subscribe(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await consumer_body(ctx, request)
    topics, pattern = body.get("topics"), body.get("topic_pattern")
    if (topics is None) == (pattern is None):
        raise RestError(409, ILLEGAL_STATE, "Subscribe with either `topics` or `topic_pattern` (exactly one).")
    if topics is not None:
        topics = parse_topics(topics)
    if pattern is not None:
        _check_pattern(pattern)
    await ctx.consumers.run(found, subscribe, found, topics or [], pattern)
    return empty_response()


def parse_topics(topics: Any) -> list[str]:
    """A subscribe body's `topics`: 1 to 10000 legal topic names (422 otherwise)."""
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        raise RestError(422, 422, "`topics` must be a JSON array of topic names")
    if not topics or len(topics) > 10_000:
        raise RestError(422, 422, f"`topics` must name 1 to 10000 topics, got {len(topics)}")
    return [_body_topic(t) for t in topics]


def _check_pattern(pattern: Any) -> None:
    """A subscription pattern librdkafka can take: a short regular expression, no control characters."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > 1024 or any(ord(c) < 32 for c in pattern):
        raise RestError(422, 422, "`topic_pattern` must be a regular expression of 1 to 1024 printable characters")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise RestError(422, 422, f"`topic_pattern` is not a valid regular expression: {exc}") from None


async def _handle_get_subscription(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    return json_response({"topics": await ctx.consumers.run(found, subscription, found)})


async def _handle_unsubscribe(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    await ctx.consumers.run(found, unsubscribe, found)
    return empty_response()


async def _handle_assign(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    partitions = _partitions(await consumer_body(ctx, request))
    await ctx.consumers.run(found, assign, found, partitions)
    return empty_response()


async def _handle_get_assignments(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    assigned = await ctx.consumers.run(found, assignment, found)
    return json_response({"partitions": [{"topic": t, "partition": p} for t, p in assigned]})


async def _handle_seek(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await consumer_body(ctx, request)
    if "timestamps" in body and "offsets" not in body:
        items = body["timestamps"]
        if not isinstance(items, list):
            raise RestError(422, 422, "`timestamps` must be a JSON array")
        targets = [
            (t, p, _timestamp_ms(i.get("timestamp")))
            for (t, p), i in zip(_partitions(body, "timestamps"), items, strict=True)
        ]
        await ctx.consumers.run(found, seek_to_times, found, ctx.settings, targets)
    else:
        offsets = [(t, p, o) for t, p, o, _ in _offsets(body)]
        await ctx.consumers.run(found, seek, found, offsets)
    return empty_response()


async def _handle_seek_beginning(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    partitions = _partitions(await consumer_body(ctx, request))
    await ctx.consumers.run(found, seek_to_beginning, found, ctx.settings, partitions)
    return empty_response()


async def _handle_seek_end(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    partitions = _partitions(await consumer_body(ctx, request))
    await ctx.consumers.run(found, seek_to_end, found, ctx.settings, partitions)
    return empty_response()


async def _handle_records(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    check_records_accept(found.format, request.headers.get("accept"))
    settings = ctx.settings
    wait_ms, budget = records_limits(ctx, request, found.request_timeout_ms)
    min_bytes = found.fetch_min_bytes if found.fetch_min_bytes is not None else settings.fetch_min_bytes

    answer = RecordsAnswer(
        found,
        wait_ms / 1000,
        budget,
        min_bytes,
        settings.consumer_iterator_backoff_ms / 1000,
        settings.consumer_max_poll_records,
    )
    pieces = ctx.consumers.stream(found, answer.next_piece, lambda: answer.more)
    first = await anext(pieces)  # errors (404, a poison record's 422) before any status is sent
    if not answer.more:
        await pieces.aclose()
        _count_consumed(ctx, answer)
        return Response(b"[" + first + b"]", media_type=media_type(found.format))

    async def body() -> AsyncIterator[bytes]:
        try:
            yield b"[" + first
            try:
                async for piece in pieces:
                    if piece:
                        yield b"," + piece
            except Exception as exc:  # the status is sent: end the array with what was delivered
                log.warning("consumer %s/%s: records answer cut short: %s", group, instance, exc)
            yield b"]"
        finally:
            await pieces.aclose()
            _count_consumed(ctx, answer)

    return StreamingResponse(body(), media_type=media_type(found.format))


def records_limits(ctx: Context, request: Request, instance_wait_ms: int | None = None) -> tuple[int, int]:
    """A records GET's (wait in ms, key + value byte budget): the `timeout` and `max_bytes`
    query parameters can only lower the instance's or the properties' values (v2 and share)."""
    settings = ctx.settings
    wait_ms = instance_wait_ms if instance_wait_ms is not None else settings.consumer_request_timeout_ms
    timeout = request.query_params.get("timeout")
    if timeout is not None:
        asked = int_param(timeout, "timeout")
        if asked >= 0:
            wait_ms = min(asked, wait_ms)
    budget = settings.consumer_request_max_bytes
    max_bytes = request.query_params.get("max_bytes")
    if max_bytes is not None:
        asked = int_param(max_bytes, "max_bytes")
        if asked > 0:
            budget = min(asked, budget)
    return wait_ms, budget


def _count_consumed(ctx: Context, answer: RecordsAnswer) -> None:
    ctx.metrics.records_consumed.inc(answer.count)
    ctx.metrics.bytes_consumed.inc(answer.size)


def check_records_accept(fmt: str, accept: str | None) -> None:
    """406 / 40601 when the Accept names only embedded formats other than the consumer's."""
    if not accept:
        return
    formats = []
    for item in accept.split(","):
        ours, embedded = embedded_format(item)
        if not ours or embedded is None:
            essence = item.split(";", 1)[0].strip()
            if ours or essence in ("*/*", "application/*"):
                return  # no embedded format named: the consumer's own is sent
            continue
        if embedded == fmt:
            return
        formats.append(embedded)
    raise RestError(
        406,
        40601,
        f"The requested embedded data format ({', '.join(formats) or accept}) does not "
        f"match the deserializer for this consumer instance ({fmt}).",
    )


async def _handle_commit(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await consumer_body(ctx, request)
    offsets = _offsets(body) if body.get("offsets") else None
    for topic, partition in sorted({(t, p) for t, p, _, _ in offsets or []}):
        await ctx.metadata.check_partition(topic, partition)  # 404 / 40401 or 40402, as Karapace pre-checks
    await ctx.consumers.run(found, commit, found, offsets)
    return json_response({"offsets": []})


async def _handle_committed(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await consumer_body(ctx, request)
    if "partitions" not in body:  # Confluent's answer, odd as it is (see the reference, section 2.6)
        raise RestError(
            404,
            40402,
            'GET .../offsets needs a body naming the partitions: {"partitions": [{"topic": ..., "partition": ...}]}',
        )
    partitions = _partitions(body)
    return json_response({"offsets": await ctx.consumers.run(found, committed, found, partitions)})


_I = "/consumers/{group}/instances/{instance}"


ROUTES = [
    Route("POST", "/consumers/{group}", _handle_create),
    Route("DELETE", _I, _handle_delete),
    Route("POST", f"{_I}/subscription", _handle_subscribe),
    Route("GET", f"{_I}/subscription", _handle_get_subscription),
    Route("DELETE", f"{_I}/subscription", _handle_unsubscribe),
    Route("POST", f"{_I}/assignments", _handle_assign),
    Route("GET", f"{_I}/assignments", _handle_get_assignments),
    Route("POST", f"{_I}/positions", _handle_seek),
    Route("POST", f"{_I}/positions/beginning", _handle_seek_beginning),
    Route("POST", f"{_I}/positions/end", _handle_seek_end),
    Route("GET", f"{_I}/records", _handle_records),
    Route("POST", f"{_I}/offsets", _handle_commit),
    Route("GET", f"{_I}/offsets", _handle_committed),
]
