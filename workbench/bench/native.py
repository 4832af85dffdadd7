"""Native client load generators: the ceiling every proxy and Spark figure is compared with.

Each generator creates its own topic, runs one load with explicit parameters, deletes
the topic and returns one tidy row (see `_run.result_row`). librdkafka settings are
passed through as dotted keys (`**{"linger.ms": 10}`); librdkafka itself rejects a
name it does not know, and that becomes a `BenchError` naming it.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import KafkaException, Message, Producer, TopicPartition

from workbench import kafka
from workbench.bench._run import (
    TOPIC_PREFIX,
    bench_consumer,
    bench_producer,
    bench_topic,
    result_row,
    split_topic_settings,
)
from workbench.bench.payload import key_pool, value_pool
from workbench.errors import BenchError
from workbench.measure.failures import FailureTally
from workbench.measure.resources import ResourceMonitor
from workbench.measure.timeline import Timeline, timed_reads, timeline_cv
from workbench.stack import Stack

__all__ = ["fill_topic", "native_consume", "native_produce", "native_round_trip"]


def native_produce(
    stack: Stack,
    *,
    records: int = 200_000,
    record_bytes: int = 100,
    partitions: int = 4,
    topic_prefix: str = TOPIC_PREFIX,
    keep_topic: bool = False,
    **settings: Any,
) -> dict[str, Any]:
    """Produce `records` with one Python producer and wait for every acknowledgement.

    Args:
        stack: the stack to load.
        records: how many records to send.
        record_bytes: size of each value (JSON-like text, realistically compressible).
        partitions: partitions of the fresh topic.
        topic_prefix: name prefix of the topic (a sweep uses it to clean up).
        keep_topic: leave the topic (e.g. while a `ThroughputMeter` still reads it);
            delete it later with `delete_bench_topics(stack, topic_prefix)`.
        **settings: librdkafka producer settings: `linger.ms`, `batch.size`,
            `compression.type`, `acks`, `enable.idempotence`, `message.max.bytes`, ...;
            and the topic's own settings prefixed `topic.` (Kafka Streams' convention:
            `topic.max.message.bytes`). Nothing is raised behind the caller's back: a record
            over a limit fails, and the row names the limit's error.

    Returns:
        One row; latency is produce() → acknowledgement per record (`Message.latency()`),
        `wire_bytes` what librdkafka sent to the broker (after compression); `failed` and
        the first cause of a failure (`workbench.measure.failures`).

    Raises:
        BenchError: a setting is unknown to librdkafka or has a bad value.

    Usage: `native_produce(stack, records=100_000, **{"linger.ms": 10, "batch.size": 1_000_000})`.
    """
    values = value_pool(record_bytes)
    keys = key_pool()
    latencies: list[float] = []
    failures = FailureTally()

    def delivered(error: RdKafkaError | None, message: Message) -> None:
        if error is None:
            latencies.append(message.latency() or 0.0)
        else:
            failures.add(error.name(), error.str())

    stats: list[str] = []
    topic_config, client_settings = split_topic_settings(settings)
    with bench_topic(stack, partitions, topic_prefix, keep=keep_topic, config=topic_config) as topic:
        client = bench_producer(stack, {**client_settings, "statistics.interval.ms": 100}, stats.append)
        with ResourceMonitor(stack.services) as monitor:
            started = time.perf_counter()
            _produce_all(client, topic, records, keys, values, delivered, failures)
            unsent = client.flush(120)
            seconds = time.perf_counter() - started
        time.sleep(0.15)  # one more statistics interval, so the last one covers everything sent
        client.poll(0)
        landed = sum(kafka.end_offsets(stack.kafka_config("admin"), topic).values())
    return result_row(
        stack,
        experiment="native_produce",
        params={"records": records, "record_bytes": record_bytes, "partitions": partitions, **settings},
        records=records,
        payload_bytes=records * record_bytes,
        seconds=seconds,
        latencies=latencies,
        latency_of="produce→ack per record",
        resources=monitor.columns(),
        extra={
            "acknowledged": len(latencies),
            **failures.columns(unaccounted=unsent),
            "landed": landed,
            "wire_bytes": _wire_bytes(stats),
        },
    )


def native_consume(
    stack: Stack,
    *,
    records: int = 200_000,
    record_bytes: int = 100,
    partitions: int = 4,
    topic_prefix: str = TOPIC_PREFIX,
    timeline: Timeline | None = None,
    sample_interval: float = 0.1,
    max_seconds: float = 300.0,
    pause_gc: bool = False,
    **settings: Any,
) -> dict[str, Any]:
    """Fill a topic, then read it all (or for `max_seconds`) with one consumer under the given fetch settings.

    The consumer is assigned the partitions from offset 0 (no group join, whose
    wait, seconds long on Tansu, would swamp the measurement).

    Args:
        records, record_bytes, partitions: the data set read back.
        max_seconds: stop reading after this long (a slow setting then reads fewer records).
        timeline: a list that receives (seconds, records so far) every `sample_interval`,
            to plot throughput over time (its stability is the point of the Kafka
            chapter's consumer figures).
        pause_gc: hold Python's garbage collector during each `consume()` batch
            (`workbench.kafka.gc_paused`): every Message is a tracked object.
        **settings: librdkafka consumer settings: `fetch.min.bytes`, `fetch.wait.max.ms`,
            `max.partition.fetch.bytes`, `fetch.max.bytes`, `socket.receive.buffer.bytes`,
            `queued.max.messages.kbytes`, ...

    Returns:
        One row; latency is the duration of each `consume()` call that returned records;
        `msg_s_cv` is the coefficient of variation of the per-interval rate (0 = steady);
        `capped` is True when `max_seconds` ended the read before every record was read
        (its rate is still what it read in that time).

    Usage: `native_consume(stack, records=200_000, **{"fetch.min.bytes": 1_000_000})`.
    """
    samples: Timeline = timeline if timeline is not None else []
    with bench_topic(stack, partitions, topic_prefix) as topic:
        fill_topic(stack, topic, records, record_bytes)
        client = bench_consumer(stack, settings)
        try:
            with ResourceMonitor(stack.services) as monitor:

                def read(missing: int) -> int:
                    with kafka.gc_paused(pause_gc):
                        messages = client.consume(num_messages=min(10_000, missing), timeout=0.5)
                        return sum(1 for m in messages if m.error() is None)

                count, seconds, polls = timed_reads(
                    read,
                    records,
                    max_seconds,
                    sample_interval,
                    samples,
                    start=lambda: client.assign([TopicPartition(topic, p, 0) for p in range(partitions)]),
                )
        finally:
            client.close()
    return result_row(
        stack,
        experiment="native_consume",
        params={
            "records": records,
            "record_bytes": record_bytes,
            "partitions": partitions,
            "pause_gc": pause_gc,
            **settings,
        },
        records=count,
        payload_bytes=count * record_bytes,
        seconds=seconds,
        latencies=polls,
        latency_of="consume() call returning records",
        resources=monitor.columns(),
        extra={"expected": records, "capped": count < records, "msg_s_cv": timeline_cv(samples)},
    )


def fill_topic(
    stack: Stack,
    topic: str,
    records: int,
    record_bytes: int,
    *,
    keys: Sequence[bytes] | None = None,
    values: Sequence[bytes] | None = None,
) -> None:
    """Write `records` values quickly (large batches), for consume experiments to read,
    cycling through `keys` and `values` (default: `key_pool()`, `value_pool(record_bytes)`)."""
    values = value_pool(record_bytes) if values is None else values
    keys = key_pool() if keys is None else keys
    batch = max(16_384, min(1_000_000, record_bytes * 1000))
    result = kafka.produce(
        stack.kafka_config("producer"),
        topic,
        ((keys[i % len(keys)], values[i % len(values)]) for i in range(records)),
        settings={"linger.ms": 20, "batch.size": batch, "message.max.bytes": max(1_000_000, record_bytes + 10_000)},
    )
    if result.acknowledged != records:
        raise BenchError(f"filling {topic!r}: {result.acknowledged} of {records} acknowledged ({result.first_error})")


def native_round_trip(
    stack: Stack,
    *,
    records: int = 100_000,
    partitions: int = 4,
    value_bytes: int = 100,
    producer_settings: dict[str, Any] | None = None,
    keep_topic: bool = False,
    topic_prefix: str = "",
) -> dict[str, Any]:
    """Produce `records` to a fresh topic with one Python producer, then read them all back.

    The topic is created explicitly and deleted afterwards (Tansu keeps
    everything in memory). Reading back checks the promise the rest of the workbench
    relies on: every acknowledged record is in the log, once.

    Returns:
        One contract row: `msg_s`/`mb_s` are the produce direction (what `records` and
        `seconds` describe); `consume_msg_s`, `consume_mb_s`, `read_back` and
        `end_offsets_total` the way back. The rate back is a read of its own, timed from
        the consumer's `assign` to its last record (`kafka.timed_read`); a second read
        checks the records. Timed together with resolving the true end and checking each
        record, it read 300 k records/s where the read alone takes 630-800 k (100,000 x 100 B).
    """
    topic = f"{topic_prefix or 'bench'}-native-{uuid.uuid4().hex[:8]}"
    producer_conf = stack.kafka_config("producer")
    with stack.temporary_topics({topic: partitions}, timeout=30.0, keep=keep_topic):
        with ResourceMonitor(stack.services) as monitor:
            value = os.urandom(value_bytes // 2).hex().encode()[:value_bytes].ljust(value_bytes, b"0")
            keys = key_pool(1000)
            produced = kafka.produce(
                producer_conf,
                topic,
                ((keys[i % len(keys)], value) for i in range(records)),
                settings={"linger.ms": 5, **(producer_settings or {})},
            )
            back = kafka.timed_read(stack.kafka_config("consumer"), topic)
            seen = {(r.partition, r.offset) for r in kafka.read_records(stack.kafka_config("consumer"), topic)}
        ends = kafka.end_offsets(producer_conf, topic)
    megabytes = records * value_bytes / 1e6
    read_rate = back.records / back.seconds if back.seconds else float("nan")
    return result_row(
        stack,
        experiment="native_round_trip",
        params={"records": records, "partitions": partitions, "value_bytes": value_bytes},
        records=records,
        payload_bytes=records * value_bytes,
        seconds=produced.seconds,
        resources=monitor.columns(),
        extra={
            "acknowledged": produced.acknowledged,
            "failed": produced.failed,
            "read_back": len(seen),
            "end_offsets_total": sum(ends.values()),
            "produce_seconds": produced.seconds,
            "produce_msg_s": records / produced.seconds,
            "produce_mb_s": megabytes / produced.seconds,
            "consume_seconds": back.seconds,
            "consume_msg_s": read_rate,
            "consume_mb_s": read_rate * value_bytes / 1e6,
        },
    )


def _produce_all(
    client: Producer,
    topic: str,
    records: int,
    keys: list[bytes],
    values: list[bytes],
    delivered: Callable[[RdKafkaError | None, Message], None],
    failures: FailureTally,
) -> None:
    """The produce loop of `workbench.kafka.producing.enqueue`, written out for the ceiling benchmark.

    A record librdkafka refuses at once (over its own `message.max.bytes`) is counted
    in `failures` with librdkafka's error; the `except` costs the loop nothing until then.

    Building an `Outgoing` per record costs this loop about a tenth of its rate
    (measured: 161 k vs 142 k records/s median of 4 interleaved 500 k-record runs), and
    this figure is the ceiling every other path is compared with.
    """
    nkeys, nvalues = len(keys), len(values)
    produce, poll = client.produce, client.poll
    for i in range(records):
        while True:
            try:
                produce(topic, values[i % nvalues], keys[i % nkeys], on_delivery=delivered)
                break
            except BufferError:  # librdkafka's queue is full: let deliveries drain it
                poll(0.01)
            except KafkaException as exc:  # librdkafka's error text names the broker even here
                error = exc.args[0]
                failures.add(error.name(), f"refused by the producer before sending: {error.str()}")
                break
        if i % 1000 == 0:
            poll(0)


def _wire_bytes(stats: list[str]) -> float:
    """Bytes librdkafka sent to brokers (`tx_bytes`, after compression), from its last statistics."""
    import json

    if not stats:
        return float("nan")
    return float(json.loads(stats[-1]).get("tx_bytes", float("nan")))
