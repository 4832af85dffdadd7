"""A partition leader killed under load: what the producer sees, and what the log kept.

The question `acks` answers on a replicated cluster is not speed but what survives a
broker's death. This experiment writes numbered records to a replicated topic at a
steady rate, SIGKILLs the broker leading its partition part-way, lets the producer carry
on through the election, and then reads the whole topic back. From the run, not from
the documentation, it reports:

- the producer's stall: the longest time without an acknowledgement after the kill;
- the time to a new leader, as the cluster's metadata shows it;
- acknowledged records missing from the log (lost), records in the log twice
  (duplicates), and acknowledged records found at another offset than the producer was
  told (misplaced);
- records the producer gave up on (failed: their delivery report was an error).

It needs brokers it may kill: an embedded Kafka stack of two or more nodes
(`conf/local-3.yaml`). The killed node is started again on its own data before the read,
so the stack is whole when the experiment ends.
"""

from __future__ import annotations

import os
import signal
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaException, Producer

from workbench import kafka
from workbench.errors import BenchError
from workbench.kafka.producing import Outgoing, send
from workbench.measure.contract import NOT_MEASURED, result_row
from workbench.measure.failures import FailureTally
from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack, process, restart_broker
from workbench.stack.state import ServiceRecord

__all__ = [
    "FAILOVER_SETUPS",
    "failover_comparison",
    "failover_conclusion",
    "leader_failover",
    "replication_sentence",
]

#: The record's number, big-endian, at the start of its value; padding fills the rest.
_SEQUENCE = struct.Struct(">Q")


@dataclass
class _Deliveries:
    """What the producer was told, by record number: offset and time, or failure."""

    sent_at: dict[int, float] = field(default_factory=dict)
    acked: dict[int, tuple[int, float]] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    failures: FailureTally = field(default_factory=FailureTally)

    def report(self, error: Any, message: Any) -> None:
        number = _SEQUENCE.unpack_from(message.value())[0]
        if error is not None:
            self.failed[number] = error.name()
            self.failures.add(error.name(), error.str())
        else:
            self.acked[number] = (int(message.offset()), time.perf_counter())


def leader_failover(
    stack: Stack,
    *,
    topic_prefix: str = "bench",
    records: int = 100_000,
    record_bytes: int = 100,
    rate: int = 20_000,
    acks: str = "all",
    idempotence: bool = True,
    kill_at: float = 0.4,
    linger_ms: float = 5.0,
) -> dict[str, Any]:
    """Write `records` at `rate`/s to a one-partition replicated topic, SIGKILL its leader
    after `kill_at` of them, and read the topic back.

    Args:
        records: how many to send; record_bytes: each value's size (at least 8).
        rate: records offered per second (sent in 1 ms slices, so the load goes on
            through the election instead of waiting on it).
        acks, idempotence: the producer settings under test (`acks=1` without
            idempotence loses what the old leader acknowledged and no follower copied).
        kill_at: the fraction of the records sent when the leader is killed.
        linger_ms: the producer's `linger.ms`.

    Returns:
        One contract row: `records` acknowledged, latency send → acknowledgement, and
        `stall_ms`, `new_leader_ms`, `acknowledged`, `failed`, `lost`, `duplicates`,
        `misplaced`, `killed_node`, `replication_factor`.

    Raises:
        BenchError: the stack has no broker this process may kill, or one node only.
    """
    stack = stack.refreshed()  # a node killed and restarted before has a new PID
    brokers = _killable_brokers(stack)
    if not 0 < kill_at < 1 or records < 100 or record_bytes < _SEQUENCE.size or rate <= 0:
        raise BenchError("leader_failover needs 0 < kill_at < 1, records >= 100, record_bytes >= 8 and rate > 0")
    params = {
        "acks": acks,
        "idempotence": idempotence,
        "records": records,
        "record_bytes": record_bytes,
        "rate": rate,
        "kill_at": kill_at,
        "linger_ms": linger_ms,
    }
    name = f"{topic_prefix}-failover-{os.urandom(4).hex()}"
    with stack.temporary_topics({name: 1}):
        admin = stack.kafka_config("admin")
        leader = kafka.describe_topic(admin, name).partitions[0].leader
        victim = next((r for r in brokers if r.extra.get("node_id") == leader), None)
        if victim is None:
            raise BenchError(f"the leader of {name} is node {leader}, which this stack did not start")
        deliveries = _Deliveries()
        try:
            with ResourceMonitor(stack.services) as monitor:
                started = time.perf_counter()
                killed_at, new_leader_at = _produce_through_a_kill(stack, name, params, deliveries, victim, leader)
                seconds = time.perf_counter() - started
        finally:
            restored = _restore(stack, victim)  # the stack is whole again, whatever happened
        log = _read_back(restored, name)
    acked = deliveries.acked
    lost = [n for n in acked if n not in log]
    duplicates = sum(len(offsets) - 1 for offsets in log.values())
    misplaced = sum(1 for n, (offset, _) in acked.items() if n in log and offset not in log[n])
    after_kill = sorted(at for _, at in acked.values() if at >= killed_at)
    gaps = [later - earlier for earlier, later in zip([killed_at, *after_kill], after_kill, strict=False)]
    latencies = [at - deliveries.sent_at[n] for n, (_, at) in acked.items()]
    return result_row(
        stack,
        experiment="leader_failover",
        params=params,
        records=len(acked),
        payload_bytes=len(acked) * record_bytes,
        seconds=seconds,
        latencies=latencies,
        latency_of="send → acknowledgement",
        resources=monitor.columns(),
        extra={
            "stall_ms": max(gaps) * 1000 if gaps else NOT_MEASURED,
            "new_leader_ms": (new_leader_at - killed_at) * 1000 if new_leader_at else NOT_MEASURED,
            "acknowledged": len(acked),
            **deliveries.failures.columns(),
            "lost": len(lost),
            "duplicates": duplicates,
            "misplaced": misplaced,
            "killed_node": leader,
            "replication_factor": stack.profile.topics.replication_factor,
        },
    )


def _restore(stack: Stack, victim: ServiceRecord) -> Stack:
    """Start the killed node again on its data (nothing to do if it was never killed)."""
    if process.is_ours(victim.pid, victim.create_time):
        return stack
    return restart_broker(stack, victim.name)


def _killable_brokers(stack: Stack) -> list[ServiceRecord]:
    """The Kafka nodes this stack started (with their node ids), two or more of them."""
    nodes = [r for r in stack.services.values() if r.kind == "broker" and "node_id" in r.extra]
    if not stack.profile.embedded or len(nodes) < 2:
        raise BenchError(
            "leader_failover kills a broker: it needs an embedded Kafka stack of two or more nodes "
            f"(conf/local-3.yaml); profile {stack.profile.name!r} has {len(nodes)} it may kill"
        )
    return nodes


def _produce_through_a_kill(
    stack: Stack, topic: str, params: dict[str, Any], deliveries: _Deliveries, victim: ServiceRecord, leader: int
) -> tuple[float, float | None]:
    """Send at the offered rate, SIGKILL `victim` on the way; returns (kill time, new-leader time)."""
    conf = {
        **stack.kafka_config("producer"),
        "acks": str(params["acks"]),
        "enable.idempotence": bool(params["idempotence"]),
        "linger.ms": params["linger_ms"],
        "message.timeout.ms": 60_000,
    }
    producer = Producer(conf)
    records, rate = int(params["records"]), int(params["rate"])
    padding = b"x" * (int(params["record_bytes"]) - _SEQUENCE.size)
    kill_after = int(records * float(params["kill_at"]))
    killed_at = 0.0
    watcher: _LeaderWatch | None = None
    start = time.perf_counter()

    def paced() -> Iterator[Outgoing]:
        """Each record when it is due (serving delivery reports while it waits); the leader
        is killed just before record `kill_after` is handed over."""
        nonlocal watcher, killed_at
        for number in range(records):
            due = start + number / rate
            while (now := time.perf_counter()) < due:
                producer.poll(min(0.001, due - now))
            if number == kill_after:
                watcher = _LeaderWatch(stack, topic, leader)
                if process.is_ours(victim.pid, victim.create_time):  # never a PID the system gave away since
                    os.kill(victim.pid, signal.SIGKILL)
                killed_at = time.perf_counter()
                watcher.start()
            deliveries.sent_at[number] = time.perf_counter()
            yield Outgoing(topic, _SEQUENCE.pack(number) + padding, partition=0)

    try:
        # A full queue while the election runs waits for room (10 ms polls) rather than failing.
        outcome = send(producer, paced(), on_delivery=deliveries.report, flush_timeout_s=90, queue_full_wait_s=0.01)
        if outcome.unsent:
            raise BenchError(f"leader_failover: {outcome.unsent} records still unacknowledged 90 s after the last send")
    finally:
        if watcher is not None:
            watcher.stop()
    return killed_at, watcher.seen_at if watcher else None


class _LeaderWatch(threading.Thread):
    """Polls the topic's metadata until a broker other than the killed one leads it."""

    def __init__(self, stack: Stack, topic: str, old_leader: int) -> None:
        super().__init__(name="leader-watch", daemon=True)
        self.conf, self.topic, self.old_leader = stack.kafka_config("admin"), topic, old_leader
        self.seen_at: float | None = None
        self._stop_event = threading.Event()

    def run(self) -> None:
        from workbench.kafka.admin import admin_client

        with admin_client(self.conf) as client:
            while not self._stop_event.is_set():
                try:
                    metadata = client.list_topics(topic=self.topic, timeout=1.0).topics.get(self.topic)
                    partition = metadata.partitions.get(0) if metadata is not None else None
                    if partition is not None and partition.leader not in (-1, self.old_leader):
                        self.seen_at = time.perf_counter()
                        return
                except KafkaException:  # a metadata request during the election may fail: ask again
                    pass
                self._stop_event.wait(0.01)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


def _read_back(stack: Stack, topic: str) -> dict[int, list[int]]:
    """Every record number in the topic with the offsets it sits at."""
    found: dict[int, list[int]] = {}
    for record in kafka.read_records(stack.kafka_config("consumer"), topic, timeout=120):
        found.setdefault(_SEQUENCE.unpack_from(record.value or b"\0" * 8)[0], []).append(record.offset)
    return found


#: The two producer set-ups a failover is run with: the fast one and the safe one.
FAILOVER_SETUPS = ({"acks": "1", "idempotence": False}, {"acks": "all", "idempotence": True})


def failover_comparison(
    stack: Stack, *, records: int = 100_000, rate: int = 20_000, record_bytes: int = 100
) -> list[dict[str, Any]]:
    """`leader_failover` once with `acks=1` and once with `acks=all` + idempotence, same load.

    Raises:
        BenchError: the stack has no brokers it may kill (see `leader_failover`).
    """
    return [
        leader_failover(stack, records=records, rate=rate, record_bytes=record_bytes, **setup)  # type: ignore[arg-type]
        for setup in FAILOVER_SETUPS
    ]


def failover_conclusion(rows: list[dict[str, Any]]) -> str:
    """What the runs showed, one line per set-up, in words computed from their rows."""
    lines = []
    for row in rows:
        setup = f"acks={row['acks']}" + (" + idempotence" if row["idempotence"] else "")
        kept = (
            "every acknowledged record was read back"
            if row["lost"] == 0
            else (f"{row['lost']:,} acknowledged records were missing from the log")
        )
        twice = "none twice" if row["duplicates"] == 0 else f"{row['duplicates']:,} were in the log twice"
        failed = f"; {row['failed']:,} were reported failed to the producer" if row["failed"] else ""
        lines.append(
            f"- {setup}: the producer's acknowledgements stopped for up to {row['stall_ms']:,.0f} ms after the kill "
            f"(a new leader showed in the metadata after {row['new_leader_ms']:,.0f} ms); {kept}, {twice}{failed}."
        )
    return "\n".join(lines)


def replication_sentence(stack: Stack) -> str:
    """The replication a run measured `acks` with, and what a single node cannot show."""
    from workbench.kafka.admin import broker_count

    settings = stack.profile.topics
    brokers = broker_count(stack.bootstrap_servers, 10.0, stack.kafka_config("admin"))
    line = (
        f"Measured with replication factor {settings.replication_factor} and min.insync.replicas "
        f"{settings.min_insync_replicas} on {brokers} broker{'s' if brokers != 1 else ''}"
    )
    if brokers == 1:
        line += (
            " (one node: no follower copies a record, so `acks=all` waits for nothing `acks=1` does not; "
            "`--profile local-3` runs three nodes)"
        )
    return line + "."
