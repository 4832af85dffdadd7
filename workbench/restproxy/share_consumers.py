"""Share-group consumption over REST: explicit share-consumer instances, and the
affinity-free fetch. No other REST proxy offers either; both follow Confluent's v2
conventions (media types, error bodies, path style, absolute `base_uri`).

Explicit instances, `/share-consumers/{group}/instances/{instance}` (created, subscribed,
read and deleted like a v2 consumer instance): records carry their `delivery_count`; the
client acknowledges each record of an answer with `accept`, `release` or `reject`
(`POST .../acknowledgements`) before it reads more.

The affinity-free fetch, `GET /share-consumers/{group}/records?topic=...`: whichever
process behind the balancer takes it serves it from its own member of the group (made on
the first fetch, one per group and topic set); the records of an answer are accepted once
the answer was written in full (`share_records.peer_has_all`) and released otherwise.

Both answer in pieces bounded like a v2 records answer; see `share_records` for the
trust rule and `share_instances` for the state and the blocking work.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.restproxy.consumers import (
    check_records_accept,
    consumer_body,
    created_response,
    parse_topics,
    records_limits,
)
from workbench.restproxy.context import Context, empty_response, json_response
from workbench.restproxy.formats import FORMATS, SCHEMA_FORMATS, embedded_format, media_type, no_registry
from workbench.restproxy.share_instances import (
    ACK_TYPES,
    ShareInstance,
    acknowledge,
    finish_answer,
    subscribe,
    subscription,
    unsubscribe,
)
from workbench.restproxy.share_records import ShareAnswer, fetch_answer
from workbench.restproxy.validation import INT32_MAX, check_group, check_offset, check_topic

__all__ = ["ROUTES"]

#: Most acknowledgements one request may carry (an answer holds at most
#: `consumer.max.poll.records`, whose ceiling is 1,000,000).
_ACKS_MAX = 1_000_000
#: Most topics one affinity-free fetch may name.
_FETCH_TOPICS_MAX = 100


async def _ready(ctx: Context) -> None:
    """400 / 40002 at once on a cluster without share groups."""
    await ctx.metadata.call(ctx.metadata.require_share_groups)


async def _handle_create(ctx: Context, request: Request, group: str) -> Response:
    body = await consumer_body(ctx, request)
    check_group(group)
    await _ready(ctx)
    instance = ctx.shares.create(group, body)
    await ctx.shares.configure_group(instance)
    return created_response(ctx, request, "share-consumers", instance)


async def _handle_delete(ctx: Context, request: Request, group: str, instance: str) -> Response:
    await ctx.shares.delete(ctx.shares.get(group, instance))
    return empty_response()


async def _handle_subscribe(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.shares.get(group, instance)
    body = await consumer_body(ctx, request)
    if "topic_pattern" in body:
        raise RestError(
            422, 422, "Share consumers subscribe to topic names only (`topics`); librdkafka has no pattern for them"
        )
    topics = parse_topics(body.get("topics"))
    await ctx.shares.run(found, subscribe, found, topics)
    return empty_response()


async def _handle_get_subscription(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.shares.get(group, instance)
    return json_response({"topics": subscription(found)})


async def _handle_unsubscribe(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.shares.get(group, instance)
    await ctx.shares.run(found, unsubscribe, found)
    return empty_response()


async def _answer(
    ctx: Context, request: Request, instance: ShareInstance, fmt: str, acknowledge: str | None = None
) -> Response:
    """Fetch and render under the instance's lock, which the answer keeps until the fate
    of its records is settled (`finish_answer`): the member polls again only then.
    `acknowledge` acknowledges what the client holds first (an explicit instance's)."""
    wait_ms, budget = records_limits(ctx, request)
    wait_s = wait_ms / 1000
    deadline = time.monotonic() + wait_s
    if not instance.member:
        await instance.lock.acquire()  # a client's calls to its own instance take turns, as v2's
    else:
        try:
            async with asyncio.timeout(wait_s):
                await instance.lock.acquire()
        except TimeoutError:  # the member is busy with another answer for its whole wait
            return Response(b"[]", media_type=media_type(fmt))
    try:
        instance.format = fmt
        body, count, size = await ctx.shares.run_locked(
            instance, fetch_answer, instance, deadline, budget, instance.max_records, acknowledge
        )
    except BaseException:
        instance.lock.release()
        raise

    async def done(written: bool) -> None:
        try:
            if instance.closed:
                pass
            elif written and not instance.member:  # the client holds them: no librdkafka call
                finish_answer(instance, written)
                ctx.shares.touch(instance)
            else:
                await ctx.shares.run_locked(instance, finish_answer, instance, written)
            if written:
                ctx.metrics.records_consumed.inc(count)
                ctx.metrics.bytes_consumed.inc(size)
        finally:
            instance.lock.release()

    return ShareAnswer(body, media_type(fmt), done, ctx.settings.idle_timeout_ms / 1000)  # type: ignore[return-value]


async def _handle_records(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.shares.get(group, instance)
    check_records_accept(found.format, request.headers.get("accept"))
    kind = request.query_params.get("acknowledge")
    if kind is not None and kind.lower() not in ACK_TYPES:
        raise RestError(422, 422, f"acknowledge must be accept, release or reject, got {kind[:40]!r}")
    return await _answer(ctx, request, found, found.format, None if kind is None else kind.lower())


def _acks(body: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    items = body.get("acknowledgements")
    if not isinstance(items, list) or not items or len(items) > _ACKS_MAX:
        raise RestError(
            422, 422, "`acknowledgements` must be a non-empty JSON array of {topic, partition, offset, type} objects"
        )
    result: list[tuple[str, int, int, str]] = []
    seen: set[tuple[str, int, int]] = set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("topic"), str):
            raise RestError(422, 422, "each acknowledgement needs a topic, a partition, an offset and a type")
        topic = check_topic(item["topic"], 422, 422)
        partition = item.get("partition")
        if type(partition) is not int or not 0 <= partition <= INT32_MAX:
            raise RestError(422, 422, f"partition must be an integer from 0 to {INT32_MAX}, got {partition!r}")
        offset = check_offset(item.get("offset"))
        kind = item.get("type")
        if not isinstance(kind, str) or kind.lower() not in ACK_TYPES:
            raise RestError(422, 422, f"type must be accept, release or reject, got {str(kind)[:40]!r}")
        if (topic, partition, offset) in seen:
            raise RestError(422, 422, f"{topic}-{partition}@{offset} is acknowledged twice in one request")
        seen.add((topic, partition, offset))
        result.append((topic, partition, offset, kind.lower()))
    return result


async def _handle_acknowledge(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.shares.get(group, instance)
    acks = _acks(await consumer_body(ctx, request))
    rows = await ctx.shares.run(found, acknowledge, found, acks)
    return json_response({"partitions": rows})


def _fetch_format(accept: str | None) -> str:
    """The embedded format an affinity-free fetch answers in: the first one its Accept
    names, else binary (a v2 records GET's formats)."""
    for item in (accept or "").split(","):
        ours, fmt = embedded_format(item)
        if ours and fmt is not None:
            return fmt
    return "binary"


async def _handle_fetch(ctx: Context, request: Request, group: str) -> Response:
    check_group(group)
    names = request.query_params.getlist("topic")
    if not names or len(names) > _FETCH_TOPICS_MAX:
        raise RestError(422, 422, f"name 1 to {_FETCH_TOPICS_MAX} topics: ?topic=a&topic=b")
    topics = sorted({check_topic(name) for name in names})
    fmt = _fetch_format(request.headers.get("accept"))
    if fmt in SCHEMA_FORMATS and ctx.shares.schemas is None:
        raise no_registry(fmt)
    if fmt not in FORMATS and fmt not in SCHEMA_FORMATS:
        raise RestError(406, 40601, f"no such embedded format: {fmt}")
    reset = request.query_params.get("auto.offset.reset")
    for topic in topics:
        await ctx.metadata.partition_count(topic)  # 404 / 40401: a member would wait on it forever
    await _ready(ctx)
    name = "affinity-free-" + hashlib.sha1("\n".join(topics).encode()).hexdigest()[:12]
    member = ctx.shares.instances.get((group, name))
    if member is None:
        body: dict[str, Any] = {"name": name, "format": fmt}
        if reset is not None:
            body["auto.offset.reset"] = reset
        member = ctx.shares.create(group, body, member=True)
        await ctx.shares.configure_group(member)
        await ctx.shares.run(member, subscribe, member, topics)
    ctx.shares.touch(member)
    return await _answer(ctx, request, member, fmt)


_I = "/share-consumers/{group}/instances/{instance}"

ROUTES = [
    Route("POST", "/share-consumers/{group}", _handle_create),
    Route("GET", "/share-consumers/{group}/records", _handle_fetch),
    Route("DELETE", _I, _handle_delete),
    Route("POST", f"{_I}/subscription", _handle_subscribe),
    Route("GET", f"{_I}/subscription", _handle_get_subscription),
    Route("DELETE", f"{_I}/subscription", _handle_unsubscribe),
    Route("GET", f"{_I}/records", _handle_records),
    Route("POST", f"{_I}/acknowledgements", _handle_acknowledge),
]
