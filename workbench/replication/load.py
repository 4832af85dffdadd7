"""The open-loop load every flow run stands on: topics, pick-up, records offered, a disruption in it.

Both appends are stamped by the brokers themselves: the source topic is made with
`message.timestamp.type=LogAppendTime`, so each record carries cluster a's append time, and
the remote topic is made on b beforehand with the same setting, so b stamps its own append
time over it (MirrorMaker keeps the target's topic settings it does not sync, and
`message.timestamp.type` is one it never syncs). Each record's value begins with its
sequence number, so a record is found on both sides however the offsets differ. The load
is offered open-loop (`measure.schedule`): records are due at fixed times whatever the
clusters do, so a slow flow shows as lag, not as a slower producer.

Before the measured records, one marker record waits for MirrorMaker to find the new topic
(`refresh.topics.interval.seconds`): the time that takes is `pickup_s`, and what is
measured is a flow already running.

`under_load` is the skeleton `replication_lag`, `cut_link`, `worker_kill` and `disaster`
share: the topics, the pick-up, a `Disruption` started, the load offered across it, and the
disruption undone on the way out whatever happened. Each experiment says only what is its
own: what it does to the flow, what it waits for and counts, and its row.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from workbench import kafka
from workbench.errors import BenchError
from workbench.measure.schedule import OpenLoopRun, Phase, RateSchedule, run_open_loop
from workbench.replication.naming import remote_topic
from workbench.replication.numbered import SEQ_DIGITS, numbered, seq_of
from workbench.replication.preflight import check_flow

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "APPEND_TIME",
    "Disruption",
    "Load",
    "PICKUP_LIMIT_S",
    "SETTLE_LIMIT_S",
    "appends",
    "copy_counts",
    "flow_row",
    "join_appends",
    "joined_appends",
    "offer",
    "pick_up",
    "settle",
    "stamped_topics",
    "under_load",
]

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


class Disruption(Protocol):
    """What a run does to the flow under its load (`cut_link`'s cut, `worker_kill.TimedKill`): a
    thread started once MirrorMaker has picked the topic up, that acts at its own moment in the
    load; `end` undoes it whatever happened, and does nothing more when called again."""

    def start(self) -> None: ...

    def join(self) -> None: ...

    def end(self) -> None: ...


class _Undisturbed:
    """The load alone (`replication_lag`): nothing to start, wait for or undo."""

    def start(self) -> None:
        pass

    def join(self) -> None:
        pass

    def end(self) -> None:
        pass


@dataclass(frozen=True)
class Load:
    """What `under_load` offered: the stack, the topic on a and its copy's on b, the load's
    length and record size, MirrorMaker's pick-up time, and the open-loop run (sent, slips)."""

    stack: Stack
    source: str
    target: str
    seconds: float
    record_bytes: int
    pickup_s: float
    run: OpenLoopRun

    def settle(self, limit_s: float = SETTLE_LIMIT_S) -> float:
        """Seconds until b holds every offered record and the pick-up marker (NaN: not within `limit_s`)."""
        return settle(self.stack.peer_config("admin"), self.target, self.run.sent + 1, limit_s)

    def records(self) -> pd.DataFrame:
        """Each offered record's appends on a and on b, as now (`joined_appends`)."""
        stack = self.stack
        return joined_appends(stack.kafka_config("consumer"), self.source, stack.peer_config("consumer"), self.target)

    def row(
        self, experiment: str, params: dict[str, Any], records: pd.DataFrame, *, latency_of: str, extra: dict[str, Any]
    ) -> dict[str, Any]:
        """The run's contract row (`flow_row`) over the load's seconds and record size."""
        return flow_row(
            self.stack,
            experiment,
            params,
            records,
            seconds=float(self.seconds),
            record_bytes=self.record_bytes,
            latency_of=latency_of,
            extra=extra,
        )


@contextmanager
def under_load(
    stack: Stack,
    *,
    topic_prefix: str,
    partitions: int,
    rate: float,
    seconds: float,
    record_bytes: int,
    disruption: Disruption | None = None,
    on_delivery: Callable[[Any, Any], None] | None = None,
    producer_conf: Mapping[str, Any] | None = None,
) -> Iterator[Load]:
    """A fresh topic on a and its copy's on b (`stamped_topics`), picked up by MirrorMaker;
    then `disruption` started, `rate` numbered records a second offered for `seconds` (`offer`,
    with `on_delivery` and `producer_conf`) and the disruption's thread waited for. The block
    waits for and counts what it measures; `disruption.end()` runs on the way out, before the
    topics are deleted, whatever happened (a block may end it sooner: `disaster` does).

    Usage: `with under_load(stack, topic_prefix="wb-geo", partitions=3, rate=1e3, seconds=10,
    record_bytes=100) as load: records = load.records()`.

    Raises:
        BenchError: MirrorMaker did not pick the topic up (`pick_up`), or the records were not
            all acknowledged (`offer`).
    """
    steps = disruption if disruption is not None else _Undisturbed()
    with stamped_topics(stack, topic_prefix, partitions) as (source, target):
        try:
            pickup_s = pick_up(stack, source, target)
            steps.start()
            schedule = RateSchedule([Phase("offered", seconds, rate)])
            run = offer(stack, source, schedule, record_bytes, on_delivery=on_delivery, producer_conf=producer_conf)
            steps.join()
            yield Load(stack, source, target, seconds, record_bytes, pickup_s, run)
        finally:
            steps.end()


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
) -> OpenLoopRun:
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
