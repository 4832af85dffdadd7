"""A reader behind retention: what a consumer that stopped for longer than the topic keeps
its records finds when it comes back, by `auto.offset.reset`.

Retention deletes records whatever the readers have read: a group whose committed offset
falls behind the log start has lost records, and its reset policy decides what it does
about it. `earliest` jumps to the log start (the deleted records are gone, the rest are
read), `latest` jumps to the end (everything written while it was away is skipped too),
`none` stops with an error, the only one of the three that tells the application. The
experiment `reader_behind_retention` writes records, lets a group read and commit some,
stops it, waits until retention has deleted past its offset while writing goes on, and
resumes it: the records it never saw are counted from offsets, not guessed.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from workbench.errors import KafkaError
from workbench.retention.errors import RetentionError
from workbench.retention.log_settings import apply_log_settings, broker_log_intervals, log_settings
from workbench.retention.log_state import LogWatch
from workbench.retention.reading import RESETS, PartitionReader, ReaderOutOfRange
from workbench.retention.writing import LogWriter, proxy_for, write_steadily

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["MARKERS", "reader_behind_retention"]

#: New records written after the reader resumes, so a reader reset to the end has something to land on.
MARKERS = 10


def reader_behind_retention(
    stack: Stack,
    *,
    reset: str = "earliest",
    through: str = "native",
    records: int = 400,
    read_first: int = 100,
    rate: float = 200.0,
    retention_ms: int = 2000,
    segment_ms: int = 250,
    wait_limit_s: float = 30.0,
    topic_prefix: str = "wb-behind",
) -> dict[str, Any]:
    """One reader behind retention, resumed with `auto.offset.reset=reset` (the registered
    experiment `reader_behind_retention`).

    A fresh topic keeps records `retention_ms` in segments of `segment_ms`; `records`
    records are written at `rate`/s; a group reads the first `read_first`, commits and
    stops; writing goes on until the log start has passed the group's offset (at most
    `wait_limit_s`); the group resumes, `MARKERS` more records are written, and it reads
    to the end. Natively, or with `through="proxy"` the settings, records and reader all
    through the REST proxy.

    Returns:
        A contract row: `missed` (offsets between the committed one and the first read
        after resuming: records the group never saw), `read_after`, `duplicates`,
        `log_start_at_resume`, `out_of_range_error` (the one-line error `none` gives; "" else).

    Raises:
        RetentionError: an input out of range; or the log start never passed the group's
            offset within `wait_limit_s` (retention did not act: say which settings).
    """
    if not 0 < read_first < records <= 1_000_000:
        raise RetentionError(f"need 0 < read_first < records ≤ 1,000,000, got {read_first} and {records}")
    if reset not in RESETS:
        raise RetentionError(f"reset must be one of {list(RESETS)}, got {reset!r}")
    settings = log_settings({"cleanup.policy": "delete", "retention.ms": retention_ms, "segment.ms": segment_ms})
    topic, group = f"{topic_prefix}-{uuid.uuid4().hex[:10]}", f"{topic_prefix}-group-{uuid.uuid4().hex[:8]}"
    value = b"v" * 100
    with stack.temporary_topics({topic: 1}), proxy_for(stack, through) as proxy:
        apply_log_settings(stack, topic, settings, proxy=proxy)
        writer = LogWriter(stack, topic, through, proxy)
        write_steadily(writer, rate, records / rate, lambda i: (None, value))
        with PartitionReader(stack, topic, group, reset="earliest", proxy=proxy) as reader:
            first = reader.read(read_first, timeout_s=30)
            if len(first) < read_first:
                raise KafkaError(f"the group read {len(first)} of the first {read_first} records of {topic} in 30 s")
            committed = first[-1][0] + 1
            reader.commit(committed)
        started = time.monotonic()
        with LogWatch(stack, topic, interval_s=0.1) as watch:
            while watch.snapshot().start_offset <= committed:
                if time.monotonic() - started > wait_limit_s:
                    raise RetentionError(_never_deleted(stack, committed, wait_limit_s, retention_ms, segment_ms))
                write_steadily(writer, rate, 0.2, lambda i: (None, value))
            at_resume = watch.snapshot()
        waited_s = time.monotonic() - started
        after, error = _resume(stack, topic, group, reset, proxy, writer, value)
    offsets = [o for o, _ in after]
    params = {
        "reset": reset,
        "through": through,
        "records": records,
        "read_first": read_first,
        "retention.ms": retention_ms,
        "segment.ms": segment_ms,
    }
    return _row(stack, params, offsets, committed, at_resume, waited_s, error, read_first)


def _resume(
    stack: Stack, topic: str, group: str, reset: str, proxy: Any, writer: LogWriter, value: bytes
) -> tuple[list[tuple[int, int]], str]:
    """The group back, with `reset`: what it reads to the end (the markers included), or the error."""
    with PartitionReader(stack, topic, group, reset=reset, proxy=proxy) as reader:
        try:
            head = reader.read(1, timeout_s=5, idle_s=1.0)  # lands (or fails) before the markers are written
        except ReaderOutOfRange as exc:
            return [], str(exc)
        markers = writer.write([(None, value)] * MARKERS)
        rest = reader.read(1_000_000, timeout_s=30, idle_s=1.5, through=markers[-1].offset)
    return head + rest, ""


def _row(
    stack: Stack,
    params: dict[str, Any],
    offsets: list[int],
    committed: int,
    at_resume: Any,
    waited_s: float,
    error: str,
    read_first: int,
) -> dict[str, Any]:
    from workbench.measure.contract import NOT_MEASURED, result_row

    first_after = offsets[0] if offsets else None
    return result_row(
        stack,
        experiment="reader_behind_retention",
        params=params,
        records=read_first + len(offsets),
        seconds=waited_s,
        extra={
            "committed": committed,
            "log_start_at_resume": at_resume.start_offset,
            "log_end_at_resume": at_resume.end_offset,
            "first_read_after": first_after if first_after is not None else NOT_MEASURED,
            "missed": first_after - committed if first_after is not None else NOT_MEASURED,
            "read_after": len(offsets),
            "duplicates": len(offsets) - len(set(offsets)),
            "out_of_range_error": error,
        },
    )


def _never_deleted(stack: Stack, committed: int, waited_s: float, retention_ms: int, segment_ms: int) -> str:
    """Why no record past the group's commit was deleted in time: the broker's own check
    interval when it says one longer than the wait, else that it did not apply retention."""
    check_ms = broker_log_intervals(stack)["log.retention.check.interval.ms"]
    if check_ms is not None and check_ms / 1000 > waited_s:
        why = f"its broker looks only every {check_ms / 1000:g} s (log.retention.check.interval.ms)"
    elif check_ms is None:
        why = "its broker does not say how often it looks, and deleted nothing (Tansu 0.6 never does)"
    else:
        why = f"its broker did not apply retention, though it says it looks every {check_ms / 1000:g} s"
    return (
        f"retention did not delete past offset {committed} within {waited_s:g} s (retention.ms={retention_ms}, "
        f"segment.ms={segment_ms}): {why}; docs/brokers.md"
    )
