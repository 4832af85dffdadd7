"""Error bodies in Confluent's shape: `{"error_code": <int>, "message": "<text>"}`.

A handler raises `RestError(status, error_code, message)`; the application turns it
(and anything unexpected) into that JSON body. An unexpected exception is logged with
its traceback and answered 500 / 50002 with a one-line message, never a stack trace,
unless `debug=true` asks for the exception text in the message as upstream does.

The codes are upstream's (see the API reference, §1.3):

    40401 topic not found          40402 partition not found
    40403 consumer instance not found
    40601 consumer format does not match Accept
    40902 consumer instance already exists    40903 illegal state (assignment)
    42201/42202 schema missing     42204 invalid consumer config   42205 invalid schema
    42206 v3 payload error         413 record or body too large
    50002 Kafka error              50003 retriable Kafka error
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from workbench.errors import WorkbenchError

__all__ = [
    "CONSUMER_NOT_FOUND",
    "PARTITION_NOT_FOUND",
    "RestError",
    "TOPIC_NOT_FOUND",
    "error_response",
]

TOPIC_NOT_FOUND = 40401
PARTITION_NOT_FOUND = 40402
CONSUMER_NOT_FOUND = 40403


class RestError(WorkbenchError):
    """An HTTP error with Confluent's error body; raised by handlers, rendered by the app."""

    def __init__(self, status: int, error_code: int, message: str, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.error_code = error_code
        self.message = message
        self.headers = headers or {}
        super().__init__(f"{status}/{error_code}: {message}")

    def body(self) -> dict[str, Any]:
        return {"error_code": self.error_code, "message": self.message}


def error_response(error: RestError, media_type: str = "application/json") -> Response:
    """The JSON error body as a response; v2 callers get it in the vnd.kafka type."""
    return Response(orjson.dumps(error.body()), status_code=error.status, media_type=media_type,
                    headers=error.headers)  # fmt: skip
