"""When compaction really compacts: stale values and tombstones over time, and the table
a compacted topic holds.

A compacted topic keeps, per key, the latest record, but only eventually: the log cleaner
takes a log when its dirty (not yet compacted) share passes `min.cleanable.dirty.ratio`,
leaves records younger than `min.compaction.lag.ms`, never touches the active segment,
and keeps a tombstone (a null value: the key's delete) `delete.retention.ms` after it
has compacted past it, so a slow reader still sees the delete. `compaction_run` writes
`keys` keys updated in turn at `rate` records/s to a fresh topic, deletes some of them
half-way, and reads the whole log again every `scan_interval_s`: the stale records
(a key's record with a later one after it), the tombstones and the records left, over
time, then checks that the log's latest value per key is the table that was written (the
experiment `compaction_progress` is its row).
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.retention.errors import check_ranges
from workbench.retention.log_settings import apply_log_settings, log_settings
from workbench.retention.log_state import LogWatch
from workbench.retention.writing import KeyValue, LogWriter, Written, proxy_for, write_steadily

if TYPE_CHECKING:
    from workbench.kafka.clients import Record
    from workbench.stack import Stack

__all__ = [
    "COMPACTION_DEFAULTS",
    "CompactionRun",
    "LogScan",
    "Removals",
    "compaction_progress",
    "compaction_run",
    "scan_log",
]

#: The log settings of `compaction_run`'s topic unless its parameters name others: Kafka's
#: dirty ratio, segments closed every second, tombstones kept 2 s after compaction.
COMPACTION_DEFAULTS: dict[str, Any] = {
    "cleanup.policy": "compact",
    "segment.ms": 1000,
    "min.cleanable.dirty.ratio": 0.5,
    "delete.retention.ms": 2000,
}


@dataclass(frozen=True)
class LogScan:
    """What one read of the whole log found, `at_s` seconds after the first write."""

    at_s: float
    records: int
    keys: int
    #: Records whose key has a later record in the log: what compaction will remove.
    stale: int
    tombstones: int

    @classmethod
    def of(cls, at_s: float, records: Iterable[Record]) -> LogScan:
        """The scan of `records`, read from the log start to its end."""
        last: dict[bytes | None, Record] = {}
        count = 0
        for record in records:
            last[record.key] = record
            count += 1
        tombstones = sum(1 for r in last.values() if r.value is None)
        return cls(at_s, count, len(last), count - len(last), tombstones)


@dataclass
class CompactionRun:
    """A compaction run: its row, the scans over time, the log's own state over time, the table."""

    row: dict[str, Any]
    #: One row per scan: `at_s`, `records`, `keys`, `stale`, `tombstones`.
    scans: pd.DataFrame
    #: The log over time: `at_s`, `start_offset`, `end_offset`, `segments`, `disk_bytes`.
    log: pd.DataFrame
    #: The latest value per live key, as the log holds it at the end (tombstoned keys absent).
    table: dict[bytes, bytes]
    #: The same, as written.
    expected: dict[bytes, bytes]
    #: Each record written: when, when it went stale, when it was last readable (`Removals.fates`).
    fates: pd.DataFrame | None = None


def scan_log(
    stack: Stack, topic: str, at_s: float, removals: Removals | None = None
) -> tuple[LogScan, dict[bytes | None, bytes | None]]:
    """Read partition 0 of `topic` from its start to its end: the scan, and each key's latest
    value; `removals`, when given, learns which records this read no longer found."""
    from workbench.kafka.clients import read_records

    started = time.monotonic()
    records = list(read_records(stack.kafka_config("consumer"), [(topic, 0)], timeout=30))
    if removals is not None:  # by the end of this read, what it did not find was gone
        removals.saw({r.offset for r in records}, at_s + time.monotonic() - started)
    latest = {r.key: r.value for r in records}
    return LogScan.of(at_s, records), latest


class Removals:
    """When each record was first missing from a read of the whole log, having been in an
    earlier one: the end of that read, by which the cleaner had removed it (at most a scan
    interval and a read after it did)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        #: offset → seconds (the scans' clock) of the first read it was missing from.
        self.gone_at: dict[int, float] = {}

    def saw(self, offsets: set[int], at_s: float) -> None:
        for offset in self.seen - offsets:
            self.gone_at.setdefault(offset, at_s)
        self.seen |= offsets

    def stale_lifetimes(self, written: list[Written], began: float) -> list[float]:
        """For each record a later write of its key made stale and the cleaner then removed:
        seconds from the moment it became stale to its removal."""
        fates = self.fates(written, began)
        gone = fates.dropna(subset=["stale_s", "gone_s"])
        return list(gone["gone_s"] - gone["stale_s"])

    def fates(self, written: list[Written], began: float) -> pd.DataFrame:
        """One row per record written: `offset`, `written_s`, `stale_s` (when a later write of
        its key superseded it) and `gone_s` (the first read without it), NaN for what did
        not happen, all in seconds from `began`."""
        latest: dict[bytes | None, int] = {}
        stale_since: dict[int, float] = {}
        for record in written:
            if record.key in latest:
                stale_since[latest[record.key]] = record.since - began
            latest[record.key] = record.offset
        return pd.DataFrame(
            {
                "offset": [w.offset for w in written],
                "written_s": [w.since - began for w in written],
                "stale_s": [stale_since.get(w.offset, math.nan) for w in written],
                "gone_s": [self.gone_at.get(w.offset, math.nan) for w in written],
            }
        )


def compaction_run(
    stack: Stack,
    *,
    keys: int = 50,
    rate: float = 300.0,
    write_s: float = 6.0,
    deleted_keys: int = 5,
    settle_s: float = 6.0,
    scan_interval_s: float = 0.5,
    record_bytes: int = 100,
    through: str = "native",
    topic_prefix: str = "wb-compaction",
    until_clean_s: float = 0.0,
    **log: Any,
) -> CompactionRun:
    """Update `keys` keys in turn at `rate` records/s for `write_s` seconds (the first
    `deleted_keys` get a tombstone half-way and are not written again), then watch for
    `settle_s` more, reading the whole log every `scan_interval_s`. The topic's log
    settings are `log` (Kafka's names), `COMPACTION_DEFAULTS` for the rest.

    Args:
        until_clean_s: after `write_s`, go on writing the live keys until a scan finds no
            tombstone, for this long at most: the cleaner passes only while the log takes
            appends, and on a loaded machine its passes come later than `write_s` allows.
        through: "native" (admin client, native producer) or "proxy" (the settings through
            the REST proxy's v3 config API, the records through its v2 produce).

    Raises:
        RetentionError: an input out of range or a name that is not a log setting.
        TopicConfigRefused: the broker refused the settings (a broker without compaction).
        KafkaError: a record was not acknowledged.
    """
    settings = log_settings({**COMPACTION_DEFAULTS, **log})
    check_ranges(("keys", keys, 1, 100_000))
    check_ranges(
        ("deleted_keys", deleted_keys, 0, keys),
        ("rate", rate, 1.0, 20_000.0),
        ("write_s", write_s, 0.1, 600.0),
        ("settle_s", settle_s, 0.0, 600.0),
        ("until_clean_s", until_clean_s, 0.0, 600.0),
        ("scan_interval_s", scan_interval_s, 0.1, 60.0),
        ("record_bytes", record_bytes, 16, 100_000),
    )
    topic = f"{topic_prefix}-{uuid.uuid4().hex[:10]}"
    pad = b"." * max(0, record_bytes - 16)
    tombstones_at = round(rate * write_s / 2)
    live = [_key(k) for k in range(deleted_keys, keys)]

    def record(i: int) -> KeyValue:
        if i < tombstones_at:
            key = _key(i % keys)
            return key, b"%d|" % i + pad
        if i < tombstones_at + deleted_keys:
            return _key(i - tombstones_at), None  # the deletes, one per deleted key
        key = live[(i - tombstones_at - deleted_keys) % len(live)] if live else _key(0)
        return key, b"%d|" % i + pad

    scans: list[LogScan] = []
    removals = Removals()
    with stack.temporary_topics({topic: 1}), proxy_for(stack, through) as proxy:
        apply_log_settings(stack, topic, settings, proxy=proxy)
        writer = LogWriter(stack, topic, through, proxy)
        began = time.time()
        scan = partial(scan_log, stack, topic, removals=removals)
        with LogWatch(stack, topic, origin=began) as watch:
            written = _write_and_scan(scan, writer, rate, write_s, record, scans, began, scan_interval_s, until_clean_s)
            deadline = time.monotonic() + settle_s
            while time.monotonic() < deadline:
                time.sleep(scan_interval_s)
                scans.append(scan(time.time() - began)[0])
            final, latest = scan(time.time() - began)
            scans.append(final)
    table = {k: v for k, v in latest.items() if k is not None and v is not None}
    expected = _expected(written, record)
    frame = pd.DataFrame([vars(s) for s in scans])
    params = {
        "keys": keys,
        "rate": rate,
        "write_s": write_s,
        "deleted_keys": deleted_keys,
        "record_bytes": record_bytes,
        "through": through,
        "until_clean_s": until_clean_s,
        "settle_s": settle_s,
        **settings,
    }
    tombstone_written_s = next((w.at - began for w in written if w.tombstone), math.nan)
    lifetimes = pd.Series(removals.stale_lifetimes(written, began), dtype=float)
    measured = {
        **_first_times(frame, tombstone_written_s),
        # How long a value made stale stayed readable: from the write that superseded it to
        # the first scan without it (to within `scan_interval_s`); NaN when none went.
        "stale_removed": len(lifetimes),
        "stale_gone_p50_s": float(lifetimes.median()) if len(lifetimes) else math.nan,
        "stale_gone_max_s": float(lifetimes.max()) if len(lifetimes) else math.nan,
        "stale_peak": int(frame["stale"].max()),
        "stale_final": final.stale,
        "records_final": final.records,
        "live_keys": final.keys - final.tombstones,
        "tombstones_final": final.tombstones,
        "table_matches": table == expected,
    }
    row = _row(stack, params, len(written), written[-1].at - began, measured)
    fates = removals.fates(written, began)
    return CompactionRun(row=row, scans=frame, log=watch.frame(), table=table, expected=expected, fates=fates)


def compaction_progress(stack: Stack, *, topic_prefix: str = "wb-compaction", **params: Any) -> dict[str, Any]:
    """One compaction run's row (the registered experiment `compaction_progress`): stale
    records at their peak and at the end, when the first were removed, when the tombstones
    went, and whether the log's table is the one written. See `compaction_run`."""
    return compaction_run(stack, topic_prefix=topic_prefix, **params).row


def _write_and_scan(
    scan: Any,
    writer: LogWriter,
    rate: float,
    write_s: float,
    record: Any,
    scans: list[LogScan],
    began: float,
    interval_s: float,
    until_clean_s: float = 0.0,
) -> list[Written]:
    """Write steadily in slices of `interval_s`, scanning the log after each slice; then, for
    `until_clean_s` at most, more slices until a scan finds no tombstone."""
    written: list[Written] = []
    total = max(1, round(rate * write_s))
    per_slice = max(1, round(rate * interval_s))

    def write_slice(first: int, count: int) -> None:
        written.extend(write_steadily(writer, rate, count / rate, partial(_offset_record, record, first)))
        scans.append(scan(time.time() - began)[0])

    for first in range(0, total, per_slice):
        write_slice(first, min(per_slice, total - first))
    deadline, first = time.monotonic() + until_clean_s, total
    while scans[-1].tombstones and time.monotonic() < deadline:
        write_slice(first, per_slice)
        first += per_slice
    writer.close()
    return written


def _offset_record(record: Any, first: int, i: int) -> KeyValue:
    return record(first + i)  # type: ignore[no-any-return]


def _expected(written: list[Written], record: Any) -> dict[bytes, bytes]:
    """The latest value per key of what was acknowledged, tombstoned keys dropped."""
    table: dict[bytes, bytes | None] = {}
    for index in range(len(written)):
        key, value = record(index)
        table[key] = value
    return {k: v for k, v in table.items() if k is not None and v is not None}


def _first_times(scans: pd.DataFrame, tombstone_written_s: float) -> dict[str, float]:
    """When the log first shrank (seconds from the first write), and how long after they
    were written the tombstones were last seen: NaN for what did not happen in the run."""
    from workbench.measure.contract import NOT_MEASURED

    shrank = scans.index[scans["records"] < scans["records"].cummax()]
    first_compacted_s = float(scans.loc[shrank[0], "at_s"]) if len(shrank) else NOT_MEASURED
    tombstones_gone_s = NOT_MEASURED
    if math.isfinite(tombstone_written_s):
        after = scans[scans["at_s"] > tombstone_written_s]
        seen = after.index[after["tombstones"] > 0]
        if len(seen):
            gone = after.index[(after["tombstones"] == 0) & (after.index > seen[0])]
            if len(gone):
                tombstones_gone_s = float(scans.loc[gone[0], "at_s"]) - tombstone_written_s
    return {"first_compacted_s": first_compacted_s, "tombstones_gone_s": tombstones_gone_s}


def _row(
    stack: Stack, params: Mapping[str, Any], records: int, seconds: float, measured: Mapping[str, Any]
) -> dict[str, Any]:
    from workbench.measure.contract import result_row

    return result_row(
        stack,
        experiment="compaction_progress",
        params=params,
        records=records,
        payload_bytes=records * int(params["record_bytes"]),
        seconds=seconds,
        extra=dict(measured),
    )


def _key(k: int) -> bytes:
    return b"key-%05d" % k
