"""API v2 metadata: `/`, `/brokers`, `/topics`, partitions and partition offsets.

An unknown topic is 404 / 40401 (the reference's recommendation; Confluent says 40403
for some of these, and clients accept either), an unknown partition 404 / 40402, a
partition that is not an integer 404 / 404. Partition end offsets are the true log
ends (`workbench.kafka.end_offsets`), since Tansu's ListOffsets(latest) is off by up
to a batch.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka.admin import PartitionMetadata
from starlette.requests import Request
from starlette.responses import Response

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.restproxy.context import Context, int_param, json_response
from workbench.restproxy.errors import PARTITION_NOT_FOUND
from workbench.restproxy.formats import check_accept

__all__ = ["ROUTES", "partition_body"]


def partition_body(partition: PartitionMetadata) -> dict[str, Any]:
    """Upstream's partition object: leader and replicas with their in-sync flag."""
    isrs = set(partition.isrs)
    return {
        "partition": partition.id,
        "leader": partition.leader,
        "replicas": [
            {"broker": broker, "leader": broker == partition.leader, "in_sync": broker in isrs}
            for broker in partition.replicas
        ],
    }


async def _handle_root(ctx: Context, request: Request) -> Response:
    return json_response({})


async def _handle_brokers(ctx: Context, request: Request) -> Response:
    check_accept(request.headers.get("accept"))
    metadata = await ctx.metadata.call(ctx.metadata.cluster)
    return json_response({"brokers": sorted(metadata.brokers)})


async def _handle_list_topics(ctx: Context, request: Request) -> Response:
    check_accept(request.headers.get("accept"))
    metadata = await ctx.metadata.call(ctx.metadata.cluster)
    return json_response(sorted(t for t in metadata.topics if not t.startswith("__")))


async def _handle_get_topic(ctx: Context, request: Request, topic: str) -> Response:
    check_accept(request.headers.get("accept"))
    metadata = await ctx.metadata.call(ctx.metadata.topic, topic)
    configs = await ctx.metadata.call(ctx.metadata.topic_configs, topic)
    partitions = [partition_body(p) for p in sorted(metadata.partitions.values(), key=lambda p: p.id)]
    return json_response({"name": topic, "configs": configs, "partitions": partitions})


async def _handle_list_partitions(ctx: Context, request: Request, topic: str) -> Response:
    check_accept(request.headers.get("accept"))
    metadata = await ctx.metadata.call(ctx.metadata.topic, topic)
    return json_response([partition_body(p) for p in sorted(metadata.partitions.values(), key=lambda p: p.id)])


async def _partition(ctx: Context, topic: str, partition: str) -> PartitionMetadata:
    number = int_param(partition, "partition")
    metadata = await ctx.metadata.call(ctx.metadata.topic, topic)
    if number not in metadata.partitions:
        raise RestError(404, PARTITION_NOT_FOUND, f"Partition {number} of topic {topic} not found.")
    return metadata.partitions[number]


async def _handle_get_partition(ctx: Context, request: Request, topic: str, partition: str) -> Response:
    check_accept(request.headers.get("accept"))
    return json_response(partition_body(await _partition(ctx, topic, partition)))


async def _handle_partition_offsets(ctx: Context, request: Request, topic: str, partition: str) -> Response:
    check_accept(request.headers.get("accept"))
    found = await _partition(ctx, topic, partition)
    beginning, end = await ctx.metadata.call(_offsets, ctx, topic, found.id)
    return json_response({"beginning_offset": beginning, "end_offset": end})


def _offsets(ctx: Context, topic: str, partition: int) -> tuple[int, int]:
    from workbench.errors import KafkaError
    from workbench.kafka.offsets import end_offsets, reported_offsets

    conf = {"bootstrap.servers": ctx.settings.bootstrap_servers, **ctx.settings.admin}
    try:
        end = end_offsets(conf, [(topic, partition)])[(topic, partition)]
        beginning = reported_offsets(conf, [(topic, partition)], "earliest")[(topic, partition)]
    except KafkaError as exc:
        raise RestError(500, 50002, f"cannot read the offsets of {topic}[{partition}]: {exc}") from None
    return beginning, end


ROUTES = [
    Route("GET", "/", _handle_root),
    Route("POST", "/", _handle_root),
    Route("GET", "/brokers", _handle_brokers),
    Route("GET", "/topics", _handle_list_topics),
    Route("GET", "/topics/{topic}", _handle_get_topic),
    Route("GET", "/topics/{topic}/partitions", _handle_list_partitions),
    Route("GET", "/topics/{topic}/partitions/{partition}", _handle_get_partition),
    Route("GET", "/topics/{topic}/partitions/{partition}/offsets", _handle_partition_offsets),
]
