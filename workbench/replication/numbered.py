"""Numbered records, found on both clusters: what every replication experiment writes and waits for.

Offsets differ between a source and its copy, so a record is known by the number its value
begins with (ten digits), whatever offset it lands at.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from workbench import kafka
from workbench.errors import BenchError

__all__ = ["SEQ_DIGITS", "numbered", "seq_of", "topic_total", "wait_until"]

#: Digits of the number a record's value begins with.
SEQ_DIGITS = 10


def numbered(seq: int, padding: bytes = b"") -> bytes:
    """The value of record number `seq`: its ten digits, then `padding`."""
    return b"%010d" % seq + padding


def seq_of(value: bytes | None) -> int:
    """The number a record's value begins with; -1 for a record without one (no value, or
    the pick-up marker `load.pick_up` writes: a value of dashes)."""
    head = bytes(value or b"")[:SEQ_DIGITS]
    return int(head) if head.isdigit() else -1


def topic_total(conf: dict[str, Any], topic: str) -> int:
    """Records now in `topic` (0 while the topic does not exist yet: MirrorMaker makes it)."""
    return kafka.total_records(conf, topic) if topic in kafka.list_topics(conf) else 0


def wait_until(done: Callable[[], bool], what: str, limit_s: float) -> None:
    """Poll `done` until it is true.

    Raises:
        BenchError: not within `limit_s` seconds; the message names `what` and where to look.
    """
    deadline = time.monotonic() + limit_s
    while not done():
        if time.monotonic() > deadline:
            raise BenchError(f"no {what} within {limit_s:.0f} s: see `workbench status` and the mirror-N logs")
        time.sleep(0.2)
