"""Offsets are not preserved: where each record lands on b, and where a group's checkpoint points.

The MapR chapter says its replicas keep every message's offset, and that MirrorMaker cannot.
MirrorMaker 2 copies records, not log positions: the target appends each copy at the next
offset of its own. So any offset on a that holds no record a consumer sees moves every
later copy down on b:

- **deleted before the copy**: records removed from the head of the log (retention,
  `DeleteRecords`) before MirrorMaker first read the topic: b starts at 0 where a's log
  starts further on;
- **an aborted transaction**: its records and its abort marker take offsets on a. The
  marker is never copied; the records are, unless the flow's consumer reads committed
  records only (Kafka's consumer default reads uncommitted; the run counts the copies);
- **committed transactions**: each commit marker takes an offset on a, none on b.

One partition, numbered records, four phases in that order. A group then commits a
position inside the last phase; MirrorMaker's checkpoint translates it for b
(`internal_topics`), and the run sets that against the true position: the offset on b of
the first record the group had not read. The difference is what the group reads again
after a failover; a translation past the true position would skip records (must be 0).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from confluent_kafka import Producer, TopicPartition

from workbench import kafka
from workbench.errors import BenchError, KafkaError
from workbench.kafka.producing import Outgoing, send
from workbench.replication.internal_topics import Checkpoint, checkpoints, offset_syncs, translate
from workbench.replication.naming import remote_topic
from workbench.replication.numbered import numbered, seq_of, topic_total, wait_until
from workbench.replication.preflight import check_flow

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "OFFSET_DEFAULTS",
    "OffsetShiftRun",
    "PHASES",
    "WAIT_LIMIT_S",
    "offset_shift",
    "offset_shift_run",
    "phase_table",
]

#: The run's defaults: records in all, deleted before the copy, in the aborted transaction,
#: and per committed transaction.
OFFSET_DEFAULTS: dict[str, Any] = {"records": 3_000, "deleted": 500, "aborted": 500, "transaction": 100}
#: The phases, in the order they are written.
PHASES = ("deleted", "plain", "aborted", "transactions")
#: Seconds a run waits for the copy, and for the group's checkpoint on b.
WAIT_LIMIT_S = 60.0


@dataclass(frozen=True)
class OffsetShiftRun:
    """A run's contract row; each record's `seq`, `phase`, `a_offset` and `b_offset`
    (NaN where it is not on b); and the checkpoint MirrorMaker wrote for the group."""

    row: dict[str, Any]
    records: pd.DataFrame
    checkpoint: Checkpoint


def offset_shift_run(
    stack: Stack,
    *,
    records: int = OFFSET_DEFAULTS["records"],
    deleted: int = OFFSET_DEFAULTS["deleted"],
    aborted: int = OFFSET_DEFAULTS["aborted"],
    transaction: int = OFFSET_DEFAULTS["transaction"],
    topic_prefix: str = "wb-geo-offsets",
) -> OffsetShiftRun:
    """Write the four phases to a new topic on a, let MirrorMaker copy it, commit a group's
    position on a and read MirrorMaker's translation of it on b.

    Raises:
        BenchError: a parameter out of range, or the copy or the checkpoint not on b within
            `WAIT_LIMIT_S` (the message says which and where to look).
        StackError: the profile has no second cluster.
    """
    _check(records, deleted, aborted, transaction)
    source = f"{topic_prefix}-{uuid.uuid4().hex[:8]}"
    target, group = remote_topic(stack.profile, source), f"wb-offsets-{uuid.uuid4().hex[:8]}"
    check_flow(stack, source, group=group)
    stack.create_topics({source: 1})
    try:
        written = _write_phases(stack, source, records, deleted, aborted, transaction)
        visible = written[written["phase"].isin(["plain", "transactions"])]
        copies = _whole_copy(stack, target, int(visible["seq"].iloc[-1]), len(visible))
        table = written.assign(b_offset=written["seq"].map(copies))
        last_phase = visible[visible["phase"] == "transactions"]
        resume = last_phase.iloc[len(last_phase) // 2]  # the group has read half of the last phase
        began = time.monotonic()
        _commit(stack.kafka_config("consumer"), group, source, int(resume["a_offset"]))
        checkpoint = _wait_checkpoint(stack, group, source, int(resume["a_offset"]))
        checkpoint_s = time.monotonic() - began
        syncs = offset_syncs(stack.kafka_config("consumer"), stack.profile, source)
    finally:
        stack.delete_topics([source])
        stack.delete_topics([target], peer=True)
    own = translate(syncs, source, 0, checkpoint.upstream)
    true_b = int(table.loc[table["seq"] == resume["seq"], "b_offset"].iloc[0])
    return OffsetShiftRun(
        _row(stack, table, checkpoint, true_b, own, len(syncs), checkpoint_s, transaction), table, checkpoint
    )


def offset_shift(stack: Stack, *, topic_prefix: str = "wb-geo-offsets", **params: Any) -> dict[str, Any]:
    """One run's row (the registered experiment `offset_shift`). See `offset_shift_run`."""
    return offset_shift_run(stack, topic_prefix=topic_prefix, **params).row


def phase_table(run: OffsetShiftRun) -> pd.DataFrame:
    """Per phase: records written, copied to b, and the shift (a's offset minus b's) at its first and last copy."""
    table = run.records.assign(shift=run.records["a_offset"] - run.records["b_offset"])
    rows = []
    for phase in PHASES:
        part = table[table["phase"] == phase]
        copied = part.dropna(subset=["b_offset"])
        rows.append(
            {
                "phase": phase,
                "records": len(part),
                "on_b": len(copied),
                "a_offsets": _span(part["a_offset"]),
                "b_offsets": _span(copied["b_offset"]),
                "shift_first": int(copied["shift"].iloc[0]) if len(copied) else None,
                "shift_last": int(copied["shift"].iloc[-1]) if len(copied) else None,
            }
        )
    return pd.DataFrame(rows)


def _check(records: int, deleted: int, aborted: int, transaction: int) -> None:
    if not 100 <= records <= 1_000_000:
        raise BenchError(f"records must be 100 to 1,000,000, got {records}")
    if deleted < 0 or aborted < 0 or deleted + aborted > records // 2:
        raise BenchError(
            f"deleted and aborted must be 0 or more and together at most half the records; "
            f"got {deleted} and {aborted} of {records}"
        )
    if not 1 <= transaction <= 10_000:
        raise BenchError(f"transaction must be 1 to 10,000 records, got {transaction}")


def _write_phases(stack: Stack, topic: str, records: int, deleted: int, aborted: int, transaction: int) -> pd.DataFrame:
    """Each record's `seq`, `phase` and `a_offset`, written in phase order; the first phase then deleted."""
    plain = (records - deleted - aborted) // 2
    conf = stack.kafka_config("producer")
    writer = kafka.producer(conf, {"acks": "all", "enable.idempotence": True})
    rows = _send(writer, topic, range(deleted), "deleted")
    if deleted:
        kafka.delete_records(stack.kafka_config("admin"), {(topic, 0): deleted})
    rows += _send(writer, topic, range(deleted, deleted + plain), "plain")
    settings = {"acks": "all", "enable.idempotence": True, "transactional.id": f"wb-offsets-{uuid.uuid4().hex[:8]}"}
    transactional = kafka.producer(conf, settings)
    transactional.init_transactions(30)
    start = deleted + plain
    transactional.begin_transaction()
    rows += _send(transactional, topic, range(start, start + aborted), "aborted")
    transactional.abort_transaction(30)
    for first in range(start + aborted, records, transaction):
        transactional.begin_transaction()
        rows += _send(transactional, topic, range(first, min(first + transaction, records)), "transactions")
        transactional.commit_transaction(30)
    return pd.DataFrame(rows, columns=["seq", "phase", "a_offset"])


def _send(producer: Producer, topic: str, seqs: range, phase: str) -> list[tuple[int, str, int]]:
    """Write `seqs` to partition 0 (`kafka.producing.send`: it waits when librdkafka's queue is
    full) and wait for each one's offset."""
    offsets: dict[int, int] = {}

    def acked(error: Any, message: Any) -> None:
        if error is None:
            offsets[seq_of(message.value())] = message.offset()

    send(producer, (Outgoing(topic, numbered(seq), partition=0) for seq in seqs), on_delivery=acked, flush_timeout_s=30)
    if len(offsets) != len(seqs):
        raise BenchError(f"{len(seqs) - len(offsets)} of {len(seqs)} {phase} records to {topic} were not acknowledged")
    return [(seq, phase, offsets[seq]) for seq in seqs]


def _whole_copy(stack: Stack, topic: str, last: int, visible: int) -> dict[int, int]:
    """`{seq: offset on b}` once the copy holds record `last` (order is kept, so all before it too).

    Raises:
        BenchError: not within `WAIT_LIMIT_S`.
    """
    conf = stack.peer_config("consumer")
    found: dict[int, int] = {}

    def whole() -> bool:
        if topic_total(stack.peer_config("admin"), topic) < visible:
            return False
        found.clear()
        for record in kafka.read_records(conf, [(topic, 0)]):
            found.setdefault(seq_of(record.value), record.offset)  # a seq copied twice keeps its first
        return last in found

    wait_until(whole, f"copy of record {last} in {topic} on b", WAIT_LIMIT_S)
    return found


def _commit(conf: dict[str, Any], group: str, topic: str, offset: int) -> None:
    """Commit `offset` (the next record to read) for `group` on a, as a consumer that read up to it would."""
    committer = kafka.consumer(conf, group)
    try:
        committer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        committer.close()


def _wait_checkpoint(stack: Stack, group: str, topic: str, upstream: int) -> Checkpoint:
    """MirrorMaker's checkpoint of `group` at `upstream`, once it is in b's checkpoints topic
    (which names the partition as the target knows it: the remote topic)."""
    found: list[Checkpoint] = []
    remote = remote_topic(stack.profile, topic)

    def written() -> bool:
        found[:] = [c for c in _checkpoints_or_none(stack, group) if c.topic == remote and c.upstream == upstream]
        return bool(found)

    wait_until(written, f"checkpoint of group {group} at offset {upstream} of {topic} on b", WAIT_LIMIT_S)
    return found[-1]


def _checkpoints_or_none(stack: Stack, group: str) -> list[Checkpoint]:
    try:
        return checkpoints(stack.peer_config("consumer"), stack.profile, group)
    except KafkaError:  # the checkpoints topic is made with the first checkpoint
        return []


def _row(
    stack: Stack,
    table: pd.DataFrame,
    checkpoint: Checkpoint,
    true_b: int,
    own: int | None,
    syncs: int,
    checkpoint_s: float,
    transaction: int,
) -> dict[str, Any]:
    from workbench.measure.contract import result_row

    def on_b(phase: str) -> int:
        return int(table.loc[table["phase"] == phase, "b_offset"].notna().sum())

    copied = table.dropna(subset=["b_offset"])
    counts = table["phase"].value_counts()
    return result_row(
        stack,
        experiment="offset_shift",
        params={
            "records": len(table),
            "deleted": int(counts.get("deleted", 0)),
            "aborted": int(counts.get("aborted", 0)),
            "transaction": transaction,
        },
        records=len(table),
        extra={
            "deleted_copied": on_b("deleted"),
            "aborted_copied": on_b("aborted"),
            "copied": len(copied),
            "shift_max": int((copied["a_offset"] - copied["b_offset"]).max()) if len(copied) else 0,
            "committed_on_a": checkpoint.upstream,
            "checkpoint_on_b": checkpoint.downstream,
            "true_position_on_b": true_b,
            "reread": max(0, true_b - checkpoint.downstream),
            "skipped": max(0, checkpoint.downstream - true_b),
            "own_translation": own if own is not None else float("nan"),
            "offset_syncs": syncs,
            "checkpoint_s": checkpoint_s,
        },
    )


def _span(offsets: pd.Series) -> str:
    return f"{int(offsets.min())}-{int(offsets.max())}" if len(offsets) else "-"
