"""End-to-end latency at a fixed offered rate, free of coordinated omission.

A load generator that sends the next record only when the previous one is done slows
down exactly when the system does, and then reports the latency of the few records it
managed to send: the queueing delay the others would have suffered is never measured
("coordinated omission"). Here every record has a send time fixed in advance by the
offered rate; latency is measured from that *scheduled* time to its arrival at a
consumer, so a stalled producer or proxy shows up as the latency it causes.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
from confluent_kafka import Message, TopicPartition

from workbench import kafka
from workbench.bench._run import TOPIC_PREFIX, bench_producer, bench_topic, result_row
from workbench.errors import BenchError
from workbench.kafka.producing import Outgoing, send
from workbench.measure.resources import ResourceMonitor
from workbench.proxy import ProxyClient
from workbench.stack import Stack

__all__ = ["end_to_end_latency"]

_STAMP = struct.Struct(">qq")  # scheduled send time (perf_counter ns), sequence number


def end_to_end_latency(
    stack: Stack,
    *,
    offered_msg_s: float = 1000.0,
    offered_seconds: float = 5.0,
    record_bytes: int = 100,
    partitions: int = 4,
    path: str = "native",
    max_batch: int = 500,
    topic_prefix: str = TOPIC_PREFIX,
    **settings: Any,
) -> dict[str, Any]:
    """Offer `offered_msg_s` records/s for `offered_seconds`; measure scheduled-send → consumed latency.

    Args:
        offered_msg_s: offered records per second (the schedule; not slowed by back-pressure).
        offered_seconds: how long the schedule runs.
        record_bytes: value size (at least 16: the schedule stamp travels in the value).
        path: "native" (one librdkafka producer) or "proxy" (REST calls, each carrying
            every record that is due, up to `max_batch`, over a reused session).
        **settings: librdkafka settings; `consumer.`-prefixed ones go to the consumer
            (prefix stripped), the others to the native producer.

    Returns:
        One row: `offered_msg_s`, achieved `msg_s`, end-to-end latency percentiles.

    Usage: `end_to_end_latency(stack, offered_msg_s=5000, path="proxy")`.
    """
    rate, seconds = offered_msg_s, offered_seconds
    if path not in ("native", "proxy"):
        raise BenchError(f"path must be 'native' or 'proxy', got {path!r}")
    if rate <= 0 or seconds <= 0:
        raise BenchError(f"offered_msg_s and offered_seconds must be positive, got {rate} and {seconds}")
    consumer_settings = {k[len("consumer.") :]: v for k, v in settings.items() if k.startswith("consumer.")}
    producer_settings = {k: v for k, v in settings.items() if not k.startswith("consumer.")}
    total = max(1, int(rate * seconds))
    padding = b"x" * max(0, record_bytes - _STAMP.size)
    arrivals = np.full(total, np.nan)
    scheduled = np.full(total, np.nan)

    with bench_topic(stack, partitions, topic_prefix) as topic:
        stop = threading.Event()
        received = [0]
        reader_error: list[BaseException] = []

        def read() -> None:
            client = kafka.consumer(
                stack.kafka_config("consumer"), settings={"fetch.wait.max.ms": 10, **consumer_settings}
            )
            try:
                client.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
                while received[0] < total and not stop.is_set():
                    # What is fetched already, else the next record within 50 ms: a
                    # consume(10_000, 0.05) would hold every record until 10,000 came or
                    # 50 ms passed, adding its own wait to each record's latency.
                    messages: list[Message | None] = [*client.consume(num_messages=10_000, timeout=0)]
                    for message in messages or [client.poll(0.05)]:
                        now = time.perf_counter_ns()
                        if message is None or message.error() is not None or message.value() is None:
                            continue
                        when, seq = _STAMP.unpack_from(message.value())  # type: ignore[arg-type]
                        if 0 <= seq < total and np.isnan(arrivals[seq]):
                            arrivals[seq] = now
                            scheduled[seq] = when
                            received[0] += 1
            except BaseException as exc:
                reader_error.append(exc)
            finally:
                client.close()

        reader = threading.Thread(target=read, name="e2e-reader", daemon=True)
        reader.start()
        time.sleep(0.5)  # let the consumer fetch its first (empty) answer before the schedule starts
        with ResourceMonitor(stack.services) as monitor:
            started_ns = time.perf_counter_ns()
            if path == "native":
                _send_native(stack, topic, producer_settings, total, rate, started_ns, padding)
            else:
                _send_proxy(stack, topic, total, rate, started_ns, padding, max_batch)
            drain_deadline = time.monotonic() + 30
            while received[0] < total and time.monotonic() < drain_deadline and reader.is_alive():
                time.sleep(0.01)
            stop.set()
            reader.join()
            elapsed = (np.nanmax(arrivals) - started_ns) / 1e9 if received[0] else float("nan")
        if reader_error:
            raise reader_error[0]
    latencies = (arrivals - scheduled)[~np.isnan(arrivals)] / 1e9
    return result_row(
        stack,
        experiment="end_to_end_latency",
        params={
            "offered_msg_s": rate,
            "seconds_offered": seconds,
            "record_bytes": record_bytes,
            "partitions": partitions,
            "path": path,
            **settings,
        },
        records=received[0],
        payload_bytes=received[0] * record_bytes,
        seconds=float(elapsed),
        latencies=latencies,
        latency_of="scheduled send → consumed",
        resources=monitor.columns(),
        extra={"expected": total, "lost": total - received[0]},
    )


def _wait_until(target_ns: int) -> None:
    delay = (target_ns - time.perf_counter_ns()) / 1e9
    if delay > 0:
        time.sleep(delay)


def _send_native(
    stack: Stack, topic: str, settings: dict[str, Any], total: int, rate: float, started_ns: int, padding: bytes
) -> None:
    client = bench_producer(stack, settings)
    interval_ns = 1e9 / rate

    def scheduled() -> Iterator[Outgoing]:
        for seq in range(total):
            due = started_ns + int(seq * interval_ns)
            _wait_until(due)
            yield Outgoing(topic, _STAMP.pack(due, seq) + padding)

    # A full queue is waited out briefly: the wait delays the records behind it, which is measured.
    if send(client, scheduled(), flush_timeout_s=60, queue_full_wait_s=0.001).unsent:
        raise BenchError(f"native producer left records unsent after 60 s at {rate:.0f} msg/s")


def _send_proxy(
    stack: Stack, topic: str, total: int, rate: float, started_ns: int, padding: bytes, max_batch: int
) -> None:
    interval_ns = 1e9 / rate
    with ProxyClient.for_stack(stack, session_reuse=True, pool_size=1) as client:
        seq = 0
        while seq < total:
            now = time.perf_counter_ns()
            due_count = min(total, int((now - started_ns) / interval_ns) + 1)
            if due_count <= seq:
                _wait_until(started_ns + int(seq * interval_ns))
                continue
            upto = min(due_count, seq + max_batch)
            batch = [_STAMP.pack(started_ns + int(i * interval_ns), i) + padding for i in range(seq, upto)]
            result = client.produce(topic, batch)
            if result.failed:
                raise BenchError(f"proxy rejected {result.failed} records: {result.errors[0].error}")
            seq = upto
