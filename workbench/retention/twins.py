"""The same changelog written to two topics, one compacted and one kept whole: what a table
built from a compacted topic is compared with.

Keys are updated in rounds (a value per key per round, `round_s` apart so segments roll at
the appends), a few keys are deleted by tombstones half-way, and both topics get every
round. The compacted one is then waited for until its cleaner has removed at least half of
what was written; the other keeps every record (its retention is Kafka's week).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import KafkaError
from workbench.retention.compaction import scan_log
from workbench.retention.errors import RetentionError, check_ranges
from workbench.retention.log_settings import apply_log_settings

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["COMPACTED", "ChangelogTwins", "UNCOMPACTED", "Writes", "changelog_twins"]

#: The compacted twin: a low dirty ratio and a short tombstone retention, so the cleaner
#: (every second on the embedded broker) compacts while the rounds go on.
COMPACTED = {
    "cleanup.policy": "compact",
    "segment.ms": 200,
    "min.cleanable.dirty.ratio": 0.01,
    "delete.retention.ms": 300,
}
#: The uncompacted twin: the same segments, kept whole.
UNCOMPACTED = {"cleanup.policy": "delete", "segment.ms": 200}

Writes = list[tuple[bytes, bytes | None]]


@dataclass(frozen=True)
class ChangelogTwins:
    """Two topics with the same writes, and the writes in order."""

    compacted: str
    uncompacted: str
    writes: Writes

    @property
    def table(self) -> dict[bytes, bytes]:
        """The table the writes stand for: each key's last value, deleted keys left out."""
        latest = dict(self.writes)
        return {key: value for key, value in latest.items() if value is not None}


@contextmanager
def changelog_twins(
    stack: Stack,
    *,
    keys: int = 20,
    deleted: int = 4,
    rounds_before: int = 5,
    rounds_after: int = 10,
    round_s: float = 0.2,
    patience_s: float = 60.0,
    topic_prefix: str = "changelog",
) -> Iterator[ChangelogTwins]:
    """Write the changelog to a fresh compacted topic and a fresh uncompacted one, wait for
    the compacted one to shrink to half of the writes, and delete both after the block.

    Raises:
        RetentionError: an input out of range, or the cleaner did not compact within
            `patience_s` (a broker without compaction, or minutes-long cleaner backoff).
        TopicConfigRefused: the broker refused the topics' settings.
    """
    check_ranges(
        ("keys", keys, 1, 100_000),
        ("rounds_before", rounds_before, 1, 1_000),
        ("rounds_after", rounds_after, 0, 1_000),
        ("round_s", round_s, 0.0, 60.0),
    )
    check_ranges(("deleted", deleted, 0, keys))
    names = [f"{topic_prefix}-{policy}-{uuid.uuid4().hex[:8]}" for policy in ("compact", "delete")]
    with stack.temporary_topics(dict.fromkeys(names, 1)):
        apply_log_settings(stack, names[0], COMPACTED)
        apply_log_settings(stack, names[1], UNCOMPACTED)
        writes = _write_rounds(stack, names, keys, deleted, rounds_before, rounds_after, round_s)
        _await_compacted(stack, names[0], len(writes), patience_s)
        yield ChangelogTwins(names[0], names[1], writes)


def _write_rounds(
    stack: Stack, topics: list[str], keys: int, deleted: int, before: int, after: int, round_s: float
) -> Writes:
    from workbench.kafka import produce

    names = [b"key-%05d" % k for k in range(keys)]
    rounds: list[Writes] = [[(key, b"%s=%d" % (key, n)) for key in names] for n in range(before)]
    rounds.append([(key, None) for key in names[:deleted]])
    rounds += [[(key, b"%s=%d" % (key, n)) for key in names[deleted:]] for n in range(before, before + after)]
    writes: Writes = []
    for records in rounds:
        for topic in topics:
            done = produce(stack.kafka_config("producer"), topic, records, partition=0)
            if done.acknowledged != len(records):
                raise KafkaError(f"{done.acknowledged} of {len(records)} records acknowledged by {topic}")
        writes += records
        time.sleep(round_s)  # past segment.ms: the next round's append rolls a segment
    return writes


def _await_compacted(stack: Stack, topic: str, written: int, patience_s: float) -> None:
    deadline = time.monotonic() + patience_s
    while (scan := scan_log(stack, topic, 0.0)[0]).records > written // 2:
        if time.monotonic() > deadline:
            raise RetentionError(
                f"the cleaner did not compact {topic} within {patience_s:g} s ({scan.records} of {written} records "
                "left); is log.cleaner.backoff.ms long on this broker, or is compaction off (log.cleaner.enable)?"
            )
        time.sleep(0.2)
