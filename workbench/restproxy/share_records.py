"""A share consumer's records answer, and the proof that it was written.

One answer holds at most one poll's records (librdkafka polls a share consumer again
only once every record of its last poll is acknowledged), bounded like a v2 answer:
`min(max_bytes, consumer.request.max.bytes)` of key + value bytes, the first record
always out, and at most `consumer.max.poll.records` records; the rest stay acquired on
the instance for the next answer. Each row is a v2 record plus its `delivery_count`.

**The trust rule.** No record is accepted before the answer holding it was written, and
an answer that fails or is cut releases its records. "Written" is the most TCP can say:
every byte of the answer left the process and the peer's TCP acknowledged it, on a
connection still open (Linux: the socket's send queue, `SIOCOUTQ`, is empty and its
state is ESTABLISHED or CLOSE_WAIT; a reset or an answer not taken within
`idle.timeout.ms` is a cut). A peer that reads the answer into its kernel buffer and then
dies cannot be told apart from one that processed it: that is why explicit instances let
the client acknowledge, and why the affinity-free fetch documents itself as
at-most-once past the peer's socket (see docs/rest-proxy.md).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import struct
import termios
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from confluent_kafka import Message
from starlette.types import Receive, Scope, Send

from workbench.backoff import Backoff
from workbench.httpserver.errors import RestError
from workbench.httpserver.protocol import TRANSPORT_KEY
from workbench.restproxy.consumer_records import Unrenderable, record_row, renderer
from workbench.restproxy.share_instances import (
    ShareInstance,
    acknowledge_held,
    coordinates,
    finish_answer,
    poll_batch,
    take,
)

__all__ = ["ShareAnswer", "fetch_answer", "peer_has_all"]

log = logging.getLogger("workbench.restproxy")

_PIECE = 1 << 20
_TCP_INFO = 11  # socket.TCP_INFO on Linux
_ESTABLISHED, _CLOSE_WAIT = 1, 8
#: How often the peer's TCP is asked whether it has every byte: at first soon (on a
#: loopback or LAN it has within a millisecond, and the answer's end waits for it), then
#: every 5 ms for a slow or distant client.
_FIRST_CHECK_S, _LAST_CHECK_S = 0.0005, 0.005


def _row(message: Message, key: Any, value: Any) -> dict[str, Any]:
    """A v2 records row plus the record's `delivery_count`."""
    row = record_row(message, key, value)
    row["delivery_count"] = message.delivery_count()
    return row


def fetch_answer(
    instance: ShareInstance, deadline: float, budget: int, max_records: int, acknowledge: str | None = None
) -> tuple[bytes, int, int]:
    """Acknowledge what the client holds when it asks to (`acknowledge_held`), poll if
    nothing is buffered, then render the answer's rows (worker thread).

    Returns the JSON array, its record count and its key + value bytes; the records move
    to the instance's `writing` until `finish_answer` says whether they were written.

    Raises:
        RestError: 409 / 40903 from `poll_batch`; 422 when an explicit instance's next
            record cannot be shown in its format (the record is then the client's to
            acknowledge: the error names it).
    """
    if acknowledge is not None:
        acknowledge_held(instance, acknowledge)
    poll_batch(instance, deadline)
    render = renderer(instance.format, instance.schemas)
    rows: list[dict[str, Any]] = []
    taken: list[Message] = []
    size = 0
    for message in list(instance.buffered):
        if len(rows) >= max_records:
            break
        key, value = message.key(), message.value()
        length = len(key or b"") + len(value or b"")
        if rows and size + length > budget:
            break
        try:
            row = _row(message, render(key), render(value))
        except Unrenderable:
            if rows:
                break  # the answer so far goes out; this record leads the next one
            return _unrenderable(instance, message)
        rows.append(row)
        taken.append(message)
        size += length
    take(instance, taken)
    return orjson.dumps(rows), len(rows), size


def _unrenderable(instance: ShareInstance, message: Message) -> tuple[bytes, int, int]:
    """A record the format cannot show, first in line. A group member releases it (the
    broker archives it after `group.share.delivery.count.limit` deliveries); an explicit
    instance's client gets a 422 naming it and holds it, to reject or release."""
    topic, partition, offset = coordinates(message)
    take(instance, [message])
    if instance.member:
        finish_answer(instance, written=False)
        log.warning(
            "share %s: %s-%d@%d cannot be shown as %s; released",
            instance.group,
            topic,
            partition,
            offset,
            instance.format,
        )
        return b"[]", 0, 0
    instance.writing.clear()
    instance.outstanding[(topic, partition, offset)] = message.delivery_count() or 1
    ack = {"topic": topic, "partition": partition, "offset": offset, "type": "reject"}
    body = orjson.dumps({"acknowledgements": [ack]}).decode()
    raise RestError(
        422,
        422,
        f"deserialization error for format {instance.format}: the record at topic {topic} partition "
        f"{partition} offset {offset} cannot be shown in it. This instance holds it for you: acknowledge "
        f"it (POST .../acknowledgements {body}, or release it) or read it with a binary instance.",
    )


def _tcp_state(transport: Any) -> tuple[int, int] | None:
    """(TCP state, bytes not yet acknowledged by the peer) of the connection, or None
    where the socket cannot say (not TCP, not Linux)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return None
    try:
        info = sock.getsockopt(6, _TCP_INFO, 8)  # IPPROTO_TCP; tcpi_state is the first byte
        queued = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
    except (OSError, AttributeError, ValueError):
        return None
    return info[0], struct.unpack("i", queued)[0]


async def peer_has_all(scope: Scope, timeout_s: float) -> bool:
    """True once every byte sent on this connection is acknowledged by the peer's TCP on
    a connection still open; False when it was closed or reset first, or `timeout_s`
    passed. In-process (no transport: Starlette's TestClient) the send's return is all
    there is, and counts as written."""
    transport = scope.get("extensions", {}).get(TRANSPORT_KEY)
    if transport is None:
        return True
    deadline = time.monotonic() + timeout_s
    waits = Backoff(_FIRST_CHECK_S, _LAST_CHECK_S).delays()
    while True:
        if transport.is_closing():
            return False
        if transport.get_write_buffer_size() == 0:
            state = _tcp_state(transport)
            if state is None:
                return True
            if state[0] not in (_ESTABLISHED, _CLOSE_WAIT):
                return False
            if state[1] == 0:
                return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(next(waits))


class ShareAnswer:
    """The ASGI response of a share records answer: the rows, then `done(written)` (the
    records' fate, see `finish_answer`), then the end of the body. Whatever happens while
    sending, `done` runs exactly once."""

    def __init__(
        self, body: bytes, media_type: str, done: Callable[[bool], Awaitable[None]], write_timeout_s: float
    ) -> None:
        self.body = body
        self.media_type = media_type
        self.done = done
        self.write_timeout_s = write_timeout_s
        self.status_code = 200

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        written = False
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", self.media_type.encode())],
                }
            )
            for start in range(0, len(self.body), _PIECE):
                await send({"type": "http.response.body", "body": self.body[start : start + _PIECE], "more_body": True})
            written = await peer_has_all(scope, self.write_timeout_s)
        finally:
            await self.done(written)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
