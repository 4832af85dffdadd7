"""API v3 share groups: the five read-only GETs of Confluent Cloud's Share Group (v3) API,
in its shape (`kind`, `metadata.self`, `related` links, `{error_code, message}` errors).

**What they show, and from where.** The cluster's truth: confluent-kafka 2.16 has no
share-group admin call, so the proxy asks the brokers itself (`workbench.kafka.share_admin`:
ListGroups v5 with the `share` type on every broker, ShareGroupDescribe v1 on each group's
coordinator). Every process behind a balancer answers the same: every member of the group,
whichever process or client runs it, with the broker's member id as `consumer_id`, the
member's `client_id`, and the partitions its coordinator assigned it.

That client speaks TLS and SASL PLAIN / SCRAM as the proxy's `admin.*`/`client.*`
settings ask. When they ask for more (GSSAPI, OAUTHBEARER, a keystore, certificates given
inline...), the GETs answer from this process's own members instead (share-consumer
instances and affinity-free members; `consumer_id` is the instance name, assignments are
the partitions it has received records from), and every answer says which view it is in
its `X-Share-Groups-View` header: `cluster`, or `process; <why>`. The blocking socket work
runs in worker threads, at most `_ADMIN_CALLS` at once per process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from workbench.errors import KafkaError
from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.kafka.share_admin import ShareGroup, ShareGroupNotFound, ShareGroupsUnsupported, ShareMember
from workbench.restproxy.context import Context, json_response
from workbench.restproxy.share_instances import ShareInstance
from workbench.restproxy.v3 import check_cluster

__all__ = ["ROUTES", "VIEW_HEADER"]

_T = TypeVar("_T")
_JSON = "application/json"
#: The header every answer carries: `cluster`, or `process; <why>`.
VIEW_HEADER = "X-Share-Groups-View"
#: Confluent's group states; a broker state outside them is UNKNOWN.
_STATES = {"UNKNOWN", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE", "DEAD", "EMPTY"}
#: Errors of the admin client, as Confluent's status and code.
_AUTHORIZATION = {"GROUP_AUTHORIZATION_FAILED", "TOPIC_AUTHORIZATION_FAILED", "CLUSTER_AUTHORIZATION_FAILED"}
_UNREACHABLE = {"_TRANSPORT", "_TIMED_OUT"}
_PASSING = {"COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR"}


def _base(ctx: Context, request: Request) -> str:
    return f"{ctx.settings.base_url(request.headers.get('host'))}/v3/clusters/{ctx.cluster_id}"


def _view(ctx: Context) -> str:
    why = ctx.shares.groups_view_reason
    return "cluster" if why is None else f"process; {why}"


def _v3(ctx: Context, data: Any) -> Response:
    return json_response(data, media_type=_JSON, headers={VIEW_HEADER: _view(ctx)})


async def _admin(ctx: Context, call: Callable[..., _T], *args: Any) -> _T:
    """One admin-client call in a worker thread, at most `_ADMIN_CALLS` at once; its
    errors as Confluent's."""
    shares = ctx.shares
    try:
        async with asyncio.timeout(shares.groups_timeout_s):
            await shares.groups_calls.acquire()
    except TimeoutError:
        raise RestError(503, 50302, "Too many share-group lookups in flight in this process; try again") from None
    try:
        return await ctx.metadata.call(call, *args)
    except ShareGroupsUnsupported as exc:
        raise RestError(400, 40002, f"This Kafka cluster has no share groups (KIP-932): {exc}") from None
    except ShareGroupNotFound as exc:
        raise RestError(404, 404, f"Share group cannot be found: {exc}") from None
    except KafkaError as exc:
        if exc.code in _AUTHORIZATION:
            raise RestError(403, 40301, f"Not authorized: {exc}") from None
        if exc.code in _UNREACHABLE:
            raise RestError(503, 50302, f"The cluster did not answer: {exc}") from None
        raise RestError(500, 50003 if exc.code in _PASSING else 50002, f"Share-group lookup failed: {exc}") from None
    finally:
        shares.groups_calls.release()


async def _groups(ctx: Context, cluster: str) -> list[ShareGroup]:
    """Every share group: the cluster's, or this process's (see the module's docstring)."""
    check_cluster(ctx, cluster)
    await ctx.metadata.call(ctx.metadata.require_share_groups)
    admin = ctx.shares.groups_admin
    if admin is None:
        return _process_groups(ctx)
    names = await _admin(ctx, admin.list_groups)
    described = await _admin(ctx, admin.describe_groups, names) if names else {}
    return [described[name] for name in names if name in described]


async def _group(ctx: Context, cluster: str, group: str) -> ShareGroup:
    check_cluster(ctx, cluster)
    await ctx.metadata.call(ctx.metadata.require_share_groups)
    admin = ctx.shares.groups_admin
    if admin is not None:
        return await _admin(ctx, admin.describe_group, group)
    for found in _process_groups(ctx):
        if found.group_id == group:
            return found
    raise RestError(
        404,
        404,
        f"Share group {group} cannot be found: this proxy process has no member in it (it describes share groups "
        f"through its own members: {ctx.shares.groups_view_reason}).",
    )


def _process_groups(ctx: Context) -> list[ShareGroup]:
    """This process's members, as share groups (the view without the admin client)."""
    by_group: dict[str, list[ShareInstance]] = {}
    for instance in ctx.shares.instances.values():
        if not instance.closed:
            by_group.setdefault(instance.group, []).append(instance)
    return [
        ShareGroup(
            group_id=group,
            state="Stable",
            group_epoch=0,
            assignment_epoch=0,
            assignor="",
            coordinator=None,
            members=tuple(_process_member(ctx, i) for i in sorted(members, key=lambda i: i.name)),
        )
        for group, members in sorted(by_group.items())
    ]


def _process_member(ctx: Context, instance: ShareInstance) -> ShareMember:
    client_id = f"{ctx.settings.id}-{instance.name}" if ctx.settings.id else instance.name
    return ShareMember(instance.name, client_id, "", None, 0, tuple(instance.topics), tuple(sorted(instance.seen)))


def _partition_link(base: str, topic: str, partition: int) -> dict[str, str]:
    return {"related": f"{base}/topics/{quote(topic, safe='')}/partitions/{partition}"}


def _group_body(ctx: Context, request: Request, group: ShareGroup) -> dict[str, Any]:
    base = _base(ctx, request)
    url = f"{base}/share-groups/{quote(group.group_id, safe='')}"
    state = group.state.upper().replace(" ", "_")
    coordinator = f"{base}/brokers" if group.coordinator is None else f"{base}/brokers/{group.coordinator.node_id}"
    partitions = group.partitions
    return {
        "kind": "KafkaShareGroup",
        "metadata": {"self": url, "resource_name": f"crn:///kafka={ctx.cluster_id}/share-group={group.group_id}"},
        "cluster_id": ctx.cluster_id,
        "share_group_id": group.group_id,
        "state": state if state in _STATES else "UNKNOWN",
        "coordinator": {"related": coordinator},
        "consumers": {"related": f"{url}/consumers"},
        "consumer_count": len(group.members),
        "partition_count": len(partitions),
        "assigned_topic_partitions": [
            {
                "kind": "KafkaShareGroupTopicPartition",
                "topic_name": topic,
                "partition_id": partition,
                "partition": _partition_link(base, topic, partition),
            }
            for topic, partition in partitions
        ],
    }


def _consumer_url(ctx: Context, request: Request, group: str, member: str) -> str:
    return f"{_base(ctx, request)}/share-groups/{quote(group, safe='')}/consumers/{quote(member, safe='')}"


def _consumer_body(ctx: Context, request: Request, group: str, member: ShareMember) -> dict[str, Any]:
    url = _consumer_url(ctx, request, group, member.member_id)
    return {
        "kind": "KafkaShareGroupConsumer",
        "metadata": {"self": url},
        "cluster_id": ctx.cluster_id,
        "group_id": group,
        "consumer_id": member.member_id,
        "client_id": member.client_id,
        "assignments": {"related": f"{url}/assignments"},
    }


async def _handle_list(ctx: Context, request: Request, cluster: str) -> Response:
    groups = await _groups(ctx, cluster)
    url = f"{_base(ctx, request)}/share-groups"
    data = [_group_body(ctx, request, g) for g in groups]
    return _v3(ctx, {"kind": "KafkaShareGroupList", "metadata": {"self": url, "next": None}, "data": data})


async def _handle_get(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    return _v3(ctx, _group_body(ctx, request, await _group(ctx, cluster, group)))


async def _handle_consumers(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    found = await _group(ctx, cluster, group)
    url = f"{_base(ctx, request)}/share-groups/{quote(group, safe='')}/consumers"
    data = [_consumer_body(ctx, request, group, m) for m in found.members]
    return _v3(ctx, {"kind": "KafkaShareGroupConsumerList", "metadata": {"self": url, "next": None}, "data": data})


async def _member(ctx: Context, cluster: str, group: str, consumer: str) -> ShareMember:
    for member in (await _group(ctx, cluster, group)).members:
        if member.member_id == consumer:
            return member
    shown = consumer if len(consumer) <= 60 else f"{consumer[:60]}... ({len(consumer)} characters)"
    raise RestError(404, 404, f"Consumer {shown!r} of share group {group} cannot be found.")


async def _handle_consumer(ctx: Context, request: Request, cluster: str, group: str, consumer: str) -> Response:
    return _v3(ctx, _consumer_body(ctx, request, group, await _member(ctx, cluster, group, consumer)))


async def _handle_assignments(ctx: Context, request: Request, cluster: str, group: str, consumer: str) -> Response:
    member = await _member(ctx, cluster, group, consumer)
    base = _base(ctx, request)
    url = f"{_consumer_url(ctx, request, group, consumer)}/assignments"
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
        for topic, partition in member.assignment
    ]
    kind = "KafkaShareGroupConsumerAssignmentList"
    return _v3(ctx, {"kind": kind, "metadata": {"self": url, "next": None}, "data": data})


_G = "/v3/clusters/{cluster}/share-groups"

ROUTES = [
    Route("GET", _G, _handle_list),
    Route("GET", f"{_G}/{{group}}", _handle_get),
    Route("GET", f"{_G}/{{group}}/consumers", _handle_consumers),
    Route("GET", f"{_G}/{{group}}/consumers/{{consumer}}", _handle_consumer),
    Route("GET", f"{_G}/{{group}}/consumers/{{consumer}}/assignments", _handle_assignments),
]
