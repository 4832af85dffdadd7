"""The proxy's OpenAPI document: what this proxy implements of v2 and v3, served at
`GET /openapi.json` so users can read it and tools (schemathesis) can fuzz it.

The document is built from small tables and helpers rather than written out as one
literal: every v2 consumer-instance path shares its parameters and error answers,
every v3 resource has the same `kind` / `metadata` / `related` shape, and each error
is upstream's `{"error_code", "message"}` body. So a route added to a handler module
is one line here, and `tests/integration/test_restproxy_openapi.py` checks that the
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
from workbench.restproxy.formats import FORMATS, SCHEMA_FORMATS, V2_JSON

__all__ = ["ROUTES", "Schema", "document", "openapi"]

_JSON = "application/json"
Schema = dict[str, Any]

# ---------------------------------------------------------------- schema helpers


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(
    required: tuple[str, ...] = (), additional: bool | Schema = True, doc: str = "", **properties: Schema
) -> Schema:
    """An object schema; extra properties allowed unless `additional` says otherwise."""
    return _object(properties, required, additional, doc)


def _object(
    properties: dict[str, Schema], required: tuple[str, ...] = (), additional: bool | Schema = True, doc: str = ""
) -> Schema:
    """`_obj` for property names that are not identifiers (`auto.offset.reset`)."""
    schema: Schema = {"type": "object", "properties": properties}
    if doc:
        schema["description"] = doc
    if required:
        schema["required"] = list(required)
    if additional is not True:
        schema["additionalProperties"] = additional
    return schema


def _array(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


def _nullable(schema: Schema) -> Schema:
    return {**schema, "nullable": True}


_INT = {"type": "integer"}
_INT32 = {"type": "integer", "format": "int32"}
_INT64 = {"type": "integer", "format": "int64"}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_ANY: Schema = {"description": "any JSON value"}
_BASE64 = {"type": "string", "format": "byte", "description": "base64"}


def _v3_resource(kind: str, required: tuple[str, ...] = (), **properties: Schema) -> Schema:
    """A v3 resource: `kind`, `metadata` (`self` URL, CRN) and its own fields."""
    own = {"kind": {"type": "string", "enum": [kind]}, "metadata": _ref("ResourceMetadata")}
    return _object({**own, **properties}, ("kind", "metadata", *required))


def _v3_list(kind: str, item: str) -> Schema:
    return _obj(
        ("kind", "metadata", "data"),
        kind={"type": "string", "enum": [kind]},
        metadata=_ref("ListMetadata"),
        data=_array(_ref(item)),
    )


def _related(*names: str) -> dict[str, Schema]:
    return {name: _ref("Relationship") for name in names}


_TOPIC_PARTITION = _obj(("topic", "partition"), topic=_STR, partition=_INT32)
_PARTITIONS_BODY = _obj(("partitions",), partitions=_array(_ref("TopicPartition")))


def _produce_record(embedded: Schema) -> Schema:
    partition = _nullable({**_INT32, "description": "pins the partition; overrides the one in the URL"})
    return _obj(additional=False, key=_nullable(embedded), value=_nullable(embedded), partition=partition)


def _produce_request(record: str) -> Schema:
    return _obj(
        ("records",),
        additional=False,
        records=_array(_ref(record), minItems=1),
        key_schema=_STR,
        key_schema_id=_INT,
        value_schema=_STR,
        value_schema_id=_INT,
    )


def _consumer_record(embedded: Schema) -> Schema:
    return _obj(
        topic=_STR,
        key=_nullable(embedded),
        value=_nullable(embedded),
        partition=_INT32,
        offset=_INT64,
        timestamp={**_INT64, "description": "milliseconds since the epoch"},
    )


def _share_record(embedded: Schema) -> Schema:
    record = _consumer_record(embedded)
    record["properties"]["delivery_count"] = {
        **_INT32,
        "description": "1 on the first delivery; one more each time the record is acquired again",
    }
    return record


def _v3_data(what: str) -> Schema:
    return _nullable(
        _obj(
            type={
                "type": "string",
                "enum": ["BINARY", "JSON", "STRING"],
                "description": (
                    "AVRO, JSONSCHEMA, PROTOBUF with a schema selector need schema.registry.url (else 42205)"
                ),
            },
            data={"description": f"the {what}: base64 for BINARY, any JSON for JSON, a string for STRING"},
        )
    )


_SCHEMAS: dict[str, Schema] = {
    "Error": _obj(
        ("error_code", "message"),
        error_code={
            **_INT,
            "description": "the HTTP status, or status x 100 + "
            "a sub-code (40401 topic not found, 40403 consumer instance not found, ...)",
        },
        message=_STR,
    ),
    # v2 metadata
    "Replica": _obj(("broker", "leader", "in_sync"), broker=_INT32, leader=_BOOL, in_sync=_BOOL),
    "Partition": _obj(
        ("partition", "leader", "replicas"),
        partition=_INT32,
        leader={**_INT32, "description": "-1 when there is none"},
        replicas=_array(_ref("Replica")),
    ),
    "Topic": _obj(
        ("name", "configs", "partitions"),
        name=_STR,
        configs={"type": "object", "additionalProperties": _nullable(_STR)},
        partitions=_array(_ref("Partition")),
    ),
    "Brokers": _obj(("brokers",), brokers=_array(_INT32)),
    "PartitionOffsets": _obj(("beginning_offset", "end_offset"), beginning_offset=_INT64, end_offset=_INT64),
    # v2 produce
    "BinaryProduceRecord": _produce_record(_BASE64),
    "JsonProduceRecord": _produce_record(_ANY),
    "BinaryProduceRequest": _produce_request("BinaryProduceRecord"),
    "JsonProduceRequest": _produce_request("JsonProduceRecord"),
    "SchemaProduceRequest": {
        **_produce_request("JsonProduceRecord"),
        "description": "avro, jsonschema and "
        "protobuf: with schema.registry.url, Confluent's wire format; without, 422 / 42205",
    },
    "ProduceOffset": _obj(
        ("partition", "offset", "error_code", "error"),
        partition=_nullable(_INT32),
        offset=_nullable(_INT64),
        error_code=_nullable(_INT),
        error=_nullable(_STR),
        trace=_ref("RecordTrace"),
    ),
    "RecordTrace": _obj(
        ("received_ns", "handed_ns", "delivered_ns", "answered_ns"),
        additional=False,
        doc="Only with the request header Workbench-Trace: true or answer (off by default; the workbench's own "
        "extension, not part of Confluent's API). Wall-clock time.time_ns() of the proxy's machine.",
        received_ns={
            **_INT64,
            "description": "the request reached its handler, before its body was read "
            "(v3 stream: the chunk that completed the record, after the first)",
        },
        handed_ns=_nullable(
            {
                **_INT64,
                "description": "just before the record's produce() call into librdkafka; "
                "null: librdkafka never took it",
            }
        ),
        delivered_ns=_nullable(
            {
                **_INT64,
                "description": "librdkafka's delivery report (or the refusal) for the "
                "record; null: refused before producing",
            }
        ),
        answered_ns={**_INT64, "description": "just before the answer (v3: this record's result) was written"},
    ),
    "ProduceResponse": _obj(
        ("offsets",),
        key_schema_id=_nullable(_INT),
        value_schema_id=_nullable(_INT),
        offsets=_array(_ref("ProduceOffset")),
    ),
    # v2 consumers
    "CreateConsumerRequest": _object(
        {
            "name": {**_STR, "description": "the instance name; generated when missing"},
            "id": {**_STR, "description": "alias of name"},
            "format": {
                "type": "string",
                "enum": [*FORMATS, *SCHEMA_FORMATS],
                "description": "binary (default) or json; the schema formats need schema.registry.url "
                "(else 422 / 42205)",
            },
            "auto.offset.reset": {"type": "string", "enum": ["earliest", "latest", "smallest", "largest", "none"]},
            "auto.commit.enable": {"oneOf": [_BOOL, {"type": "string", "enum": ["true", "false"]}]},
            "fetch.min.bytes": {"type": "integer", "minimum": -1, "maximum": 10_000_000},
            "consumer.request.timeout.ms": {"type": "integer", "minimum": 0},
        }
    ),
    "CreateConsumerResponse": _obj(
        ("instance_id", "base_uri"),
        instance_id=_STR,
        base_uri={**_STR, "format": "uri", "description": "this instance's own URL"},
    ),
    "TopicPartition": _TOPIC_PARTITION,
    "Subscription": _obj(
        topics=_array(_STR),
        topic_pattern={**_STR, "description": "a regular expression"},
        doc="exactly one of topics and topic_pattern (both or neither: 409 / 40903)",
    ),
    "Topics": _obj(("topics",), topics=_array(_STR)),
    "Partitions": _PARTITIONS_BODY,
    "SeekRequest": _obj(
        offsets=_array(
            _obj(("topic", "partition", "offset"), topic=_STR, partition=_INT32, offset={**_INT64, "minimum": 0})
        ),
        timestamps=_array(
            _obj(
                ("topic", "partition", "timestamp"),
                topic=_STR,
                partition=_INT32,
                timestamp={"oneOf": [_INT64, {**_STR, "format": "date-time"}]},
            )
        ),
        doc="offsets, or timestamps (ISO 8601 or epoch milliseconds)",
    ),
    "CommitRequest": _obj(
        offsets=_array(
            _obj(
                ("topic", "partition", "offset"),
                topic=_STR,
                partition=_INT32,
                offset={**_INT64, "minimum": 0},
                metadata=_nullable(_STR),
            )
        ),
        doc="no body, {} or no offsets: commit every offset returned so far",
    ),
    "CommittedOffsets": _obj(
        ("offsets",),
        offsets=_array(
            _obj(("topic", "partition", "offset"), topic=_STR, partition=_INT32, offset=_INT64, metadata=_STR)
        ),
    ),
    "BinaryConsumerRecord": _consumer_record(_BASE64),
    "JsonConsumerRecord": _consumer_record(_ANY),
    "BinaryShareRecord": _share_record(_BASE64),
    "JsonShareRecord": _share_record(_ANY),
    "CreateShareConsumerRequest": _object(
        {
            "name": _STR,
            "format": {"type": "string", "enum": [*FORMATS, *SCHEMA_FORMATS]},
            "auto.offset.reset": {
                "type": "string",
                "enum": ["earliest", "latest", "smallest", "largest"],
                "description": "the group's share.auto.offset.reset, set before this member joins",
            },
            "max.poll.records": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1_000_000,
                "description": "the most records one answer holds (the member's max.poll.records); default: the "
                "proxy's consumer.max.poll.records. Every record of an answer is locked to this member until "
                "acknowledged",
            },
        }
    ),
    "ShareSubscription": _obj(("topics",), topics=_array(_STR, minItems=1, maxItems=10000)),
    "Acknowledgement": _obj(
        ("topic", "partition", "offset", "type"),
        topic=_STR,
        partition=_INT32,
        offset=_INT64,
        type={"type": "string", "enum": ["accept", "release", "reject"]},
    ),
    "AcknowledgeRequest": _obj(
        ("acknowledgements",),
        acknowledgements=_array(_ref("Acknowledgement"), minItems=1),
        doc="Each record of an answer, acknowledged once; only records of answers written in full",
    ),
    "AcknowledgeResponse": _obj(
        ("partitions",),
        partitions=_array(
            _obj(
                ("topic", "partition"),
                topic=_STR,
                partition=_INT32,
                error_code=_nullable(_INT),
                error=_nullable(_STR),
            )
        ),
        doc="The broker's answer per partition; error_code 50002/50003 where it refused the acknowledgements",
    ),
    # v3
    "Relationship": _obj(("related",), related={**_STR, "format": "uri"}),
    "ResourceMetadata": _obj(("self",), self={**_STR, "format": "uri"}, resource_name=_STR),
    "ListMetadata": _obj(("self",), self={**_STR, "format": "uri"}, next=_nullable(_STR)),
    "Cluster": _v3_resource(
        "KafkaCluster",
        ("cluster_id",),
        cluster_id=_STR,
        **_related(
            "controller", "acls", "brokers", "broker_configs", "consumer_groups", "topics", "partition_reassignments"
        ),
    ),
    "ClusterList": _v3_list("KafkaClusterList", "Cluster"),
    "V3Topic": _v3_resource(
        "KafkaTopic",
        ("cluster_id", "topic_name"),
        cluster_id=_STR,
        topic_name=_STR,
        is_internal=_BOOL,
        replication_factor=_INT,
        partitions_count=_nullable(_INT),
        authorized_operations=_array(_STR),
        **_related("partitions", "configs", "partition_reassignments"),
    ),
    "V3TopicList": _v3_list("KafkaTopicList", "V3Topic"),
    "CreateTopicRequest": _obj(
        ("topic_name",),
        topic_name={**_STR, "minLength": 1},
        partitions_count={**_INT32, "minimum": 1, "description": "missing: the broker's num.partitions"},
        replication_factor={**_INT32, "minimum": 1, "description": "missing: the broker's default"},
        configs=_array(_obj(("name",), name=_STR, value=_nullable(_STR))),
        validate_only={**_BOOL, "description": "check only; answered 200 instead of 201"},
    ),
    "AlterConfigsRequest": _obj(
        ("data",),
        data=_array(
            _obj(
                ("name",),
                name=_STR,
                value=_nullable(_STR),
                operation={
                    "type": "string",
                    "enum": ["SET", "DELETE"],
                    "description": "SET (default) needs a value; DELETE resets",
                },
            ),
            minItems=1,
        ),
        validate_only={**_BOOL, "description": "check only"},
    ),
    "V3Partition": _v3_resource(
        "KafkaPartition",
        ("cluster_id", "topic_name", "partition_id"),
        cluster_id=_STR,
        topic_name=_STR,
        partition_id=_INT32,
        **_related("leader", "replicas", "reassignment"),
    ),
    "V3PartitionList": _v3_list("KafkaPartitionList", "V3Partition"),
    "TopicConfig": _v3_resource(
        "KafkaTopicConfig",
        ("name",),
        cluster_id=_STR,
        topic_name=_STR,
        name=_STR,
        value=_nullable(_STR),
        is_default=_BOOL,
        is_read_only=_BOOL,
        is_sensitive=_BOOL,
        source=_STR,
        synonyms=_array(_obj(name=_STR, value=_nullable(_STR), source=_STR)),
    ),
    "TopicConfigList": _v3_list("KafkaTopicConfigList", "TopicConfig"),
    "ConsumerGroup": _v3_resource(
        "KafkaConsumerGroup",
        ("consumer_group_id",),
        cluster_id=_STR,
        consumer_group_id=_STR,
        is_simple=_BOOL,
        partition_assignor=_STR,
        state=_STR,
        type=_STR,
        is_mixed_consumer_group=_BOOL,
        **_related("coordinator", "consumers", "lag_summary"),
    ),
    "ConsumerGroupList": _v3_list("KafkaConsumerGroupList", "ConsumerGroup"),
    "ShareGroupTopicPartition": _obj(
        ("topic_name", "partition_id"),
        kind={"type": "string", "enum": ["KafkaShareGroupTopicPartition"]},
        topic_name=_STR,
        partition_id=_INT32,
        partition=_ref("Relationship"),
    ),
    "ShareGroup": _v3_resource(
        "KafkaShareGroup",
        ("share_group_id",),
        cluster_id=_STR,
        share_group_id=_STR,
        state=_STR,
        consumer_count=_INT32,
        partition_count=_INT32,
        assigned_topic_partitions=_array(_ref("ShareGroupTopicPartition")),
        **_related("coordinator", "consumers"),
    ),
    "ShareGroupList": _v3_list("KafkaShareGroupList", "ShareGroup"),
    "ShareGroupConsumer": _v3_resource(
        "KafkaShareGroupConsumer",
        ("consumer_id",),
        cluster_id=_STR,
        group_id=_STR,
        consumer_id=_STR,
        client_id=_STR,
        **_related("assignments"),
    ),
    "ShareGroupConsumerList": _v3_list("KafkaShareGroupConsumerList", "ShareGroupConsumer"),
    "ShareGroupConsumerAssignment": _v3_resource(
        "KafkaShareGroupConsumerAssignment",
        ("topic_name", "partition_id"),
        cluster_id=_STR,
        group_id=_STR,
        consumer_id=_STR,
        topic_name=_STR,
        partition_id=_INT32,
        **_related("partition"),
    ),
    "ShareGroupConsumerAssignmentList": _v3_list(
        "KafkaShareGroupConsumerAssignmentList", "ShareGroupConsumerAssignment"
    ),
    "Consumer": _v3_resource(
        "KafkaConsumer",
        ("consumer_id",),
        cluster_id=_STR,
        consumer_group_id=_STR,
        consumer_id=_STR,
        instance_id=_nullable(_STR),
        client_id=_STR,
        assignments=_array(_obj(topic_name=_STR, partition_id=_INT32)),
    ),
    "ConsumerList": _v3_list("KafkaConsumerList", "Consumer"),
    "ConsumerLag": _v3_resource(
        "KafkaConsumerLag",
        ("topic_name", "partition_id", "lag"),
        cluster_id=_STR,
        consumer_group_id=_STR,
        topic_name=_STR,
        partition_id=_INT32,
        current_offset=_INT64,
        log_end_offset=_INT64,
        lag=_INT64,
        consumer_id=_STR,
        instance_id=_nullable(_STR),
        client_id=_STR,
    ),
    "ConsumerLagList": _v3_list("KafkaConsumerLagList", "ConsumerLag"),
    "LagSummary": _v3_resource(
        "KafkaConsumerGroupLagSummary",
        ("max_lag", "total_lag"),
        cluster_id=_STR,
        consumer_group_id=_STR,
        max_lag_consumer_id=_STR,
        max_lag_instance_id=_nullable(_STR),
        max_lag_client_id=_STR,
        max_lag_topic_name=_STR,
        max_lag_partition_id=_INT32,
        max_lag=_INT64,
        total_lag=_INT64,
        **_related("max_lag_consumer", "max_lag_partition"),
    ),
    "V3ProduceRecord": _obj(
        additional=False,
        partition_id=_nullable(_INT32),
        headers=_nullable(_array(_obj(("name",), name=_STR, value=_nullable(_BASE64)))),
        key=_v3_data("key"),
        value=_v3_data("value"),
        timestamp=_nullable({**_STR, "format": "date-time"}),
    ),
    "V3ProduceResult": _obj(
        ("error_code",),
        error_code={**_INT, "description": "200 for a stored record; else the record's error"},
        message=_STR,
        cluster_id=_STR,
        topic_name=_STR,
        partition_id=_INT32,
        offset=_INT64,
        timestamp={**_STR, "format": "date-time"},
        key=_nullable(_obj(type=_STR, size=_INT)),
        value=_nullable(_obj(type=_STR, size=_INT)),
        trace=_ref("RecordTrace"),
    ),
}

# ---------------------------------------------------------------- parameters


def _path(name: str, schema: Schema, description: str) -> Schema:
    return {"name": name, "in": "path", "required": True, "schema": schema, "description": description}


def _query(name: str, schema: Schema, description: str) -> Schema:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


_PARAMETERS: dict[str, Schema] = {
    "topic": _path(
        "topic",
        {**_STR, "minLength": 1},
        "A Kafka topic name (1-249 of [A-Za-z0-9._-]; MapR stream "
        "topics /stream/path:topic, percent-encoded). An illegal name is a topic that does not exist.",
    ),
    "partition": _path("partition", {**_INT32, "minimum": 0}, "A partition number; not an integer: 404 / 404"),
    "group": _path("group", {**_STR, "minLength": 1, "maxLength": 255}, "A consumer group id"),
    "instance": _path("instance", {**_STR, "minLength": 1, "maxLength": 255}, "A consumer instance name"),
    "consumer": _path(
        "consumer",
        {**_STR, "minLength": 1},
        "A share-group member: the broker's member id (base64, so '/' and '+' are percent-encoded), or the "
        "instance name where the answers show this process's members",
    ),
    "fetch_topic": {
        "name": "topic",
        "in": "query",
        "required": True,
        "style": "form",
        "explode": True,
        "schema": _array({**_STR, "minLength": 1}, minItems=1, maxItems=100),
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
    "cluster": _path("cluster", {**_STR, "minLength": 1}, "The cluster id (GET /v3/clusters); any other: 404"),
    "config": _path("name", {**_STR, "minLength": 1}, "A topic config name, e.g. cleanup.policy"),
    "timeout": _query(
        "timeout",
        _INT,
        "Longest wait in ms; only lowers consumer.request.timeout.ms (negative: ignored). Not an integer: 404 / 404",
    ),
    "max_bytes": _query(
        "max_bytes",
        _INT,
        "Most key + value bytes to return (the first record always goes); "
        "only lowers consumer.request.max.bytes (0 or negative: ignored). Not an integer: 404 / 404",
    ),
}


def _params(*names: str) -> list[Schema]:
    return [{"$ref": f"#/components/parameters/{name}"} for name in names]


# ---------------------------------------------------------------- operations

_V2_ERRORS = (V2_JSON,)
_V3_ERRORS = (_JSON,)


def _content(schema: Schema, media_types: tuple[str, ...]) -> dict[str, Any]:
    return {media: {"schema": schema} for media in media_types}


def _errors(codes: dict[int, str], media_types: tuple[str, ...]) -> dict[str, Any]:
    """Error responses with the Error body; `default` stands for what any handler may answer."""
    body = _content(_ref("Error"), media_types)
    responses = {str(status): {"description": text, "content": body} for status, text in codes.items()}
    responses["default"] = {
        "description": "401 (basic auth on), 405, 406 (an Accept without JSON), 500 / 50002 "
        "(unexpected), 503 / 50302 (broker not available)",
        "content": body,
    }
    return responses


def _op(
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


def _ok(
    status: int,
    description: str,
    schema: Schema | None = None,
    media_types: tuple[str, ...] = (V2_JSON,),
    headers: dict[str, Any] | None = None,
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description}
    if schema is not None:
        response["content"] = _content(schema, media_types)
    if headers:
        response["headers"] = headers
    return {str(status): response}


def _body(schema: Schema, media_types: tuple[str, ...], required: bool = False, description: str = "") -> Schema:
    body: Schema = {"required": required, "content": _content(schema, media_types)}
    if description:
        body["description"] = description
    return body


_NOT_ACCEPTABLE = {406: "The Accept header names nothing this proxy sends"}
_TOPIC_404 = {404: "40401: topic not found (an illegal topic name included)"}
_PARTITION_404 = {404: "40401 topic not found, 40402 partition not found, 404 partition not an integer"}
_INSTANCE_404 = {404: "40403: consumer instance not found"}
_CONSUMER_BODY = {400: "Malformed JSON", 415: "Content-Type neither JSON nor vnd.kafka", 422: "Invalid body"}
_V2_BODY_TYPES = (V2_JSON, _JSON)
_CLUSTER_404 = {404: "Cluster not found"}
_V3_TOPIC_404 = {404: "Cluster not found, or 40403: topic not found"}
_V3_GROUP_404 = {404: "Cluster or consumer group not found"}
_SHARE_404 = {404: "40403: share consumer instance not found"}
_NO_SHARE_GROUPS = {400: "40002: the cluster has no share groups (KIP-932; Apache Kafka 4.2 or newer)"}
_V3_SHARE_ERRORS = {
    403: "40301: the cluster refused the describe (an ACL)",
    500: "50002/50003: the brokers' answer was refused or could not be read",
    503: "50302: the cluster did not answer in time, or too many lookups are in flight in this process",
}
_V3_SHARE_404 = {
    404: "Cluster, share group or consumer (the broker's member id, percent-encoded) not found",
    **_NO_SHARE_GROUPS,
    **_V3_SHARE_ERRORS,
}
_CONFIG_ERRORS = {
    400: "Malformed JSON, a bad config name, value or operation; 40002: Kafka refused",
    404: "Cluster or topic (40403) not found",
    415: "Content-Type other than application/json",
    422: "42206: the body is not as described",
}
_INSTANCE = "/consumers/{group}/instances/{instance}"
_SHARE = "/share-consumers/{group}/instances/{instance}"
_C = "/v3/clusters/{cluster}"


def _produce_body() -> Schema:
    """Produce media types: binary and json are produced; the schema formats are refused."""
    content = {
        "application/vnd.kafka.binary.v2+json": {"schema": _ref("BinaryProduceRequest")},
        "application/vnd.kafka.json.v2+json": {"schema": _ref("JsonProduceRequest")},
    }
    for fmt in SCHEMA_FORMATS:
        content[f"application/vnd.kafka.{fmt}.v2+json"] = {"schema": _ref("SchemaProduceRequest")}
    return {
        "required": True,
        "description": "Also accepted: the v1 types (vnd.kafka.<fmt>.v1+json), and application/json, "
        "application/vnd.kafka.v2+json and application/octet-stream, which mean binary.",
        "content": content,
    }


def _produce(operation_id: str, summary: str, params: tuple[str, ...]) -> dict[str, Any]:
    errors = {
        400: "Malformed JSON, a key or value that is not base64 (binary format), or a Workbench-Trace "
        "header other than true, 1, false or 0",
        404: "40401 topic not found, 40402 partition not found",
        406: _NOT_ACCEPTABLE[406],
        413: "A record over message.max.bytes, or a body over request.max.bytes",
        415: "Missing or foreign Content-Type",
        422: "42201/42202: key/value schema missing; 42205: invalid schema, or no schema.registry.url; 422: bad body "
        "(records missing or empty, "
        "unknown fields, a partition that is not an integer)",
    }
    ok = _ok(
        200,
        "Each record's partition and offset, or its error (per-record 50002 / 50003), in request order; "
        "with Workbench-Trace: true, each with its `trace`",
        _ref("ProduceResponse"),
    )
    return _op(operation_id, "v2 produce", summary, ok, errors, (*params, "trace"), _produce_body())


def _v2_paths() -> dict[str, dict[str, Any]]:
    records = {
        f"application/vnd.kafka.{fmt}.v2+json": {"schema": _array(_ref(f"{fmt.title()}ConsumerRecord"))}
        for fmt in FORMATS
    }
    return {
        "/": {
            "get": _op("root", "v2 metadata", "Liveness: an empty object", _ok(200, "Alive", _obj()), {}),
            "post": _op(
                "rootPost",
                "v2 metadata",
                "Liveness (upstream accepts POST too); any body is ignored",
                _ok(200, "Alive", _obj()),
                {},
            ),
        },
        "/brokers": {
            "get": _op(
                "listBrokers", "v2 metadata", "Broker ids", _ok(200, "Broker ids", _ref("Brokers")), _NOT_ACCEPTABLE
            )
        },
        "/topics": {
            "get": _op(
                "listTopics",
                "v2 metadata",
                "Topic names, internal topics left out",
                _ok(200, "Topic names", _array(_STR)),
                _NOT_ACCEPTABLE,
            )
        },
        "/topics/{topic}": {
            "get": _op(
                "getTopic",
                "v2 metadata",
                "A topic, its configs and partitions",
                _ok(200, "The topic", _ref("Topic")),
                {**_TOPIC_404, **_NOT_ACCEPTABLE},
                ("topic",),
            ),
            "post": _produce("produceToTopic", "Produce records; the partitioner picks partitions", ("topic",)),
        },
        "/topics/{topic}/partitions": {
            "get": _op(
                "listPartitions",
                "v2 metadata",
                "A topic's partitions",
                _ok(200, "Partitions", _array(_ref("Partition"))),
                {**_TOPIC_404, **_NOT_ACCEPTABLE},
                ("topic",),
            ),
        },
        "/topics/{topic}/partitions/{partition}": {
            "get": _op(
                "getPartition",
                "v2 metadata",
                "One partition",
                _ok(200, "The partition", _ref("Partition")),
                {**_PARTITION_404, **_NOT_ACCEPTABLE},
                ("topic", "partition"),
            ),
            "post": _produce("produceToPartition", "Produce records to one partition", ("topic", "partition")),
        },
        "/topics/{topic}/partitions/{partition}/offsets": {
            "get": _op(
                "getPartitionOffsets",
                "v2 metadata",
                "A partition's first and true log-end offsets",
                _ok(200, "Offsets", _ref("PartitionOffsets")),
                {**_PARTITION_404, **_NOT_ACCEPTABLE, 500: "50002: the offsets could not be read"},
                ("topic", "partition"),
            ),
        },
        "/consumers/{group}": {
            "post": _op(
                "createConsumer",
                "v2 consumers",
                "Create a consumer instance in this process",
                _ok(200, "The instance and its URL", _ref("CreateConsumerResponse")),
                {
                    **_CONSUMER_BODY,
                    409: "40902: an instance with this name exists in the group",
                    422: "40001 fetch.min.bytes out of range, 42204 invalid setting or name, 42205 schema "
                    "format without schema.registry.url, 422 unknown format",
                },
                ("group",),
                _body(_ref("CreateConsumerRequest"), _V2_BODY_TYPES),
            ),
        },
        _INSTANCE: {
            "delete": _op(
                "deleteConsumer",
                "v2 consumers",
                "Close the instance; it leaves its group",
                _ok(204, "Closed"),
                _INSTANCE_404,
                ("group", "instance"),
            )
        },
        f"{_INSTANCE}/subscription": {
            "post": _op(
                "subscribe",
                "v2 consumers",
                "Subscribe to topics or a pattern",
                _ok(204, "Subscribed"),
                {
                    **_INSTANCE_404,
                    **_CONSUMER_BODY,
                    409: "40903: both or neither of topics and topic_pattern, or the instance has manual assignments",
                },
                ("group", "instance"),
                _body(_ref("Subscription"), _V2_BODY_TYPES, required=True),
            ),
            "get": _op(
                "getSubscription",
                "v2 consumers",
                "The subscribed topics",
                _ok(200, "Topics", _ref("Topics")),
                _INSTANCE_404,
                ("group", "instance"),
            ),
            "delete": _op(
                "unsubscribe",
                "v2 consumers",
                "Unsubscribe",
                _ok(204, "Unsubscribed"),
                _INSTANCE_404,
                ("group", "instance"),
            ),
        },
        f"{_INSTANCE}/assignments": {
            "post": _op(
                "assign",
                "v2 consumers",
                "Assign partitions manually",
                _ok(204, "Assigned"),
                {**_INSTANCE_404, **_CONSUMER_BODY, 409: "40903: the instance is subscribed"},
                ("group", "instance"),
                _body(_ref("Partitions"), _V2_BODY_TYPES, required=True),
            ),
            "get": _op(
                "getAssignments",
                "v2 consumers",
                "The assigned partitions",
                _ok(200, "Partitions", _ref("Partitions")),
                _INSTANCE_404,
                ("group", "instance"),
            ),
        },
        f"{_INSTANCE}/positions": {
            "post": _op(
                "seek",
                "v2 consumers",
                "Seek to offsets or timestamps",
                _ok(204, "Sought"),
                {**_INSTANCE_404, **_CONSUMER_BODY, 409: "40903: a partition the instance is not assigned"},
                ("group", "instance"),
                _body(_ref("SeekRequest"), _V2_BODY_TYPES, required=True),
            ),
        },
        **{
            f"{_INSTANCE}/positions/{end}": {
                "post": _op(
                    f"seekTo{end.title()}",
                    "v2 consumers",
                    f"Seek partitions to their {end}",
                    _ok(204, "Sought"),
                    {
                        **_INSTANCE_404,
                        **_CONSUMER_BODY,
                        409: "40903: a partition the instance is not assigned",
                        500: "50002: the end offsets could not be read",
                    },
                    ("group", "instance"),
                    _body(_ref("Partitions"), _V2_BODY_TYPES, required=True),
                ),
            }
            for end in ("beginning", "end")
        },
        f"{_INSTANCE}/records": {
            "get": _op(
                "getRecords",
                "v2 consumers",
                "Fetch records in the instance's format",
                {"200": {"description": "Records (maybe none), in the instance's embedded format", "content": records}},
                {
                    **_INSTANCE_404,
                    404: "40403 instance not found, 404 timeout or max_bytes not an integer",
                    406: "40601: the Accept names another embedded format than the instance's",
                    422: "A stored key or value is not JSON (json-format instance)",
                },
                ("group", "instance", "timeout", "max_bytes"),
            ),
        },
        f"{_INSTANCE}/offsets": {
            "post": _op(
                "commitOffsets",
                "v2 consumers",
                "Commit offsets (all returned so far when none are given)",
                _ok(200, "Committed", _obj(offsets=_array(_ANY))),
                {**_INSTANCE_404, **_CONSUMER_BODY, 409: "40903: a partition the instance is not assigned"},
                ("group", "instance"),
                _body(_ref("CommitRequest"), _V2_BODY_TYPES),
            ),
            "get": _op(
                "getCommittedOffsets",
                "v2 consumers",
                "Committed offsets (of the assignment when no body)",
                _ok(200, "Committed offsets", _ref("CommittedOffsets")),
                {**_INSTANCE_404, **_CONSUMER_BODY},
                ("group", "instance"),
                _body(_ref("Partitions"), _V2_BODY_TYPES, description="A GET with a body, as upstream"),
            ),
        },
    }


def _share_paths() -> dict[str, dict[str, Any]]:
    """Share-group consumption (no upstream proxy has it): v2 conventions throughout."""
    records = {
        f"application/vnd.kafka.{fmt}.v2+json": {"schema": _array(_ref(f"{fmt.title()}ShareRecord"))} for fmt in FORMATS
    }
    tag = "v2 share consumers"
    instance = ("group", "instance")
    return {
        "/share-consumers/{group}": {
            "post": _op(
                "createShareConsumer",
                tag,
                "Create a share-consumer instance (explicit acknowledgement) in this process",
                _ok(200, "The instance and its URL", _ref("CreateConsumerResponse")),
                {
                    **_CONSUMER_BODY,
                    **_NO_SHARE_GROUPS,
                    409: "40902: an instance with this name exists in the group",
                    422: "42204 invalid setting or name, 42205 schema format without schema.registry.url, "
                    "422 unknown format",
                    429: "share.consumer.instances.max instances in this process",
                },
                ("group",),
                _body(_ref("CreateShareConsumerRequest"), _V2_BODY_TYPES),
            ),
        },
        "/share-consumers/{group}/records": {
            "get": _op(
                "fetchShareRecords",
                tag,
                "Fetch without instance affinity: any process serves it from its own member of the group; "
                "the records are accepted once the answer was written in full, released otherwise",
                {"200": {"description": "Records (maybe none), in the Accept's embedded format", "content": records}},
                {
                    **_NO_SHARE_GROUPS,
                    404: "40401 topic not found, 404 timeout or max_bytes not an integer",
                    422: "42204 unusable group name, 422 no topic or more than 100",
                    429: "share.consumer.instances.max members in this process",
                },
                ("group", "fetch_topic", "timeout", "max_bytes", "auto_offset_reset"),
            ),
        },
        _SHARE: {
            "delete": _op(
                "deleteShareConsumer",
                tag,
                "Release what the instance holds and close it; it leaves its group",
                _ok(204, "Closed"),
                _SHARE_404,
                instance,
            )
        },
        f"{_SHARE}/subscription": {
            "post": _op(
                "shareSubscribe",
                tag,
                "Subscribe to topics (names only)",
                _ok(204, "Subscribed"),
                {**_SHARE_404, **_CONSUMER_BODY},
                instance,
                _body(_ref("ShareSubscription"), _V2_BODY_TYPES, required=True),
            ),
            "get": _op(
                "getShareSubscription",
                tag,
                "The subscribed topics",
                _ok(200, "Topics", _ref("Topics")),
                _SHARE_404,
                instance,
            ),
            "delete": _op(
                "shareUnsubscribe",
                tag,
                "Release what the instance holds and unsubscribe",
                _ok(204, "Unsubscribed"),
                _SHARE_404,
                instance,
            ),
        },
        f"{_SHARE}/records": {
            "get": _op(
                "getShareRecords",
                tag,
                "Read records (each with its delivery_count); acknowledge them before reading more",
                {"200": {"description": "Records (maybe none), in the instance's embedded format", "content": records}},
                {
                    404: "40403 instance not found, 404 timeout or max_bytes not an integer",
                    406: "40601: the Accept names another embedded format than the instance's",
                    409: "40903: records of earlier answers not yet acknowledged, or no subscription",
                    422: "acknowledge not accept, release or reject; or a record the instance's format cannot show "
                    "(the instance holds it for you to acknowledge)",
                },
                ("group", "instance", "timeout", "max_bytes", "acknowledge"),
            ),
        },
        f"{_SHARE}/acknowledgements": {
            "post": _op(
                "acknowledgeShareRecords",
                tag,
                "Accept, release or reject records of answers written in full; committed before the answer",
                _ok(200, "The broker's answer per partition", _ref("AcknowledgeResponse")),
                {
                    **_SHARE_404,
                    **_CONSUMER_BODY,
                    409: "40903: a record not held by the instance (never written to the client, or acknowledged)",
                    500: "50002/50003: the commit failed as a whole",
                },
                instance,
                _body(_ref("AcknowledgeRequest"), _V2_BODY_TYPES, required=True),
            ),
        },
    }


def _v3_share_paths() -> dict[str, dict[str, Any]]:
    group = ("cluster", "group")
    consumer = ("cluster", "group", "consumer")
    base = f"{_C}/share-groups"
    return {
        base: _v3_share_get(
            "listShareGroups",
            "Every share group of the cluster",
            "ShareGroupList",
            {**_CLUSTER_404, **_NO_SHARE_GROUPS, **_V3_SHARE_ERRORS},
            "cluster",
        ),
        f"{base}/{{group}}": _v3_share_get("getShareGroup", "A share group", "ShareGroup", _V3_SHARE_404, *group),
        f"{base}/{{group}}/consumers": _v3_share_get(
            "listShareGroupConsumers",
            "The group's members, whichever process or client runs them",
            "ShareGroupConsumerList",
            _V3_SHARE_404,
            *group,
        ),
        f"{base}/{{group}}/consumers/{{consumer}}": _v3_share_get(
            "getShareGroupConsumer", "A member", "ShareGroupConsumer", _V3_SHARE_404, *consumer
        ),
        f"{base}/{{group}}/consumers/{{consumer}}/assignments": _v3_share_get(
            "listShareGroupConsumerAssignments",
            "The partitions the group's coordinator assigned the member",
            "ShareGroupConsumerAssignmentList",
            _V3_SHARE_404,
            *consumer,
        ),
    }


#: The header of every v3 share-group answer: which view it is in (docs/rest-proxy.md).
_SHARE_VIEW_HEADER = {
    "X-Share-Groups-View": {
        "description": "cluster: as the brokers describe the group (ShareGroupDescribe); "
        "process; <why>: this process's own members, where the proxy's admin settings ask for "
        "security its protocol client does not speak (GSSAPI, OAUTHBEARER, keystores...)",
        "schema": _STR,
    }
}


def _v3_share_get(operation_id: str, summary: str, schema: str, errors: dict[int, str], *params: str) -> dict[str, Any]:
    ok = _ok(200, summary, _ref(schema), (_JSON,), _SHARE_VIEW_HEADER)
    return {"get": _op(operation_id, "v3", summary, ok, errors, params)}


def _v3_get(operation_id: str, summary: str, schema: str, errors: dict[int, str], *params: str) -> dict[str, Any]:
    return {"get": _op(operation_id, "v3", summary, _ok(200, summary, _ref(schema), (_JSON,)), errors, params)}


def _v3_paths() -> dict[str, dict[str, Any]]:
    topic = ("cluster", "topic")
    group = ("cluster", "group")
    return {
        "/v3/clusters": _v3_get("listClusters", "The one cluster", "ClusterList", {}),
        _C: _v3_get("getCluster", "The cluster", "Cluster", _CLUSTER_404, "cluster"),
        f"{_C}/topics": {
            **_v3_get("listTopicsV3", "Topics", "V3TopicList", _CLUSTER_404, "cluster"),
            "post": _op(
                "createTopic",
                "v3",
                "Create a topic",
                {
                    **_ok(
                        201, "Created", _ref("V3Topic"), (_JSON,), {"Location": {"schema": {**_STR, "format": "uri"}}}
                    ),
                    **_ok(200, "validate_only: it could be created", _ref("V3Topic"), (_JSON,)),
                },
                {
                    400: "Malformed JSON; 40002: Kafka refused (exists, invalid name, partitions, config)",
                    **_CLUSTER_404,
                    415: "Content-Type other than application/json",
                    422: "42206: empty body, topic_name missing, bad partitions_count, replication_factor or configs",
                },
                ("cluster",),
                _body(_ref("CreateTopicRequest"), (_JSON,), required=True),
            ),
        },
        f"{_C}/topics/{{topic}}": {
            **_v3_get("getTopicV3", "A topic", "V3Topic", _V3_TOPIC_404, *topic),
            "delete": _op(
                "deleteTopic",
                "v3",
                "Delete a topic",
                _ok(204, "Deleted"),
                {**_V3_TOPIC_404, 400: "40002: Kafka refused"},
                topic,
            ),
        },
        f"{_C}/topics/{{topic}}/partitions": _v3_get(
            "listPartitionsV3", "Partitions", "V3PartitionList", _V3_TOPIC_404, *topic
        ),
        f"{_C}/topics/{{topic}}/partitions/{{partition}}": _v3_get(
            "getPartitionV3",
            "A partition",
            "V3Partition",
            {404: "Cluster, topic (40403) or partition (40402) not found, or partition not an integer"},
            *topic,
            "partition",
        ),
        f"{_C}/topics/{{topic}}/configs": _v3_get(
            "listTopicConfigs", "A topic's configs", "TopicConfigList", _V3_TOPIC_404, *topic
        ),
        f"{_C}/topics/{{topic}}/configs/{{name}}": {
            **_v3_get(
                "getTopicConfig",
                "One config of a topic",
                "TopicConfig",
                {404: "Cluster, topic (40403) or config not found"},
                *topic,
                "config",
            ),
            "put": _op(
                "updateTopicConfig",
                "v3",
                "Set one config (the others keep their values)",
                _ok(204, "Set"),
                _CONFIG_ERRORS,
                (*topic, "config"),
                _body(_obj(("value",), value=_nullable(_STR)), (_JSON,), required=True),
            ),
            "delete": _op(
                "resetTopicConfig",
                "v3",
                "Reset one config to its default",
                _ok(204, "Reset"),
                _CONFIG_ERRORS,
                (*topic, "config"),
            ),
        },
        f"{_C}/topics/{{topic}}/configs:alter": {
            "post": _op(
                "alterTopicConfigs",
                "v3",
                "Set or reset several configs at once (incremental)",
                _ok(204, "Altered"),
                _CONFIG_ERRORS,
                topic,
                _body(_ref("AlterConfigsRequest"), (_JSON,), required=True),
            ),
        },
        f"{_C}/topics/{{topic}}/records": {
            "post": _op(
                "produceRecords",
                "v3",
                "Produce records, streaming: one result per record, in order",
                {
                    "200": {
                        "description": "The stream started: one V3ProduceResult per record, each followed by "
                        "\\r\\n, written as records are stored; read error_code on every one. With "
                        "Workbench-Trace: true, each record's result has its `trace`",
                        "content": _content(_ref("V3ProduceResult"), (_JSON,)),
                    }
                },
                {
                    400: "Unsupported charset (UTF-8 or ISO-8859-1), or a Workbench-Trace header other than "
                    "true, 1, false or 0",
                    404: "Cluster or topic (40401) not found",
                    415: "Content-Type other than application/json",
                    422: "42206: empty body",
                },
                (*topic, "trace"),
                _body(
                    _ref("V3ProduceRecord"),
                    (_JSON,),
                    required=True,
                    description="One record object, or many one after another (not an array); may be a "
                    "chunked upload that stays open",
                ),
            ),
        },
        f"{_C}/consumer-groups": _v3_get(
            "listConsumerGroups", "Consumer groups", "ConsumerGroupList", _CLUSTER_404, "cluster"
        ),
        f"{_C}/consumer-groups/{{group}}": _v3_get(
            "getConsumerGroup", "A consumer group", "ConsumerGroup", _V3_GROUP_404, *group
        ),
        f"{_C}/consumer-groups/{{group}}/consumers": _v3_get(
            "listGroupConsumers", "A group's members", "ConsumerList", _V3_GROUP_404, *group
        ),
        f"{_C}/consumer-groups/{{group}}/lags": _v3_get(
            "listConsumerLags", "Lag per committed partition", "ConsumerLagList", _V3_GROUP_404, *group
        ),
        f"{_C}/consumer-groups/{{group}}/lag-summary": _v3_get(
            "getLagSummary", "The group's largest and total lag", "LagSummary", _V3_GROUP_404, *group
        ),
    }


def _own_paths() -> dict[str, dict[str, Any]]:
    return {
        "/metrics": {
            "get": _op(
                "metrics",
                "operations",
                "Prometheus metrics",
                _ok(200, "Prometheus text exposition", _STR, ("text/plain",)),
                {},
            )
        },
        "/openapi.json": {
            "get": _op("openapi", "operations", "This document", _ok(200, "OpenAPI 3.0", _obj(), (_JSON,)), {})
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
        "paths": {**_v2_paths(), **_share_paths(), **_v3_paths(), **_v3_share_paths(), **_own_paths()},
        "components": {"schemas": _SCHEMAS, "parameters": _PARAMETERS},
    }


async def openapi(ctx: Context, request: Request) -> Response:
    return json_response(document(ctx.settings.base_url(request.headers.get("host"))), media_type=_JSON)


ROUTES = [Route("GET", "/openapi.json", openapi)]
