"""What the REST proxy and Schema Registry tests say over HTTP: media types, a JSON POST, an error check.

The fixtures these tests share (`proxy`, `http`) are in `conftest.py` next to this module. What a
test imports by name lives here instead: a conftest is not importable by name, since `tests/` holds
two modules called `conftest`.
"""

from __future__ import annotations

import orjson
import requests

__all__ = ["AVRO_V2", "BINARY_V2", "JSON_V2", "REGISTRY_V1", "TIMEOUT", "V2", "error", "media", "post"]

#: Requests without embedded data (consumer instances, assignments, offsets) and v2 answers.
V2 = "application/vnd.kafka.v2+json"
JSON_V2 = "application/vnd.kafka.json.v2+json"
BINARY_V2 = "application/vnd.kafka.binary.v2+json"
AVRO_V2 = "application/vnd.kafka.avro.v2+json"
#: The Schema Registry's own media type.
REGISTRY_V1 = "application/vnd.schemaregistry.v1+json"
#: Seconds a `post` waits: long enough for a proxy that waits on an unreachable registry.
TIMEOUT = 60.0


def media(fmt: str) -> str:
    """The v2 media type of an embedded format: `media("avro") == AVRO_V2`."""
    return f"application/vnd.kafka.{fmt}.v2+json"


def post(
    http: requests.Session, url: str, body: object = None, content_type: str = V2, *, timeout: float = TIMEOUT
) -> requests.Response:
    """POST `body` as JSON (no body at all when it is None, as an empty create request sends)."""
    data = b"" if body is None else orjson.dumps(body)
    return http.post(url, data=data, headers={"Content-Type": content_type}, timeout=timeout)


def error(response: requests.Response, status: int, code: int) -> str:
    """Assert the proxy's error answer (HTTP status and its own `error_code`); returns its message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, response.text
    return str(body["message"])
