"""Share groups' paths: share-consumer instances in v2's conventions, and the v3 read-only GETs."""

from __future__ import annotations

from typing import Any

from workbench.restproxy.formats import FORMATS
from workbench.restproxy.openapi.operations import (
    CLUSTER,
    CLUSTER_404,
    CONSUMER_BODY,
    NO_SHARE_GROUPS,
    SHARE,
    SHARE_404,
    V2_BODY_TYPES,
    V3_SHARE_404,
    V3_SHARE_ERRORS,
    answer,
    operation,
    request_body,
)
from workbench.restproxy.openapi.schemas import (
    JSON_TYPE,
    STR,
    array_schema,
    schema_ref,
)

__all__ = ["share_paths", "v3_share_paths"]


def share_paths() -> dict[str, dict[str, Any]]:
    """Share-group consumption (no upstream proxy has it): v2 conventions throughout."""
    records = {
        f"application/vnd.kafka.{fmt}.v2+json": {"schema": array_schema(schema_ref(f"{fmt.title()}ShareRecord"))}
        for fmt in FORMATS
    }
    tag = "v2 share consumers"
    instance = ("group", "instance")
    return {
        "/share-consumers/{group}": {
            "post": operation(
                "createShareConsumer",
                tag,
                "Create a share-consumer instance (explicit acknowledgement) in this process",
                answer(200, "The instance and its URL", schema_ref("CreateConsumerResponse")),
                {
                    **CONSUMER_BODY,
                    **NO_SHARE_GROUPS,
                    409: "40902: an instance with this name exists in the group",
                    422: "42204 invalid setting or name, 42205 schema format without schema.registry.url, "
                    "422 unknown format",
                    429: "share.consumer.instances.max instances in this process",
                },
                ("group",),
                request_body(schema_ref("CreateShareConsumerRequest"), V2_BODY_TYPES),
            ),
        },
        "/share-consumers/{group}/records": {
            "get": operation(
                "fetchShareRecords",
                tag,
                "Fetch without instance affinity: any process serves it from its own member of the group; "
                "the records are accepted once the answer was written in full, released otherwise",
                {"200": {"description": "Records (maybe none), in the Accept's embedded format", "content": records}},
                {
                    **NO_SHARE_GROUPS,
                    404: "40401 topic not found, 404 timeout or max_bytes not an integer",
                    422: "42204 unusable group name, 422 no topic or more than 100",
                    429: "share.consumer.instances.max members in this process",
                },
                ("group", "fetch_topic", "timeout", "max_bytes", "auto_offset_reset"),
            ),
        },
        SHARE: {
            "delete": operation(
                "deleteShareConsumer",
                tag,
                "Release what the instance holds and close it; it leaves its group",
                answer(204, "Closed"),
                SHARE_404,
                instance,
            )
        },
        f"{SHARE}/subscription": {
            "post": operation(
                "shareSubscribe",
                tag,
                "Subscribe to topics (names only)",
                answer(204, "Subscribed"),
                {**SHARE_404, **CONSUMER_BODY},
                instance,
                request_body(schema_ref("ShareSubscription"), V2_BODY_TYPES, required=True),
            ),
            "get": operation(
                "getShareSubscription",
                tag,
                "The subscribed topics",
                answer(200, "Topics", schema_ref("Topics")),
                SHARE_404,
                instance,
            ),
            "delete": operation(
                "shareUnsubscribe",
                tag,
                "Release what the instance holds and unsubscribe",
                answer(204, "Unsubscribed"),
                SHARE_404,
                instance,
            ),
        },
        f"{SHARE}/records": {
            "get": operation(
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
        f"{SHARE}/acknowledgements": {
            "post": operation(
                "acknowledgeShareRecords",
                tag,
                "Accept, release or reject records of answers written in full; committed before the answer",
                answer(200, "The broker's answer per partition", schema_ref("AcknowledgeResponse")),
                {
                    **SHARE_404,
                    **CONSUMER_BODY,
                    409: "40903: a record not held by the instance (never written to the client, or acknowledged)",
                    500: "50002/50003: the commit failed as a whole",
                },
                instance,
                request_body(schema_ref("AcknowledgeRequest"), V2_BODY_TYPES, required=True),
            ),
        },
    }


def v3_share_paths() -> dict[str, dict[str, Any]]:
    group = ("cluster", "group")
    consumer = ("cluster", "group", "consumer")
    base = f"{CLUSTER}/share-groups"
    return {
        base: _v3_share_get(
            "listShareGroups",
            "Every share group of the cluster",
            "ShareGroupList",
            {**CLUSTER_404, **NO_SHARE_GROUPS, **V3_SHARE_ERRORS},
            "cluster",
        ),
        f"{base}/{{group}}": _v3_share_get("getShareGroup", "A share group", "ShareGroup", V3_SHARE_404, *group),
        f"{base}/{{group}}/consumers": _v3_share_get(
            "listShareGroupConsumers",
            "The group's members, whichever process or client runs them",
            "ShareGroupConsumerList",
            V3_SHARE_404,
            *group,
        ),
        f"{base}/{{group}}/consumers/{{consumer}}": _v3_share_get(
            "getShareGroupConsumer", "A member", "ShareGroupConsumer", V3_SHARE_404, *consumer
        ),
        f"{base}/{{group}}/consumers/{{consumer}}/assignments": _v3_share_get(
            "listShareGroupConsumerAssignments",
            "The partitions the group's coordinator assigned the member",
            "ShareGroupConsumerAssignmentList",
            V3_SHARE_404,
            *consumer,
        ),
    }


#: The header of every v3 share-group answer: which view it is in (docs/rest-proxy.md).
_SHARE_VIEW_HEADER = {
    "X-Share-Groups-View": {
        "description": "cluster: as the brokers describe the group (ShareGroupDescribe); "
        "process; <why>: this process's own members, where the proxy's admin settings ask for "
        "security its protocol client does not speak (GSSAPI, OAUTHBEARER, keystores...)",
        "schema": STR,
    }
}


def _v3_share_get(operation_id: str, summary: str, schema: str, errors: dict[int, str], *params: str) -> dict[str, Any]:
    ok = answer(200, summary, schema_ref(schema), (JSON_TYPE,), _SHARE_VIEW_HEADER)
    return {"get": operation(operation_id, "v3", summary, ok, errors, params)}
