"""API v3 share groups: the five read-only GETs of Confluent Cloud's Share Group (v3) API,
in its shape (`kind`, `metadata.self`, `related` links, `{error_code, message}` errors).

**What they show, and from where.** confluent-kafka 2.16 has no share-group admin call
(no ShareGroupDescribe; `list_consumer_groups` leaves share groups out and
`describe_consumer_groups` calls one DEAD), and a ShareConsumer tells neither its member
id nor its assignment. So the honest source is what this proxy process's own members
know: the share-consumer instances and affinity-free members it runs. A group is listed
when this process has a member in it; `consumer_id` is the instance name (the broker's
member id is not exposed); a member's assignments are the partitions it has received
records from (a partition assigned to it that has had no record for it is not shown).
Behind a balancer, each process answers for its own members. Everything else the Cloud
API has (the coordinator's id, other processes' and other clients' members, DELETE) is
not offered; `coordinator.related` points at the cluster's broker list.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.restproxy.context import Context, json_response
from workbench.restproxy.share_instances import ShareInstance
from workbench.restproxy.v3 import check_cluster

__all__ = ["ROUTES"]

_JSON = "application/json"


def _base(ctx: Context, request: Request) -> str:
    return f"{ctx.settings.base_url(request.headers.get('host'))}/v3/clusters/{ctx.cluster_id}"


def _members(ctx: Context, group: str | None = None) -> list[ShareInstance]:
    found = [i for i in ctx.shares.instances.values() if not i.closed and (group is None or i.group == group)]
    return sorted(found, key=lambda i: (i.group, i.name))


async def _group_members(ctx: Context, cluster: str, group: str) -> list[ShareInstance]:
    check_cluster(ctx, cluster)
    await ctx.metadata.call(ctx.metadata.require_share_groups)
    members = _members(ctx, group)
    if not members:
        raise RestError(
            404,
            404,
            f"Share group {group} cannot be found: this proxy process has no member in it (it describes share "
            "groups through its own members; confluent-kafka 2.16 has no share-group admin call).",
        )
    return members


def _partition_link(base: str, topic: str, partition: int) -> dict[str, str]:
    return {"related": f"{base}/topics/{quote(topic, safe='')}/partitions/{partition}"}


def _group_body(ctx: Context, request: Request, group: str, members: list[ShareInstance]) -> dict[str, Any]:
    base = _base(ctx, request)
    url = f"{base}/share-groups/{quote(group, safe='')}"
    seen = sorted({tp for m in members for tp in m.seen})
    return {
        "kind": "KafkaShareGroup",
        "metadata": {"self": url, "resource_name": f"crn:///kafka={ctx.cluster_id}/share-group={group}"},
        "cluster_id": ctx.cluster_id,
        "share_group_id": group,
        "state": "STABLE" if members else "EMPTY",
        "coordinator": {"related": f"{base}/brokers"},
        "consumers": {"related": f"{url}/consumers"},
        "consumer_count": len(members),
        "partition_count": len(seen),
        "assigned_topic_partitions": [
            {
                "kind": "KafkaShareGroupTopicPartition",
                "topic_name": topic,
                "partition_id": partition,
                "partition": _partition_link(base, topic, partition),
            }
            for topic, partition in seen
        ],
    }


def _consumer_body(ctx: Context, request: Request, member: ShareInstance) -> dict[str, Any]:
    url = f"{_base(ctx, request)}/share-groups/{quote(member.group, safe='')}/consumers/{quote(member.name, safe='')}"
    client_id = f"{ctx.settings.id}-{member.name}" if ctx.settings.id else member.name
    return {
        "kind": "KafkaShareGroupConsumer",
        "metadata": {"self": url},
        "cluster_id": ctx.cluster_id,
        "group_id": member.group,
        "consumer_id": member.name,
        "client_id": client_id,
        "assignments": {"related": f"{url}/assignments"},
    }


def _v3(data: Any) -> Response:
    return json_response(data, media_type=_JSON)


async def _handle_list(ctx: Context, request: Request, cluster: str) -> Response:
    check_cluster(ctx, cluster)
    await ctx.metadata.call(ctx.metadata.require_share_groups)
    groups: dict[str, list[ShareInstance]] = {}
    for member in _members(ctx):
        groups.setdefault(member.group, []).append(member)
    url = f"{_base(ctx, request)}/share-groups"
    data = [_group_body(ctx, request, g, m) for g, m in groups.items()]
    return _v3({"kind": "KafkaShareGroupList", "metadata": {"self": url, "next": None}, "data": data})


async def _handle_get(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    members = await _group_members(ctx, cluster, group)
    return _v3(_group_body(ctx, request, group, members))


async def _handle_consumers(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    members = await _group_members(ctx, cluster, group)
    url = f"{_base(ctx, request)}/share-groups/{quote(group, safe='')}/consumers"
    data = [_consumer_body(ctx, request, m) for m in members]
    return _v3({"kind": "KafkaShareGroupConsumerList", "metadata": {"self": url, "next": None}, "data": data})


async def _member(ctx: Context, cluster: str, group: str, consumer: str) -> ShareInstance:
    for member in await _group_members(ctx, cluster, group):
        if member.name == consumer:
            return member
    raise RestError(404, 404, f"Consumer {consumer} of share group {group} cannot be found in this proxy process.")


async def _handle_consumer(ctx: Context, request: Request, cluster: str, group: str, consumer: str) -> Response:
    return _v3(_consumer_body(ctx, request, await _member(ctx, cluster, group, consumer)))


async def _handle_assignments(ctx: Context, request: Request, cluster: str, group: str, consumer: str) -> Response:
    member = await _member(ctx, cluster, group, consumer)
    base = _base(ctx, request)
    url = f"{base}/share-groups/{quote(group, safe='')}/consumers/{quote(consumer, safe='')}/assignments"
    data = [
        {
            "kind": "KafkaShareGroupConsumerAssignment",
            "metadata": {"self": f"{url}/{quote(topic, safe='')}/partitions/{partition}"},
            "cluster_id": ctx.cluster_id,
            "group_id": group,
            "consumer_id": consumer,
            "topic_name": topic,
            "partition_id": partition,
            "partition": _partition_link(base, topic, partition),
        }
        for topic, partition in sorted(member.seen)
    ]
    return _v3({"kind": "KafkaShareGroupConsumerAssignmentList", "metadata": {"self": url, "next": None}, "data": data})


_G = "/v3/clusters/{cluster}/share-groups"

ROUTES = [
    Route("GET", _G, _handle_list),
    Route("GET", f"{_G}/{{group}}", _handle_get),
    Route("GET", f"{_G}/{{group}}/consumers", _handle_consumers),
    Route("GET", f"{_G}/{{group}}/consumers/{{consumer}}", _handle_consumer),
    Route("GET", f"{_G}/{{group}}/consumers/{{consumer}}/assignments", _handle_assignments),
]
