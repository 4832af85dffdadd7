"""What a partition's log holds at a moment: where it starts and ends, and on the embedded
broker the segments and bytes on disk.

Retention and compaction change a log without anyone reading it: the log start offset
moves when a segment is deleted, the files shrink when the cleaner rewrites them. A
`LogWatch` samples both on its own thread while an experiment writes, so a notebook can
plot the log start offset over time beside what was written. Offsets come from Kafka's
ListOffsets on any cluster; the files only where the workbench started the broker and
can see its data directory (the segment files are Kafka's own on-disk layout,
`<log.dirs>/<topic>-<partition>/<base offset>.log`); elsewhere those columns are NaN.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from workbench.kafka.offsets import OffsetReader

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["LogSnapshot", "LogWatch", "WATCH_INTERVAL_S", "log_dirs", "partition_files"]

#: Seconds between a `LogWatch`'s looks at the log: a change is seen up to this late.
WATCH_INTERVAL_S = 0.25


@dataclass(frozen=True)
class LogSnapshot:
    """One partition's log at one moment, `at_s` seconds after the watch's origin."""

    at_s: float
    start_offset: int
    end_offset: int
    #: Segment files (`.log`) in the partition's folder, the active one included; NaN off the machine.
    segments: float
    #: Bytes of those segment files; NaN off the machine.
    disk_bytes: float
    #: Segment files deleted from the log but not yet from disk (`.log.deleted`); NaN off the machine.
    deleted_segments: float

    @property
    def records(self) -> int:
        """Offsets between the start and the end (on a compacted log, more than the records it holds)."""
        return self.end_offset - self.start_offset


def log_dirs(stack: Stack) -> list[Path]:
    """The data directories of the brokers the workbench started (empty on someone else's cluster)."""
    dirs = [Path(r.extra["data_dir"]) / "data" for r in stack.services.values() if r.extra.get("data_dir")]
    return [d for d in dirs if d.is_dir()]


def partition_files(dirs: list[Path], topic: str, partition: int) -> tuple[float, float, float]:
    """(segments, bytes, segments awaiting deletion) of a partition's folder on the first
    broker that holds it; NaN for each when none of `dirs` does."""
    for base in dirs:
        folder = base / f"{topic}-{partition}"
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        live = [e for e in entries if e.name.endswith(".log")]
        gone = [e for e in entries if e.name.endswith(".log.deleted")]
        return float(len(live)), float(sum(_size(e) for e in live)), float(len(gone))
    return math.nan, math.nan, math.nan


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # deleted between the listing and the stat
        return 0


class LogWatch:
    """Snapshots of one partition's log every `interval_s`, on a thread of its own.

    Usage:
        with LogWatch(stack, topic, interval_s=0.25) as watch:
            ...  # write, wait
        watch.frame()          # one row per snapshot
    """

    def __init__(
        self,
        stack: Stack,
        topic: str,
        partition: int = 0,
        *,
        interval_s: float = WATCH_INTERVAL_S,
        origin: float | None = None,
    ) -> None:
        """`origin`: the epoch second `at_s` counts from (default: when the watch starts)."""
        self.topic = topic
        self.partition = partition
        self.interval_s = interval_s
        self.snapshots: list[LogSnapshot] = []
        self._reader = OffsetReader(stack.kafka_config("admin"))
        self._dirs = log_dirs(stack)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"log-watch-{topic}", daemon=True)
        self.origin = origin
        self._error: Exception | None = None

    def __enter__(self) -> LogWatch:
        if self.origin is None:
            self.origin = time.time()
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self._reader.close()

    def snapshot(self) -> LogSnapshot:
        """The log now (also taken by the watch's thread every `interval_s`)."""
        key = (self.topic, self.partition)
        start = self._reader.reported([key], "earliest")[key]
        end = self._reader.ends([key])[key]
        segments, size, deleted = partition_files(self._dirs, self.topic, self.partition)
        return LogSnapshot(time.time() - (self.origin or 0.0), start, end, segments, size, deleted)

    def latest(self) -> LogSnapshot | None:
        """The last snapshot taken, or None before the first."""
        return self.snapshots[-1] if self.snapshots else None

    def frame(self) -> pd.DataFrame:
        """One row per snapshot: `at_s`, `start_offset`, `end_offset`, `segments`, `disk_bytes`, ..."""
        return pd.DataFrame([asdict(s) for s in self.snapshots])

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.snapshots.append(self.snapshot())
            except Exception as exc:  # a failed look is a gap in the plot, not the end of the run
                self._error = exc
            self._stop.wait(self.interval_s)
