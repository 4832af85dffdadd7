"""What every handler gets: the process's shared resources, and body/response helpers.

`Context` lives on `app.state` for the lifetime of the app (opened by the lifespan),
never in module globals, so several apps can run in one process (tests do).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from workbench.httpserver.errors import RestError
from workbench.restproxy.formats import V2_JSON
from workbench.restproxy.settings import RestProxySettings

if TYPE_CHECKING:
    from workbench.restproxy.consumer_instances import ConsumerManager
    from workbench.restproxy.metadata import Metadata
    from workbench.restproxy.metrics import Metrics
    from workbench.restproxy.producer import AsyncProducer
    from workbench.restproxy.schemas import SchemaFormats
    from workbench.restproxy.share_instances import ShareManager

__all__ = [
    "Context",
    "PARSE_IN_THREAD_BYTES",
    "empty_response",
    "int_param",
    "json_response",
    "object_body",
    "parse_json",
    "parse_json_body",
    "read_body",
    "read_json",
]


@dataclass
class Context:
    """The resources of one proxy process."""

    settings: RestProxySettings
    producer: AsyncProducer
    metadata: Metadata
    consumers: ConsumerManager
    metrics: Metrics
    started: float = field(default_factory=time.monotonic)
    cluster_id: str = ""
    #: The Schema Registry client when `schema.registry.url` is set (the schema formats).
    schemas: SchemaFormats | None = None
    #: Share-consumer instances and affinity-free share-group members (set by the lifespan).
    shares: ShareManager = None  # type: ignore[assignment]


def json_response(
    data: Any, status: int = 200, media_type: str = V2_JSON, headers: dict[str, str] | None = None
) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type=media_type, headers=headers)


def empty_response() -> Response:
    return Response(b"", status_code=204)


#: Bodies larger than this are parsed in a worker thread: orjson holds the GIL, but a
#: thread is preempted every switch interval (5 ms), so the event loop keeps serving
#: other requests while a 60 MB array is parsed, instead of stopping for its 100+ ms.
PARSE_IN_THREAD_BYTES = 1 << 20


async def read_body(request: Request, settings: RestProxySettings) -> bytes:
    """The whole body: 413 as soon as it passes `request.max.bytes`, 408 when it does not
    arrive within `request.body.timeout.ms` (a client that promised more and went quiet
    would otherwise hold the request, and its memory, forever)."""
    limit = settings.request_max_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RestError(
            413, 413, f"HTTP Request Entity Too Large: {declared} bytes, the limit (request.max.bytes) is {limit}"
        )
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(settings.body_timeout_ms / 1000):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise RestError(
                        413, 413, f"HTTP Request Entity Too Large: over the limit (request.max.bytes) of {limit}"
                    )
                chunks.append(chunk)
    except TimeoutError:
        raise RestError(
            408,
            408,
            f"Request Timeout: the body did not arrive within request.body.timeout.ms "
            f"({settings.body_timeout_ms} ms); {size} bytes came",
            headers={"Connection": "close"},
        ) from None
    return b"".join(chunks)


def parse_json(body: bytes) -> Any:
    """JSON from a body; 400 when malformed or nested past 1024 levels (orjson's parser).

    Integers past 64 bits come back as floats; where an integer belongs (partitions,
    offsets) that is a 422 by type, and json-format values are checked by produce."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise RestError(400, 400, f"Malformed JSON: {exc}") from None


async def parse_json_body(body: bytes) -> Any:
    """`parse_json`, in a worker thread for large bodies so the event loop keeps serving."""
    if len(body) < PARSE_IN_THREAD_BYTES:
        return parse_json(body)
    return await asyncio.to_thread(parse_json, body)


async def read_json(request: Request, settings: RestProxySettings, *, required: bool = False) -> Any:
    """The JSON body, or None when empty (422 when `required`); 400 when malformed."""
    body = await read_body(request, settings)
    if not body.strip():
        if required:
            raise RestError(422, 422, "Request body is empty. Data is required.")
        return None
    return await parse_json_body(body)


def int_param(value: str, what: str) -> int:
    """A path or query parameter that must be an integer: 404 / 404 otherwise, as upstream
    (JAX-RS answers a parameter it cannot convert with 404). ASCII digits only: Python's
    `int` would also take other scripts' digits, `_` and surrounding spaces."""
    try:
        if not value.lstrip("-").isascii() or not value.lstrip("-").isdigit() or len(value) > 40:
            raise ValueError(value)
        number = int(value)
        if not -(2**63) <= number < 2**63:
            raise ValueError(value)
        return number
    except ValueError:
        raise RestError(404, 404, f"HTTP 404 Not Found: {what} must be an integer, got {value!r}") from None


def object_body(data: Any, what: str) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RestError(422, 422, f"{what}: the body must be a JSON object")
    return data
