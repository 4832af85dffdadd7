"""Replication lag: the time from a record's append on the source to its append on the target.

Both appends are stamped by the brokers themselves: the source topic is made with
`message.timestamp.type=LogAppendTime`, so each record carries cluster a's append time, and
the remote topic is made on b beforehand with the same setting, so b stamps its own append
time over it (MirrorMaker keeps the target's topic settings it does not sync, and
`message.timestamp.type` is one it never syncs). Each record's value begins with its
sequence number, so a record is found on both sides however the offsets differ. The load
is offered open-loop (`measure.schedule`): records are due at fixed times whatever the
clusters do, so a slow flow shows as lag, not as a slower producer.

Before the measured records, one marker record waits for MirrorMaker to find the new topic
(`refresh.topics.interval.seconds`): the time that takes is `pickup_s`, and the measured
lag is that of a flow already running.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench import kafka
from workbench.errors import BenchError
from workbench.measure.schedule import Phase, RateSchedule, run_open_loop
from workbench.numbers import format_number
from workbench.replication.naming import remote_topic
from workbench.replication.numbered import SEQ_DIGITS, numbered, seq_of
from workbench.replication.preflight import check_flow

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "APPEND_TIME",
    "LAG_DEFAULTS",
    "PICKUP_LIMIT_S",
    "ReplicationLagRun",
    "SETTLE_LIMIT_S",
    "appends",
    "check_ranges",
    "copy_counts",
    "flow_row",
    "join_appends",
    "joined_appends",
    "offer",
    "pick_up",
    "replication_lag",
    "replication_lag_run",
    "settle",
    "stamped_topics",
]

#: The run's defaults: a notebook-sized load.
LAG_DEFAULTS: dict[str, Any] = {"rate": 1_000.0, "seconds": 10.0, "partitions": 3, "record_bytes": 100}
#: Seconds a run waits for MirrorMaker to find its topic, and for the last record to land on b.
PICKUP_LIMIT_S = 60.0
SETTLE_LIMIT_S = 60.0
#: Topic settings that make a broker stamp each record with its own append time.
APPEND_TIME = {"message.timestamp.type": "LogAppendTime"}
_JOINED_NAMES = {
    "partition_a": "partition",
    "offset_a": "a_offset",
    "offset_b": "b_offset",
    "ms_a": "a_ms",
    "ms_b": "b_ms",
}


@dataclass(frozen=True)
class ReplicationLagRun:
    """A run's contract row, and each record's appends: `seq`, `partition`, `a_offset`,
    `b_offset`, `a_ms`, `b_ms`, `lag_ms` (NaN where the record never reached b)."""

    row: dict[str, Any]
    records: pd.DataFrame


def replication_lag_run(
    stack: Stack,
    *,
    rate: float = LAG_DEFAULTS["rate"],
    seconds: float = LAG_DEFAULTS["seconds"],
    partitions: int = LAG_DEFAULTS["partitions"],
    record_bytes: int = LAG_DEFAULTS["record_bytes"],
    topic_prefix: str = "wb-geo",
) -> ReplicationLagRun:
    """Offer `rate` records a second for `seconds` on cluster a and measure each one's lag to b.

    Raises:
        BenchError: a parameter out of range, or MirrorMaker did not pick the topic up
            within `PICKUP_LIMIT_S` (the message says where its workers' logs are).
        StackError: the profile has no second cluster.
    """
    _check(rate, seconds, partitions, record_bytes)
    with stamped_topics(stack, topic_prefix, partitions) as (source, target):
        pickup_s = pick_up(stack, source, target)
        schedule = RateSchedule([Phase("offered", seconds, rate)])
        run = offer(stack, source, schedule, record_bytes)
        settle_s = settle(stack.peer_config("admin"), target, run.sent + 1)
        records = joined_appends(stack.kafka_config("consumer"), source, stack.peer_config("consumer"), target)
    params = {"rate": rate, "seconds": seconds, "partitions": partitions, "record_bytes": record_bytes}
    return ReplicationLagRun(_row(stack, params, records, run.slips, pickup_s, settle_s), records)


def replication_lag(stack: Stack, *, topic_prefix: str = "wb-geo", **params: Any) -> dict[str, Any]:
    """One replication-lag run's row (the registered experiment `replication_lag`). See `replication_lag_run`."""
    return replication_lag_run(stack, topic_prefix=topic_prefix, **params).row


def _check(rate: float, seconds: float, partitions: int, record_bytes: int) -> None:
    if not 1 <= rate <= 50_000:
        raise BenchError(f"rate must be 1 to 50,000 records a second, got {rate:g}")
    if not 0.5 <= seconds <= 600:
        raise BenchError(f"seconds must be 0.5 to 600, got {seconds:g}")
    if not 1 <= partitions <= 64:
        raise BenchError(f"partitions must be 1 to 64, got {partitions}")
    if not SEQ_DIGITS <= record_bytes <= 1_000_000:
        raise BenchError(f"record_bytes must be {SEQ_DIGITS} to 1,000,000, got {record_bytes}")


def check_ranges(*checks: tuple[str, float, float, float], whole: Collection[str] = ()) -> None:
    """Each `(name, value, low, high)` a number from low to high (NaN fails too), and a whole
    number when its name is in `whole` (a count), else a one-line `BenchError`: a parameter
    from `--param` is whatever YAML made of it, a text or 1.5 partitions included."""
    for name, value, low, high in checks:
        span = f"{format_number(low)} to {format_number(high)}"  # 1,000,000, not 1e+06
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BenchError(f"{name} must be a number from {span}, got {value!r}")
        if not low <= value <= high:
            raise BenchError(f"{name} must be {span}, got {value}")
        if name in whole and not float(value).is_integer():
            raise BenchError(f"{name} must be a whole number, got {value}")


@contextmanager
def stamped_topics(stack: Stack, prefix: str, partitions: int) -> Iterator[tuple[str, str]]:
    """A fresh topic on a and its copy's topic on b, made ahead of MirrorMaker so that both
    brokers stamp each record with its append time (`APPEND_TIME`); both deleted at the end."""
    source = f"{prefix}-{uuid.uuid4().hex[:8]}"
    target = remote_topic(stack.profile, source)
    check_flow(stack, source)
    # The copy's topic first: once the source exists, MirrorMaker may make the copy's topic
    # itself (CI saw "already exists"), and with the create time (its default config filter
    # does not copy message.timestamp.type).
    stack.create_topics({target: partitions}, config=APPEND_TIME, peer=True)
    try:
        stack.create_topics({source: partitions}, config=APPEND_TIME)
        try:
            yield source, target
        finally:
            stack.delete_topics([source])
    finally:
        stack.delete_topics([target], peer=True)


def pick_up(stack: Stack, source: str, target: str, *, from_peer: bool = False) -> float:
    """Write one marker record (sequence -1) and wait until it is on b: MirrorMaker found the
    topic. `from_peer`: the marker goes on b and is awaited on a (a flow b->a)."""
    began = time.monotonic()
    origin, copy = (stack.peer_config, stack.kafka_config) if from_peer else (stack.kafka_config, stack.peer_config)
    kafka.produce(origin("producer"), source, [(None, b"-" * SEQ_DIGITS)], partition=0)
    deadline = began + PICKUP_LIMIT_S
    while kafka.total_records(copy("admin"), target) < 1:
        if time.monotonic() > deadline:
            raise BenchError(
                f"MirrorMaker did not replicate {source} to {target} within {PICKUP_LIMIT_S:.0f} s; "
                "see `workbench status` and the mirror-N logs it names"
            )
        time.sleep(0.1)
    return time.monotonic() - began


def offer(
    stack: Stack,
    topic: str,
    schedule: RateSchedule,
    record_bytes: int,
    *,
    on_delivery: Callable[[Any, Any], None] | None = None,
    producer_conf: Mapping[str, Any] | None = None,
    peer: bool = False,
) -> Any:
    """Numbered records offered open-loop on `schedule` (acks=all); the run, with its slips.
    `on_delivery` hears each record's delivery report; `producer_conf` adds to the producer's;
    `peer` offers them on the second cluster.

    Raises:
        BenchError: records not all acknowledged, or reported failed, within 30 s of the schedule's end.
    """
    conf = stack.peer_config("producer") if peer else stack.kafka_config("producer")
    producer = kafka.producer(conf, {"linger.ms": 5, "acks": "all", **(producer_conf or {})})
    padding = b"." * (record_bytes - SEQ_DIGITS)

    def send(first: int, upto: int) -> None:
        for seq in range(first, upto):
            producer.produce(topic, value=numbered(seq, padding), on_delivery=on_delivery)
        producer.poll(0)

    run = run_open_loop(schedule, send, started=time.perf_counter())
    if producer.flush(30) != 0:
        raise BenchError(f"records offered to {topic} were not all acknowledged within 30 s")
    return run


def settle(b_conf: dict[str, Any], target: str, count: int, limit_s: float = SETTLE_LIMIT_S) -> float:
    """Seconds from the end of the offered load until b holds `count` records (NaN: not within `limit_s`)."""
    began = time.monotonic()
    while kafka.total_records(b_conf, target) < count:
        if time.monotonic() - began > limit_s:
            return float("nan")
        time.sleep(0.05)
    return time.monotonic() - began


def joined_appends(a_conf: dict[str, Any], source: str, b_conf: dict[str, Any], target: str) -> pd.DataFrame:
    """Each measured record's appends on a and on b, joined by its sequence number."""
    return join_appends(appends(a_conf, source), appends(b_conf, target))


def join_appends(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """`appends` of a and of b joined by sequence number: one row per record on a, with
    `lag_ms` (NaN where b lacks it) and `copies`, how many times b holds it."""
    joined = a.merge(b, on="seq", how="left", suffixes=("_a", "_b")).rename(columns=_JOINED_NAMES)
    joined["lag_ms"] = joined["b_ms"] - joined["a_ms"]
    joined["copies"] = joined["seq"].map(b["seq"].value_counts()).fillna(0).astype(int)
    return joined.drop_duplicates("seq").drop(columns=["partition_b"]).reset_index(drop=True)


def appends(conf: dict[str, Any], topic: str) -> pd.DataFrame:
    """Every numbered record of `topic` (the pick-up marker left out): `seq`, `partition`,
    `offset` and `ms`, the record's timestamp (its append time, on a stamped topic)."""
    rows = [(seq_of(r.value), r.partition, r.offset, r.timestamp_ms) for r in kafka.read_records(conf, topic)]
    frame = pd.DataFrame(rows, columns=["seq", "partition", "offset", "ms"])
    return frame[frame["seq"] >= 0].reset_index(drop=True)


def flow_row(
    stack: Stack,
    experiment: str,
    params: dict[str, Any],
    records: pd.DataFrame,
    *,
    seconds: float,
    record_bytes: int,
    latency_of: str,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """The contract row of a run whose records were offered on a and found on b (`joined_appends`):
    each record's lag as the latency, what b holds of them (`copy_counts`), then `extra`."""
    from workbench.measure.contract import result_row

    arrived = records.dropna(subset=["b_ms"])
    return result_row(
        stack,
        experiment=experiment,
        params=params,
        records=len(records),
        payload_bytes=len(records) * record_bytes,
        seconds=seconds,
        latencies=arrived["lag_ms"].to_numpy(dtype=float) / 1000.0,
        latency_of=latency_of,
        extra={**copy_counts(records), **extra},
    )


def copy_counts(records: pd.DataFrame) -> dict[str, int]:
    """Of the records `joined_appends` found on a: how many b holds, how many it lacks, and
    how many extra copies it holds."""
    replicated = int(records["b_ms"].notna().sum())
    return {
        "replicated": replicated,
        "missing": len(records) - replicated,
        "duplicates": int((records["copies"] - 1).clip(lower=0).sum()),
    }


def _row(
    stack: Stack,
    params: dict[str, Any],
    records: pd.DataFrame,
    slips: int,
    pickup_s: float,
    settle_s: float,
) -> dict[str, Any]:
    arrived = records.dropna(subset=["b_ms"])
    lags = arrived["lag_ms"].to_numpy(dtype=float) / 1000.0
    if len(arrived) and float(np.abs(lags).max()) == 0.0:
        raise BenchError(
            "every record has the same timestamp on both clusters: the remote topic keeps the source's "
            "(message.timestamp.type was synced to it), so the lag cannot be read"
        )
    return flow_row(
        stack,
        "replication_lag",
        params,
        records,
        seconds=float(params["seconds"]),
        record_bytes=int(params["record_bytes"]),
        latency_of="append on a → append on b",
        extra={
            "offset_shift_max": int((arrived["b_offset"] - arrived["a_offset"]).abs().max()) if len(arrived) else 0,
            "pickup_s": pickup_s,
            "settle_s": settle_s,
            "slips": slips,
            "mirror_tasks": int(stack.profile.replication.properties.get("tasks.max", 1)),
        },
    )
