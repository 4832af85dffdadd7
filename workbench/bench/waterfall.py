"""Where a record's time goes: per-hop latency from the HTTP client (or a native producer) to the reader.

Records are sent on an open-loop schedule (`OpenLoopSchedule`) into a topic whose records
carry the broker's log-append time, and every record is stamped on its way:

- at the client: when it was due and when it was sent; through the proxy, when the HTTP
  answer was read;
- in the proxy, when the request asks for tracing (`Workbench-Trace: true`, see
  docs/rest-proxy.md): received, handed to librdkafka, delivery report;
- by the broker: the log-append time (whole milliseconds);
- natively, the delivery report as the producer's callback sees it;
- at the reader: a native consumer's read, a REST consumer instance's answer, or a Spark
  micro-batch's planning, its start in the sink and the rows written.

The schedule stamp (sequence number and due time) travels in the first 16 bytes of the
value, which is the workbench's own payload; the proxy's stamps travel in its answer (and
in record headers it adds only when tracing). `workbench.measure.hops` turns the stamps
into hops; the row carries each hop's p50/p95/p99/mean beside the end-to-end figures, open
loop (from the due time) and closed loop (from the actual send) from the same records.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from confluent_kafka import KafkaException, Message
from confluent_kafka.admin import ConfigResource

from workbench import kafka
from workbench.bench._run import TOPIC_PREFIX, bench_producer, bench_topic, result_row
from workbench.bench.waterfall_readers import Reader, ReadJob, drain, open_reader
from workbench.bench.waterfall_stamps import STAMP, Stamps, stamp
from workbench.errors import BenchError
from workbench.kafka.producing import Outgoing, enqueue
from workbench.measure.hops import (
    ACK_PATH,
    READ_PATH,
    STAMPS,
    clock_crossings,
    disordered,
    hop_columns,
    hop_durations,
    present_path,
)
from workbench.measure.latency import WARM_UP_S, after_warm_up, latency_summary, schedule_slips
from workbench.measure.resources import ResourceMonitor
from workbench.measure.schedule import OpenLoopSchedule
from workbench.proxy import ProxyClient
from workbench.stack import Stack

__all__ = ["PATHS", "READERS", "Waterfall", "latency_waterfall", "waterfall_run"]

#: How records are written: one native librdkafka producer, or REST produce calls through the proxy.
PATHS = ("native", "proxy")
#: Who reads them: a native consumer, a REST consumer instance, or a Spark micro-batch query.
READERS = ("native", "proxy", "spark")

#: The topic setting that makes the broker stamp each record with its append time.
_LOG_APPEND_TIME = {"message.timestamp.type": "LogAppendTime"}


@dataclass
class Waterfall:
    """One run: its contract row, and per record its stamps (ms since the schedule started)."""

    row: dict[str, Any]
    #: Index: sequence number; columns: the stamps of `workbench.measure.hops.STAMPS` the run
    #: took, then `partition` and `offset`. NaN where a record has no such stamp.
    stamps: pd.DataFrame
    #: Whether each record counts (sent after the warm-up).
    counted: np.ndarray

    @property
    def read_hops(self) -> pd.DataFrame:
        """Per counted record, the ms of each hop to the reader (`hops.hop_durations`)."""
        return hop_durations(self.stamps[self.counted], READ_PATH)

    @property
    def ack_hops(self) -> pd.DataFrame:
        """Per counted record, the ms of each hop to the producer's acknowledgement."""
        return hop_durations(self.stamps[self.counted], ACK_PATH)


def _check(params: dict[str, Any]) -> None:
    if params["path"] not in PATHS:
        raise BenchError(f"path must be one of {list(PATHS)}, got {params['path']!r}")
    if params["reader"] not in READERS:
        raise BenchError(f"reader must be one of {list(READERS)}, got {params['reader']!r}")
    if not 0 <= params["warm_up_s"] <= 60:
        raise BenchError(f"warm_up_s must be 0 to 60 seconds, got {params['warm_up_s']}")
    if not params["warm_up_s"] < params["offered_seconds"] <= 600:
        raise BenchError(f"offered_seconds must be over the {params['warm_up_s']:g} s warm-up and at most 600")
    if not 16 <= params["record_bytes"] <= 1_000_000:
        raise BenchError(
            f"record_bytes must be between 16 (the schedule stamp) and 1,000,000, got {params['record_bytes']}"
        )
    if not 1 <= params["partitions"] <= 64:
        raise BenchError(f"partitions must be between 1 and 64, got {params['partitions']}")
    if not 1 <= params["max_batch"] <= 10_000:
        raise BenchError(f"max_batch must be between 1 and 10,000, got {params['max_batch']}")
    if params["reader"] == "spark":
        from workbench.streaming.ingestion.real_time import trigger_seconds

        trigger_seconds(params["trigger"])
    if params["offered_msg_s"] * params["offered_seconds"] > 2_000_000:
        raise BenchError(
            "at most 2,000,000 records per run (offered_msg_s x offered_seconds): stamps are kept per record"
        )


def waterfall_run(
    stack: Stack,
    *,
    offered_msg_s: float = 1_000.0,
    offered_seconds: float = 10.0,
    warm_up_s: float = WARM_UP_S,
    record_bytes: int = 100,
    partitions: int = 1,
    path: str = "native",
    reader: str = "native",
    max_batch: int = 500,
    trigger: str = "0 seconds",
    topic_prefix: str = TOPIC_PREFIX,
    **settings: Any,
) -> Waterfall:
    """Offer `offered_msg_s` records/s for `offered_seconds`, stamp each on its path, split its time into hops.

    Args:
        offered_msg_s: the schedule's rate; records are due at fixed times, not when the
            previous one is done (see `OpenLoopSchedule`).
        offered_seconds: how long the schedule runs; it must be longer than the warm-up.
        warm_up_s: the first seconds of the schedule, whose records are left out of every
            figure (`measure.latency.after_warm_up`): the workbench's `WARM_UP_S` unless a
            first look on a warm stack asks for less.
        path: "native" (one librdkafka producer, each record sent when due) or "proxy"
            (REST produce calls with tracing asked for, each carrying what is due, up to `max_batch`).
        reader: "native" (a consumer assigned every partition), "proxy" (a REST consumer
            instance, assigned every partition) or "spark" (a micro-batch query with the
            profile's Kafka source and `trigger`, into a foreachBatch sink).
        **settings: librdkafka settings for the native producer (`linger.ms`, ...);
            `consumer.`-prefixed ones go to the native consumer (prefix stripped).

    Returns:
        A `Waterfall`: the row (registered as `latency_waterfall`) and the stamps per record.

    Raises:
        BenchError: a parameter out of range, a writer or reader that failed, a rejected setting.

    Usage: `waterfall_run(stack, offered_msg_s=1_000, path="proxy", reader="spark").read_hops`.
    """
    params: dict[str, Any] = {
        "offered_msg_s": offered_msg_s,
        "offered_seconds": offered_seconds,
        "warm_up_s": warm_up_s,
        "record_bytes": record_bytes,
        "partitions": partitions,
        "path": path,
        "reader": reader,
        "max_batch": max_batch,
        "trigger": trigger,
    }
    _check(params)
    schedule = OpenLoopSchedule(offered_msg_s, offered_seconds)
    stamps = Stamps(schedule.total)
    padding = b"x" * (record_bytes - STAMP.size)
    producer_settings = {k: v for k, v in settings.items() if not k.startswith("consumer.")}
    consumer_settings = {k[len("consumer.") :]: v for k, v in settings.items() if k.startswith("consumer.")}
    with bench_topic(stack, partitions, topic_prefix, config=_LOG_APPEND_TIME) as topic:
        log_append = _has_log_append_time(stack, topic)
        job = ReadJob(stack, topic, partitions, stamps, consumer_settings, trigger)
        with (
            open_reader(reader, job) as done,
            ResourceMonitor(stack.services) as monitor,
        ):
            if path == "native":
                _native_writer(stack, topic, schedule, stamps, producer_settings, padding, done)
            else:
                _proxy_writer(stack, topic, schedule, stamps, max_batch, padding, done)
            drain(stamps, done)
    if not log_append:
        stamps.ns["appended"][:] = 0
    return _result(stack, params, settings, schedule, stamps, monitor.columns(), job.extra)


def latency_waterfall(stack: Stack, **params: Any) -> dict[str, Any]:
    """The registered experiment: `waterfall_run`'s row; its parameters are `waterfall_run`'s
    (the registry reads them there: `Experiment.parameters`).

    Usage: `sweep("latency_waterfall", {"offered_msg_s": [100, 1_000, 5_000], "path": ["native", "proxy"]})`.
    """
    return waterfall_run(stack, **params).row


# --- the topic ----------------------------------------------------------------------------


def _has_log_append_time(stack: Stack, topic: str) -> bool:
    """Whether the broker took the topic's `LogAppendTime` (Tansu and some clusters do not)."""
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    admin = kafka.admin_client(stack.kafka_config("admin"))  # kept until the answer: destroying it fails the future
    try:
        entries = admin.describe_configs([resource])[resource].result(timeout=10)
    except (KafkaException, ValueError, TypeError):
        return False
    entry = entries.get("message.timestamp.type")
    return entry is not None and entry.value == "LogAppendTime"


# --- writers -------------------------------------------------------------------------------


def _native_writer(
    stack: Stack,
    topic: str,
    schedule: OpenLoopSchedule,
    stamps: Stamps,
    settings: dict[str, Any],
    padding: bytes,
    done: Reader,
) -> None:
    """Each record produced when due; its delivery report stamped by a thread that only polls."""
    client = bench_producer(stack, settings)
    delivered = stamps.ns["delivered"]

    def report(error: Any, message: Message) -> None:
        seq = STAMP.unpack_from(message.value() or b"")[0]
        delivered[seq] = time.time_ns()
        if error is not None:
            stamps.failed += 1

    polling = threading.Event()
    poller = threading.Thread(target=_poll_until, args=(client, polling), name="waterfall-reports", daemon=True)
    poller.start()
    try:
        sent = stamps.ns["sent"]

        def stamped() -> Iterator[Outgoing]:
            for due in schedule.batches(max_batch=1, stop=done.failed):
                seq = due.start
                value = stamp(seq, schedule.due_ns(seq), padding)
                sent[seq] = time.time_ns()
                yield Outgoing(topic, value)

        # A full queue waits 1 ms polls for room: the wait delays this record, which is measured.
        enqueue(client, stamped(), on_delivery=report, queue_full_wait_s=0.001)
    finally:
        polling.set()
        poller.join()
        unsent = client.flush(60)
    if unsent:
        raise BenchError(f"the native producer left {unsent} records unacknowledged after 60 s")


def _poll_until(client: Any, stop: threading.Event) -> None:
    while not stop.is_set():
        client.poll(0.05)


def _proxy_writer(
    stack: Stack,
    topic: str,
    schedule: OpenLoopSchedule,
    stamps: Stamps,
    max_batch: int,
    padding: bytes,
    done: Reader,
) -> None:
    """What is due, in one traced REST call at a time over a reused connection."""
    ns = stamps.ns
    with ProxyClient.for_stack(stack, session_reuse=True, pool_size=1) as client:
        for due in schedule.batches(max_batch=max_batch, stop=done.failed):
            values = [stamp(seq, schedule.due_ns(seq), padding) for seq in due]
            sent = time.time_ns()
            result = client.produce(topic, values, trace="answer")
            answered = time.time_ns()
            if result.failed:
                raise BenchError(f"the proxy refused {result.failed} records: {result.errors[0].error}")
            ns["sent"][due.start : due.stop] = result.client_sent_ns or sent
            ns["answered"][due.start : due.stop] = result.client_received_ns or answered
            for seq, trace in zip(due, result.traces, strict=False):  # none from a proxy that does not trace
                ns["proxy_received"][seq] = trace.received_ns
                ns["proxy_handed"][seq] = trace.handed_ns or 0
                ns["delivered"][seq] = trace.delivered_ns or 0


# --- the row -------------------------------------------------------------------------------


def _result(
    stack: Stack,
    params: dict[str, Any],
    settings: dict[str, Any],
    schedule: OpenLoopSchedule,
    stamps: Stamps,
    resources: dict[str, float],
    extra: dict[str, Any],
) -> Waterfall:
    frame = stamps.frame(schedule.started_ns)
    frame["scheduled"] = (np.arange(stamps.total) * schedule.interval_ns) / 1e6
    counted = after_warm_up(frame["scheduled"].to_numpy() / 1000, 0.0, params["warm_up_s"])
    counted &= frame["consumed"].notna().to_numpy()
    measured = frame[counted]
    open_loop = (measured["consumed"] - measured["scheduled"]).to_numpy() / 1000
    closed_loop = (measured["consumed"] - measured["sent"]).to_numpy() / 1000
    acked = "answered" if params["path"] == "proxy" else "delivered"
    ack = (measured[acked] - measured["scheduled"]).dropna().to_numpy() / 1000
    read_path, ack_path = present_path(frame, READ_PATH), present_path(frame, ACK_PATH)
    remote = _remote_stamps(stack, params)
    crossings = list(dict.fromkeys(clock_crossings(read_path, remote) + clock_crossings(ack_path, remote)))
    connector = extra.pop("connector", None)
    row_params = {**params, **({"connector": connector} if connector else {}), **settings}
    row = result_row(
        stack,
        experiment="latency_waterfall",
        params=row_params,
        records=stamps.read,
        payload_bytes=stamps.read * params["record_bytes"],
        seconds=schedule.seconds,
        latencies=open_loop,
        latency_of="due by the schedule → read by the reader (open loop), per record after the warm-up",
        resources=resources,
        extra={
            **{f"closed_loop_{k.removeprefix('latency_')}": v for k, v in latency_summary(closed_loop).items()},
            **{f"ack_{k.removeprefix('latency_')}": v for k, v in latency_summary(ack).items()},
            **hop_columns(hop_durations(measured, READ_PATH)),
            **hop_columns(hop_durations(measured, ACK_PATH)),
            "read_path": " → ".join(read_path),
            "ack_path": " → ".join(ack_path),
            "unsplit": ", ".join(
                s for s in STAMPS if s not in read_path and s not in ack_path and _expected(s, params)
            ),
            "clock_crossings": "; ".join(crossings),
            "expected": stamps.total,
            "lost": stamps.total - stamps.read,
            "duplicates": stamps.duplicates,
            "failed": stamps.failed,
            "measured_records": int(counted.sum()),
            "schedule_slips": schedule_slips(frame["scheduled"] / 1000, frame["sent"] / 1000),
            "disordered": disordered(measured, READ_PATH) + disordered(measured, ACK_PATH),
            **extra,
        },
    )
    return Waterfall(row=row, stamps=frame, counted=counted)


def _remote_stamps(stack: Stack, params: dict[str, Any]) -> frozenset[str]:
    """The stamps taken on another machine than the workbench's: none on an embedded stack; on a
    cluster the proxy's and the broker's (the client, the native producer, the readers and
    Spark's driver run here)."""
    if stack.profile.embedded:
        return frozenset()
    proxy = {"proxy_received", "proxy_handed", "delivered"} if params["path"] == "proxy" else set()
    return frozenset({"appended", *proxy})


def _expected(stamp: str, params: dict[str, Any]) -> bool:
    """Whether this run's path and reader would take `stamp` on a stack that can."""
    if stamp.startswith("proxy_") or stamp == "answered":
        return bool(params["path"] == "proxy")
    if stamp.startswith("batch_"):
        return bool(params["reader"] == "spark")
    return True
