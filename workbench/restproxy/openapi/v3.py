"""API v3's core paths: clusters, topics, partitions, configs, consumer groups and lag, produce."""

from __future__ import annotations

from typing import Any

from workbench.restproxy.openapi.operations import (
    CLUSTER,
    CLUSTER_404,
    CONFIG_ERRORS,
    V3_GROUP_404,
    V3_TOPIC_404,
    answer,
    content_of,
    operation,
    request_body,
)
from workbench.restproxy.openapi.schemas import (
    JSON_TYPE,
    STR,
    nullable_schema,
    obj_schema,
    schema_ref,
)

__all__ = ["v3_paths"]


def _v3_get(operation_id: str, summary: str, schema: str, errors: dict[int, str], *params: str) -> dict[str, Any]:
    return {
        "get": operation(
            operation_id, "v3", summary, answer(200, summary, schema_ref(schema), (JSON_TYPE,)), errors, params
        )
    }


def v3_paths() -> dict[str, dict[str, Any]]:
    topic = ("cluster", "topic")
    group = ("cluster", "group")
    return {
        "/v3/clusters": _v3_get("listClusters", "The one cluster", "ClusterList", {}),
        CLUSTER: _v3_get("getCluster", "The cluster", "Cluster", CLUSTER_404, "cluster"),
        f"{CLUSTER}/topics": {
            **_v3_get("listTopicsV3", "Topics", "V3TopicList", CLUSTER_404, "cluster"),
            "post": operation(
                "createTopic",
                "v3",
                "Create a topic",
                {
                    **answer(
                        201,
                        "Created",
                        schema_ref("V3Topic"),
                        (JSON_TYPE,),
                        {"Location": {"schema": {**STR, "format": "uri"}}},
                    ),
                    **answer(200, "validate_only: it could be created", schema_ref("V3Topic"), (JSON_TYPE,)),
                },
                {
                    400: "Malformed JSON; 40002: Kafka refused (exists, invalid name, partitions, config)",
                    **CLUSTER_404,
                    415: "Content-Type other than application/json",
                    422: "42206: empty body, topic_name missing, bad partitions_count, replication_factor or configs",
                },
                ("cluster",),
                request_body(schema_ref("CreateTopicRequest"), (JSON_TYPE,), required=True),
            ),
        },
        f"{CLUSTER}/topics/{{topic}}": {
            **_v3_get("getTopicV3", "A topic", "V3Topic", V3_TOPIC_404, *topic),
            "delete": operation(
                "deleteTopic",
                "v3",
                "Delete a topic",
                answer(204, "Deleted"),
                {**V3_TOPIC_404, 400: "40002: Kafka refused"},
                topic,
            ),
        },
        f"{CLUSTER}/topics/{{topic}}/partitions": _v3_get(
            "listPartitionsV3", "Partitions", "V3PartitionList", V3_TOPIC_404, *topic
        ),
        f"{CLUSTER}/topics/{{topic}}/partitions/{{partition}}": _v3_get(
            "getPartitionV3",
            "A partition",
            "V3Partition",
            {404: "Cluster, topic (40403) or partition (40402) not found, or partition not an integer"},
            *topic,
            "partition",
        ),
        f"{CLUSTER}/topics/{{topic}}/configs": _v3_get(
            "listTopicConfigs", "A topic's configs", "TopicConfigList", V3_TOPIC_404, *topic
        ),
        f"{CLUSTER}/topics/{{topic}}/configs/{{name}}": {
            **_v3_get(
                "getTopicConfig",
                "One config of a topic",
                "TopicConfig",
                {404: "Cluster, topic (40403) or config not found"},
                *topic,
                "config",
            ),
            "put": operation(
                "updateTopicConfig",
                "v3",
                "Set one config (the others keep their values)",
                answer(204, "Set"),
                CONFIG_ERRORS,
                (*topic, "config"),
                request_body(obj_schema(("value",), value=nullable_schema(STR)), (JSON_TYPE,), required=True),
            ),
            "delete": operation(
                "resetTopicConfig",
                "v3",
                "Reset one config to its default",
                answer(204, "Reset"),
                CONFIG_ERRORS,
                (*topic, "config"),
            ),
        },
        f"{CLUSTER}/topics/{{topic}}/configs:alter": {
            "post": operation(
                "alterTopicConfigs",
                "v3",
                "Set or reset several configs at once (incremental)",
                answer(204, "Altered"),
                CONFIG_ERRORS,
                topic,
                request_body(schema_ref("AlterConfigsRequest"), (JSON_TYPE,), required=True),
            ),
        },
        f"{CLUSTER}/topics/{{topic}}/records": {
            "post": operation(
                "produceRecords",
                "v3",
                "Produce records, streaming: one result per record, in order",
                {
                    "200": {
                        "description": "The stream started: one V3ProduceResult per record, each followed by "
                        "\\r\\n, written as records are stored; read error_code on every one. With "
                        "Workbench-Trace: true, each record's result has its `trace`",
                        "content": content_of(schema_ref("V3ProduceResult"), (JSON_TYPE,)),
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
                request_body(
                    schema_ref("V3ProduceRecord"),
                    (JSON_TYPE,),
                    required=True,
                    description="One record object, or many one after another (not an array); may be a "
                    "chunked upload that stays open",
                ),
            ),
        },
        f"{CLUSTER}/consumer-groups": _v3_get(
            "listConsumerGroups", "Consumer groups", "ConsumerGroupList", CLUSTER_404, "cluster"
        ),
        f"{CLUSTER}/consumer-groups/{{group}}": _v3_get(
            "getConsumerGroup", "A consumer group", "ConsumerGroup", V3_GROUP_404, *group
        ),
        f"{CLUSTER}/consumer-groups/{{group}}/consumers": _v3_get(
            "listGroupConsumers", "A group's members", "ConsumerList", V3_GROUP_404, *group
        ),
        f"{CLUSTER}/consumer-groups/{{group}}/lags": _v3_get(
            "listConsumerLags", "Lag per committed partition", "ConsumerLagList", V3_GROUP_404, *group
        ),
        f"{CLUSTER}/consumer-groups/{{group}}/lag-summary": _v3_get(
            "getLagSummary", "The group's largest and total lag", "LagSummary", V3_GROUP_404, *group
        ),
    }
