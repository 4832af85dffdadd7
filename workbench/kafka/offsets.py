"""True log-end offsets, on Apache Kafka and on brokers that report them wrongly.

Kafka answers `ListOffsets(latest)` with the high watermark, the offset after the last
record a consumer can read: the end, at the cost of one admin request. Tansu (the second
embedded broker) answers with the base offset of the last record batch + 1: after 5,000
records in 1,000-record batches it says 4,001. Every lag, throughput figure and Spark
offset range must use the real end, so for a cluster declared to need it
(`declare_end_probe`, done by the stack for Tansu, for a cluster profile with
`broker.kind: tansu`, and for one found short by `stack.log_ends`) this module reads
the end from the log itself: it fetches from (reported end - 1), the start of the last
batch there, and takes the offset after the last record it sees. Everywhere else the
reported end is used as it is.

A declaration holds in the process that made it. Another process is told explicitly,
never through this process's environment: the stack's services get `end_probe_env()` in
the environment they are started with, Spark's Python workers a source option
(`streaming.kafka_reader.source_options`), and a notebook's kernel finds its stack again
(`stack.attach`), which declares what the stack knows.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition
from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka.admin import AdminClient, OffsetSpec

from workbench._types import Partition
from workbench.backoff import Backoff
from workbench.errors import KafkaError
from workbench.kafka.admin import AdminOwner, admin_client, describe_topic

if TYPE_CHECKING:
    from workbench.config import KafkaConf

__all__ = [
    "END_PROBE_ENV",
    "OffsetReader",
    "Partition",
    "READER_TIMEOUT_S",
    "declare_end_probe",
    "end_offsets",
    "end_probe_env",
    "needs_end_probe",
    "position",
    "record_ranges",
    "reported_offsets",
    "total_records",
]

log = logging.getLogger("workbench.kafka")


#: The environment variable listing, as a JSON array of `bootstrap.servers` strings, the
#: clusters whose ListOffsets(latest) is not the log's end: an operator's setting, and what
#: the stack gives the services it starts (`end_probe_env`).
END_PROBE_ENV = "WORKBENCH_END_PROBE"

#: Clusters declared in this process (`declare_end_probe`).
_declared_here: set[str] = set()


#: Seconds an `OffsetReader` waits for an answer: a bound on a failure, never a wait on success.
#: At 10 s, Tansu's end probe timed out under a test suite's load (load average 5-8 on two
#: cores, notebook 12's lag sampler on the foreign cluster); an answer that late is still an answer.
READER_TIMEOUT_S = 30.0


def declare_end_probe(bootstrap_servers: str) -> None:
    """Read this cluster's end offsets from its logs in this process (see the module's docstring
    for how the processes it starts are told)."""
    _declared_here.add(bootstrap_servers)


def end_probe_env() -> dict[str, str]:
    """The environment that tells a process about to be started which clusters' ends to read
    from their logs: every cluster this process does, or nothing when there is none."""
    declared = _declared()
    return {END_PROBE_ENV: json.dumps(sorted(declared))} if declared else {}


def needs_end_probe(conf: KafkaConf) -> bool:
    """True when the cluster `conf` reaches was declared to report ends wrongly (Tansu)."""
    return str(conf.get("bootstrap.servers", "")) in _declared()


def _declared() -> frozenset[str]:
    from workbench.config import end_probe  # pydantic and yaml only where a reader is made

    return end_probe() | _declared_here


def position(message: Message) -> tuple[Partition, int]:
    """`((topic, partition), offset)` of a consumed record; librdkafka always sets all three."""
    topic, partition, offset = message.topic(), message.partition(), message.offset()
    if topic is None or partition is None or offset is None:
        raise KafkaError(f"a consumed message lacks its position: {topic}[{partition}]@{offset}")
    return (topic, partition), offset


def end_offsets(
    conf: KafkaConf, topics: str | Iterable[str] | Iterable[Partition], *, timeout: float = 10.0
) -> dict[Partition, int]:
    """The offset after the last record of each partition (the true log-end offset).

    Args:
        conf: librdkafka settings with `bootstrap.servers`.
        topics: a topic, several topics (all their partitions), or (topic, partition) pairs.
        timeout: seconds for the whole call.

    Returns:
        `{(topic, partition): end}`, sorted by topic and partition.

    Raises:
        KafkaError: a topic is unknown, or the broker did not answer in time.

    Usage: `sum(end_offsets(conf, "orders").values())` is the number of records ever written.
    A caller that asks again and again (a stream's every trigger) keeps an `OffsetReader`.
    """
    with OffsetReader(conf, timeout=timeout) as reader:
        return reader.ends(_partitions(conf, topics, timeout))


def record_ranges(
    conf: KafkaConf, topics: str | Iterable[str] | Iterable[Partition], *, timeout: float = 30.0
) -> dict[Partition, tuple[int, int]]:
    """`{(topic, partition): (earliest, true end)}`: what `clients.read_records` reads, resolved
    ahead of it, so that a timed read times the read and not the end's probe (30-80 ms
    for four partitions on Tansu, where the end takes a probe consumer)."""
    ends = end_offsets(conf, topics, timeout=timeout)
    starts = reported_offsets(conf, list(ends), "earliest", timeout=timeout)
    return {p: (starts[p], ends[p]) for p in ends}


def total_records(conf: KafkaConf, topics: str | Iterable[str], *, timeout: float = 10.0) -> int:
    """Records in the topics' logs now (end - earliest, summed over partitions)."""
    return sum(end - start for start, end in record_ranges(conf, topics, timeout=timeout).values())


def reported_offsets(
    conf: KafkaConf, partitions: Iterable[Partition], which: str, *, timeout: float = 10.0
) -> dict[Partition, int]:
    """What the broker answers to ListOffsets `earliest` or `latest` (on Tansu, `latest` is not the end)."""
    with OffsetReader(conf, timeout=timeout) as reader:
        return reader.reported(partitions, which)


class OffsetReader(AdminOwner):
    """Offset questions asked again and again through one AdminClient.

    A Spark source asks on every trigger which partitions exist and where their logs
    start and end. A new AdminClient for each question pays for its connection and its
    first Metadata request every time (measured: a topic listing took 3-50 ms, 0.5 ms
    through a kept client). Only the AdminClient is kept: the consumer that reads the
    true end is made for each `ends` call that must read a log. librdkafka (2.16)
    crashes the whole process when a topic one of its consumers ever read is deleted on
    the embedded broker, even once unassigned and with metadata refreshes off (measured;
    an AdminClient survives it), and a kept probe was no faster: it goes on fetching
    between calls.
    """

    def __init__(self, conf: KafkaConf, *, timeout: float = READER_TIMEOUT_S, probe: bool | None = None) -> None:
        self.conf = conf
        self.timeout = timeout
        #: Read ends from the logs (`probe=True`, or a cluster declared by `declare_end_probe`),
        #: else take ListOffsets'.
        self.probe = needs_end_probe(conf) if probe is None else probe
        self._admin: AdminClient | None = None
        #: (earliest, reported latest, true end) of each partition when its log was last read.
        self._seen: dict[Partition, tuple[int, int, int]] = {}

    @property
    def admin(self) -> AdminClient:
        """The one AdminClient, made on first use (a reader can be pickled before it is used)."""
        if self._admin is None:
            self._admin = admin_client(self.conf)
        return self._admin

    def reported(self, partitions: Iterable[Partition], which: str) -> dict[Partition, int]:
        """ListOffsets `earliest` or `latest` (on Tansu, `latest` is not the end: see `ends`)."""
        return self._list({which: list(partitions)})[which]

    def ends(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        """The true log-end offset of each partition (see `end_offsets`).

        On Kafka, ListOffsets(latest) alone. On a cluster that needs the probe (Tansu), the
        log is read only where ListOffsets changed since this reader last read it: the
        reported `latest` is the last batch's base + 1, so while it and `earliest` stay the
        same no batch was added or removed and the end found last time still holds. A
        streaming query asks on every trigger, and an idle one every 10 ms: with a probe
        consumer made each time, an idle query on a quiet Tansu topic cost its Python
        runner 14 % of a core and the broker 13 % (measured; 10 % and 6 % with this).
        """
        partitions = sorted(set(partitions))
        if not partitions:
            return {}
        if not self.probe:
            return self.reported(partitions, "latest")
        listed = self._list({"earliest": partitions, "latest": partitions})
        earliest, latest = listed["earliest"], listed["latest"]
        ends: dict[Partition, int] = {}
        unknown: dict[Partition, int] = {}
        for p in partitions:
            seen = self._seen.get(p)
            if latest[p] <= earliest[p]:
                ends[p] = latest[p]  # an empty log: nothing to read
            elif seen is not None and seen[:2] == (earliest[p], latest[p]):
                ends[p] = seen[2]
            else:
                unknown[p] = latest[p]
        if unknown:
            probe = _probe_consumer(self.conf)
            try:
                last_read = _read_last_offsets(probe, unknown, self.timeout)
            finally:
                probe.close()
            for p, reported in unknown.items():
                ends[p] = max(reported, last_read.get(p, -1) + 1)
                self._seen[p] = (earliest[p], reported, ends[p])
        return {p: ends[p] for p in partitions}

    def by_timestamp(self, stamps: Mapping[Partition, int]) -> dict[Partition, int | None]:
        """The first offset whose record timestamp is at or after each partition's `stamps` (ms).

        ListOffsets by time, what Java's `offsetsForTimes` asks; None where the partition
        holds no record that late.
        """
        if not stamps:
            return {}
        client = self.admin  # must outlive the futures
        specs = {TopicPartition(t, p): OffsetSpec.for_timestamp(stamp) for (t, p), stamp in stamps.items()}
        found: dict[Partition, int | None] = {}
        for tp, future in client.list_offsets(specs, request_timeout=self.timeout).items():
            try:
                offset = int(future.result().offset)
            except KafkaException as exc:
                error = exc.args[0]
                raise KafkaError(
                    f"cannot list offsets of {tp.topic}[{tp.partition}] by timestamp: {error.str()}", error.name()
                ) from None
            found[(tp.topic, tp.partition)] = offset if offset >= 0 else None
        return found

    def _list(self, wanted: Mapping[str, list[Partition]]) -> dict[str, dict[Partition, int]]:
        """Several ListOffsets questions (`{"earliest": [...], "latest": [...]}`) in flight at once.

        An answer that a partition's leadership is settling (`_SETTLING`: after its creation
        or a leader's death) is asked again until the reader's timeout, since librdkafka's
        admin call does not retry it (measured: a topic created a moment before once
        answered NOT_LEADER_FOR_PARTITION for one of its seven partitions on one Kafka
        node). An unknown topic still fails at once.
        """
        deadline = time.monotonic() + self.timeout
        result: dict[str, dict[Partition, int]] = {which: {} for which in wanted}
        pending = {which: list(partitions) for which, partitions in wanted.items() if partitions}
        pauses = Backoff(0.01, 0.2).delays()
        while pending:
            retry: dict[str, list[Partition]] = {}
            for which, (partition, answer) in self._ask(pending):
                if isinstance(answer, int):
                    result[which][partition] = answer
                elif answer.name() in _SETTLING and time.monotonic() < deadline:
                    retry.setdefault(which, []).append(partition)
                else:
                    raise KafkaError(
                        f"cannot list offsets of {partition[0]}[{partition[1]}]: {answer.str()}", answer.name()
                    )
            pending = retry
            if pending:
                time.sleep(next(pauses))
        return result

    def _ask(self, wanted: Mapping[str, list[Partition]]) -> Iterator[tuple[str, tuple[Partition, int | Any]]]:
        """`(which, (partition, offset or librdkafka's error))` for each question, all sent at once."""
        specs = {"earliest": OffsetSpec.earliest(), "latest": OffsetSpec.latest()}
        client = self.admin  # must outlive the futures
        futures = {
            which: client.list_offsets(
                {TopicPartition(t, p): specs[which] for t, p in partitions}, request_timeout=self.timeout
            )
            for which, partitions in wanted.items()
        }
        for which, answers in futures.items():
            for tp, future in answers.items():
                try:
                    yield which, ((tp.topic, tp.partition), int(future.result().offset))
                except KafkaException as exc:
                    yield which, ((tp.topic, tp.partition), exc.args[0])


#: ListOffsets answers that mean "ask again shortly": leadership is moving or settling.
_SETTLING = frozenset(
    {
        "NOT_LEADER_FOR_PARTITION",
        "LEADER_NOT_AVAILABLE",
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "OFFSET_NOT_AVAILABLE",
    }
)


def _partitions(conf: KafkaConf, topics: str | Iterable[str] | Iterable[Partition], timeout: float) -> list[Partition]:
    if isinstance(topics, str):
        topics = [topics]
    result: list[Partition] = []
    for item in topics:
        if isinstance(item, tuple):
            result.append((item[0], int(item[1])))
        else:
            result.extend((item, p.id) for p in describe_topic(conf, item, timeout=timeout).partitions)
    return sorted(set(result))


def _probe_consumer(conf: KafkaConf) -> Consumer:
    """A consumer that reads to the end of a log and says so (partition-EOF events) at once."""
    return Consumer(
        {
            **conf,
            "group.id": f"workbench-end-offsets-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            # The end is known when a fetch comes back empty, and the broker may hold that
            # fetch this long: short, but not 1. With 1, Tansu left the last batch of one
            # topic in about 50 unreadable for good (every fetch empty, no end event); with
            # 2-10 every such topic was read at once. 10 costs a probe 8 ms more than 1.
            "fetch.wait.max.ms": 10,
            "logger": log,
        }
    )


def _read_last_offsets(consumer: Consumer, reported: Mapping[Partition, int], timeout: float) -> dict[Partition, int]:
    """Read from (reported end - 1) to the end of each log; returns the last offset seen."""
    last: dict[Partition, int] = {}
    consumer.assign([TopicPartition(t, p, end - 1) for (t, p), end in reported.items()])
    pending = set(reported)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        # What is already fetched, without waiting; else wait for the next record or event
        # alone. `consume(n, timeout)` would wait out its timeout whenever fewer than n
        # come, and the last batch's size is not known (measured: 40 ms a call vs 3).
        messages: list[Message | None] = [*consumer.consume(num_messages=10_000, timeout=0)] or [consumer.poll(0.1)]
        for message in messages:
            if message is None:
                continue
            error = message.error()
            if error is None:
                key, offset = position(message)
                last[key] = max(last.get(key, -1), offset)
                continue
            key = (message.topic() or "?", message.partition() or 0)
            if error.code() == RdKafkaError._PARTITION_EOF:
                pending.discard(key)
            else:
                raise KafkaError(f"cannot read the end of {key[0]}[{key[1]}]: {error.str()}", error.name())
    if pending:
        raise KafkaError(
            f"end offsets not found within {timeout:.0f} s for {sorted(pending)}: the broker did not answer a "
            "fetch at the log's end in time (Tansu slows with the batches in a partition: measured, 0.2 s at "
            "10,000 one-record batches and 9 s at 20,000; larger batches (linger.ms, batch.size) keep it fast)"
        )
    return last
