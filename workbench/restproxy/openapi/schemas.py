"""The component schemas of the proxy's OpenAPI document, and the helpers they are written with.

Every v3 resource has the same `kind` / `metadata` / `related` shape and every error is
upstream's `{"error_code", "message"}` body, so the shapes are built, not written out.
"""

from __future__ import annotations

from typing import Any

from workbench.restproxy.formats import FORMATS, SCHEMA_FORMATS

__all__ = [
    "ANY",
    "INT",
    "INT32",
    "JSON_TYPE",
    "SCHEMAS",
    "STR",
    "Schema",
    "array_schema",
    "nullable_schema",
    "obj_schema",
    "schema_ref",
]


JSON_TYPE = "application/json"
Schema = dict[str, Any]

# ---------------------------------------------------------------- schema helpers


def schema_ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def obj_schema(
    required: tuple[str, ...] = (), additional: bool | Schema = True, doc: str = "", **properties: Schema
) -> Schema:
    """An object schema; extra properties allowed unless `additional` says otherwise."""
    return _object(properties, required, additional, doc)


def _object(
    properties: dict[str, Schema], required: tuple[str, ...] = (), additional: bool | Schema = True, doc: str = ""
) -> Schema:
    """`obj_schema` for property names that are not identifiers (`auto.offset.reset`)."""
    schema: Schema = {"type": "object", "properties": properties}
    if doc:
        schema["description"] = doc
    if required:
        schema["required"] = list(required)
    if additional is not True:
        schema["additionalProperties"] = additional
    return schema


def array_schema(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


def nullable_schema(schema: Schema) -> Schema:
    return {**schema, "nullable": True}


INT = {"type": "integer"}
INT32 = {"type": "integer", "format": "int32"}
_INT64 = {"type": "integer", "format": "int64"}
STR = {"type": "string"}
_BOOL = {"type": "boolean"}
ANY: Schema = {"description": "any JSON value"}
_BASE64 = {"type": "string", "format": "byte", "description": "base64"}


def _v3_resource(kind: str, required: tuple[str, ...] = (), **properties: Schema) -> Schema:
    """A v3 resource: `kind`, `metadata` (`self` URL, CRN) and its own fields."""
    own = {"kind": {"type": "string", "enum": [kind]}, "metadata": schema_ref("ResourceMetadata")}
    return _object({**own, **properties}, ("kind", "metadata", *required))


def _v3_list(kind: str, item: str) -> Schema:
    return obj_schema(
        ("kind", "metadata", "data"),
        kind={"type": "string", "enum": [kind]},
        metadata=schema_ref("ListMetadata"),
        data=array_schema(schema_ref(item)),
    )


def _related(*names: str) -> dict[str, Schema]:
    return {name: schema_ref("Relationship") for name in names}


_TOPIC_PARTITION = obj_schema(("topic", "partition"), topic=STR, partition=INT32)
_PARTITIONS_BODY = obj_schema(("partitions",), partitions=array_schema(schema_ref("TopicPartition")))


def _produce_record(embedded: Schema) -> Schema:
    partition = nullable_schema({**INT32, "description": "pins the partition; overrides the one in the URL"})
    return obj_schema(
        additional=False, key=nullable_schema(embedded), value=nullable_schema(embedded), partition=partition
    )


def _produce_request(record: str) -> Schema:
    return obj_schema(
        ("records",),
        additional=False,
        records=array_schema(schema_ref(record), minItems=1),
        key_schema=STR,
        key_schema_id=INT,
        value_schema=STR,
        value_schema_id=INT,
    )


def _consumer_record(embedded: Schema) -> Schema:
    return obj_schema(
        topic=STR,
        key=nullable_schema(embedded),
        value=nullable_schema(embedded),
        partition=INT32,
        offset=_INT64,
        timestamp={**_INT64, "description": "milliseconds since the epoch"},
    )


def _share_record(embedded: Schema) -> Schema:
    record = _consumer_record(embedded)
    record["properties"]["delivery_count"] = {
        **INT32,
        "description": "1 on the first delivery; one more each time the record is acquired again",
    }
    return record


def _v3_data(what: str) -> Schema:
    return nullable_schema(
        obj_schema(
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


SCHEMAS: dict[str, Schema] = {
    "Error": obj_schema(
        ("error_code", "message"),
        error_code={
            **INT,
            "description": "the HTTP status, or status x 100 + "
            "a sub-code (40401 topic not found, 40403 consumer instance not found, ...)",
        },
        message=STR,
    ),
    # v2 metadata
    "Replica": obj_schema(("broker", "leader", "in_sync"), broker=INT32, leader=_BOOL, in_sync=_BOOL),
    "Partition": obj_schema(
        ("partition", "leader", "replicas"),
        partition=INT32,
        leader={**INT32, "description": "-1 when there is none"},
        replicas=array_schema(schema_ref("Replica")),
    ),
    "Topic": obj_schema(
        ("name", "configs", "partitions"),
        name=STR,
        configs={"type": "object", "additionalProperties": nullable_schema(STR)},
        partitions=array_schema(schema_ref("Partition")),
    ),
    "Brokers": obj_schema(("brokers",), brokers=array_schema(INT32)),
    "PartitionOffsets": obj_schema(("beginning_offset", "end_offset"), beginning_offset=_INT64, end_offset=_INT64),
    # v2 produce
    "BinaryProduceRecord": _produce_record(_BASE64),
    "JsonProduceRecord": _produce_record(ANY),
    "BinaryProduceRequest": _produce_request("BinaryProduceRecord"),
    "JsonProduceRequest": _produce_request("JsonProduceRecord"),
    "SchemaProduceRequest": {
        **_produce_request("JsonProduceRecord"),
        "description": "avro, jsonschema and "
        "protobuf: with schema.registry.url, Confluent's wire format; without, 422 / 42205",
    },
    "ProduceOffset": obj_schema(
        ("partition", "offset", "error_code", "error"),
        partition=nullable_schema(INT32),
        offset=nullable_schema(_INT64),
        error_code=nullable_schema(INT),
        error=nullable_schema(STR),
        trace=schema_ref("RecordTrace"),
    ),
    "RecordTrace": obj_schema(
        ("received_ns", "handed_ns", "delivered_ns", "answered_ns"),
        additional=False,
        doc="Only with the request header Workbench-Trace: true or answer (off by default; the workbench's own "
        "extension, not part of Confluent's API). Wall-clock time.time_ns() of the proxy's machine.",
        received_ns={
            **_INT64,
            "description": "the request reached its handler, before its body was read "
            "(v3 stream: the chunk that completed the record, after the first)",
        },
        handed_ns=nullable_schema(
            {
                **_INT64,
                "description": "just before the record's produce() call into librdkafka; "
                "null: librdkafka never took it",
            }
        ),
        delivered_ns=nullable_schema(
            {
                **_INT64,
                "description": "librdkafka's delivery report (or the refusal) for the "
                "record; null: refused before producing",
            }
        ),
        answered_ns={**_INT64, "description": "just before the answer (v3: this record's result) was written"},
    ),
    "ProduceResponse": obj_schema(
        ("offsets",),
        key_schema_id=nullable_schema(INT),
        value_schema_id=nullable_schema(INT),
        offsets=array_schema(schema_ref("ProduceOffset")),
    ),
    # v2 consumers
    "CreateConsumerRequest": _object(
        {
            "name": {**STR, "description": "the instance name; generated when missing"},
            "id": {**STR, "description": "alias of name"},
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
    "CreateConsumerResponse": obj_schema(
        ("instance_id", "base_uri"),
        instance_id=STR,
        base_uri={**STR, "format": "uri", "description": "this instance's own URL"},
    ),
    "TopicPartition": _TOPIC_PARTITION,
    "Subscription": obj_schema(
        topics=array_schema(STR),
        topic_pattern={**STR, "description": "a regular expression"},
        doc="exactly one of topics and topic_pattern (both or neither: 409 / 40903)",
    ),
    "Topics": obj_schema(("topics",), topics=array_schema(STR)),
    "Partitions": _PARTITIONS_BODY,
    "SeekRequest": obj_schema(
        offsets=array_schema(
            obj_schema(("topic", "partition", "offset"), topic=STR, partition=INT32, offset={**_INT64, "minimum": 0})
        ),
        timestamps=array_schema(
            obj_schema(
                ("topic", "partition", "timestamp"),
                topic=STR,
                partition=INT32,
                timestamp={"oneOf": [_INT64, {**STR, "format": "date-time"}]},
            )
        ),
        doc="offsets, or timestamps (ISO 8601 or epoch milliseconds)",
    ),
    "CommitRequest": obj_schema(
        offsets=array_schema(
            obj_schema(
                ("topic", "partition", "offset"),
                topic=STR,
                partition=INT32,
                offset={**_INT64, "minimum": 0},
                metadata=nullable_schema(STR),
            )
        ),
        doc="no body, {} or no offsets: commit every offset returned so far",
    ),
    "CommittedOffsets": obj_schema(
        ("offsets",),
        offsets=array_schema(
            obj_schema(("topic", "partition", "offset"), topic=STR, partition=INT32, offset=_INT64, metadata=STR)
        ),
    ),
    "BinaryConsumerRecord": _consumer_record(_BASE64),
    "JsonConsumerRecord": _consumer_record(ANY),
    "BinaryShareRecord": _share_record(_BASE64),
    "JsonShareRecord": _share_record(ANY),
    "CreateShareConsumerRequest": _object(
        {
            "name": STR,
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
    "ShareSubscription": obj_schema(("topics",), topics=array_schema(STR, minItems=1, maxItems=10000)),
    "Acknowledgement": obj_schema(
        ("topic", "partition", "offset", "type"),
        topic=STR,
        partition=INT32,
        offset=_INT64,
        type={"type": "string", "enum": ["accept", "release", "reject"]},
    ),
    "AcknowledgeRequest": obj_schema(
        ("acknowledgements",),
        acknowledgements=array_schema(schema_ref("Acknowledgement"), minItems=1),
        doc="Each record of an answer, acknowledged once; only records of answers written in full",
    ),
    "AcknowledgeResponse": obj_schema(
        ("partitions",),
        partitions=array_schema(
            obj_schema(
                ("topic", "partition"),
                topic=STR,
                partition=INT32,
                error_code=nullable_schema(INT),
                error=nullable_schema(STR),
            )
        ),
        doc="The broker's answer per partition; error_code 50002/50003 where it refused the acknowledgements",
    ),
    # v3
    "Relationship": obj_schema(("related",), related={**STR, "format": "uri"}),
    "ResourceMetadata": obj_schema(("self",), self={**STR, "format": "uri"}, resource_name=STR),
    "ListMetadata": obj_schema(("self",), self={**STR, "format": "uri"}, next=nullable_schema(STR)),
    "Cluster": _v3_resource(
        "KafkaCluster",
        ("cluster_id",),
        cluster_id=STR,
        **_related(
            "controller", "acls", "brokers", "broker_configs", "consumer_groups", "topics", "partition_reassignments"
        ),
    ),
    "ClusterList": _v3_list("KafkaClusterList", "Cluster"),
    "V3Topic": _v3_resource(
        "KafkaTopic",
        ("cluster_id", "topic_name"),
        cluster_id=STR,
        topic_name=STR,
        is_internal=_BOOL,
        replication_factor=INT,
        partitions_count=nullable_schema(INT),
        authorized_operations=array_schema(STR),
        **_related("partitions", "configs", "partition_reassignments"),
    ),
    "V3TopicList": _v3_list("KafkaTopicList", "V3Topic"),
    "CreateTopicRequest": obj_schema(
        ("topic_name",),
        topic_name={**STR, "minLength": 1},
        partitions_count={**INT32, "minimum": 1, "description": "missing: the broker's num.partitions"},
        replication_factor={**INT32, "minimum": 1, "description": "missing: the broker's default"},
        configs=array_schema(obj_schema(("name",), name=STR, value=nullable_schema(STR))),
        validate_only={**_BOOL, "description": "check only; answered 200 instead of 201"},
    ),
    "AlterConfigsRequest": obj_schema(
        ("data",),
        data=array_schema(
            obj_schema(
                ("name",),
                name=STR,
                value=nullable_schema(STR),
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
        cluster_id=STR,
        topic_name=STR,
        partition_id=INT32,
        **_related("leader", "replicas", "reassignment"),
    ),
    "V3PartitionList": _v3_list("KafkaPartitionList", "V3Partition"),
    "TopicConfig": _v3_resource(
        "KafkaTopicConfig",
        ("name",),
        cluster_id=STR,
        topic_name=STR,
        name=STR,
        value=nullable_schema(STR),
        is_default=_BOOL,
        is_read_only=_BOOL,
        is_sensitive=_BOOL,
        source=STR,
        synonyms=array_schema(obj_schema(name=STR, value=nullable_schema(STR), source=STR)),
    ),
    "TopicConfigList": _v3_list("KafkaTopicConfigList", "TopicConfig"),
    "ConsumerGroup": _v3_resource(
        "KafkaConsumerGroup",
        ("consumer_group_id",),
        cluster_id=STR,
        consumer_group_id=STR,
        is_simple=_BOOL,
        partition_assignor=STR,
        state=STR,
        type=STR,
        is_mixed_consumer_group=_BOOL,
        **_related("coordinator", "consumers", "lag_summary"),
    ),
    "ConsumerGroupList": _v3_list("KafkaConsumerGroupList", "ConsumerGroup"),
    "ShareGroupTopicPartition": obj_schema(
        ("topic_name", "partition_id"),
        kind={"type": "string", "enum": ["KafkaShareGroupTopicPartition"]},
        topic_name=STR,
        partition_id=INT32,
        partition=schema_ref("Relationship"),
    ),
    "ShareGroup": _v3_resource(
        "KafkaShareGroup",
        ("share_group_id",),
        cluster_id=STR,
        share_group_id=STR,
        state=STR,
        consumer_count=INT32,
        partition_count=INT32,
        assigned_topic_partitions=array_schema(schema_ref("ShareGroupTopicPartition")),
        **_related("coordinator", "consumers"),
    ),
    "ShareGroupList": _v3_list("KafkaShareGroupList", "ShareGroup"),
    "ShareGroupConsumer": _v3_resource(
        "KafkaShareGroupConsumer",
        ("consumer_id",),
        cluster_id=STR,
        group_id=STR,
        consumer_id=STR,
        client_id=STR,
        **_related("assignments"),
    ),
    "ShareGroupConsumerList": _v3_list("KafkaShareGroupConsumerList", "ShareGroupConsumer"),
    "ShareGroupConsumerAssignment": _v3_resource(
        "KafkaShareGroupConsumerAssignment",
        ("topic_name", "partition_id"),
        cluster_id=STR,
        group_id=STR,
        consumer_id=STR,
        topic_name=STR,
        partition_id=INT32,
        **_related("partition"),
    ),
    "ShareGroupConsumerAssignmentList": _v3_list(
        "KafkaShareGroupConsumerAssignmentList", "ShareGroupConsumerAssignment"
    ),
    "Consumer": _v3_resource(
        "KafkaConsumer",
        ("consumer_id",),
        cluster_id=STR,
        consumer_group_id=STR,
        consumer_id=STR,
        instance_id=nullable_schema(STR),
        client_id=STR,
        assignments=array_schema(obj_schema(topic_name=STR, partition_id=INT32)),
    ),
    "ConsumerList": _v3_list("KafkaConsumerList", "Consumer"),
    "ConsumerLag": _v3_resource(
        "KafkaConsumerLag",
        ("topic_name", "partition_id", "lag"),
        cluster_id=STR,
        consumer_group_id=STR,
        topic_name=STR,
        partition_id=INT32,
        current_offset=_INT64,
        log_end_offset=_INT64,
        lag=_INT64,
        consumer_id=STR,
        instance_id=nullable_schema(STR),
        client_id=STR,
    ),
    "ConsumerLagList": _v3_list("KafkaConsumerLagList", "ConsumerLag"),
    "LagSummary": _v3_resource(
        "KafkaConsumerGroupLagSummary",
        ("max_lag", "total_lag"),
        cluster_id=STR,
        consumer_group_id=STR,
        max_lag_consumer_id=STR,
        max_lag_instance_id=nullable_schema(STR),
        max_lag_client_id=STR,
        max_lag_topic_name=STR,
        max_lag_partition_id=INT32,
        max_lag=_INT64,
        total_lag=_INT64,
        **_related("max_lag_consumer", "max_lag_partition"),
    ),
    "V3ProduceRecord": obj_schema(
        additional=False,
        partition_id=nullable_schema(INT32),
        headers=nullable_schema(array_schema(obj_schema(("name",), name=STR, value=nullable_schema(_BASE64)))),
        key=_v3_data("key"),
        value=_v3_data("value"),
        timestamp=nullable_schema({**STR, "format": "date-time"}),
    ),
    "V3ProduceResult": obj_schema(
        ("error_code",),
        error_code={**INT, "description": "200 for a stored record; else the record's error"},
        message=STR,
        cluster_id=STR,
        topic_name=STR,
        partition_id=INT32,
        offset=_INT64,
        timestamp={**STR, "format": "date-time"},
        key=nullable_schema(obj_schema(type=STR, size=INT)),
        value=nullable_schema(obj_schema(type=STR, size=INT)),
        trace=schema_ref("RecordTrace"),
    ),
}
