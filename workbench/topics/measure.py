"""What topic count and topic layout cost on the real broker: timed, counted, one row per point.

The questions the articles answer with anecdotes ("Kafka strains past a few thousand
partitions per broker", "a regex over many topics costs the consumer"), measured on
the user's stack:

- `topic_count_cost`: create N topics, the size and time of a full Metadata response,
  produce throughput spread over N topics vs N partitions of one topic, and the group
  join time of a regex subscription over the N topics;
- `device_read_cost`: reading one device's history from its own topic vs scanning its
  partition of a keyed topic vs scanning the whole keyed topic, as data grows;
- `write_devices` / `read_device` / `read_group`: the building blocks, also used by the
  tests to check that every record of a device is where its strategy says.

Every experiment creates its own uniquely named topics and deletes them afterwards,
even when it fails (the embedded broker keeps data in memory). Times are wall-clock
on a shared machine: compare them within one run, not across machines.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import Message, TopicPartition

from workbench import kafka
from workbench.config import KafkaConf, TopicSettings
from workbench.errors import KafkaError
from workbench.kafka import Record
from workbench.stack import Stack
from workbench.topics.errors import TopicDesignError
from workbench.topics.strategies import KeyedTopic, Subscription, TopicPerDevice, TopicStrategy

__all__ = [
    "DeviceRead",
    "DeviceWrite",
    "GroupRead",
    "READ_METHODS",
    "create_topics_timed",
    "device_read",
    "device_read_cost",
    "metadata_cost",
    "produce_spread",
    "read_device",
    "read_group",
    "read_partitions",
    "regex_join_time",
    "temporary_topics",
    "topic_count",
    "topic_count_cost",
    "write_devices",
]

log = logging.getLogger("workbench.topics")

#: Topics are created in batches of this many: one CreateTopics request each.
CREATE_BATCH = 1_000


@dataclass(frozen=True)
class DeviceWrite:
    """The outcome of writing every device's records through a strategy."""

    records: int
    acknowledged: int
    seconds: float
    #: Records whose acknowledged partition differs from the route's prediction.
    misplaced: int
    #: (topic, partition) -> records acknowledged there.
    landed: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass(frozen=True)
class DeviceRead:
    """One device's records as read back, and how many records had to be read for them."""

    device: str
    records: list[Record]
    scanned: int
    seconds: float


@dataclass(frozen=True)
class GroupRead:
    """What a group consumer read through a subscription, and how long its join took."""

    records: list[Record]
    join_seconds: float
    seconds: float
    assigned_partitions: int


def device_value(device: str, sequence: int, value_bytes: int) -> bytes:
    """A record value that names its device and sequence number, padded to `value_bytes`."""
    head = f"{device}:{sequence:09d}:".encode()
    return head + b"x" * max(0, value_bytes - len(head))


def write_devices(
    conf: KafkaConf,
    strategy: TopicStrategy,
    devices: Sequence[str],
    records_per_device: int,
    *,
    value_bytes: int = 100,
    settings: KafkaConf | None = None,
    flush_timeout: float = 120.0,
) -> DeviceWrite:
    """Produce `records_per_device` records for each device, routed by `strategy`.

    Records are interleaved across devices (sequence 0 of every device, then 1...), as
    a fleet sends them. The producer uses the strategy's partitioner, and every
    acknowledgement's partition is compared with the route's prediction.

    Raises:
        KafkaError: records were not acknowledged within `flush_timeout`, or failed.

    Usage: `write_devices(stack.kafka_config("producer"), KeyedTopic("t", 4), ["d1", "d2"], 100)`.
    """
    routes = {device: strategy.route(device) for device in devices}
    client = kafka.producer(conf, {"linger.ms": 5, **(settings or {}), **strategy.producer_settings()})
    landed: Counter[tuple[str, int]] = Counter()
    expected: dict[tuple[str, bytes], int] = {(r.topic, r.key): r.expected_partition for r in routes.values()}
    outcome = {"misplaced": 0, "failed": 0}
    first_error: list[str] = []

    def delivered(error: RdKafkaError | None, message: Message) -> None:
        if error is not None:
            outcome["failed"] += 1
            first_error[:1] = first_error[:1] or [error.str()]
            return
        topic, partition = str(message.topic()), int(message.partition() or 0)
        landed[(topic, partition)] += 1
        if expected[(topic, bytes(message.key() or b""))] != partition:
            outcome["misplaced"] += 1

    started = time.perf_counter()
    for sequence in range(records_per_device):
        for device, route in routes.items():
            value = device_value(device, sequence, value_bytes)
            extra = {} if route.partition is None else {"partition": route.partition}
            _produce(client, route.topic, route.key, value, delivered, extra)
    unsent = client.flush(flush_timeout)
    seconds = time.perf_counter() - started
    total = records_per_device * len(routes)
    if unsent or outcome["failed"]:
        raise KafkaError(
            f"{unsent} records unsent and {outcome['failed']} failed of {total} written through {strategy!r}"
            f" (first error: {first_error[0] if first_error else 'none'}); are the topics created?"
        )
    return DeviceWrite(total, sum(landed.values()), seconds, outcome["misplaced"], dict(landed))


def read_partitions(
    conf: KafkaConf, partitions: Iterable[tuple[str, int]], *, key: bytes | None = None, timeout: float = 60.0
) -> tuple[list[Record], int]:
    """Every record of the partitions, from their start to their true end, without a group.

    Returns:
        (records with `key`, or all when `key` is None; number of records read).

    Raises:
        KafkaError: the end was not reached within `timeout` seconds.
    """
    kept: list[Record] = []
    scanned = 0
    for record in kafka.read_records(conf, sorted(set(partitions)), timeout=timeout):
        scanned += 1
        if key is None or record.key == key:
            kept.append(record)
    return kept, scanned


def read_device(
    conf: KafkaConf, strategy: TopicStrategy, device: str, *, full_scan: bool = False, timeout: float = 60.0
) -> DeviceRead:
    """One device's whole history, read the way its strategy says (no consumer group).

    Args:
        full_scan: read every topic and partition of the strategy and filter by key,
            instead of only what `subscription(device)` names: the naive way to find a
            device in a keyed topic.

    Usage: `read_device(conf, KeyedTopic("t", 4), "d1").scanned`.
    """
    one = strategy.subscription(device)
    key = strategy.route(device).key
    if full_scan:
        wanted = _partitions_of(conf, strategy.subscription(), [strategy.route(device).topic])
        filter_key: bytes | None = key
    elif one.assignment:
        wanted, filter_key = list(one.assignment), one.key
    else:
        wanted, filter_key = _partitions_of(conf, one, []), None
    started = time.perf_counter()
    records, scanned = read_partitions(conf, wanted, key=filter_key, timeout=timeout)
    return DeviceRead(device, records, scanned, time.perf_counter() - started)


def read_group(
    conf: KafkaConf,
    subscription: Subscription,
    expected: int,
    *,
    timeout: float = 60.0,
    settings: KafkaConf | None = None,
) -> GroupRead:
    """Join a fresh consumer group on `subscription` and read until `expected` records came.

    `join_seconds` runs from `subscribe` to the first non-empty assignment: for a regex
    it includes resolving the pattern against the cluster's metadata.

    Raises:
        KafkaError: fewer than `expected` records within `timeout` seconds.
    """
    topics = subscription.for_subscribe()
    client = kafka.consumer(conf, settings={"auto.offset.reset": "earliest", **(settings or {})})
    joined: list[float] = []
    assigned: list[int] = []

    def on_assign(_consumer: Any, partitions: list[TopicPartition]) -> None:
        if partitions and not joined:
            joined.append(time.perf_counter())
            assigned.append(len(partitions))

    records: list[Record] = []
    try:
        started = time.perf_counter()
        client.subscribe(topics, on_assign=on_assign)
        deadline = time.monotonic() + timeout
        while len(records) < expected:
            if time.monotonic() > deadline:
                raise KafkaError(
                    f"group read of {topics} got {len(records)} of {expected} records in {timeout:.0f} s "
                    f"({'joined' if joined else 'never joined'}); raise the timeout or check the subscription"
                )
            for message in client.consume(num_messages=10_000, timeout=0.2):
                error = message.error()
                if error is None:
                    records.append(Record.from_message(message))
                elif error.code() != RdKafkaError._PARTITION_EOF:
                    raise KafkaError(f"group read failed: {error.str()}", error.name())
        seconds = time.perf_counter() - started
    finally:
        client.close()
    return GroupRead(records, joined[0] - started if joined else float("nan"), seconds, assigned[0] if assigned else 0)


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


def create_topics_timed(
    conf: KafkaConf, topics: dict[str, int], *, batch: int = CREATE_BATCH, settings: TopicSettings | None = None
) -> float:
    """Create topics in batches of `batch` per request; returns the seconds it took.

    `settings` is the profile's `topics` section (replication), default RF 1.
    """
    names = list(topics)
    started = time.perf_counter()
    for i in range(0, len(names), batch):
        kafka.create_topics(conf, {n: topics[n] for n in names[i : i + batch]}, timeout=300, **_options(settings))
    return time.perf_counter() - started


def _options(settings: TopicSettings | None) -> dict[str, Any]:
    if settings is None:
        return {}
    return {"replication_factor": settings.replication_factor, "config": settings.topic_config()}


@contextmanager
def temporary_topics(
    conf: KafkaConf, topics: dict[str, int], *, batch: int = CREATE_BATCH, settings: TopicSettings | None = None
) -> Iterator[float]:
    """Create topics, yield the seconds creating them took, and delete them afterwards.

    `settings` is the profile's `topics` section (`stack.profile.topics`): on a cluster
    the topics get its replication factor and min.insync.replicas; default RF 1.

    Usage: `with temporary_topics(conf, {"a": 1}, settings=stack.profile.topics) as create_seconds: ...`.
    """
    created: list[str] = []
    try:
        names = list(topics)
        started = time.perf_counter()
        for i in range(0, len(names), batch):
            chunk = names[i : i + batch]
            kafka.create_topics(conf, {n: topics[n] for n in chunk}, timeout=300, **_options(settings))
            created.extend(chunk)
        yield time.perf_counter() - started
    finally:
        for i in range(0, len(created), batch):
            kafka.delete_topics(conf, created[i : i + batch], timeout=300)


def metadata_cost(conf: KafkaConf, *, repeats: int = 3) -> dict[str, float | None]:
    """Size and time of a full-cluster Metadata response (every topic and partition).

    The size comes from a raw Metadata v4 request on a plain socket, so it is the exact
    byte count on the wire; on a TLS or SASL listener, or a broker that refuses the
    request, only librdkafka's time is given (and a warning is logged).

    Returns:
        `metadata_bytes` (None when not measurable), `metadata_s` (median raw request),
        `list_topics_s` (median of librdkafka's `list_topics`, parsing included).
    """
    if repeats < 1:
        raise TopicDesignError(f"repeats must be ≥ 1, got {repeats!r}")
    raw: list[tuple[int, float]] = []
    protocol = str(conf.get("security.protocol", "PLAINTEXT")).upper()
    if protocol == "PLAINTEXT":
        host, port = _first_bootstrap(str(conf["bootstrap.servers"]))
        try:
            raw = [_raw_metadata(host, port) for _ in range(repeats)]
        except (OSError, KafkaError) as exc:
            log.warning("no raw Metadata size from %s:%s (%s); reporting librdkafka's time only", host, port, exc)
            raw = []
    client = kafka.admin_client(conf)
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        client.list_topics(timeout=120)
        timings.append(time.perf_counter() - started)
    return {
        "metadata_bytes": float(raw[0][0]) if raw else None,
        "metadata_s": _median([s for _, s in raw]) if raw else None,
        "list_topics_s": _median(timings),
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
    failed = [0]

    def delivered(error: RdKafkaError | None, _message: Message) -> None:
        if error is not None:
            failed[0] += 1

    started = time.perf_counter()
    count = len(targets)
    for i in range(records):
        topic, partition = targets[i % count]
        _produce(client, topic, None, value, delivered, {"partition": partition})
    unsent = client.flush(300)
    seconds = time.perf_counter() - started
    if unsent or failed[0]:
        raise KafkaError(f"{unsent} unsent and {failed[0]} failed of {records} records spread over {count} partitions")
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
        A contract row (`workbench.bench.contract`) with the parameters and `create_s`,
        `create_per_topic_ms`, `metadata_bytes`, `metadata_s`, `list_topics_s`,
        `topics_msg_s` (= `msg_s`), `partitions_msg_s`, `join_s`, `assigned`,
        `delete_s`, `create_one_topic_s`; what was not measured is NaN.

    Raises:
        TopicDesignError: a count below 1.

    Usage: `sweep("topic_count", {"topics": [1, 100, 1000]}, repeat=3)`.
    """
    from workbench.bench.contract import result_row
    from workbench.bench.resources import ResourceMonitor

    if isinstance(topics, bool) or not isinstance(topics, int) or topics < 1 or metadata_samples < 1:
        raise TopicDesignError(f"topics and metadata_samples must be whole numbers ≥ 1, got {topics!r}, "
                               f"{metadata_samples!r}")  # fmt: skip
    admin, producer_conf = stack.kafka_config("admin"), stack.kafka_config("producer")
    run = uuid.uuid4().hex[:8]
    prefix = f"{topic_prefix}-{run}-"
    width = len(str(topics - 1))
    names = {f"{prefix}{i:0{width}d}": 1 for i in range(topics)}
    extra: dict[str, Any] = {"join_s": float("nan"), "assigned": float("nan")}
    with temporary_topics(admin, names, settings=stack.profile.topics) as create_s:
        extra["create_s"] = create_s
        extra["create_per_topic_ms"] = create_s / topics * 1000
        extra.update(metadata_cost(admin, repeats=metadata_samples))
        with ResourceMonitor(stack.services) as monitor:
            spread = produce_spread(producer_conf, [(t, 0) for t in names], records, value_bytes=value_bytes)
        extra["topics_msg_s"] = spread["msg_s"]
        if join:
            extra["join_s"], extra["assigned"] = regex_join_time(stack.kafka_config("consumer"), f"^{prefix}.*")
        deleting = time.perf_counter()
    extra["delete_s"] = time.perf_counter() - deleting
    single = f"{topic_prefix}-{run}"
    with temporary_topics(admin, {single: topics}, settings=stack.profile.topics) as create_one_s:
        extra["create_one_topic_s"] = create_one_s
        one = produce_spread(producer_conf, [(single, p) for p in range(topics)], records, value_bytes=value_bytes)
        extra["partitions_msg_s"] = one["msg_s"]
    params = {"topics": topics, "records": records, "value_bytes": value_bytes, "join": join}
    return result_row(stack, experiment="topic_count", params=params, records=records,
                      payload_bytes=records * value_bytes, seconds=spread["seconds"], resources=monitor.columns(),
                      extra=extra)  # fmt: skip


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
    return [topic_count(stack, topics=n, records=records, value_bytes=value_bytes, join=join,
                        metadata_samples=repeats) for n in counts]  # fmt: skip


#: The ways `device_read` reads one device's history.
READ_METHODS = ("own topic", "keyed: its partition", "keyed: whole topic")


def device_read(
    stack: Stack,
    *,
    method: str = "own topic",
    records_per_device: int = 100,
    devices: int = 50,
    partitions: int = 4,
    value_bytes: int = 100,
    topic_prefix: str = "wb-read",
) -> dict[str, Any]:
    """Read one device's history one way, one result row (the registered experiment `device_read`).

    It writes `records_per_device` records for each of `devices` devices in the layout
    `method` reads (a topic per device, or a keyed topic of `partitions` partitions),
    then reads device 0's history: from its own topic, from its partition of the keyed
    topic (filtering out other devices), or from the whole keyed topic.

    Returns:
        A contract row: `records` = records read (`scanned`), `msg_s` = records read per
        second, `returned` (the device's own records), `total_records`.

    Raises:
        TopicDesignError: an unknown method, or a count below 1.
        KafkaError: not every record written was acknowledged.
    """
    if method not in READ_METHODS:
        raise TopicDesignError(f"method must be one of {list(READ_METHODS)}, got {method!r}")
    if devices < 1 or partitions < 1 or records_per_device < 1:
        raise TopicDesignError(f"devices, partitions and records_per_device must be ≥ 1, got {devices!r}, "
                               f"{partitions!r}, {records_per_device!r}")  # fmt: skip
    run = uuid.uuid4().hex[:8]
    layout: TopicStrategy = (
        TopicPerDevice(f"{topic_prefix}-{run}-")
        if method == "own topic"
        else KeyedTopic(f"{topic_prefix}-{run}", partitions)
    )
    ids = _device_ids(devices)
    with temporary_topics(stack.kafka_config("admin"), layout.topics(ids), settings=stack.profile.topics):
        _write_all(stack, layout, ids, records_per_device, value_bytes)
        return _read_row(stack, layout, ids, method, records_per_device, partitions, value_bytes)


def _device_ids(devices: int) -> list[str]:
    return [f"dev{i:05d}" for i in range(devices)]


def _write_all(stack: Stack, layout: TopicStrategy, ids: list[str], size: int, value_bytes: int) -> None:
    written = write_devices(stack.kafka_config("producer"), layout, ids, size, value_bytes=value_bytes)
    if written.acknowledged != size * len(ids):
        raise KafkaError(f"{written.acknowledged} of {size * len(ids)} records acknowledged")


def _read_row(
    stack: Stack, layout: TopicStrategy, ids: list[str], method: str, size: int, partitions: int, value_bytes: int
) -> dict[str, Any]:
    from workbench.bench.contract import result_row
    from workbench.bench.resources import ResourceMonitor

    with ResourceMonitor(stack.services) as monitor:
        read = read_device(stack.kafka_config("consumer"), layout, ids[0], full_scan=method == "keyed: whole topic")
    params = {"method": method, "records_per_device": size, "devices": len(ids), "partitions": partitions,
              "value_bytes": value_bytes}  # fmt: skip
    return result_row(stack, experiment="device_read", params=params, records=read.scanned,
                      payload_bytes=read.scanned * value_bytes, seconds=read.seconds, resources=monitor.columns(),
                      extra={"total_records": size * len(ids), "returned": len(read.records),
                             "scanned": read.scanned})  # fmt: skip


def device_read_cost(
    stack: Stack,
    *,
    devices: int = 50,
    records_per_device: Sequence[int] = (100, 1_000),
    partitions: int = 4,
    value_bytes: int = 100,
) -> list[dict[str, Any]]:
    """Read one device's history three ways as the data grows; one contract row per way and size.

    For each size it writes the same records twice, once to a keyed topic of
    `partitions` partitions and once to one topic per device, then reads device 0's
    history each way of `READ_METHODS` (see `device_read`, which does one of them).

    Returns:
        Rows with `method`, `records_per_device`, `total_records`, `returned`,
        `scanned`, `seconds` and `msg_s` (scanned records per second).

    Usage: `pd.DataFrame(device_read_cost(stack, devices=20))`.
    """
    admin = stack.kafka_config("admin")
    if devices < 1 or partitions < 1:
        raise TopicDesignError(f"devices and partitions must be ≥ 1, got {devices!r} and {partitions!r}")
    ids = _device_ids(devices)
    rows = []
    for size in records_per_device:
        run = uuid.uuid4().hex[:8]
        keyed = KeyedTopic(f"wb-keyed-{run}", partitions)
        per_device = TopicPerDevice(f"wb-dev-{run}-")
        topics = {**keyed.topics(ids), **per_device.topics(ids)}
        with temporary_topics(admin, topics, settings=stack.profile.topics):
            for written_layout in (keyed, per_device):
                _write_all(stack, written_layout, ids, size, value_bytes)
            for method in READ_METHODS:
                layout = per_device if method == "own topic" else keyed
                rows.append(_read_row(stack, layout, ids, method, size, partitions, value_bytes))
    return rows


def _produce(client: Any, topic: str, key: bytes | None, value: bytes, callback: Any, extra: dict[str, int]) -> None:
    while True:
        try:
            client.produce(topic, value=value, key=key, on_delivery=callback, **extra)
            break
        except BufferError:  # local queue full: let deliveries drain it
            client.poll(0.05)
    client.poll(0)


def _partitions_of(conf: KafkaConf, subscription: Subscription, fallback: list[str]) -> list[tuple[str, int]]:
    """Every (topic, partition) a topics-or-pattern subscription covers, from the cluster's metadata."""
    if subscription.assignment:
        return list(subscription.assignment)
    if subscription.pattern:
        import re

        regex = re.compile(subscription.pattern)
        topics = [t for t in kafka.list_topics(conf) if regex.match(t)] or fallback
    else:
        topics = list(subscription.topics)
    return [(t, p.id) for t in topics for p in kafka.describe_topic(conf, t).partitions]


def _first_bootstrap(servers: str) -> tuple[str, int]:
    first = servers.split(",")[0].strip()
    first = first.split("://", 1)[-1]
    host, _, port = first.rpartition(":")
    if not host or not port.isdigit():
        raise TopicDesignError(f"cannot read host:port from bootstrap.servers {servers!r}")
    return host.strip("[]"), int(port)


def _raw_metadata(host: str, port: int, timeout: float = 120.0) -> tuple[int, float]:
    """Send Metadata v4 for all topics; returns (response bytes incl. size field, seconds).

    v4 because Kafka 4 dropped v0-v3, and v4 is still the simple non-flexible encoding.
    """
    client_id = b"workbench-topics"
    header = struct.pack(">hhih", 3, 4, 1, len(client_id)) + client_id
    # A null topic array asks for every topic; allow_auto_topic_creation = false.
    body = struct.pack(">ib", -1, 0)
    request = header + body
    with socket.create_connection((host, port), timeout=timeout) as sock:
        started = time.perf_counter()
        sock.sendall(struct.pack(">i", len(request)) + request)
        size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
        _recv_exactly(sock, size)
        seconds = time.perf_counter() - started
    return size + 4, seconds


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise KafkaError("the broker closed the connection in the middle of a Metadata response")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
