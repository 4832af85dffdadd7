"""What topic count costs on the real broker: creation, Metadata size, produce spread, regex join.

The articles say "Kafka strains past a few thousand partitions per broker" and "a regex
over many topics costs the consumer"; `topic_count` measures it on the user's stack,
one result row per topic count: create N topics, time and size a full Metadata
response, produce over the N topics and over N partitions of one topic, and time the
group join of a regex subscription over the N topics.

Every run creates uniquely named topics and deletes them afterwards, even when it fails
(the embedded broker keeps data in memory). Times are wall-clock on a shared machine:
compare them within one run, not across machines.
"""

from __future__ import annotations

import logging
import statistics
import time
import uuid
from collections.abc import Sequence
from typing import Any

from confluent_kafka import TopicPartition

from workbench import kafka
from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.kafka.metadata import fetch_metadata
from workbench.kafka.producing import DeliveryTally, Outgoing, send
from workbench.kafka.security import Security
from workbench.kafka.wire import parse_servers
from workbench.stack import Stack
from workbench.topics.errors import TopicDesignError

__all__ = [
    "metadata_cost",
    "produce_spread",
    "regex_join_time",
    "topic_count",
    "topic_count_cost",
]

log = logging.getLogger("workbench.topics")


def regex_join_time(conf: KafkaConf, pattern: str, *, timeout: float = 120.0) -> tuple[float, int]:
    """Seconds from subscribing to `pattern` until a group assignment arrives, and its partitions.

    Raises:
        KafkaError: no assignment within `timeout` seconds.
    """
    client = kafka.consumer(conf, settings={"auto.offset.reset": "latest"})
    result: list[tuple[float, int]] = []
    started = time.perf_counter()

    def on_assign(_consumer: Any, partitions: list[TopicPartition]) -> None:
        if partitions and not result:
            result.append((time.perf_counter() - started, len(partitions)))

    try:
        client.subscribe([pattern], on_assign=on_assign)
        deadline = time.monotonic() + timeout
        while not result:
            if time.monotonic() > deadline:
                raise KafkaError(f"no assignment for {pattern!r} within {timeout:.0f} s; do matching topics exist?")
            client.poll(0.05)
    finally:
        client.close()
    return result[0]


def metadata_cost(conf: KafkaConf, *, repeats: int = 3) -> dict[str, float | None]:
    """Size and time of a full-cluster Metadata response (every topic and partition).

    The size comes from a raw Metadata v4 request (`workbench.kafka.metadata`), so it is
    the exact byte count of the answer, on PLAINTEXT, TLS and SASL PLAIN / SCRAM listeners
    alike; with security that request cannot speak (GSSAPI, OAUTHBEARER, a keystore...),
    or a broker that refuses it, only librdkafka's time is given (and a warning is logged).

    Returns:
        `metadata_bytes` (None when not measurable), `metadata_s` (median raw request),
        `list_topics_s` (median of librdkafka's `list_topics`, parsing included).
    """
    if repeats < 1:
        raise TopicDesignError(f"repeats must be ≥ 1, got {repeats!r}")
    raw: list[tuple[int, float]] = []
    address = parse_servers(str(conf["bootstrap.servers"]))[0]
    try:
        security = Security.from_conf(conf)
        answers = [fetch_metadata(address, security=security) for _ in range(repeats)]
        raw = [(answer.size_bytes, answer.seconds) for answer in answers]
    except (OSError, KafkaError) as exc:
        log.warning("no raw Metadata size from %s (%s); reporting librdkafka's time only", address, exc)
        raw = []
    timings = []
    with kafka.admin_client(conf) as client:
        for _ in range(repeats):
            started = time.perf_counter()
            client.list_topics(timeout=120)
            timings.append(time.perf_counter() - started)
    return {
        "metadata_bytes": float(raw[0][0]) if raw else None,
        "metadata_s": statistics.median([s for _, s in raw]) if raw else None,
        "list_topics_s": statistics.median(timings),
    }


def produce_spread(
    conf: KafkaConf,
    targets: Sequence[tuple[str, int]],
    records: int,
    *,
    value_bytes: int = 100,
    settings: KafkaConf | None = None,
) -> dict[str, float]:
    """Produce `records` round-robin over (topic, partition) targets with one producer.

    Returns:
        `msg_s`, `mb_s` and `seconds` from the first produce to the last acknowledgement.

    Raises:
        KafkaError: some records were not acknowledged.
    """
    if not targets:
        raise TopicDesignError("produce_spread needs at least one (topic, partition) target")
    value = b"v" * value_bytes
    client = kafka.producer(conf, {"linger.ms": 5, **(settings or {})})
    tally = DeliveryTally()
    count = len(targets)
    spread = (Outgoing(targets[i % count][0], value, None, targets[i % count][1]) for i in range(records))
    sent = send(client, spread, on_delivery=tally, flush_timeout_s=300)
    if sent.unsent or tally.failed:
        raise KafkaError(
            f"{sent.unsent} unsent and {tally.failed} failed of {records} records spread over {count} partitions"
            f" (first error: {tally.first_error or 'none'})"
        )
    seconds = sent.seconds
    return {"seconds": seconds, "msg_s": records / seconds, "mb_s": records * value_bytes / 1e6 / seconds}


def topic_count(
    stack: Stack,
    *,
    topics: int = 100,
    records: int = 50_000,
    value_bytes: int = 100,
    join: bool = True,
    metadata_samples: int = 3,
    topic_prefix: str = "wb-count",
) -> dict[str, Any]:
    """The cost of N topics, one result row (the registered experiment `topic_count`).

    It creates `topics` one-partition topics and measures the creation, a full Metadata
    response, producing `records` spread over the N topics (the row's `msg_s`, `mb_s`
    and CPU), and (with `join`) the join of a consumer group subscribed with a regex
    matching them; then it deletes them, creates one topic with N partitions, and
    produces the same records spread over its partitions (`partitions_msg_s`). Other
    topics on the cluster add to the metadata figures.

    Returns:
        A contract row (`workbench.measure.contract`) with the parameters and `create_s`,
        `create_per_topic_ms`, `metadata_bytes`, `metadata_s`, `list_topics_s`,
        `topics_msg_s` (= `msg_s`), `partitions_msg_s`, `join_s`, `assigned`,
        `delete_s`, `create_one_topic_s`; what was not measured is NaN.

    Raises:
        TopicDesignError: a count below 1.

    Usage: `sweep("topic_count", {"topics": [1, 100, 1000]}, repeat=3)`.
    """
    from workbench.measure.contract import result_row
    from workbench.measure.resources import ResourceMonitor

    if isinstance(topics, bool) or not isinstance(topics, int) or topics < 1 or metadata_samples < 1:
        raise TopicDesignError(
            f"topics and metadata_samples must be whole numbers ≥ 1, got {topics!r}, {metadata_samples!r}"
        )
    admin, producer_conf = stack.kafka_config("admin"), stack.kafka_config("producer")
    run = uuid.uuid4().hex[:8]
    prefix = f"{topic_prefix}-{run}-"
    width = len(str(topics - 1))
    names = {f"{prefix}{i:0{width}d}": 1 for i in range(topics)}
    extra: dict[str, Any] = {"join_s": float("nan"), "assigned": float("nan")}
    with stack.temporary_topics(names) as created:
        extra["create_s"] = created.create_seconds
        extra["create_per_topic_ms"] = created.create_seconds / topics * 1000
        extra.update(metadata_cost(admin, repeats=metadata_samples))
        with ResourceMonitor(stack.services) as monitor:
            spread = produce_spread(producer_conf, [(t, 0) for t in names], records, value_bytes=value_bytes)
        extra["topics_msg_s"] = spread["msg_s"]
        if join:
            extra["join_s"], extra["assigned"] = regex_join_time(stack.kafka_config("consumer"), f"^{prefix}.*")
        deleting = time.perf_counter()
    extra["delete_s"] = time.perf_counter() - deleting
    single = f"{topic_prefix}-{run}"
    with stack.temporary_topics({single: topics}) as created_one:
        extra["create_one_topic_s"] = created_one.create_seconds
        one = produce_spread(producer_conf, [(single, p) for p in range(topics)], records, value_bytes=value_bytes)
        extra["partitions_msg_s"] = one["msg_s"]
    params = {"topics": topics, "records": records, "value_bytes": value_bytes, "join": join}
    return result_row(
        stack,
        experiment="topic_count",
        params=params,
        records=records,
        payload_bytes=records * value_bytes,
        seconds=spread["seconds"],
        resources=monitor.columns(),
        extra=extra,
    )


def topic_count_cost(
    stack: Stack,
    counts: Sequence[int],
    *,
    records: int = 50_000,
    value_bytes: int = 100,
    join: bool = True,
    repeats: int = 3,
) -> list[dict[str, Any]]:
    """`topic_count` for each N in `counts`: one contract row per N (see `topic_count`).

    `repeats` is how many Metadata requests each figure is the median of.

    Usage: `pd.DataFrame(topic_count_cost(stack, [1, 100, 1000]))`.
    """
    bad = [n for n in counts if isinstance(n, bool) or not isinstance(n, int) or n < 1]
    if bad or not counts:
        raise TopicDesignError(f"topic counts must be whole numbers ≥ 1, got {list(counts)!r}")
    return [
        topic_count(stack, topics=n, records=records, value_bytes=value_bytes, join=join, metadata_samples=repeats)
        for n in counts
    ]
