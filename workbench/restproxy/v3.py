"""API v3 core: clusters, topics (list, create, get, delete), partitions, topic configs,
consumer groups and their lag. Records produce is in `produce_v3.py`.

Resources carry `kind`, `metadata.self` (an absolute URL of this process, built like
v2's `base_uri`) and `related` links, as Confluent's do. There is one cluster, the one
`bootstrap.servers` reaches; any other cluster id is 404. Lag is the true log-end
offset (`workbench.kafka.end_offsets`) minus the committed offset.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import quote

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
from confluent_kafka.admin import NewTopic
from starlette.requests import Request
from starlette.responses import Response

from workbench.errors import KafkaError
from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.kafka.admin import await_topics
from workbench.restproxy.context import Context, empty_response, int_param, json_response, read_json
from workbench.restproxy.metadata import kafka_error
from workbench.restproxy.validation import check_topic

__all__ = ["MAX_PARTITIONS", "MAX_REPLICATION", "ROUTES", "check_cluster", "check_v3_accept"]

_JSON = "application/json"

log = logging.getLogger("workbench.restproxy")

#: What librdkafka accepts in a NewTopic (Kafka itself allows more; the client refuses first).
MAX_PARTITIONS = 100_000
MAX_REPLICATION = 10_000


def check_cluster(ctx: Context, cluster: str) -> None:
    if cluster != ctx.cluster_id:
        raise RestError(404, 404, f"Cluster {cluster} cannot be found.")


def _base(ctx: Context, request: Request) -> str:
    return f"{ctx.settings.base_url(request.headers.get('host'))}/v3/clusters/{ctx.cluster_id}"


def _meta(url: str, resource: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"self": url}
    if resource is not None:
        meta["resource_name"] = resource
    return meta


def _crn(ctx: Context, *parts: str) -> str:
    return "crn:///" + "/".join([f"kafka={ctx.cluster_id}", *parts])


async def _body(ctx: Context, request: Request) -> Any:
    """A v3 request body: application/json only (415 otherwise), as upstream."""
    content_type = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if content_type and content_type != _JSON:
        raise RestError(415, 415, f"HTTP 415 Unsupported Media Type: v3 takes application/json, got {content_type!r}")
    return await read_json(request, ctx.settings)


def check_v3_accept(accept: str | None) -> None:
    """406 when the Accept header leaves out JSON, the only type v3 answers in."""
    if not accept:
        return
    items = [item.split(";", 1)[0].strip().lower() for item in accept.split(",")]
    if not any(item in (_JSON, "*/*", "application/*") or item.endswith("+json") for item in items):
        raise RestError(406, 406, f"HTTP 406 Not Acceptable: v3 answers in application/json, not {accept[:80]!r}")


def _v3(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return json_response(data, status=status, media_type=_JSON, headers=headers)


def _cluster_body(ctx: Context, request: Request) -> dict[str, Any]:
    base = _base(ctx, request)
    related = ("acls", "brokers", "broker-configs", "consumer-groups", "topics", "topics/-/partitions/-/reassignment")
    body: dict[str, Any] = {"kind": "KafkaCluster", "metadata": _meta(base, _crn(ctx)), "cluster_id": ctx.cluster_id}
    for name in related:
        key = {
            "broker-configs": "broker_configs",
            "consumer-groups": "consumer_groups",
            "topics/-/partitions/-/reassignment": "partition_reassignments",
        }.get(name, name)
        body[key] = {"related": f"{base}/{name}"}
    body["controller"] = {"related": f"{base}/brokers/controller"}
    return body


async def _handle_list_clusters(ctx: Context, request: Request) -> Response:
    url = f"{ctx.settings.base_url(request.headers.get('host'))}/v3/clusters"
    return _v3(
        {"kind": "KafkaClusterList", "metadata": {"self": url, "next": None}, "data": [_cluster_body(ctx, request)]}
    )


async def _handle_get_cluster(ctx: Context, request: Request, cluster: str) -> Response:
    check_cluster(ctx, cluster)
    return _v3(_cluster_body(ctx, request))


def _topic_body(ctx: Context, request: Request, name: str, partitions: dict[int, Any]) -> dict[str, Any]:
    url = f"{_base(ctx, request)}/topics/{quote(name, safe='')}"
    first = partitions.get(0)
    return {
        "kind": "KafkaTopic",
        "metadata": _meta(url, _crn(ctx, f"topic={name}")),
        "cluster_id": ctx.cluster_id,
        "topic_name": name,
        "is_internal": name.startswith("__"),
        "replication_factor": len(first.replicas) if first is not None else 0,
        "partitions_count": len(partitions),
        "partitions": {"related": f"{url}/partitions"},
        "configs": {"related": f"{url}/configs"},
        "partition_reassignments": {"related": f"{url}/partitions/-/reassignment"},
        "authorized_operations": [],
    }


async def _handle_list_topics(ctx: Context, request: Request, cluster: str) -> Response:
    check_cluster(ctx, cluster)
    metadata = await ctx.metadata.call(ctx.metadata.cluster)
    data = [
        _topic_body(ctx, request, name, metadata.topics[name].partitions)
        for name in sorted(metadata.topics)
        if not name.startswith("__")
    ]
    return _v3(
        {"kind": "KafkaTopicList", "metadata": {"self": f"{_base(ctx, request)}/topics", "next": None}, "data": data}
    )


async def _handle_create_topic(ctx: Context, request: Request, cluster: str) -> Response:
    check_cluster(ctx, cluster)
    body = await _body(ctx, request)
    if not body:
        raise RestError(422, 42206, "Payload error. Request body is empty. Data is required.")
    if not isinstance(body, dict) or not isinstance(body.get("topic_name"), str) or not body["topic_name"]:
        raise RestError(422, 42206, "Payload error. topic_name is required.")
    name = check_topic(body["topic_name"], 400, 40002)  # Kafka's InvalidTopicException, as upstream maps it
    partitions = body.get("partitions_count")
    replication = body.get("replication_factor")
    # librdkafka's own bounds: past them `create_topics` raises instead of asking the broker.
    bounds = (("partitions_count", partitions, MAX_PARTITIONS), ("replication_factor", replication, MAX_REPLICATION))
    for key, value, high in bounds:
        if value is not None and (type(value) is not int or not 1 <= value <= high):
            raise RestError(422, 42206, f"Payload error. {key} must be an integer from 1 to {high}, got {value!r}")
    configs = body.get("configs") or []
    if not isinstance(configs, list) or not all(isinstance(c, dict) and "name" in c for c in configs):
        raise RestError(422, 42206, "Payload error. configs must be a list of {name, value}")
    changes = [_config_change(c["name"], c.get("value")) for c in configs]
    validate_only = bool(body.get("validate_only", False))
    # -1: the broker's defaults (num.partitions, default.replication.factor), as upstream
    new = NewTopic(
        name,
        num_partitions=partitions or -1,
        replication_factor=replication or -1,
        config={key: value for key, value in changes if value is not None},
    )

    def create() -> None:
        if validate_only and _exists(ctx, name):
            raise RestError(400, 40002, f"Topic '{name}' already exists.")
        futures = ctx.metadata.admin.create_topics(
            [new], validate_only=validate_only, operation_timeout=30, request_timeout=30
        )
        try:
            futures[name].result()
        except KafkaException as exc:
            raise kafka_error(exc, f"cannot create topic {name}") from None
        if validate_only:
            _undo_if_created(ctx, name)
        else:
            _await_topic(ctx, name, present=True)

    await ctx.metadata.call(create)
    ctx.metadata.forget(name)
    url = f"{_base(ctx, request)}/topics/{quote(name, safe='')}"
    if validate_only:
        return _v3(_topic_body(ctx, request, name, {}) | {"partitions_count": partitions}, status=200)
    metadata = await ctx.metadata.call(ctx.metadata.topic, name)
    return _v3(_topic_body(ctx, request, name, metadata.partitions), status=201, headers={"Location": url})


def _exists(ctx: Context, name: str) -> bool:
    topic = ctx.metadata.cluster(name).topics.get(name)
    return topic is not None and topic.error is None


def _undo_if_created(ctx: Context, name: str) -> None:
    """A broker that ignores `validate_only` (Tansu does) has just created the topic: a
    validation must write nothing, so it is deleted again."""
    if not _exists(ctx, name):
        return
    log.warning("the broker created topic %s on a validate_only request; deleting it again", name)
    try:
        ctx.metadata.admin.delete_topics([name], operation_timeout=30, request_timeout=30)[name].result()
    except KafkaException as exc:
        raise kafka_error(
            exc, f"the broker created {name} on a validate_only request and it could not be deleted"
        ) from None


async def _topic(ctx: Context, cluster: str, name: str) -> Any:
    check_cluster(ctx, cluster)
    try:
        return await ctx.metadata.call(ctx.metadata.topic, name)
    except RestError as exc:
        if exc.status == 404:
            raise RestError(404, 40403, f"This server does not host this topic-partition: {name}") from None
        raise


async def _handle_get_topic(ctx: Context, request: Request, cluster: str, topic: str) -> Response:
    metadata = await _topic(ctx, cluster, topic)
    return _v3(_topic_body(ctx, request, topic, metadata.partitions))


async def _handle_delete_topic(ctx: Context, request: Request, cluster: str, topic: str) -> Response:
    await _topic(ctx, cluster, topic)

    def delete() -> None:
        futures = ctx.metadata.admin.delete_topics([topic], operation_timeout=30, request_timeout=30)
        try:
            futures[topic].result()
        except KafkaException as exc:
            raise kafka_error(exc, f"cannot delete topic {topic}") from None
        _await_topic(ctx, topic, present=False)

    async with ctx.consumers.releasing(topic):  # librdkafka would crash on the deletion otherwise
        await ctx.metadata.call(delete)
    ctx.metadata.forget(topic)
    return empty_response()


def _await_topic(ctx: Context, topic: str, *, present: bool) -> None:
    """Return once every broker shows the topic created (or deleted), for up to 10 s: a GET
    right after a POST must find it (the created topic's own 201 answer was once a 404 on
    Kafka) and right after a DELETE must not. The change itself has succeeded, so a wait
    that runs out is logged, not answered as an error."""
    conf = {"bootstrap.servers": ctx.settings.bootstrap_servers, **ctx.settings.admin}
    try:
        await_topics(conf, [topic], present=present, timeout=10.0)
    except KafkaError as exc:
        log.warning("%s", exc)


def _partition_body(ctx: Context, request: Request, topic: str, partition: Any) -> dict[str, Any]:
    url = f"{_base(ctx, request)}/topics/{quote(topic, safe='')}/partitions/{partition.id}"
    return {
        "kind": "KafkaPartition",
        "metadata": _meta(url, _crn(ctx, f"topic={topic}", f"partition={partition.id}")),
        "cluster_id": ctx.cluster_id,
        "topic_name": topic,
        "partition_id": partition.id,
        "leader": {"related": f"{url}/replicas/{partition.leader}"},
        "replicas": {"related": f"{url}/replicas"},
        "reassignment": {"related": f"{url}/reassignment"},
    }


async def _handle_list_partitions(ctx: Context, request: Request, cluster: str, topic: str) -> Response:
    metadata = await _topic(ctx, cluster, topic)
    data = [_partition_body(ctx, request, topic, p) for p in sorted(metadata.partitions.values(), key=lambda p: p.id)]
    url = f"{_base(ctx, request)}/topics/{quote(topic, safe='')}/partitions"
    return _v3({"kind": "KafkaPartitionList", "metadata": {"self": url, "next": None}, "data": data})


async def _handle_get_partition(ctx: Context, request: Request, cluster: str, topic: str, partition: str) -> Response:
    number = int_param(partition, "partition_id")
    metadata = await _topic(ctx, cluster, topic)
    if number not in metadata.partitions:
        raise RestError(404, 40402, f"Partition {number} of topic {topic} not found.")
    return _v3(_partition_body(ctx, request, topic, metadata.partitions[number]))


def _config_body(ctx: Context, request: Request, topic: str, entry: Any) -> dict[str, Any]:
    url = f"{_base(ctx, request)}/topics/{quote(topic, safe='')}/configs/{quote(entry.name, safe='')}"
    return {
        "kind": "KafkaTopicConfig",
        "metadata": _meta(url, _crn(ctx, f"topic={topic}", f"config={entry.name}")),
        "cluster_id": ctx.cluster_id,
        "topic_name": topic,
        "name": entry.name,
        "value": None if entry.is_sensitive else entry.value,
        "is_default": bool(entry.is_default),
        "is_read_only": bool(entry.is_read_only),
        "is_sensitive": bool(entry.is_sensitive),
        "source": _source_name(entry.source),
        "synonyms": [
            {"name": s.name, "value": s.value, "source": _source_name(s.source)}
            for s in (entry.synonyms or {}).values()
        ],
    }


def _source_name(source: Any) -> str:
    """A config's source as Confluent names it (`DYNAMIC_TOPIC_CONFIG`): librdkafka hands some
    entries their source as a bare number, which an answer must not show as `"5"`."""
    from confluent_kafka.admin import ConfigSource

    if isinstance(source, ConfigSource):
        return source.name
    try:
        return ConfigSource(int(source)).name
    except (TypeError, ValueError):
        return "UNKNOWN_CONFIG"


async def _handle_list_configs(ctx: Context, request: Request, cluster: str, topic: str) -> Response:
    await _topic(ctx, cluster, topic)
    entries = await ctx.metadata.call(ctx.metadata.topic_config_entries, topic)
    url = f"{_base(ctx, request)}/topics/{quote(topic, safe='')}/configs"
    data = [_config_body(ctx, request, topic, e) for e in sorted(entries, key=lambda e: e.name)]
    return _v3({"kind": "KafkaTopicConfigList", "metadata": {"self": url, "next": None}, "data": data})


async def _handle_get_config(ctx: Context, request: Request, cluster: str, topic: str, name: str) -> Response:
    await _topic(ctx, cluster, topic)
    entries = await ctx.metadata.call(ctx.metadata.topic_config_entries, topic)
    for entry in entries:
        if entry.name == name:
            return _v3(_config_body(ctx, request, topic, entry))
    raise RestError(404, 404, f"Config {name} of topic {topic} cannot be found.")


_CONFIG_NAME = re.compile(r"[A-Za-z0-9._-]{1,255}")
_CONFIG_VALUE_MAX = 65536


def _config_change(name: Any, value: Any) -> tuple[str, str | None]:
    """One (name, value or None to reset) from a request, checked."""
    if not isinstance(name, str) or not _CONFIG_NAME.fullmatch(name):
        raise RestError(400, 400, f"Bad Request: {str(name)[:80]!r} is not a config name")
    if value is not None and (not isinstance(value, str | int | float | bool) or len(str(value)) > _CONFIG_VALUE_MAX):
        raise RestError(
            400, 400, f"Bad Request: the value of {name} must be a string of at most {_CONFIG_VALUE_MAX} characters"
        )
    if isinstance(value, bool):
        value = str(value).lower()
    return name, None if value is None else str(value)


async def _alter(
    ctx: Context, cluster: str, topic: str, changes: list[tuple[str, str | None]], validate_only: bool = False
) -> Response:
    await _topic(ctx, cluster, topic)
    await ctx.metadata.call(ctx.metadata.alter_topic_configs, topic, changes, validate_only)
    return empty_response()


async def _handle_put_config(ctx: Context, request: Request, cluster: str, topic: str, name: str) -> Response:
    body = await _body(ctx, request)
    if not isinstance(body, dict) or "value" not in body:
        raise RestError(422, 42206, 'Payload error. The body must be {"value": "..."}')
    return await _alter(ctx, cluster, topic, [_config_change(name, body["value"])])


async def _handle_delete_config(ctx: Context, request: Request, cluster: str, topic: str, name: str) -> Response:
    return await _alter(ctx, cluster, topic, [_config_change(name, None)])


async def _handle_alter_configs(ctx: Context, request: Request, cluster: str, topic: str) -> Response:
    body = await _body(ctx, request)
    if not isinstance(body, dict) or not isinstance(body.get("data"), list) or not body["data"]:
        raise RestError(422, 42206, 'Payload error. The body must be {"data": [{"name": ..., "value": ...}, ...]}')
    changes = []
    for item in body["data"]:
        if not isinstance(item, dict):
            raise RestError(400, 400, "Bad Request: each of data must be {name, value} or {name, operation}")
        operation = str(item.get("operation") or "SET").upper()
        if operation not in ("SET", "DELETE"):
            raise RestError(400, 400, f"Bad Request: operation must be SET or DELETE, got {operation[:20]!r}")
        if operation == "SET" and item.get("value") is None:
            raise RestError(400, 400, f"Bad Request: SET {item.get('name')!r} needs a value")
        changes.append(_config_change(item.get("name"), item.get("value") if operation == "SET" else None))
    return await _alter(ctx, cluster, topic, changes, bool(body.get("validate_only", False)))


# ---------------------------------------------------------------- consumer groups


def _groups(ctx: Context) -> list[Any]:
    try:
        result = ctx.metadata.admin.list_consumer_groups(request_timeout=10).result()
    except KafkaException as exc:
        raise kafka_error(exc, "cannot list consumer groups") from None
    return sorted(result.valid, key=lambda g: g.group_id)


def _describe(ctx: Context, group: str) -> Any:
    try:
        futures = ctx.metadata.admin.describe_consumer_groups([group], request_timeout=10)
        description = futures[group].result()
    except KafkaException as exc:
        raise kafka_error(exc, f"cannot describe consumer group {group}") from None
    state = getattr(description.state, "name", str(description.state))
    # A group the broker never heard of is DEAD on Kafka and EMPTY on Tansu: without
    # members and without committed offsets it does not exist for the API.
    if state in ("DEAD", "EMPTY", "UNKNOWN") and not description.members:
        committed = _committed(ctx, group)
        if not committed:
            raise RestError(404, 404, f"Consumer group {group} cannot be found.")
    return description


def _committed(ctx: Context, group: str) -> dict[tuple[str, int], int]:
    try:
        futures = ctx.metadata.admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=10
        )
        result = futures[group].result()
    except KafkaException as exc:
        raise kafka_error(exc, f"cannot list the offsets of consumer group {group}") from None
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions or [] if tp.offset >= 0}


def _lags(ctx: Context, group: str) -> list[dict[str, Any]]:
    from workbench.errors import KafkaError
    from workbench.kafka.offsets import end_offsets

    description = _describe(ctx, group)
    committed = _committed(ctx, group)
    if not committed:
        return []
    try:
        ends = end_offsets({"bootstrap.servers": ctx.settings.bootstrap_servers, **ctx.settings.admin}, list(committed))
    except KafkaError as exc:
        raise RestError(500, 50002, f"cannot find the end offsets of group {group}: {exc}") from None
    owners: dict[tuple[str, int], Any] = {}
    for member in description.members or []:
        for tp in getattr(member.assignment, "topic_partitions", None) or []:
            owners[(tp.topic, tp.partition)] = member
    rows = []
    for (topic, partition), offset in sorted(committed.items()):
        member = owners.get((topic, partition))
        end = ends[(topic, partition)]
        rows.append(
            {
                "topic_name": topic,
                "partition_id": partition,
                "current_offset": offset,
                "log_end_offset": end,
                "lag": max(0, end - offset),
                "consumer_id": member.member_id if member else "",
                "instance_id": getattr(member, "group_instance_id", None) if member else None,
                "client_id": member.client_id if member else "",
            }
        )
    return rows


def _group_body(ctx: Context, request: Request, group: Any, description: Any = None) -> dict[str, Any]:
    url = f"{_base(ctx, request)}/consumer-groups/{group.group_id}"
    state = getattr((description or group).state, "name", str((description or group).state))
    body: dict[str, Any] = {
        "kind": "KafkaConsumerGroup",
        "metadata": _meta(url, _crn(ctx, f"consumer-group={group.group_id}")),
        "cluster_id": ctx.cluster_id,
        "consumer_group_id": group.group_id,
        "is_simple": bool(getattr(group, "is_simple_consumer_group", False)),
        "partition_assignor": getattr(description, "partition_assignor", "") if description else "",
        "state": state,
        "type": getattr(getattr(group, "type", None), "name", "CLASSIC"),
        "is_mixed_consumer_group": False,
        "coordinator": {
            "related": f"{_base(ctx, request)}/brokers/{getattr(getattr(description, 'coordinator', None), 'id', -1)}"
        },
        "consumers": {"related": f"{url}/consumers"},
        "lag_summary": {"related": f"{url}/lag-summary"},
    }
    return body


async def _handle_list_groups(ctx: Context, request: Request, cluster: str) -> Response:
    check_cluster(ctx, cluster)
    groups = await ctx.metadata.call(_groups, ctx)
    url = f"{_base(ctx, request)}/consumer-groups"
    return _v3(
        {
            "kind": "KafkaConsumerGroupList",
            "metadata": {"self": url, "next": None},
            "data": [_group_body(ctx, request, g) for g in groups],
        }
    )


async def _handle_get_group(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    check_cluster(ctx, cluster)
    description = await ctx.metadata.call(_describe, ctx, group)
    return _v3(_group_body(ctx, request, description, description))


async def _handle_list_group_consumers(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    check_cluster(ctx, cluster)
    description = await ctx.metadata.call(_describe, ctx, group)
    url = f"{_base(ctx, request)}/consumer-groups/{group}/consumers"
    data = []
    for member in description.members or []:
        partitions = getattr(member.assignment, "topic_partitions", None) or []
        data.append(
            {
                "kind": "KafkaConsumer",
                "metadata": _meta(f"{url}/{member.member_id}"),
                "cluster_id": ctx.cluster_id,
                "consumer_group_id": group,
                "consumer_id": member.member_id,
                "instance_id": getattr(member, "group_instance_id", None),
                "client_id": member.client_id,
                "assignments": [{"topic_name": tp.topic, "partition_id": tp.partition} for tp in partitions],
            }
        )
    return _v3({"kind": "KafkaConsumerList", "metadata": {"self": url, "next": None}, "data": data})


async def _handle_list_lags(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    check_cluster(ctx, cluster)
    rows = await ctx.metadata.call(_lags, ctx, group)
    url = f"{_base(ctx, request)}/consumer-groups/{group}/lags"
    data = [
        {
            "kind": "KafkaConsumerLag",
            "metadata": _meta(f"{url}/{r['topic_name']}/partitions/{r['partition_id']}"),
            "cluster_id": ctx.cluster_id,
            "consumer_group_id": group,
            **r,
        }
        for r in rows
    ]
    return _v3({"kind": "KafkaConsumerLagList", "metadata": {"self": url, "next": None}, "data": data})


async def _handle_lag_summary(ctx: Context, request: Request, cluster: str, group: str) -> Response:
    check_cluster(ctx, cluster)
    rows = await ctx.metadata.call(_lags, ctx, group)
    url = f"{_base(ctx, request)}/consumer-groups/{group}/lag-summary"
    top = max(rows, key=lambda r: r["lag"], default=None)
    top_topic = quote(top["topic_name"], safe="") if top else ""
    return _v3(
        {
            "kind": "KafkaConsumerGroupLagSummary",
            "metadata": _meta(url),
            "cluster_id": ctx.cluster_id,
            "consumer_group_id": group,
            "max_lag_consumer_id": top["consumer_id"] if top else "",
            "max_lag_instance_id": top["instance_id"] if top else None,
            "max_lag_client_id": top["client_id"] if top else "",
            "max_lag_topic_name": top["topic_name"] if top else "",
            "max_lag_partition_id": top["partition_id"] if top else 0,
            "max_lag": top["lag"] if top else 0,
            "total_lag": sum(r["lag"] for r in rows),
            "max_lag_consumer": {
                "related": f"{_base(ctx, request)}/consumer-groups/{group}/consumers/"
                f"{top['consumer_id'] if top else ''}"
            },
            "max_lag_partition": {
                "related": f"{_base(ctx, request)}/topics/{top_topic}/partitions/{top['partition_id'] if top else 0}"
            },
        }
    )


_C = "/v3/clusters/{cluster}"

ROUTES = [
    Route("GET", "/v3/clusters", _handle_list_clusters),
    Route("GET", _C, _handle_get_cluster),
    Route("GET", f"{_C}/topics", _handle_list_topics),
    Route("POST", f"{_C}/topics", _handle_create_topic),
    Route("GET", f"{_C}/topics/{{topic}}", _handle_get_topic),
    Route("DELETE", f"{_C}/topics/{{topic}}", _handle_delete_topic),
    Route("GET", f"{_C}/topics/{{topic}}/partitions", _handle_list_partitions),
    Route("GET", f"{_C}/topics/{{topic}}/partitions/{{partition}}", _handle_get_partition),
    Route("GET", f"{_C}/topics/{{topic}}/configs", _handle_list_configs),
    Route("GET", f"{_C}/topics/{{topic}}/configs/{{name}}", _handle_get_config),
    Route("PUT", f"{_C}/topics/{{topic}}/configs/{{name}}", _handle_put_config),
    Route("DELETE", f"{_C}/topics/{{topic}}/configs/{{name}}", _handle_delete_config),
    Route("POST", f"{_C}/topics/{{topic}}/configs:alter", _handle_alter_configs),
    Route("GET", f"{_C}/consumer-groups", _handle_list_groups),
    Route("GET", f"{_C}/consumer-groups/{{group}}", _handle_get_group),
    Route("GET", f"{_C}/consumer-groups/{{group}}/consumers", _handle_list_group_consumers),
    Route("GET", f"{_C}/consumer-groups/{{group}}/lags", _handle_list_lags),
    Route("GET", f"{_C}/consumer-groups/{{group}}/lag-summary", _handle_lag_summary),
]
