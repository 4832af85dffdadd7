"""The operations of the proxy's OpenAPI document: parameters, answers, error tables, paths' prefixes.

Every v2 consumer-instance path shares its parameters and error answers; a route added
to a handler module is one line in its API's module, built from these.
"""

from __future__ import annotations

from typing import Any

from workbench.restproxy.formats import SCHEMA_FORMATS, V2_JSON
from workbench.restproxy.openapi.schemas import (
    INT,
    INT32,
    JSON_TYPE,
    STR,
    Schema,
    array_schema,
    schema_ref,
)

__all__ = [
    "CLUSTER",
    "CLUSTER_404",
    "CONFIG_ERRORS",
    "CONSUMER_BODY",
    "INSTANCE",
    "INSTANCE_404",
    "NOT_ACCEPTABLE",
    "NO_SHARE_GROUPS",
    "PARAMETERS",
    "PARTITION_404",
    "SHARE",
    "SHARE_404",
    "TOPIC_404",
    "V2_BODY_TYPES",
    "V3_GROUP_404",
    "V3_SHARE_404",
    "V3_SHARE_ERRORS",
    "V3_TOPIC_404",
    "answer",
    "content_of",
    "operation",
    "produce_operation",
    "request_body",
]


# ---------------------------------------------------------------- parameters


def _path(name: str, schema: Schema, description: str) -> Schema:
    return {"name": name, "in": "path", "required": True, "schema": schema, "description": description}


def _query(name: str, schema: Schema, description: str) -> Schema:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


PARAMETERS: dict[str, Schema] = {
    "topic": _path(
        "topic",
        {**STR, "minLength": 1},
        "A Kafka topic name (1-249 of [A-Za-z0-9._-]; MapR stream "
        "topics /stream/path:topic, percent-encoded). An illegal name is a topic that does not exist.",
    ),
    "partition": _path("partition", {**INT32, "minimum": 0}, "A partition number; not an integer: 404 / 404"),
    "group": _path("group", {**STR, "minLength": 1, "maxLength": 255}, "A consumer group id"),
    "instance": _path("instance", {**STR, "minLength": 1, "maxLength": 255}, "A consumer instance name"),
    "consumer": _path(
        "consumer",
        {**STR, "minLength": 1},
        "A share-group member: the broker's member id (base64, so '/' and '+' are percent-encoded), or the "
        "instance name where the answers show this process's members",
    ),
    "fetch_topic": {
        "name": "topic",
        "in": "query",
        "required": True,
        "style": "form",
        "explode": True,
        "schema": array_schema({**STR, "minLength": 1}, minItems=1, maxItems=100),
        "description": "The topics to read (repeated: ?topic=a&topic=b); a missing or illegal one: 404 / 40401",
    },
    "acknowledge": _query(
        "acknowledge",
        {"type": "string", "enum": ["accept", "release", "reject"]},
        "First acknowledge every record the client holds from earlier answers with this type; the "
        "acknowledgements go to Kafka with the instance's next fetch (no call of their own, no broker answer "
        "waited for: a record whose lock ran out first comes again). Applied even when the answer is an error",
    ),
    "auto_offset_reset": _query(
        "auto.offset.reset",
        {"type": "string", "enum": ["earliest", "latest"]},
        "The group's share.auto.offset.reset, set when this process's member joins (its first fetch)",
    ),
    "trace": {
        "name": "Workbench-Trace",
        "in": "header",
        "required": False,
        "schema": {"type": "string", "enum": ["true", "1", "answer", "false", "0"], "default": "false"},
        "description": "Trace every record of this produce (off by default; the workbench's own extension, "
        "not part of Confluent's API). true or 1: each record gets the record headers "
        "workbench.proxy.received_ns and workbench.proxy.handed_ns (after its own), and each result a `trace` "
        "(RecordTrace); answer: only the results' `trace`, the records written as sent, along the untraced "
        "path. Any other value: 400 / 400",
    },
    "cluster": _path("cluster", {**STR, "minLength": 1}, "The cluster id (GET /v3/clusters); any other: 404"),
    "config": _path("name", {**STR, "minLength": 1}, "A topic config name, e.g. cleanup.policy"),
    "timeout": _query(
        "timeout",
        INT,
        "Longest wait in ms; only lowers consumer.request.timeout.ms (negative: ignored). Not an integer: 404 / 404",
    ),
    "max_bytes": _query(
        "max_bytes",
        INT,
        "Most key + value bytes to return (the first record always goes); "
        "only lowers consumer.request.max.bytes (0 or negative: ignored). Not an integer: 404 / 404",
    ),
}


def _params(*names: str) -> list[Schema]:
    return [{"$ref": f"#/components/parameters/{name}"} for name in names]


# ---------------------------------------------------------------- operations

_V2_ERRORS = (V2_JSON,)
_V3_ERRORS = (JSON_TYPE,)


def content_of(schema: Schema, media_types: tuple[str, ...]) -> dict[str, Any]:
    return {media: {"schema": schema} for media in media_types}


def _errors(codes: dict[int, str], media_types: tuple[str, ...]) -> dict[str, Any]:
    """Error responses with the Error body; `default` stands for what any handler may answer."""
    body = content_of(schema_ref("Error"), media_types)
    responses = {str(status): {"description": text, "content": body} for status, text in codes.items()}
    responses["default"] = {
        "description": "401 (basic auth on), 405, 406 (an Accept without JSON), 500 / 50002 "
        "(unexpected), 503 / 50302 (broker not available)",
        "content": body,
    }
    return responses


def operation(
    operation_id: str,
    tag: str,
    summary: str,
    ok: dict[str, Any],
    errors: dict[int, str],
    params: tuple[str, ...] = (),
    body: dict[str, Any] | None = None,
) -> dict[str, Any]:
    v3 = tag.startswith("v3")
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "tags": [tag],
        "summary": summary,
        "responses": {**ok, **_errors(errors, _V3_ERRORS if v3 else _V2_ERRORS)},
    }
    if params:
        operation["parameters"] = _params(*params)
    if body is not None:
        operation["requestBody"] = body
    return operation


def answer(
    status: int,
    description: str,
    schema: Schema | None = None,
    media_types: tuple[str, ...] = (V2_JSON,),
    headers: dict[str, Any] | None = None,
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description}
    if schema is not None:
        response["content"] = content_of(schema, media_types)
    if headers:
        response["headers"] = headers
    return {str(status): response}


def request_body(schema: Schema, media_types: tuple[str, ...], required: bool = False, description: str = "") -> Schema:
    body: Schema = {"required": required, "content": content_of(schema, media_types)}
    if description:
        body["description"] = description
    return body


NOT_ACCEPTABLE = {406: "The Accept header names nothing this proxy sends"}
TOPIC_404 = {404: "40401: topic not found (an illegal topic name included)"}
PARTITION_404 = {404: "40401 topic not found, 40402 partition not found, 404 partition not an integer"}
INSTANCE_404 = {404: "40403: consumer instance not found"}
CONSUMER_BODY = {400: "Malformed JSON", 415: "Content-Type neither JSON nor vnd.kafka", 422: "Invalid body"}
V2_BODY_TYPES = (V2_JSON, JSON_TYPE)
CLUSTER_404 = {404: "Cluster not found"}
V3_TOPIC_404 = {404: "Cluster not found, or 40403: topic not found"}
V3_GROUP_404 = {404: "Cluster or consumer group not found"}
SHARE_404 = {404: "40403: share consumer instance not found"}
NO_SHARE_GROUPS = {400: "40002: the cluster has no share groups (KIP-932; Apache Kafka 4.2 or newer)"}
V3_SHARE_ERRORS = {
    403: "40301: the cluster refused the describe (an ACL)",
    500: "50002/50003: the brokers' answer was refused or could not be read",
    503: "50302: the cluster did not answer in time, or too many lookups are in flight in this process",
}
V3_SHARE_404 = {
    404: "Cluster, share group or consumer (the broker's member id, percent-encoded) not found",
    **NO_SHARE_GROUPS,
    **V3_SHARE_ERRORS,
}
CONFIG_ERRORS = {
    400: "Malformed JSON, a bad config name, value or operation; 40002: Kafka refused",
    404: "Cluster or topic (40403) not found",
    415: "Content-Type other than application/json",
    422: "42206: the body is not as described",
}
INSTANCE = "/consumers/{group}/instances/{instance}"
SHARE = "/share-consumers/{group}/instances/{instance}"
CLUSTER = "/v3/clusters/{cluster}"


def _produce_body() -> Schema:
    """Produce media types: binary and json are produced; the schema formats are refused."""
    content = {
        "application/vnd.kafka.binary.v2+json": {"schema": schema_ref("BinaryProduceRequest")},
        "application/vnd.kafka.json.v2+json": {"schema": schema_ref("JsonProduceRequest")},
    }
    for fmt in SCHEMA_FORMATS:
        content[f"application/vnd.kafka.{fmt}.v2+json"] = {"schema": schema_ref("SchemaProduceRequest")}
    return {
        "required": True,
        "description": "Also accepted: the v1 types (vnd.kafka.<fmt>.v1+json), and application/json, "
        "application/vnd.kafka.v2+json and application/octet-stream, which mean binary.",
        "content": content,
    }


def produce_operation(operation_id: str, summary: str, params: tuple[str, ...]) -> dict[str, Any]:
    errors = {
        400: "Malformed JSON, a key or value that is not base64 (binary format), or a Workbench-Trace "
        "header other than true, 1, false or 0",
        404: "40401 topic not found, 40402 partition not found",
        406: NOT_ACCEPTABLE[406],
        413: "A record over message.max.bytes, or a body over request.max.bytes",
        415: "Missing or foreign Content-Type",
        422: "42201/42202: key/value schema missing; 42205: invalid schema, or no schema.registry.url; 422: bad body "
        "(records missing or empty, "
        "unknown fields, a partition that is not an integer)",
    }
    ok = answer(
        200,
        "Each record's partition and offset, or its error (per-record 50002 / 50003), in request order; "
        "with Workbench-Trace: true, each with its `trace`",
        schema_ref("ProduceResponse"),
    )
    return operation(operation_id, "v2 produce", summary, ok, errors, (*params, "trace"), _produce_body())
