"""The whole path across data centres: REST proxy on a, MirrorMaker, REST proxy and Spark on b.

An application in data centre A posts records to its REST proxy; MirrorMaker copies them to
B; there an application reads them through B's own REST proxy, and a Spark job reads the
remote topic with the profile's Kafka connector. The run posts numbered records to a's proxy
(each answered with its offset), waits until b holds them, then reads the remote topic once
through b's proxy (a v2 consumer group) and once with Spark (a batch read of everything
there), and counts each record on each path: every acknowledged record once, in the order
its partition had on a. The topic and its copy stamp their append times
(`load.APPEND_TIME`), so the row's latency is the copy's lag, as `replication_lag` reads it.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.errors import BenchError
from workbench.replication.lag import check_ranges
from workbench.replication.load import flow_row, joined_appends, pick_up, settle, stamped_topics
from workbench.replication.numbered import SEQ_DIGITS, numbered, seq_of

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "PATHS",
    "PATH_DEFAULTS",
    "WholePathRun",
    "path_counts",
    "whole_path",
    "whole_path_run",
    "whole_path_unavailable",
]

#: The run's defaults: records posted to a's proxy in batches.
PATH_DEFAULTS: dict[str, Any] = {"records": 5_000, "partitions": 3, "batch": 500, "spark": True}
#: The ways the copies are read on b, by the name the row's columns carry.
PATHS = ("proxy_b", "spark_b")
#: Seconds b's proxy consumer waits for its group's first records, and reads at most.
_READ_LIMIT_S = 120.0


@dataclass(frozen=True)
class WholePathRun:
    """A run's contract row, and each record read on b: `path` (`proxy_b` or `spark_b`),
    `partition`, `offset` (on b) and `seq`."""

    row: dict[str, Any]
    reads: pd.DataFrame


def whole_path_run(
    stack: Stack,
    *,
    records: int = PATH_DEFAULTS["records"],
    partitions: int = PATH_DEFAULTS["partitions"],
    batch: int = PATH_DEFAULTS["batch"],
    spark: bool = PATH_DEFAULTS["spark"],
    record_bytes: int = 100,
    topic_prefix: str = "wb-path",
) -> WholePathRun:
    """Post `records` to a's REST proxy in calls of `batch`; read their copies on b through
    b's proxy and (`spark`) with Spark; count them on each path.

    Raises:
        BenchError: a parameter out of range, a proxy that refused records, or the copies
            not all on b within `load.SETTLE_LIMIT_S`.
        StackError: no REST proxy for b (`replication.target_proxy`, or a cluster profile's
            `replication.target_proxy_url`), or no Java for Spark.
    """
    check_ranges(
        ("records", records, 1, 1_000_000),
        ("partitions", partitions, 1, 64),
        ("batch", batch, 1, 10_000),
        ("record_bytes", record_bytes, SEQ_DIGITS, 1_000_000),
        whole=("records", "partitions", "batch", "record_bytes"),
    )
    b_proxy = stack.peer_proxy_url  # before anything is made: a stack without one says so first
    with stamped_topics(stack, topic_prefix, partitions) as (source, target):
        pickup_s = pick_up(stack, source, target)
        began = time.monotonic()
        acked = _post(stack, source, records, batch, record_bytes)
        posted_s = time.monotonic() - began
        if math.isnan(settle(stack.peer_config("admin"), target, records + 1)):  # and the pick-up marker
            raise BenchError(f"{target} on b did not receive the {records:,} records within the settle limit")
        reads = [_read_through_proxy(stack, b_proxy, target, records)]
        if spark:
            reads.append(_read_with_spark(stack, target))
        appends = joined_appends(stack.kafka_config("consumer"), source, stack.peer_config("consumer"), target)
    read = pd.concat(reads, ignore_index=True)
    params = {"records": records, "partitions": partitions, "batch": batch, "spark": spark}
    row = flow_row(
        stack,
        "whole_path",
        params,
        appends,
        seconds=posted_s,
        record_bytes=record_bytes,
        latency_of="append on a (posted to a's proxy) → append on b",
        extra={
            "posted_msg_s": records / posted_s if posted_s > 0 else float("nan"),
            "acked": len(acked),
            "pickup_s": pickup_s,
            **path_counts(read, acked, spark),
        },
    )
    return WholePathRun(row, read)


def whole_path(stack: Stack, *, topic_prefix: str = "wb-path", **params: Any) -> dict[str, Any]:
    """One run's row (the registered experiment `whole_path`). See `whole_path_run`."""
    return whole_path_run(stack, topic_prefix=topic_prefix, **params).row


def whole_path_unavailable(stack: Stack) -> str | None:
    """Why the whole path cannot run on this stack (one line: no REST proxy for b), or None."""
    from workbench.errors import StackError

    try:
        _ = stack.peer_proxy_url
    except StackError as missing:
        return str(missing)
    return None


def path_counts(reads: pd.DataFrame, acked: Iterable[int], spark: bool = True) -> dict[str, Any]:
    """Per path of `PATHS`: records read (`<path>_read`), acknowledged records it lacks
    (`<path>_missing`), extra reads (`<path>_twice`), and whether each partition's records
    came in the order they were posted (`<path>_in_order`); NaN for a path not run."""
    wanted = set(acked)
    counts: dict[str, Any] = {}
    for path in PATHS:
        if path == "spark_b" and not spark:
            counts.update({f"{path}_{k}": float("nan") for k in ("read", "missing", "twice", "in_order")})
            continue
        got = reads[reads["path"] == path]
        in_order = all(
            part.sort_values("offset")["seq"].is_monotonic_increasing for _, part in got.groupby("partition")
        )
        counts.update(
            {
                f"{path}_read": len(got),
                f"{path}_missing": len(wanted - set(got["seq"])),
                f"{path}_twice": int(got["seq"].duplicated().sum()),
                f"{path}_in_order": bool(in_order),
            }
        )
    return counts


def _post(stack: Stack, topic: str, records: int, batch: int, record_bytes: int) -> set[int]:
    """Post numbered records to a's proxy, `batch` a call; the sequence numbers it acknowledged."""
    from workbench.proxy import ProxyClient

    padding = b"." * (record_bytes - SEQ_DIGITS)
    acked: set[int] = set()
    with ProxyClient.for_stack(stack) as proxy:
        for first in range(0, records, batch):
            seqs = range(first, min(first + batch, records))
            result = proxy.produce(topic, [numbered(seq, padding) for seq in seqs])
            if result.failed:
                raise BenchError(f"a's REST proxy refused {result.failed} records: {result.errors[0]}")
            acked.update(seqs)
    return acked


def _read_through_proxy(stack: Stack, url: str, topic: str, records: int) -> pd.DataFrame:
    """Every record of `topic` read once through b's proxy, by a consumer group of its own."""
    from workbench.proxy import ProxyClient

    rows: list[tuple[int, int, int]] = []
    deadline = time.monotonic() + _READ_LIMIT_S
    auth = stack.profile.proxy.auth.credentials() if stack.profile.proxy.auth is not None else None
    with (
        ProxyClient(url, auth=auth) as proxy,
        proxy.consumer(f"wb-path-{uuid.uuid4().hex[:8]}", topics=[topic]) as consumer,
    ):
        while len(rows) < records + 1 and time.monotonic() < deadline:
            rows += [(r.partition, r.offset, seq_of(r.value)) for r in consumer.poll(timeout_ms=1_000)]
    return _frame("proxy_b", rows)


def _read_with_spark(stack: Stack, topic: str) -> pd.DataFrame:
    """Every record of `topic` on b, in one batch read by the profile's Kafka connector (a
    session this run had to start is stopped again, its JVM with it)."""
    from pyspark.sql import SparkSession

    from workbench.streaming import kafka_source, spark_session, stop_spark, to_pandas

    before = SparkSession.getActiveSession()
    spark = spark_session(stack.profile)
    try:
        options: dict[str, Any] = {"kafka.bootstrap.servers": stack.peer_bootstrap_servers}
        frame = kafka_source(spark, stack, streaming=False, subscribe=topic, startingOffsets="earliest", **options)
        table = to_pandas(frame.select("partition", "offset", "value"))
    finally:
        if before is None:  # a session this run started ends with it, JVM and all
            stop_spark(spark)
    rows = [(int(p), int(o), seq_of(bytes(v))) for p, o, v in table.itertuples(index=False)]
    return _frame("spark_b", rows)


def _frame(path: str, rows: list[tuple[int, int, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["partition", "offset", "seq"]).assign(path=path)
    return frame[frame["seq"] >= 0][["path", "partition", "offset", "seq"]]
