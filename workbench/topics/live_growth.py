"""A topic grown on the broker itself (CreatePartitions), and where its keys land before and after.

`growth.moved_keys` computes which keys change partition when a topic grows, with the
producer's own partitioner. Here the broker does it: a topic is created with `old`
partitions, every key is produced once, the topic is grown to `new` partitions with the
admin API, every key is produced again, and both rounds are read back. A key whose two
records sit in different partitions moved. For a hashing partitioner the measured set of
moved keys must be exactly the computed one: librdkafka places a keyed record by
`hash(key) mod n`, n being the partition count in its metadata, so a difference means a
producer placed records with a stale count. That is why the growth waits until every
broker's metadata shows the new count before the second round, and that wait is the
time reported (`create_partitions_s`): a producer that asked a broker earlier would
still spread keys over the old partitions.

Growing needs CreatePartitions, which Kafka has and some Kafka-compatible brokers do not
(Tansu answers it with an error); a cluster may refuse it too (an ACL, a policy). Then
`grow_live` raises `PartitionGrowthRefused`, and `measure_growth` keeps what it measured
and says why it stopped, in one line, so a notebook can show the computed table alone.

    run = measure_growth(stack, [f"device-{i}" for i in range(2_000)], [(4, 5), (4, 8)])
    run.refused or pd.DataFrame(run.rows())
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench import kafka
from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.stack import Stack
from workbench.topics.errors import PartitionGrowthRefused, TopicDesignError
from workbench.topics.growth import Growth, moved_keys
from workbench.topics.partitioners import JAVA_DEFAULT, key_bytes, partition_for

__all__ = ["GrowthRun", "LiveGrowth", "add_partitions", "grow_live", "measure_growth"]

#: The record values of the two rounds: a record says which round wrote it.
_ROUNDS = (b"before", b"after")


@dataclass(frozen=True)
class LiveGrowth(Growth):
    """Where each key landed before and after one live growth, against the computed movement."""

    #: Records read back from the topic: two per key when nothing was lost.
    records_read: int
    #: Keys whose two records are in different partitions, as read back.
    moved: int
    #: Keys `moved_keys` computes to move with the same partitioner.
    computed_moved: int
    #: Keys moved on the broker but not in the computation, or the other way round.
    disagreeing: int
    #: Records not in the partition `partition_for` gives for their round's count.
    misplaced: int
    #: Seconds from the CreatePartitions request until every broker's metadata had the new count.
    create_partitions_s: float

    @property
    def moved_fraction(self) -> float:
        """Share of the keys that moved on the broker (0 for no keys)."""
        return self.moved / self.keys if self.keys else 0.0

    @property
    def computed_fraction(self) -> float:
        """Share of the keys the partitioner computes to move."""
        return self.computed_moved / self.keys if self.keys else 0.0

    @property
    def agrees(self) -> bool:
        """The broker moved exactly the keys the computation names, and every record was read."""
        return self.disagreeing == 0 and self.misplaced == 0 and self.records_read == 2 * self.keys

    def _measures(self) -> dict[str, Any]:
        return {
            "records_read": self.records_read,
            "moved": self.moved,
            "moved_fraction": self.moved_fraction,
            "computed_moved": self.computed_moved,
            "computed_fraction": self.computed_fraction,
            "disagreeing": self.disagreeing,
            "misplaced": self.misplaced,
            "agrees": self.agrees,
            "create_partitions_s": self.create_partitions_s,
        }


@dataclass(frozen=True)
class GrowthRun:
    """The growths `measure_growth` made, and why it stopped early if the cluster refused one."""

    results: tuple[LiveGrowth, ...]
    #: The one-line reason the cluster gave for not adding partitions; None when every change ran.
    refused: str | None = None

    def rows(self) -> list[dict[str, Any]]:
        """`LiveGrowth.row()` of each change measured."""
        return [result.row() for result in self.results]

    def summary(self) -> list[str]:
        """What the run showed, in sentences with its own numbers: per change the keys that
        moved on the broker against the computed ones, the records read back, the time the
        growth took; or that the cluster cannot add partitions, in one line."""
        lines = []
        for r in self.results:
            same = (
                "exactly the keys the partitioner computes"
                if r.disagreeing == 0
                else f"{r.disagreeing:,} key(s) differ from the {r.computed_moved:,} the partitioner computes"
            )
            read = "every record" if r.records_read == 2 * r.keys else f"{r.records_read:,} of {2 * r.keys:,} records"
            lines.append(
                f"{r.old_partitions} → {r.new_partitions}: {r.moved:,} of {r.keys:,} keys ({r.moved_fraction:.1%}) "
                f"changed partition on the broker, {same}; {read} read back, {r.misplaced:,} misplaced; "
                f"the new count reached every broker's metadata {r.create_partitions_s:.2f} s after CreatePartitions."
            )
        if self.refused is not None:
            lines.append(f"Not grown on this cluster, so the computed movement above stands alone: {self.refused}.")
        return lines


def add_partitions(conf: KafkaConf, topic: str, total: int, *, timeout: float = 30.0) -> float:
    """Grow `topic` to `total` partitions; returns the seconds until every broker's metadata shows them.

    Each broker learns the new count from the controller's metadata log on its own, and
    a producer asking one that has not yet would place keys over the old partitions; so
    the time runs until each broker, asked through a client of its own, lists `total`
    partitions, each with a leader.

    Raises:
        PartitionGrowthRefused: the cluster answered CreatePartitions with an error (a
            broker without it, a count not above the current one, an ACL, a policy).
        KafkaError: the metadata did not show the new count within `timeout` seconds.

    Usage: `add_partitions(stack.kafka_config("admin"), "orders", 8)`.
    """
    from workbench.kafka.admin import create_partitions

    started = time.perf_counter()
    try:
        create_partitions(conf, topic, total, timeout=timeout)
    except KafkaError as exc:
        if str(exc).startswith(("waiting for", "waited ")):  # the new count never showed: not a refusal
            raise
        raise PartitionGrowthRefused(
            f"the cluster did not add partitions to {topic!r} (to {total}): {exc.code}, {_one_line(str(exc))}", exc.code
        ) from None
    return time.perf_counter() - started


def grow_live(
    stack: Stack,
    keys: Iterable[bytes | str],
    old_partitions: int,
    new_partitions: int,
    *,
    partitioner: str = JAVA_DEFAULT,
    timeout: float = 60.0,
) -> LiveGrowth:
    """Create a topic with `old_partitions`, produce each key, grow it, produce each key again, read back.

    The topic is the stack's (its replication factor and settings) and is deleted at the
    end, even when the cluster refuses to grow it.

    Args:
        keys: distinct record keys (text is UTF-8 encoded); duplicates count once.
        old_partitions, new_partitions: the counts before and after; `new` must be larger,
            as Kafka cannot remove partitions.
        partitioner: the producer's librdkafka `partitioner`; the default places keys as
            the Java client does.
        timeout: seconds for each produce, the growth and the read-back.

    Returns:
        A `LiveGrowth`: the keys that moved on the broker, those computed to move, and
        how long the growth took to reach every broker's metadata.

    Raises:
        TopicDesignError: a count below 1, `new` not above `old`, no keys, or a partitioner
            that places keys at random (nothing to compare).
        PartitionGrowthRefused: the cluster does not add partitions (see `add_partitions`).
        KafkaError: records were not acknowledged or not read back within `timeout`.

    Usage: `grow_live(stack, [f"device-{i}" for i in range(2_000)], 4, 5).moved_fraction`.
    """
    unique = list(dict.fromkeys(key_bytes(k) for k in keys))
    if not unique:
        raise TopicDesignError("grow_live needs at least one key to place")
    # Checks the counts and the partitioner before anything is created.
    computed = moved_keys(unique, old_partitions, new_partitions, partitioner)
    if new_partitions <= old_partitions:
        raise TopicDesignError(
            f"a topic can only grow: {old_partitions} → {new_partitions}; Kafka cannot remove partitions"
        )
    topic = f"wb-growth-{old_partitions}-{new_partitions}-{uuid.uuid4().hex[:8]}"
    producer_conf, settings = stack.kafka_config("producer"), {"partitioner": partitioner}
    with stack.temporary_topics({topic: old_partitions}, timeout=timeout):
        _produce_round(producer_conf, topic, unique, _ROUNDS[0], settings, timeout)
        seconds = add_partitions(stack.kafka_config("admin"), topic, new_partitions, timeout=timeout)
        _produce_round(producer_conf, topic, unique, _ROUNDS[1], settings, timeout)
        landed: dict[bytes, dict[bytes, int]] = {round_: {} for round_ in _ROUNDS}
        read = misplaced = 0
        for record in kafka.read_records(stack.kafka_config("consumer"), topic, timeout=timeout):
            read += 1
            key, round_ = record.key or b"", record.value or b""
            count = old_partitions if round_ == _ROUNDS[0] else new_partitions
            misplaced += record.partition != partition_for(key, count, partitioner)
            landed.setdefault(round_, {})[key] = record.partition
    before, after = landed[_ROUNDS[0]], landed[_ROUNDS[1]]
    moved = {k for k in unique if k in before and k in after and before[k] != after[k]}
    return LiveGrowth(
        old_partitions,
        new_partitions,
        partitioner,
        len(unique),
        read,
        len(moved),
        computed.moved_count,
        len(moved.symmetric_difference(computed.moved)),
        misplaced,
        seconds,
    )


def measure_growth(
    stack: Stack,
    keys: Sequence[bytes | str],
    changes: Iterable[tuple[int, int]],
    *,
    partitioner: str = JAVA_DEFAULT,
    timeout: float = 60.0,
) -> GrowthRun:
    """`grow_live` for each (old, new) change, on a topic of its own; stops at the first refusal.

    A cluster that does not add partitions refuses every change alike, so the first
    refusal ends the run, with its one-line reason in `refused` and the changes measured
    before it in `results`.

    Raises:
        TopicDesignError, KafkaError: as `grow_live`.

    Usage: `pd.DataFrame(measure_growth(stack, keys, [(4, 5), (4, 8)]).rows())`.
    """
    done: list[LiveGrowth] = []
    for old, new in changes:
        try:
            done.append(grow_live(stack, keys, old, new, partitioner=partitioner, timeout=timeout))
        except PartitionGrowthRefused as refused:
            return GrowthRun(tuple(done), str(refused))
    return GrowthRun(tuple(done))


def _produce_round(
    conf: KafkaConf, topic: str, keys: Sequence[bytes], round_: bytes, settings: KafkaConf, timeout: float
) -> None:
    """Each key once, with a fresh producer: it places keys by the partition count it asks the cluster for."""
    result = kafka.produce(conf, topic, ((key, round_) for key in keys), settings=settings, flush_timeout=timeout)
    if result.acknowledged != len(keys):
        raise KafkaError(
            f"{result.acknowledged} of {len(keys)} records to {topic!r} acknowledged ({round_.decode()} the growth); "
            f"first error: {result.first_error or 'none'}"
        )


def _one_line(text: str) -> str:
    return " ".join(text.split())
