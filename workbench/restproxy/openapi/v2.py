"""API v2's paths: metadata, produce and consumer instances."""

from __future__ import annotations

from typing import Any

from workbench.restproxy.formats import FORMATS
from workbench.restproxy.openapi.operations import (
    CONSUMER_BODY,
    INSTANCE,
    INSTANCE_404,
    NOT_ACCEPTABLE,
    PARTITION_404,
    TOPIC_404,
    V2_BODY_TYPES,
    answer,
    operation,
    produce_operation,
    request_body,
)
from workbench.restproxy.openapi.schemas import (
    ANY,
    STR,
    array_schema,
    obj_schema,
    schema_ref,
)

__all__ = ["v2_paths"]


def v2_paths() -> dict[str, dict[str, Any]]:
    records = {
        f"application/vnd.kafka.{fmt}.v2+json": {"schema": array_schema(schema_ref(f"{fmt.title()}ConsumerRecord"))}
        for fmt in FORMATS
    }
    return {
        "/": {
            "get": operation(
                "root", "v2 metadata", "Liveness: an empty object", answer(200, "Alive", obj_schema()), {}
            ),
            "post": operation(
                "rootPost",
                "v2 metadata",
                "Liveness (upstream accepts POST too); any body is ignored",
                answer(200, "Alive", obj_schema()),
                {},
            ),
        },
        "/brokers": {
            "get": operation(
                "listBrokers",
                "v2 metadata",
                "Broker ids",
                answer(200, "Broker ids", schema_ref("Brokers")),
                NOT_ACCEPTABLE,
            )
        },
        "/topics": {
            "get": operation(
                "listTopics",
                "v2 metadata",
                "Topic names, internal topics left out",
                answer(200, "Topic names", array_schema(STR)),
                NOT_ACCEPTABLE,
            )
        },
        "/topics/{topic}": {
            "get": operation(
                "getTopic",
                "v2 metadata",
                "A topic, its configs and partitions",
                answer(200, "The topic", schema_ref("Topic")),
                {**TOPIC_404, **NOT_ACCEPTABLE},
                ("topic",),
            ),
            "post": produce_operation(
                "produceToTopic", "Produce records; the partitioner picks partitions", ("topic",)
            ),
        },
        "/topics/{topic}/partitions": {
            "get": operation(
                "listPartitions",
                "v2 metadata",
                "A topic's partitions",
                answer(200, "Partitions", array_schema(schema_ref("Partition"))),
                {**TOPIC_404, **NOT_ACCEPTABLE},
                ("topic",),
            ),
        },
        "/topics/{topic}/partitions/{partition}": {
            "get": operation(
                "getPartition",
                "v2 metadata",
                "One partition",
                answer(200, "The partition", schema_ref("Partition")),
                {**PARTITION_404, **NOT_ACCEPTABLE},
                ("topic", "partition"),
            ),
            "post": produce_operation("produceToPartition", "Produce records to one partition", ("topic", "partition")),
        },
        "/topics/{topic}/partitions/{partition}/offsets": {
            "get": operation(
                "getPartitionOffsets",
                "v2 metadata",
                "A partition's first and true log-end offsets",
                answer(200, "Offsets", schema_ref("PartitionOffsets")),
                {**PARTITION_404, **NOT_ACCEPTABLE, 500: "50002: the offsets could not be read"},
                ("topic", "partition"),
            ),
        },
        "/consumers/{group}": {
            "post": operation(
                "createConsumer",
                "v2 consumers",
                "Create a consumer instance in this process",
                answer(200, "The instance and its URL", schema_ref("CreateConsumerResponse")),
                {
                    **CONSUMER_BODY,
                    409: "40902: an instance with this name exists in the group",
                    422: "40001 fetch.min.bytes out of range, 42204 invalid setting or name, 42205 schema "
                    "format without schema.registry.url, 422 unknown format",
                },
                ("group",),
                request_body(schema_ref("CreateConsumerRequest"), V2_BODY_TYPES),
            ),
        },
        INSTANCE: {
            "delete": operation(
                "deleteConsumer",
                "v2 consumers",
                "Close the instance; it leaves its group",
                answer(204, "Closed"),
                INSTANCE_404,
                ("group", "instance"),
            )
        },
        f"{INSTANCE}/subscription": {
            "post": operation(
                "subscribe",
                "v2 consumers",
                "Subscribe to topics or a pattern",
                answer(204, "Subscribed"),
                {
                    **INSTANCE_404,
                    **CONSUMER_BODY,
                    409: "40903: both or neither of topics and topic_pattern, or the instance has manual assignments",
                },
                ("group", "instance"),
                request_body(schema_ref("Subscription"), V2_BODY_TYPES, required=True),
            ),
            "get": operation(
                "getSubscription",
                "v2 consumers",
                "The subscribed topics",
                answer(200, "Topics", schema_ref("Topics")),
                INSTANCE_404,
                ("group", "instance"),
            ),
            "delete": operation(
                "unsubscribe",
                "v2 consumers",
                "Unsubscribe",
                answer(204, "Unsubscribed"),
                INSTANCE_404,
                ("group", "instance"),
            ),
        },
        f"{INSTANCE}/assignments": {
            "post": operation(
                "assign",
                "v2 consumers",
                "Assign partitions manually",
                answer(204, "Assigned"),
                {**INSTANCE_404, **CONSUMER_BODY, 409: "40903: the instance is subscribed"},
                ("group", "instance"),
                request_body(schema_ref("Partitions"), V2_BODY_TYPES, required=True),
            ),
            "get": operation(
                "getAssignments",
                "v2 consumers",
                "The assigned partitions",
                answer(200, "Partitions", schema_ref("Partitions")),
                INSTANCE_404,
                ("group", "instance"),
            ),
        },
        f"{INSTANCE}/positions": {
            "post": operation(
                "seek",
                "v2 consumers",
                "Seek to offsets or timestamps",
                answer(204, "Sought"),
                {**INSTANCE_404, **CONSUMER_BODY, 409: "40903: a partition the instance is not assigned"},
                ("group", "instance"),
                request_body(schema_ref("SeekRequest"), V2_BODY_TYPES, required=True),
            ),
        },
        **{
            f"{INSTANCE}/positions/{end}": {
                "post": operation(
                    f"seekTo{end.title()}",
                    "v2 consumers",
                    f"Seek partitions to their {end}",
                    answer(204, "Sought"),
                    {
                        **INSTANCE_404,
                        **CONSUMER_BODY,
                        409: "40903: a partition the instance is not assigned",
                        500: "50002: the end offsets could not be read",
                    },
                    ("group", "instance"),
                    request_body(schema_ref("Partitions"), V2_BODY_TYPES, required=True),
                ),
            }
            for end in ("beginning", "end")
        },
        f"{INSTANCE}/records": {
            "get": operation(
                "getRecords",
                "v2 consumers",
                "Fetch records in the instance's format",
                {"200": {"description": "Records (maybe none), in the instance's embedded format", "content": records}},
                {
                    **INSTANCE_404,
                    404: "40403 instance not found, 404 timeout or max_bytes not an integer",
                    406: "40601: the Accept names another embedded format than the instance's",
                    422: "A stored key or value is not JSON (json-format instance)",
                },
                ("group", "instance", "timeout", "max_bytes"),
            ),
        },
        f"{INSTANCE}/offsets": {
            "post": operation(
                "commitOffsets",
                "v2 consumers",
                "Commit offsets (all returned so far when none are given)",
                answer(200, "Committed", obj_schema(offsets=array_schema(ANY))),
                {**INSTANCE_404, **CONSUMER_BODY, 409: "40903: a partition the instance is not assigned"},
                ("group", "instance"),
                request_body(schema_ref("CommitRequest"), V2_BODY_TYPES),
            ),
            "get": operation(
                "getCommittedOffsets",
                "v2 consumers",
                "Committed offsets (of the assignment when no body)",
                answer(200, "Committed offsets", schema_ref("CommittedOffsets")),
                {**INSTANCE_404, **CONSUMER_BODY},
                ("group", "instance"),
                request_body(schema_ref("Partitions"), V2_BODY_TYPES, description="A GET with a body, as upstream"),
            ),
        },
    }
