"""What every handler gets: the process's shared resources, and body/response helpers.

`Context` lives on `app.state` for the lifetime of the app (opened by the lifespan),
never in module globals, so several apps can run in one process (tests do).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from workbench.restproxy.errors import RestError
from workbench.restproxy.formats import V2_JSON
from workbench.restproxy.settings import Settings

if TYPE_CHECKING:
    from workbench.restproxy.consumers import ConsumerManager
    from workbench.restproxy.metadata import Metadata
    from workbench.restproxy.metrics import Metrics
    from workbench.restproxy.producer import AsyncProducer

__all__ = ["Context", "int_param", "json_response", "read_body", "read_json"]


@dataclass
class Context:
    """The resources of one proxy process."""

    settings: Settings
    producer: AsyncProducer
    metadata: Metadata
    consumers: ConsumerManager
    metrics: Metrics
    started: float = field(default_factory=time.monotonic)
    cluster_id: str = ""


def json_response(data: Any, status: int = 200, media_type: str = V2_JSON, headers: dict[str, str] | None = None
                  ) -> Response:  # fmt: skip
    return Response(orjson.dumps(data), status_code=status, media_type=media_type, headers=headers)


def empty_response() -> Response:
    return Response(b"", status_code=204)


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refused with 413 as soon as it passes `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RestError(413, 413, f"HTTP Request Entity Too Large: {declared} bytes, the limit "
                        f"(request.max.bytes) is {limit}")  # fmt: skip
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RestError(413, 413, f"HTTP Request Entity Too Large: over the limit (request.max.bytes) of {limit}")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise RestError(400, 400, f"Malformed JSON: {exc}") from None


async def read_json(request: Request, limit: int, *, required: bool = False) -> Any:
    """The JSON body, or None when empty (422 when `required`); 400 when malformed."""
    body = await read_body(request, limit)
    if not body.strip():
        if required:
            raise RestError(422, 422, "Request body is empty. Data is required.")
        return None
    return parse_json(body)


def int_param(value: str, what: str) -> int:
    """A path parameter that must be an integer: 404 / 404 otherwise, as upstream."""
    try:
        return int(value)
    except ValueError:
        raise RestError(404, 404, f"HTTP 404 Not Found: {what} must be an integer, got {value!r}") from None


def object_body(data: Any, what: str) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RestError(422, 422, f"{what}: the body must be a JSON object")
    return data
