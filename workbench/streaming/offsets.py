"""Offset arithmetic of a micro-batch: ranges, the JSON Spark checkpoints, splitting, rate limits.

Pure functions on plain dicts and tuples, mirroring the official source: the offset JSON
of `KafkaSourceOffset`, `KafkaOffsetRangeCalculator` for `minPartitions`, and
`KafkaMicroBatchStream.rateLimit` for `maxOffsetsPerTrigger`. Offsets are "next offset to
read", so a batch covers `[start, end)` of each partition.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from workbench._types import Partition

__all__ = ["OffsetRange", "Partition", "from_json", "plan_ranges", "rate_limit", "split_ranges", "to_json"]


class OffsetRange(NamedTuple):
    """Records `[start, end)` of one topic-partition: one Spark task reads exactly these."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def to_json(offsets: Mapping[Partition, int]) -> dict[str, dict[str, int]]:
    """`{(t, p): n}` → `{"t": {"p": n}}`, sorted by topic then partition number.

    Spark compares offsets by their JSON text, so the order must never depend on how the
    dict was built: an unchanged position must serialise to the same string.
    """
    nested: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        nested.setdefault(topic, {})[str(partition)] = int(offset)
    return nested


def from_json(nested: Mapping[str, Mapping[str, int]]) -> dict[Partition, int]:
    """The inverse of `to_json`."""
    return {(topic, int(p)): int(n) for topic, parts in nested.items() for p, n in parts.items()}


def plan_ranges(start: Mapping[Partition, int], end: Mapping[Partition, int]) -> list[OffsetRange]:
    """Non-empty ranges from `start` to `end`, in (topic, partition) order.

    Every partition in `end` must be in `start`: the caller resolves new partitions to
    their earliest offset first, and decides what a missing or backwards one means.
    """
    ranges = [OffsetRange(t, p, start[(t, p)], stop) for (t, p), stop in sorted(end.items())]
    return [r for r in ranges if r.size > 0]


def split_ranges(ranges: Iterable[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """Cut large ranges so there are about `min_partitions` tasks (KafkaOffsetRangeCalculator).

    Nothing changes when `min_partitions` is unset or there are already as many ranges.
    Otherwise each range gets round(size / total x minPartitions) parts (at least 1); ranges
    with one part stay whole, and the rest share what is left of `min_partitions` in
    proportion to their size; the last piece of a range absorbs the rounding.
    """
    ranges = [r for r in ranges if r.size > 0]
    if min_partitions is None or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    unsplit = {(r.topic, r.partition) for r in ranges if _part_count(r.size, total, min_partitions) == 1}
    split_total = total - sum(r.size for r in ranges if (r.topic, r.partition) in unsplit)
    split_min = max(min_partitions - len(unsplit), 1)
    result: list[OffsetRange] = []
    for r in ranges:
        parts = 1 if (r.topic, r.partition) in unsplit else _part_count(r.size, split_total, split_min)
        remaining, begin = r.size, r.start
        for part in range(parts):
            piece = remaining // (parts - part)
            remaining -= piece
            stop = min(begin + piece, r.end)
            result.append(OffsetRange(r.topic, r.partition, begin, stop))
            begin = stop
    return [r for r in result if r.size > 0]


def _part_count(size: int, total: int, parts: int) -> int:
    # Scala's math.round rounds halves up; Python's round() would round them to even.
    return max(math.floor(size / total * parts + 0.5), 1)


def rate_limit(limit: int, start: Mapping[Partition, int], latest: Mapping[Partition, int]) -> dict[Partition, int]:
    """At most about `limit` offsets past `start`, shared in proportion to each partition's backlog.

    Each partition advances floor(limit x backlog / total backlog), or 1 when its share is
    below one record, so a small partition is never starved; never past `latest`.
    `start` must hold every partition of `latest` (new ones at their earliest offset).
    """
    sizes = {tp: end - start[tp] for tp, end in latest.items() if end - start[tp] > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(latest)
    result = {}
    for tp, end in latest.items():
        if tp not in sizes:
            result[tp] = end
            continue
        share = limit * (sizes[tp] / total)
        step = math.ceil(share) if share < 1 else math.floor(share)
        result[tp] = min(end, start[tp] + step)
    return result
