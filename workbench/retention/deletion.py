"""When retention really deletes: records' survival time against `retention.ms`.

Kafka deletes whole segments, never single records, and never the active segment while it
is the one being written: a segment goes when its newest record is older than
`retention.ms` (or, by size, while the partition is over `retention.bytes`), and only once
it is closed, which happens at the first append after `segment.ms` or at `segment.bytes`.
So a record lives at least `retention.ms`, and up to about `retention.ms + segment.ms` plus
the broker's check interval: `retention_run` writes records at a steady rate to a fresh
topic with the given log settings, watches the log start offset, and gives each record's
measured survival, the first deletion, and what the log still held when writing stopped
(the experiment `retention_deletes` is its row).
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.retention.errors import RetentionError, check_ranges
from workbench.retention.log_settings import apply_log_settings, broker_log_intervals, log_settings
from workbench.retention.log_state import LogWatch
from workbench.retention.writing import LogWriter, Written, proxy_for, write_steadily

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["RETENTION_DEFAULTS", "RetentionRun", "SETTLE_S", "retention_deletes", "retention_run"]

#: The log settings of `retention_run`'s topic unless its parameters name others: records
#: kept 3 s, segments closed every second (at the first append after it).
RETENTION_DEFAULTS: dict[str, Any] = {"cleanup.policy": "delete", "retention.ms": 3000, "segment.ms": 1000}
#: Seconds the log is watched after writing stops, past `retention.ms + segment.ms`, for the broker to act.
SETTLE_S = 4.0


@dataclass
class RetentionRun:
    """A retention run: its row, the log over time, and every record's fate."""

    row: dict[str, Any]
    #: The log over time: `at_s` (from the first write), `start_offset`, `end_offset`, `segments`, `disk_bytes`.
    log: pd.DataFrame
    #: One row per record: `offset`, `written_s`, `deleted_s` (NaN: still there), `survived_s`.
    records: pd.DataFrame


def retention_run(
    stack: Stack,
    *,
    rate: float = 200.0,
    write_s: float = 6.0,
    record_bytes: int = 100,
    through: str = "native",
    settle_s: float = SETTLE_S,
    topic_prefix: str = "wb-retention",
    **log: Any,
) -> RetentionRun:
    """Write `rate` records/s for `write_s` seconds to a fresh one-partition topic with the
    log settings `log` (Kafka's names: `**{"retention.ms": 3000}`; `RETENTION_DEFAULTS` for
    the rest), then watch until every record is deleted or `retention.ms + segment.ms +
    settle_s` has passed since the last write.

    Args:
        through: "native" (admin client, native producer) or "proxy" (the settings through
            the REST proxy's v3 config API, the records through its v2 produce).

    Raises:
        RetentionError: a setting out of range or not a log setting.
        TopicConfigRefused: the broker refused the settings (its reason).
        KafkaError: a record was not acknowledged.
    """
    settings = log_settings({**RETENTION_DEFAULTS, **log})
    retention_s, segment_s = _seconds(settings, "retention.ms"), _seconds(settings, "segment.ms", default=604_800_000)
    check_ranges(
        ("rate", rate, 1.0, 100_000.0),
        ("write_s", write_s, 0.1, 3_600.0),
        ("record_bytes", record_bytes, 1, 1_000_000),
        ("settle_s", settle_s, 0.0, 600.0),
    )
    topic = f"{topic_prefix}-{uuid.uuid4().hex[:10]}"
    with stack.temporary_topics({topic: 1}), proxy_for(stack, through) as proxy:
        apply_log_settings(stack, topic, settings, proxy=proxy)
        writer = LogWriter(stack, topic, through, proxy)
        value = b"x" * record_bytes
        began = time.time()
        with LogWatch(stack, topic, origin=began) as watch:
            written = write_steadily(writer, rate, write_s, lambda i: (None, value))
            writer.close()
            held_at_stop = watch.snapshot()
            _await_deleted(watch, held_at_stop.end_offset, retention_s + min(segment_s, 60.0) + settle_s)
            final = watch.snapshot()
    frame = watch.frame()
    fates = _fates(written, frame, began)
    check_ms = broker_log_intervals(stack)["log.retention.check.interval.ms"]
    measured = {
        "held_at_stop": held_at_stop.records,
        "log_start_final": final.start_offset,
        "held_final": final.records,
        # How often the broker looks for segments past retention (NaN: it does not say).
        "check_interval_ms": float("nan") if check_ms is None else check_ms,
    }
    row = _row(
        stack,
        {"rate": rate, "write_s": write_s, "record_bytes": record_bytes, "through": through, **settings},
        fates,
        frame,
        retention_s,
        measured,
    )
    return RetentionRun(row=row, log=frame, records=fates)


def retention_deletes(stack: Stack, *, topic_prefix: str = "wb-retention", **params: Any) -> dict[str, Any]:
    """One retention run's row (the registered experiment `retention_deletes`): survival
    p50 and max against `retention.ms`, the first deletion, what stayed. See `retention_run`."""
    return retention_run(stack, topic_prefix=topic_prefix, **params).row


def _await_deleted(watch: LogWatch, end: int, limit_s: float) -> None:
    """Wait until the log starts at `end` (every record written is gone) or `limit_s` passes."""
    deadline = time.monotonic() + (limit_s if math.isfinite(limit_s) else SETTLE_S)
    while time.monotonic() < deadline:
        latest = watch.latest()
        if latest is not None and latest.start_offset >= end:
            return
        time.sleep(0.1)


def _fates(written: list[Written], log: pd.DataFrame, began: float) -> pd.DataFrame:
    """Each record's written and deleted time (seconds from the first write): deleted at
    the first snapshot whose log start offset is past it (NaN: still there at the end)."""
    offsets = np.array([w.offset for w in written], dtype=np.int64)
    frame = pd.DataFrame({"offset": offsets, "written_s": [w.at - began for w in written]})
    deleted_s = np.full(len(offsets), np.nan)
    if len(log):
        # The log start only moves forward; the first snapshot past an offset is a sorted search.
        starts = np.maximum.accumulate(log["start_offset"].to_numpy(dtype=np.int64))
        index = np.searchsorted(starts, offsets, side="right")
        found = index < len(starts)
        deleted_s[found] = log["at_s"].to_numpy()[index[found]]
    frame["deleted_s"] = deleted_s
    frame["survived_s"] = frame["deleted_s"] - frame["written_s"]
    return frame


def _row(
    stack: Stack,
    params: Mapping[str, Any],
    fates: pd.DataFrame,
    log: pd.DataFrame,
    retention_s: float,
    measured: Mapping[str, Any],
) -> dict[str, Any]:
    from workbench.measure.contract import NOT_MEASURED, result_row

    survived = fates["survived_s"].dropna()
    deleted = fates["deleted_s"].dropna()
    return result_row(
        stack,
        experiment="retention_deletes",
        params=params,
        records=len(fates),
        payload_bytes=len(fates) * int(params["record_bytes"]),
        seconds=float(params["write_s"]),
        extra={
            "deleted": len(deleted),
            "kept": len(fates) - len(deleted),
            "first_deleted_s": float(deleted.min()) if len(deleted) else NOT_MEASURED,
            "survival_min_s": float(survived.min()) if len(survived) else NOT_MEASURED,
            "survival_p50_s": float(survived.median()) if len(survived) else NOT_MEASURED,
            "survival_max_s": float(survived.max()) if len(survived) else NOT_MEASURED,
            "overstay_p50_s": float(survived.median()) - retention_s if len(survived) else NOT_MEASURED,
            **measured,
            "segments_max": float(log["segments"].max()) if len(log) else NOT_MEASURED,
            "disk_bytes_max": float(log["disk_bytes"].max()) if len(log) else NOT_MEASURED,
        },
    )


def _seconds(settings: Mapping[str, str], name: str, default: float = math.inf) -> float:
    """A millisecond setting in seconds (inf for -1: never)."""
    text = settings.get(name)
    if text is None:
        return default / 1000 if math.isfinite(default) else default
    try:
        value = int(text)
    except ValueError:
        raise RetentionError(f"{name}={text!r} is not a whole number of milliseconds") from None
    return math.inf if value < 0 else value / 1000
