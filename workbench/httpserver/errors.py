"""The error every handler of the embedded HTTP services raises, and its JSON body.

Both Confluent services answer errors in one shape, `{"error_code": <int>, "message":
"<text>"}`: the REST proxy (`workbench.restproxy.errors` has its codes) and the Schema
Registry (`workbench.registry.errors`). A handler raises `RestError`; the app renders it
with `error_response`, the router raises it for an unknown path (404) or method (405).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from workbench.errors import WorkbenchError

__all__ = ["RestError", "error_response"]


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
    return Response(orjson.dumps(error.body()), status_code=error.status, media_type=media_type, headers=error.headers)
