"""Share groups (KIP-932, Kafka 4.2+) against consumer groups: who helps, what comes twice, what order holds.

A consumer group gives each partition to one member: past the partition count, a new
member waits idle, so partitions are the unit of parallelism and a topic is sized for its
slowest consumer. A share group lets any number of members read the same partition: the
broker hands each record to one member under a time lock (`share.record.lock.duration.ms`),
and the member accepts it (done), releases it (another may take it) or rejects it (never
again). A lock that runs out, a member that dies, a release: the record comes again with a
higher delivery count. What it gives up is order: two records of one key may be processed
by two members at once.

`run_group` reads one pre-filled topic with N members of either kind, each spending
`processing_ms` on every record (a sleep: the work a real consumer does between polls,
without using a core), until every record has been processed; every delivery is kept,
so the row can say what came twice and what came out of order. A release and a member
killed mid-batch are `workbench.topics.share_redelivery`'s.

The broker hands a share member whole record batches (as the producer wrote them): a
producer that put 300 records in one batch makes one unit of work that one member takes,
however many members wait (measured: 4 members on one partition, 300 records in one
batch: one member read all 300; in 300 batches of one: 75 each). librdkafka 2.16 has no
KIP-1206 `record_limit` acquisition, so the topic's batching decides how finely a share
group can share.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, NamedTuple

import pandas as pd
from confluent_kafka import AcknowledgeType, Consumer, ShareConsumer

from workbench import kafka
from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.kafka.admin import alter_group_configs
from workbench.numbers import format_number
from workbench.stack import Stack
from workbench.topics.errors import TopicDesignError

__all__ = [
    "Delivery",
    "FIRST_RECORD_S",
    "GroupRun",
    "KINDS",
    "Kind",
    "PROXY_ACKS",
    "ProxyAcks",
    "ReadPath",
    "Redelivery",
    "conclusions",
    "configure_share_group",
    "delivery_of",
    "fill_for_sharing",
    "order_breaks",
    "run_group",
    "scaling_sentence",
    "share_consumer_conf",
    "share_groups_missing",
    "share_member",
]

Kind = Literal["consumer group", "share group"]
#: How a share member reads: a librdkafka share consumer, or an instance on the REST proxy.
ReadPath = Literal["native", "proxy"]
#: How a share member through the proxy acknowledges an answer: with its next records
#: request (`?acknowledge=accept`, sent to Kafka with the next fetch), or with the
#: acknowledgements call (its own round trip, answered once the broker took them).
ProxyAcks = Literal["next_fetch", "call"]
PROXY_ACKS: tuple[ProxyAcks, ProxyAcks] = ("next_fetch", "call")
KINDS: tuple[Kind, Kind] = ("consumer group", "share group")

#: librdkafka refuses these on a share consumer (rdkafka_conf.c): dropped from the profile's settings.
_NOT_FOR_SHARE = ("allow.auto.create.topics", "auto.offset.reset", "enable.partition.eof", "group.remote.assignor")
_CLIENT_ONLY = ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "group.protocol")
#: How long a member may go without a first record before the run gives up on the broker.
FIRST_RECORD_S = 20.0


class Delivery(NamedTuple):
    """One record handed to one member and processed by it (a named tuple: a run makes
    one per record, and a frozen dataclass cost four times as much to build)."""

    member: int
    partition: int
    offset: int
    key: bytes | None
    delivery_count: int  # the broker's delivery count (a consumer group has none: 1)
    done_s: float  # perf_counter when the member finished it


@dataclass
class GroupRun:
    """Every delivery of one run, and what they add up to."""

    kind: Kind
    members: int
    processing_ms: float
    records: int
    deliveries: list[Delivery] = field(default_factory=list)
    started_s: float = 0.0
    complete: bool = False

    @property
    def unique(self) -> int:
        return len({(d.partition, d.offset) for d in self.deliveries})

    @property
    def duplicates(self) -> int:
        return len(self.deliveries) - self.unique

    @property
    def first_record_s(self) -> float:
        """From the start until the first record was taken: the members joining and fetching."""
        if not self.deliveries:
            return float("nan")
        return min(d.done_s for d in self.deliveries) - self.processing_ms / 1000 - self.started_s

    @property
    def seconds(self) -> float:
        """From the first record taken to the last one processed: the group at work, its joining left out."""
        if not self.deliveries:
            return 0.0
        return max(d.done_s for d in self.deliveries) - self.started_s - self.first_record_s

    @property
    def msg_s(self) -> float:
        return self.unique / self.seconds if self.seconds > 0 else float("nan")

    @property
    def busy_members(self) -> int:
        """Members that processed at least one record."""
        return len({d.member for d in self.deliveries})


@dataclass
class Redelivery:
    """What a release and a killed member cost, from `share_redelivery.redelivery_run`."""

    records: int
    released: set[tuple[int, int]]
    abandoned: set[tuple[int, int]]
    lock_ms: int
    deliveries: list[Delivery]
    #: Seconds from each abandoned record's acquisition to its next delivery.
    waits_s: list[float]
    accepted: int


def share_consumer_conf(stack: Stack, group: str) -> KafkaConf:
    """A share consumer's settings: the profile's connection settings without the keys a
    share consumer refuses, explicit acknowledgement, and `group`."""
    conf = {k: v for k, v in stack.kafka_config("consumer").items() if k not in (*_NOT_FOR_SHARE, *_CLIENT_ONLY)}
    return {**conf, "group.id": group, "share.acknowledgement.mode": "explicit"}


def configure_share_group(target: Stack | KafkaConf, group: str, *, lock_ms: int = 30_000) -> None:
    """Before its first member joins: read from the earliest record, lock records for
    `lock_ms`, notice a dead member after 6 s (the embedded broker's floors: 1 s, 6 s).
    `target` is a stack, or the admin settings of a cluster.

    Raises:
        TopicDesignError: the broker refused a setting (a floor above these, an old broker).
    """
    settings = {
        "share.auto.offset.reset": "earliest",
        "share.record.lock.duration.ms": str(lock_ms),
        "share.session.timeout.ms": "6000",
        "share.heartbeat.interval.ms": "500",
    }
    conf = target.kafka_config("admin") if isinstance(target, Stack) else target
    try:
        alter_group_configs(conf, group, settings)
    except KafkaError as exc:
        raise TopicDesignError(f"the broker refused share group {group!r}'s settings: {exc}") from None


def share_member(stack: Stack, group: str, max_records: int) -> ShareConsumer:
    """A share consumer of `group` handed at most `max_records` a poll."""
    return ShareConsumer({**share_consumer_conf(stack, group), "max.poll.records": max_records})


def _group_member(stack: Stack, group: str) -> Consumer:
    return kafka.consumer(stack.kafka_config("consumer"), settings={"group.id": group, "auto.offset.reset": "earliest"})


def run_group(
    stack: Stack,
    topic: str,
    *,
    kind: Kind,
    members: int,
    processing_ms: float,
    records: int,
    lock_ms: int = 30_000,
    max_poll_records: int = 10,
    timeout_s: float = 180.0,
    path: ReadPath = "native",
    proxy_acks: ProxyAcks = "next_fetch",
) -> GroupRun:
    """Read `topic`'s `records` with `members` members of a fresh group of `kind`, each
    spending `processing_ms` on every record, until every record has been processed.

    A share member acquires up to `max_poll_records` records a fetch (fewer if it could not
    process them within half a lock): a member acquires greedily, and records another one
    has acquired wait for it, so large fetches leave members idle (measured: 16 members
    asking for 750 records each on 4 partitions kept 6 busy). librdkafka takes the figure
    as a hint; a batch that outlasts its lock comes again and is counted as duplicates.

    `path="proxy"` makes each share member a share-consumer instance on the stack's REST
    proxy asking the same records a fetch (explicit acknowledgement: every record of an
    answer accepted before the next, with the next records request or the
    acknowledgements call, as `proxy_acks` says).

    Raises:
        TopicDesignError: no record came within `FIRST_RECORD_S` (a broker without share
            groups answers a share member with nothing at all), or the run did not finish
            within `timeout_s`.
    """
    group = f"{'share' if kind == 'share group' else 'group'}-{uuid.uuid4().hex[:8]}"
    if kind == "share group":
        configure_share_group(stack, group, lock_ms=lock_ms)
    run = GroupRun(kind, members, processing_ms, records)
    seen: set[tuple[int, int]] = set()
    lock = threading.Lock()
    stop = threading.Event()
    per_batch = max(1, min(max_poll_records, int(lock_ms / 2 / max(processing_ms, 0.001))))

    def record(deliveries: Sequence[Delivery]) -> None:  # a poll's or an answer's at once: one lock each
        with lock:
            run.deliveries.extend(deliveries)
            seen.update((d.partition, d.offset) for d in deliveries)
            if len(seen) >= records:
                stop.set()

    def work(member: int) -> None:
        if kind == "share group" and path == "proxy":
            _proxy_share_loop(stack, group, member, topic, processing_ms, stop, record, proxy_acks, per_batch)
        elif kind == "share group":
            share = share_member(stack, group, per_batch)
            _member_loop(share, topic, stop, record, partial(_share_poll, share, member, processing_ms, stop))
        else:
            plain = _group_member(stack, group)
            _member_loop(plain, topic, stop, record, partial(_group_poll, plain, member, processing_ms))

    run.started_s = time.perf_counter()
    failures: list[BaseException] = []
    threads = [threading.Thread(target=_guarded(work, failures), args=(m,), daemon=True) for m in range(members)]
    for thread in threads:
        thread.start()
    _wait(run, stop, timeout_s, failures)
    for thread in threads:
        thread.join(30)
    run.complete = len(seen) >= records
    return run


def _guarded(work: Callable[[int], None], failures: list[BaseException]) -> Callable[[int], None]:
    def guarded(member: int) -> None:
        try:
            work(member)
        except BaseException as exc:  # reported by the waiting thread, not lost in this one
            failures.append(exc)

    return guarded


def _wait(run: GroupRun, stop: threading.Event, timeout_s: float, failures: list[BaseException]) -> None:
    deadline = run.started_s + timeout_s
    while not stop.wait(0.1):
        if failures:
            stop.set()
            raise TopicDesignError(f"a {run.kind} member failed: {failures[0]}")
        now = time.perf_counter()
        if not run.deliveries and now - run.started_s > FIRST_RECORD_S:
            stop.set()
            raise TopicDesignError(
                f"no {run.kind} member got a record within {FIRST_RECORD_S:.0f} s"
                + (": this broker has no share groups (KIP-932, Kafka 4.2 or newer)" if run.kind == KINDS[1] else "")
            )
        if now > deadline:
            stop.set()
            raise TopicDesignError(
                f"the {run.kind} processed {run.unique} of {run.records} records in {timeout_s:.0f} s"
            )


def _member_loop(
    client: Consumer | ShareConsumer,
    topic: str,
    stop: threading.Event,
    record: Callable[[Sequence[Delivery]], None],
    poll: Callable[[], list[Delivery]],
) -> None:
    """Subscribe `client` to `topic` and hand what each `poll` processed to `record` until `stop`;
    a share member then commits its last acknowledgements. The client is closed whatever happens."""
    try:
        client.subscribe([topic])
        while not stop.is_set():
            record(poll())
        if isinstance(client, ShareConsumer):
            client.commit_sync(10)
    finally:
        client.close()


def _share_poll(client: ShareConsumer, member: int, processing_ms: float, stop: threading.Event) -> list[Delivery]:
    """Poll, process and accept each record; every record of a poll is acknowledged before the next."""
    done: list[Delivery] = []
    for message in client.poll(0.2):
        if message.error() is not None:
            continue
        if stop.is_set():  # the run is over: the record goes back for another member
            client.acknowledge(message, AcknowledgeType.RELEASE)
            continue
        _process(processing_ms)
        done.append(delivery_of(member, message, message.delivery_count()))
        client.acknowledge(message, AcknowledgeType.ACCEPT)
    return done


def _proxy_share_loop(
    stack: Stack,
    group: str,
    member: int,
    topic: str,
    processing_ms: float,
    stop: threading.Event,
    record: Callable[[Sequence[Delivery]], None],
    acks: ProxyAcks = "next_fetch",
    max_records: int | None = None,
) -> None:
    """A share member through the REST proxy: read an answer, process and accept its records
    (releasing those the run no longer needs), read the next. With `acks="next_fetch"` an
    answer processed in full is accepted by the next records request; the acknowledgements
    call serves the rest (`acks="call"`, a run's last answer, records released at the end)."""
    from workbench.proxy import ProxyClient

    AckRow = tuple[str, int, int, Literal["accept", "release", "reject"]]
    with (
        ProxyClient.for_stack(stack) as proxy,
        proxy.share_consumer(group, topics=[topic], max_poll_records=max_records) as member_instance,
    ):
        held: list[AckRow] = []  # the last answer, accepted in full, not yet acknowledged
        while not stop.is_set():
            piggyback = acks == "next_fetch" and bool(held)
            answer = member_instance.poll(timeout_ms=200, acknowledge="accept" if piggyback else None)
            rows: list[AckRow] = []
            done: list[Delivery] = []
            for got in answer:
                if stop.is_set():
                    rows.append((got.topic, got.partition, got.offset, "release"))
                    continue
                _process(processing_ms)
                key = got.key if isinstance(got.key, bytes) or got.key is None else str(got.key).encode()
                count = int(got.delivery_count or 1)
                done.append(Delivery(member, got.partition, got.offset, key, count, time.perf_counter()))
                rows.append((got.topic, got.partition, got.offset, "accept"))
            record(done)
            if acks == "call" or any(kind != "accept" for *_, kind in rows):
                if rows:
                    member_instance.acknowledge(rows)
                held = []
            else:
                held = rows
        if held:
            member_instance.acknowledge(held)


def _group_poll(client: Consumer, member: int, processing_ms: float) -> list[Delivery]:
    """Poll and process at most one record: a consumer group member's poll."""
    message = client.poll(0.2)
    if message is None or message.error() is not None:
        return []
    _process(processing_ms)
    return [delivery_of(member, message, 1)]


def _process(processing_ms: float) -> None:
    """A record's processing time. None at all is no call: `time.sleep(0)` still yields the
    CPU, and on a busy machine it was 57% of the proxy members' loop samples (py-spy)."""
    if processing_ms > 0:
        time.sleep(processing_ms / 1000)


def delivery_of(member: int, message: Any, count: int | None) -> Delivery:
    """What member `member` was handed: `message`'s place, with delivery count `count`."""
    return Delivery(member, message.partition(), message.offset(), message.key(), int(count or 1), time.perf_counter())


def order_breaks(deliveries: Iterable[Delivery]) -> int:
    """Keys whose records were finished out of log order at least once (first deliveries only).

    A consumer group processes a partition in offset order, so a key (which stays in one
    partition) never breaks; a share group's members race each other.
    """
    first: dict[tuple[int, int], Delivery] = {}
    for delivery in sorted(deliveries, key=lambda d: d.done_s):
        first.setdefault((delivery.partition, delivery.offset), delivery)
    last_offset: dict[tuple[int, bytes | None], int] = {}
    broken: set[tuple[int, bytes | None]] = set()
    for delivery in first.values():  # in the order they were finished
        key = (delivery.partition, delivery.key)
        if delivery.offset < last_offset.get(key, -1):
            broken.add(key)
        last_offset[key] = max(delivery.offset, last_offset.get(key, -1))
    return len(broken)


def fill_for_sharing(
    stack: Stack, topic: str, records: int, records_per_batch: int = 1, record_bytes: int | None = None
) -> None:
    """`records` keyed records (20 keys), `records_per_batch` to a producer batch, each value
    padded to `record_bytes` when given.

    Raises:
        TopicDesignError: not every record was acknowledged.
    """
    settings = {"batch.num.messages": records_per_batch, "linger.ms": 0 if records_per_batch == 1 else 50}
    rows = ((f"key-{i % 20}", f"record-{i}".ljust(record_bytes or 0, ".")) for i in range(records))
    result = kafka.produce(stack.kafka_config("producer"), topic, rows, settings=settings)
    if result.acknowledged != records:
        raise TopicDesignError(f"only {result.acknowledged} of {records} records were acknowledged")


def scaling_sentence(grid: pd.DataFrame, *, partitions: int) -> str:
    """Markdown bullets from `share_grid` rows: per processing time, each kind's best rate and
    the member count past which doubling the members added less than 10 %."""
    lines = []
    for ms, rows in grid.groupby("processing_ms"):
        parts = []
        for kind, runs in rows.groupby("kind"):
            rates = runs.groupby("members")["msg_s"].median()
            parts.append(
                f"{kind} {rates.max():,.0f} records/s at best, no longer helped past **{_knee(rates)}** member(s)"
            )
        lines.append(f"- {format_number(float(ms))} ms per record: " + "; ".join(parts) + ".")
    lines.append(
        f"- The topic has {partitions} partitions: a consumer group gives each to one member, so its members "
        "past that wait idle; a share group's members all take records."
    )
    return "\n".join(lines)


def _knee(rates: pd.Series) -> int:
    """The member count after which the next one measured added less than 10 %."""
    counts = list(rates.index)
    for here, there in itertools.pairwise(counts):
        if rates[there] < 1.1 * rates[here]:
            return int(here)
    return int(counts[-1])


def conclusions(grid: pd.DataFrame, *, partitions: int, redelivery: Redelivery | None, missing: str | None) -> str:
    """The notebook's closing bullets, every figure from the run."""
    slowest = grid[grid["processing_ms"] == grid["processing_ms"].max()]
    best = slowest.groupby("kind")["msg_s"].max()
    lines = []
    if "share group" in best and "consumer group" in best:
        ratio = best["share group"] / best["consumer group"]
        lines.append(
            f"- At {format_number(float(slowest['processing_ms'].iloc[0]))} ms per record, a share group reached "
            f"**{ratio:.1f}x** the best consumer group's records/s on {partitions} partitions"
            + (
                ": members past the partition count added throughput, so slow consumers no longer dictate the "
                "partition count (notebook 08's rule sized partitions for the consumer side)."
                if ratio >= 1.2
                else ": here the extra members did not pay for themselves."
            )
        )
    else:
        lines.append(f"- Share groups were not measured here ({missing}); consumer groups stop at the partitions.")
    order = grid.groupby("kind")["keys_out_of_order"].max()
    lines.append(
        "- Order: "
        + "; ".join(f"{kind}: {int(keys)} of 20 keys out of order at worst" for kind, keys in order.items())
        + ". Work that needs per-key order stays on a consumer group or a key per partition."
    )
    if redelivery is not None:
        lines.append(
            f"- {'Nothing' if redelivery.accepted == redelivery.records else 'Something'} was lost: "
            f"{redelivery.accepted} of {redelivery.records} records accepted once after a "
            f"release and a killed member; duplicates are the price: {len(redelivery.deliveries) - redelivery.accepted}"
            " record(s) seen twice by the survivor."
        )
    return "\n".join(lines)


def share_groups_missing(stack: Stack) -> str | None:
    """None when the profile's broker serves share groups, else why not, in one line.

    Asked by doing it: a share member on a one-record topic, for up to `FIRST_RECORD_S`
    (a broker without share groups answers with nothing at all: Tansu, Kafka before 4.2).
    """
    topic = f"share-probe-{uuid.uuid4().hex[:8]}"
    with stack.temporary_topics({topic: 1}):
        kafka.produce(stack.kafka_config("producer"), topic, [(None, b"probe")])
        try:
            run_group(stack, topic, kind="share group", members=1, processing_ms=0, records=1, timeout_s=60)
        except TopicDesignError as exc:
            return str(exc)
    return None
