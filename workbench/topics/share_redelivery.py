"""What a share group does with records a member gives back or dies holding (KIP-932).

A share member that releases a record hands it back at once: the broker gives it to the next
member that fetches, with a higher delivery count. A member that dies mid-batch (SIGKILL: no
close, no acknowledgement) holds its records until their lock runs out
(`share.record.lock.duration.ms`) or its session ends, whichever comes first; then they too
come again. `redelivery_run` shows both on one topic, and that every record still ends
accepted once; `workbench.topics.share_groups` measures who helps and what order holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from typing import IO

import pandas as pd
from confluent_kafka import AcknowledgeType, ShareConsumer

from workbench.stack import Stack
from workbench.topics.errors import TopicDesignError
from workbench.topics.share_groups import (
    FIRST_RECORD_S,
    Delivery,
    Redelivery,
    configure_share_group,
    delivery_of,
    fill_for_sharing,
    share_consumer_conf,
    share_member,
)

__all__ = ["redelivery_check", "redelivery_run", "redelivery_sentence"]


def redelivery_run(stack: Stack, topic: str, *, records: int, lock_ms: int = 2_000) -> Redelivery:
    """A share group on `topic`: one member releases the first batch it gets; another, in a
    process of its own, takes a batch and is killed (SIGKILL) before acknowledging it; a third
    processes everything. Every record ends accepted once; the released ones come again at
    once with a higher delivery count, the killed member's once their lock runs out.
    """
    group = f"share-{uuid.uuid4().hex[:8]}"
    configure_share_group(stack, group, lock_ms=lock_ms)
    released_at = _release_one_batch(share_member(stack, group, 50), topic)
    abandoned_at = _killed_member(stack, group, topic)
    deliveries: list[Delivery] = []
    accepted: set[tuple[int, int]] = set()
    waits: list[float] = []
    survivor = share_member(stack, group, 500)
    try:
        survivor.subscribe([topic])
        deadline = time.perf_counter() + FIRST_RECORD_S + lock_ms / 1000 * 3
        while len(accepted) < records and time.perf_counter() < deadline:
            for message in survivor.poll(0.2):
                if message.error() is not None:
                    continue
                delivery = delivery_of(2, message, message.delivery_count())
                where = (delivery.partition, delivery.offset)
                deliveries.append(delivery)
                if where in abandoned_at and where not in accepted:
                    waits.append(delivery.done_s - abandoned_at[where])
                accepted.add(where)
                survivor.acknowledge(message, AcknowledgeType.ACCEPT)
        survivor.commit_sync(10)
    finally:
        survivor.close()
    return Redelivery(records, set(released_at), set(abandoned_at), lock_ms, deliveries, waits, len(accepted))


def _release_one_batch(client: ShareConsumer, topic: str) -> list[tuple[int, int]]:
    """Release the first batch that comes, then leave the group: the positions released."""
    try:
        client.subscribe([topic])
        deadline = time.perf_counter() + FIRST_RECORD_S
        while time.perf_counter() < deadline:
            got = [m for m in client.poll(0.5) if m.error() is None]
            for message in got:
                client.acknowledge(message, AcknowledgeType.RELEASE)
            if got:
                client.commit_sync(10)
                return [(int(m.partition() or 0), int(m.offset() or 0)) for m in got]
        raise TopicDesignError(
            f"no share group member got a record within {FIRST_RECORD_S:.0f} s: "
            "this broker has no share groups (KIP-932, Kafka 4.2 or newer)"
        )
    finally:
        client.close()


def _killed_member(stack: Stack, group: str, topic: str) -> dict[tuple[int, int], float]:
    """A member in a process of its own takes one batch and is killed before acknowledging it:
    the records it held, each with the moment it held it (perf_counter)."""
    conf = {**share_consumer_conf(stack, group), "max.poll.records": 50}
    with subprocess.Popen(
        [sys.executable, "-m", "workbench.topics.share_redelivery", topic],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as child:  # the block closes its pipes
        try:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(json.dumps(dict(conf)) + "\n")
            child.stdin.flush()
            line = _first_line(child.stdout, FIRST_RECORD_S)
            held_at = time.perf_counter()
        finally:
            child.kill()  # SIGKILL: no close, no acknowledgement, as a crashed process
            child.wait(30)
    if line is None:
        raise TopicDesignError(f"the member to be killed got no record within {FIRST_RECORD_S:.0f} s")
    return {(int(p), int(o)): held_at for p, o in json.loads(line)}


def _first_line(stream: IO[str], timeout_s: float) -> str | None:
    """The first line of `stream`, or None after `timeout_s` (read in a thread: a pipe has no timeout)."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines[0].strip() or None if lines else None


def _hold_one_batch(topic: str) -> None:
    """The killed member's side (run as `python -m workbench.topics.share_redelivery TOPIC`, its
    settings on stdin): print the positions of the first batch it holds, then wait to be killed."""
    client = ShareConsumer(json.loads(sys.stdin.readline()))
    client.subscribe([topic])
    while True:
        held = [(m.partition(), m.offset()) for m in client.poll(0.5) if m.error() is None]
        if held:
            print(json.dumps(held), flush=True)
            time.sleep(600)


def redelivery_check(stack: Stack, *, records: int, lock_ms: int, partitions: int) -> Redelivery:
    """`redelivery_run` on a fresh topic of `records` records, deleted afterwards."""
    topic = f"share-redelivery-{uuid.uuid4().hex[:8]}"
    with stack.temporary_topics({topic: partitions}):
        fill_for_sharing(stack, topic, records)
        return redelivery_run(stack, topic, records=records, lock_ms=lock_ms)


def redelivery_sentence(run: Redelivery) -> str:
    """Markdown bullets: what came again, with which delivery count, how soon, and that every
    record was accepted once."""

    def counts(positions: set[tuple[int, int]]) -> str:
        seen = sorted({d.delivery_count for d in run.deliveries if (d.partition, d.offset) in positions})
        return ", ".join(map(str, seen)) or "none"

    waits = pd.Series(run.waits_s)
    lines = [
        f"- The first member released **{len(run.released)}** records; they came again to the third member "
        f"with delivery count {counts(run.released)}.",
        f"- The killed member held **{len(run.abandoned)}** records ({len(run.abandoned & run.released)} of them "
        f"the released ones); they came again with delivery count {counts(run.abandoned)}, "
        + (
            f"{waits.median():.1f} s (median; {waits.min():.1f}-{waits.max():.1f} s) after the kill, with a "
            f"{run.lock_ms / 1000:.0f} s record lock and a 6 s member session."
            if len(waits)
            else "but not within the wait."
        ),
        f"- **{run.accepted} of {run.records}** records were accepted, each once; the third member saw "
        f"{len(run.deliveries) - run.accepted} record(s) a second time.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    _hold_one_batch(sys.argv[1])
