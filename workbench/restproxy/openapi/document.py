"""The proxy's OpenAPI document: what this proxy implements of v2 and v3, served at
`GET /openapi.json` so users can read it and tools (schemathesis) can fuzz it.

The document is built from small tables and helpers rather than written out as one
literal: every v2 consumer-instance path shares its parameters and error answers,
every v3 resource has the same `kind` / `metadata` / `related` shape, and each error
is upstream's `{"error_code", "message"}` body. So a route added to a handler module
is one line in its API's module (`v2`, `v3`, `share`), and `tests/integration/test_restproxy_openapi.py` checks that the
document and the routers list the same (method, path) pairs.

What it describes is this proxy, not Confluent's whole API: v2 produce takes binary,
JSON, avro, jsonschema and protobuf embedded data (the last three need
`schema.registry.url`; without it they are answered 422 / 42205). Error statuses list the ones a handler
raises on purpose; `default` covers the rest (401 when basic auth is on, 405, and
500 / 50002 for anything unexpected).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from workbench.httpserver.routing import Route
from workbench.restproxy.context import Context, json_response
from workbench.restproxy.openapi.operations import (
    PARAMETERS,
    answer,
    operation,
)
from workbench.restproxy.openapi.schemas import (
    JSON_TYPE,
    SCHEMAS,
    STR,
    obj_schema,
)
from workbench.restproxy.openapi.share import share_paths, v3_share_paths
from workbench.restproxy.openapi.v2 import v2_paths
from workbench.restproxy.openapi.v3 import v3_paths

__all__ = ["ROUTES", "document", "openapi"]


def _own_paths() -> dict[str, dict[str, Any]]:
    return {
        "/metrics": {
            "get": operation(
                "metrics",
                "operations",
                "Prometheus metrics",
                answer(200, "Prometheus text exposition", STR, ("text/plain",)),
                {},
            )
        },
        "/openapi.json": {
            "get": operation(
                "openapi", "operations", "This document", answer(200, "OpenAPI 3.0", obj_schema(), (JSON_TYPE,)), {}
            )
        },
    }


_DESCRIPTION = """\
The workbench's Kafka REST proxy: Confluent REST Proxy API v2 (metadata, produce, consumer
instances) and v3 core (clusters, topics, partitions, configs, consumer groups and lag,
streaming produce), with Confluent's media types, property names and error bodies; and
share groups (KIP-932), which no other proxy offers: share-consumer instances with explicit
acknowledgement, a fetch without instance affinity, and Confluent Cloud's read-only v3
share-group GETs.

* Every error body is `{"error_code": int, "message": str}` (`Error`); `error_code` is the
  HTTP status or a 5-digit code (status x 100 + sub-code).
* v2 bodies and answers are `application/vnd.kafka[.<format>].v2+json`; v1 types are
  aliases. Embedded formats: binary (base64), json, and with `schema.registry.url` avro,
  jsonschema and protobuf (Confluent's wire format); without a registry those are 422 / 42205.
* v3 speaks `application/json`; `/kafka/v3/...` is accepted as an alias of `/v3/...`.
* A trailing slash is accepted on every path; HEAD is answered for every GET.
* With `authentication.method=BASIC` every request needs HTTP basic auth (401 otherwise).
* Produce (v2 and v3) takes the request header `Workbench-Trace: true` to trace every record
  (`RecordTrace`): off by default, and the workbench's own extension, not Confluent's API.
"""


def document(base_url: str) -> dict[str, Any]:
    """The OpenAPI 3 document, with `base_url` as its one server."""
    return {
        "openapi": "3.0.3",
        "info": {"title": "workbench REST proxy", "version": "2", "description": _DESCRIPTION},
        "servers": [{"url": base_url}],
        "tags": [
            {"name": name}
            for name in ("v2 metadata", "v2 produce", "v2 consumers", "v2 share consumers", "v3", "operations")
        ],
        "paths": {**v2_paths(), **share_paths(), **v3_paths(), **v3_share_paths(), **_own_paths()},
        "components": {"schemas": SCHEMAS, "parameters": PARAMETERS},
    }


async def openapi(ctx: Context, request: Request) -> Response:
    return json_response(document(ctx.settings.base_url(request.headers.get("host"))), media_type=JSON_TYPE)


ROUTES = [Route("GET", "/openapi.json", openapi)]
