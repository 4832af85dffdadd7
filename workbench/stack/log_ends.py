"""Does a cluster report log ends short of what it acknowledged? Checked once, remembered.

A Kafka-compatible broker need not answer ListOffsets(latest) with the log's end: Tansu
answers the base offset of the last record batch + 1. A profile that says so
(`broker: {kind: tansu}`) has its ends read from the log (`kafka.offsets`); one that
does not left 8 of 13 quick notebooks failing with records "missing" that were there
all along, and its user had no way to know the broker needed declaring. So a cluster
profile that does not name its broker's kind has its cluster checked: a throw-away
one-partition topic (made by the stack, so the profile's replication settings apply),
two batches of three records (a broker that answers "last batch's base + 1" is then
short by two), and ListOffsets(latest) against the count acknowledged. A short answer
declares the end probe for the cluster and says so in one warning line. Measured, once
per cluster: 20-70 ms on Tansu, 0.3-1.1 s on a one-node Kafka under load (its topic's
creation and deletion).

It runs where a cluster's stack is found (`lifecycle.up` and `attach`, which notebooks,
the CLI and experiments go through), before any client or Spark session is made, and
not in `Stack.__post_init__`: stacks are made often, also for clusters that are not
there (a unit test's), and making one asks nothing of the network.

The answer is remembered per `bootstrap.servers`: in this process (stacks are made
often) and in `log-ends.json` in the profile's run directory, for every later process
of the profile (a notebook's kernel, the CLI run tomorrow; the environment variable
`declare_end_probe` sets reaches only this process's children). A check that cannot
run (no broker answers, no right to create topics) logs one line, is not written
down, and nothing changes.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config import Profile
from workbench.errors import KafkaError, WorkbenchError
from workbench.stack.state import locked

if TYPE_CHECKING:
    from workbench.stack.handle import Stack

__all__ = [
    "BATCHES",
    "EndsCheck",
    "MEMORY_FILE",
    "REACH_TIMEOUT_S",
    "check_log_ends",
    "checked",
    "measure",
    "needs_check",
    "warning_line",
]

log = logging.getLogger(__name__)

#: The file in the profile's run directory that remembers each cluster's answer.
MEMORY_FILE = "log-ends.json"
#: Records per batch, each batch flushed on its own: the last one must hold several, or
#: "last batch's base + 1" is the end after all.
BATCHES = (3, 3)
#: Seconds the broker has to answer the first Metadata request before the check is given up.
REACH_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class EndsCheck:
    """What one check saw: records the cluster acknowledged, and the end it reported after them."""

    acknowledged: int
    reported_end: int

    @property
    def short(self) -> bool:
        """True when the reported end falls short of the records acknowledged into an empty log."""
        return self.reported_end < self.acknowledged


#: Clusters settled in this process: the answer, or None when the check could not run.
_settled: dict[str, EndsCheck | None] = {}
#: Clusters whose check this process is running now (the check's own stack calls come back here).
_running: set[str] = set()
#: One check at a time in this process; a thread that asks meanwhile waits for its answer.
_lock = threading.RLock()


def needs_check(profile: Profile) -> bool:
    """A cluster profile that does not say which broker it is: only its cluster can tell.

    An embedded stack knows its broker, and a profile that writes `broker.kind` (even
    `kafka`) has said; the check is for the profiles that left it to the default.
    """
    return not profile.embedded and "kind" not in profile.broker.model_fields_set


def checked(bootstrap_servers: str) -> EndsCheck | None:
    """This process's answer for a cluster: None when it was not checked or could not be."""
    return _settled.get(bootstrap_servers)


def check_log_ends(stack: Stack) -> None:
    """Check the stack's cluster once (see the module's docstring); declare the end probe if it is short.

    Cheap after the first time: a lookup in this process, else a small file read.
    Never raises for the check's own failures: those are logged in one line.
    """
    from workbench.kafka.offsets import declare_end_probe, needs_end_probe

    if not needs_check(stack.profile):
        return
    servers = stack.bootstrap_servers
    if servers in _settled:
        return
    if needs_end_probe({"bootstrap.servers": servers}):  # a parent process found it short, or its operator said so
        return
    with _lock:
        if servers in _settled or servers in _running:
            return
        _running.add(servers)
        try:
            result = _remembered_or_measured(stack, servers)
        finally:
            _running.discard(servers)
        _settled[servers] = result
    if result is not None and result.short:
        declare_end_probe(servers)


def warning_line(bootstrap_servers: str, result: EndsCheck) -> str:
    """The one line a short cluster is announced with: what was seen, what is done, the profile key."""
    return (
        f"cluster {bootstrap_servers} reports log ends short of what it acknowledged "
        f"({result.acknowledged} acknowledged, end {result.reported_end}): its ends are read from the log; "
        "write `broker: {kind: tansu}` (or its kind) in the profile to skip this check"
    )


def _remembered_or_measured(stack: Stack, servers: str) -> EndsCheck | None:
    """The run directory's answer, else a new one written there; None when none can be had."""
    from confluent_kafka import KafkaException  # not at import: the stack's supervisors import this package

    run_dir = stack.profile.path(stack.profile.run_dir)
    try:
        # A lock of its own (`up`'s is held for minutes): another process of the profile checking now is waited for.
        with locked(run_dir, f"{MEMORY_FILE}.lock"):
            known = _read_memory(run_dir).get(servers)
            if known is not None:
                return known
            result = measure(stack)
            if result.short:
                log.warning("%s", warning_line(servers, result))
            _write_memory(run_dir, servers, result)
            return result
    except (WorkbenchError, KafkaException, OSError) as exc:
        log.warning(
            "cannot check whether cluster %s reports log ends short (%s); its ends are taken as it reports "
            "them: write `broker: {kind: ...}` in the profile to say which broker it is",
            servers,
            _one_line(exc),
        )
        return None


def measure(stack: Stack, *, timeout: float = 10.0) -> EndsCheck:
    """Produce `BATCHES` into a throw-away topic and ask ListOffsets(latest) for its end.

    Raises:
        KafkaError: no broker answered within `REACH_TIMEOUT_S`, the topic could not be
            made or deleted, or a record was refused.
    """
    from workbench.kafka.admin import broker_answers
    from workbench.kafka.clients import producer
    from workbench.kafka.offsets import reported_offsets
    from workbench.kafka.producing import DeliveryTally, Outgoing, send

    admin = stack.kafka_config("admin")
    if not broker_answers(stack.bootstrap_servers, REACH_TIMEOUT_S, admin):
        raise KafkaError(f"no broker answered within {REACH_TIMEOUT_S:g} s")
    topic = f"workbench-ends-check-{uuid.uuid4().hex[:10]}"
    conf = {k: v for k, v in stack.kafka_config("producer").items() if k != "transactional.id"}
    with stack.temporary_topics({topic: 1}, timeout=timeout):
        tally = DeliveryTally()
        # acks=all: on Kafka the answer then comes after the high watermark passed the records.
        client = producer(conf, {"acks": "all", "linger.ms": 1000})
        for size in BATCHES:  # each flush closes a batch: 1000 ms of linger keeps the others whole
            outcome = send(client, [Outgoing(topic, b"x", None, 0)] * size, on_delivery=tally, flush_timeout_s=timeout)
            if outcome.unsent or tally.failed:
                raise KafkaError(f"the check's records were not acknowledged: {tally.first_error or 'timed out'}")
        del client  # gone before its topic is
        end = reported_offsets(admin, [(topic, 0)], "latest", timeout=timeout)[(topic, 0)]
    return EndsCheck(tally.acknowledged, end)


def _read_memory(run_dir: Path) -> dict[str, EndsCheck]:
    """`{bootstrap.servers: answer}` from the run directory; an unreadable file is none (checked again)."""
    try:
        raw = json.loads((run_dir / MEMORY_FILE).read_text())
        return {s: EndsCheck(int(r["acknowledged"]), int(r["reported_end"])) for s, r in raw.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def _write_memory(run_dir: Path, servers: str, result: EndsCheck) -> None:
    """Add one cluster's answer; written whole to a temporary file and renamed, so a reader never sees half."""
    memory = {s: asdict(r) for s, r in _read_memory(run_dir).items()}
    memory[servers] = {**asdict(result), "short": result.short, "checked_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    path = run_dir / MEMORY_FILE
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(memory, indent=1, sort_keys=True) + "\n")
    partial.replace(path)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else f"{text[:199]}…"
