"""`share_consume`: records/s of a share group against a consumer group, by members and processing time.

One point fills a fresh topic and reads it once with a fresh group of either kind (see
`workbench.topics.share_groups`). The topic is written one record per producer batch
unless `records_per_batch` says otherwise: a share group hands out whole batches, so the
producer's batching decides how finely its members can share (notebook 11 shows it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from workbench.bench._run import bench_topic
from workbench.errors import BenchError
from workbench.measure.contract import NOT_MEASURED, result_row
from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack
from workbench.topics.errors import TopicDesignError
from workbench.topics.share_groups import (
    KINDS,
    PROXY_ACKS,
    GroupRun,
    Kind,
    ReadPath,
    fill_for_sharing,
    order_breaks,
    run_group,
)

__all__ = ["records_for", "share_consume", "share_grid"]


def records_for(processing_ms: float, partitions: int, seconds: float) -> int:
    """Records that keep one consumer per partition busy for `seconds`: a run's size at each processing time."""
    return max(20, min(20_000, int(seconds * partitions * 1000 / max(processing_ms, 0.1))))


def _row(
    stack: Stack, run: GroupRun, params: dict[str, Any], resources: dict[str, float] | None = None
) -> dict[str, Any]:
    record_bytes = params.get("record_bytes")
    return result_row(
        stack,
        experiment="share_consume",
        params=params,
        records=run.unique,
        payload_bytes=run.unique * record_bytes if record_bytes else NOT_MEASURED,
        seconds=run.seconds,
        resources=resources,
        extra={
            "deliveries": len(run.deliveries),
            "duplicates": run.duplicates,
            "busy_members": run.busy_members,
            "first_record_s": run.first_record_s,
            "keys_out_of_order": order_breaks(run.deliveries),
            "max_delivery_count": max((d.delivery_count for d in run.deliveries), default=0),
            "complete": run.complete,
        },
    )


def _check(kind: str, members: int, processing_ms: float, records: int, topic_partitions: int) -> None:
    if kind not in KINDS:
        raise BenchError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    if not 1 <= members <= 64:
        raise BenchError(f"members must be between 1 and 64, got {members}")
    if not 0 <= processing_ms <= 10_000:
        raise BenchError(f"processing_ms must be between 0 and 10,000, got {processing_ms}")
    if not 1 <= records <= 1_000_000:
        raise BenchError(f"records must be between 1 and 1,000,000, got {records}")
    if not 1 <= topic_partitions <= 64:
        raise BenchError(f"topic_partitions must be between 1 and 64, got {topic_partitions}")


def share_consume(
    stack: Stack,
    *,
    kind: str = "share group",
    members: int = 8,
    processing_ms: float = 20.0,
    records: int = 2_000,
    topic_partitions: int = 4,
    records_per_batch: int = 1,
    record_bytes: int | None = None,
    path: str = "native",
    proxy_acks: str = "next_fetch",
    max_poll_records: int = 10,
    lock_ms: int = 30_000,
    topic_prefix: str = "bench-share",
) -> dict[str, Any]:
    """Fill a fresh topic, read it once with `members` members of a `kind` group; one row.

    `path="proxy"` reads a share group through share-consumer instances on the stack's REST
    proxy instead of librdkafka share consumers; `record_bytes` pads every value (and gives
    the row its MB/s). CPU is measured by process for the read (client, proxy, broker).
    `max_poll_records` is what a share member asks for a fetch, natively or through the
    proxy (the instance's `max.poll.records`): small shares a partition finely between
    members, large reads faster. `proxy_acks` is how a proxy member accepts an
    answer: `next_fetch` (with its next records request) or `call` (the acknowledgements
    call, one round trip more).

    Raises:
        BenchError: parameters out of range, or the broker has no share groups (one line).

    Usage: `sweep("share_consume", {"kind": ["share group", "consumer group"], "members": [1, 4, 16]})`.
    """
    _check(kind, members, processing_ms, records, topic_partitions)
    if path not in ("native", "proxy") or (path == "proxy" and kind != "share group"):
        raise BenchError(f"path must be 'native', or 'proxy' for a share group; got {path!r} for a {kind}")
    if path == "proxy" and not stack.proxy_urls:
        raise BenchError("path='proxy' needs a REST proxy, and this profile has none")
    if proxy_acks not in PROXY_ACKS:
        raise BenchError(f"proxy_acks must be one of {list(PROXY_ACKS)}, got {proxy_acks!r}")
    if not 1 <= max_poll_records <= 10_000:
        raise BenchError(f"max_poll_records must be between 1 and 10,000, got {max_poll_records}")
    if record_bytes is not None and not 1 <= record_bytes <= 1_000_000:
        raise BenchError(f"record_bytes must be between 1 and 1,000,000, got {record_bytes}")
    params = {
        "kind": kind,
        "members": members,
        "processing_ms": processing_ms,
        "records": records,
        "topic_partitions": topic_partitions,
        "records_per_batch": records_per_batch,
        "record_bytes": record_bytes,
        "path": path,
        "proxy_acks": proxy_acks if path == "proxy" else None,
        "max_poll_records": max_poll_records,
    }
    with bench_topic(stack, topic_partitions, topic_prefix) as topic:
        fill_for_sharing(stack, topic, records, records_per_batch, record_bytes)
        return _read(stack, topic, params, lock_ms)


def _read(stack: Stack, topic: str, params: dict[str, Any], lock_ms: int = 30_000) -> dict[str, Any]:
    """One fresh group of `params["kind"]` reads the filled `topic` to its end: the row."""
    kind: Kind = "share group" if params["kind"] == "share group" else "consumer group"
    path: ReadPath = "proxy" if params.get("path") == "proxy" else "native"
    try:
        with ResourceMonitor(stack.services) as monitor:
            run = run_group(
                stack,
                topic,
                kind=kind,
                members=params["members"],
                processing_ms=params["processing_ms"],
                records=params["records"],
                lock_ms=lock_ms,
                path=path,
                max_poll_records=int(params.get("max_poll_records") or 10),
                proxy_acks="call" if params.get("proxy_acks") == "call" else "next_fetch",
            )
    except TopicDesignError as exc:
        raise BenchError(str(exc)) from None
    return _row(stack, run, params, monitor.columns())


def share_grid(
    stack: Stack,
    *,
    members: Sequence[int],
    processing_ms: Sequence[float],
    partitions: int = 4,
    seconds: float = 8.0,
    kinds: Sequence[Kind] = KINDS,
) -> pd.DataFrame:
    """Both kinds at every (members, processing_ms): `share_consume` rows, one topic per processing time.

    Each processing time gets one topic of `records_for(processing_ms, partitions, seconds)`
    records, so a consumer group with a member per partition would need about `seconds` to
    read it; every group reads it from the start.
    """
    rows = []
    for ms in processing_ms:
        records = records_for(ms, partitions, seconds)
        with bench_topic(stack, partitions, "bench-share") as topic:
            fill_for_sharing(stack, topic, records)
            for count in members:
                for kind in kinds:
                    params = {
                        "kind": kind,
                        "members": count,
                        "processing_ms": ms,
                        "records": records,
                        "topic_partitions": partitions,
                        "records_per_batch": 1,
                        "record_bytes": None,
                        "path": "native",
                    }
                    rows.append(_read(stack, topic, params))
    return pd.DataFrame(rows)
