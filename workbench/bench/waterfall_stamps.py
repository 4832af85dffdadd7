"""The latency waterfall's stamp table: per record, the wall-clock moment of each stamp.

The writer, the proxy's trace, the broker and the reader each fill their own columns, from
their own threads; `workbench.bench.waterfall` turns the table into hops. The schedule's
stamp (sequence number and due time) travels in the first 16 bytes of each record's value.
"""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd

from workbench.measure.hops import STAMPS

__all__ = ["STAMP", "Stamps", "append_ns", "stamp"]

STAMP = struct.Struct(">qq")  # sequence number, due time (wall-clock ns)


class Stamps:
    """Per record, wall-clock ns of each stamp (0: not taken); written by several threads, one slot each."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.ns = {name: np.zeros(total, dtype=np.int64) for name in STAMPS}
        self.partition = np.full(total, -1, dtype=np.int64)
        self.offset = np.full(total, -1, dtype=np.int64)
        self.read = 0
        self.duplicates = 0
        self.failed = 0

    def consumed(self, seq: int, when_ns: int, partition: int, offset: int, appended_ns: int) -> None:
        if not 0 <= seq < self.total:
            return
        if self.ns["consumed"][seq]:
            self.duplicates += 1
            return
        self.ns["consumed"][seq] = when_ns
        self.ns["appended"][seq] = appended_ns
        self.partition[seq], self.offset[seq] = partition, offset
        self.read += 1

    def frame(self, base_ns: int) -> pd.DataFrame:
        columns = {name: np.where(ns > 0, (ns - base_ns) / 1e6, np.nan) for name, ns in self.ns.items()}
        frame = pd.DataFrame(columns)
        frame["partition"], frame["offset"] = self.partition, self.offset
        frame.index.name = "seq"
        return frame


def stamp(seq: int, due_ns: int, padding: bytes) -> bytes:
    """A record's value: its sequence number and due time, then `padding` to its size."""
    return STAMP.pack(seq, due_ns) + padding


def append_ns(timestamp_ms: int) -> int:
    """The broker's whole-millisecond stamp as ns, at the middle of its millisecond (unbiased)."""
    return timestamp_ms * 1_000_000 + 500_000
