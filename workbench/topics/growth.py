"""What happens to keyed records when a topic grows from `old` to `new` partitions.

Kafka only promises order within a partition. A key that hashes to a different
partition after the growth has its older records in one partition and its newer ones
in another, until retention removes the old ones: a consumer can see a newer record of
that key before an older one. The movement is computed here with the same partitioner
the producer uses (`partition_for`), for any counts and without a broker; `live_growth`
measures it on a broker that adds partitions (CreatePartitions), and the two agree exactly.

With a hash spread evenly over its range, a key keeps its partition when
`h mod old == h mod new`, which holds for `min(old, new)` of every `lcm(old, new)`
consecutive hash values, so the expected moved share is `1 - min(old, new) / lcm(old, new)`:
4→8 moves half the keys, 4→5 moves 80 % of them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from workbench.topics.errors import TopicDesignError
from workbench.topics.partitioners import key_bytes, partition_for

__all__ = ["Growth", "GrowthReport", "expected_moved_fraction", "growth_table", "moved_keys"]


@dataclass(frozen=True)
class Growth:
    """One growth of a topic: `keys` keys placed by `partitioner`, from `old_partitions` to
    `new_partitions`. Computed (`GrowthReport`) or measured on a broker (`LiveGrowth`), a
    growth's row starts with these four columns, so the two tables line up."""

    old_partitions: int
    new_partitions: int
    partitioner: str
    keys: int

    def row(self) -> dict[str, Any]:
        """One tidy row for a results table: the growth, then what was found of it."""
        return {**{f.name: getattr(self, f.name) for f in fields(Growth)}, **self._measures()}

    def _measures(self) -> dict[str, Any]:
        """The columns after the growth's own: what a kind of growth found."""
        return {}


@dataclass(frozen=True)
class GrowthReport(Growth):
    """Which keys change partition when a topic grows, and how many."""

    moved: tuple[bytes, ...]
    #: (old partition, new partition) -> number of keys, for keys that moved.
    flows: dict[tuple[int, int], int] = field(default_factory=dict)

    @property
    def moved_count(self) -> int:
        """How many keys land on another partition after the growth."""
        return len(self.moved)

    @property
    def moved_fraction(self) -> float:
        """Share of the keys that move (0 for no keys)."""
        return self.moved_count / self.keys if self.keys else 0.0

    @property
    def expected_fraction(self) -> float:
        """The share an ideal uniform hash would move: `1 - min/lcm`."""
        return expected_moved_fraction(self.old_partitions, self.new_partitions)

    def ordering_note(self) -> str:
        """The consequence for consumers, in one sentence with this growth's numbers."""
        if not self.moved_count:
            return (
                f"No key changes partition going from {self.old_partitions} to {self.new_partitions} "
                "partitions: per-key order is kept."
            )
        return (
            f"{self.moved_count:,} of {self.keys:,} keys ({self.moved_fraction:.1%}) change partition going from "
            f"{self.old_partitions} to {self.new_partitions}: each has older records in its old partition and newer "
            "ones in its new partition until retention drops the old ones, so a consumer may see them out of order "
            "unless producers stop and the topic is drained before the growth."
        )

    def _measures(self) -> dict[str, Any]:
        return {
            "moved": self.moved_count,
            "moved_fraction": self.moved_fraction,
            "expected_fraction": self.expected_fraction,
        }


def expected_moved_fraction(old_partitions: int, new_partitions: int) -> float:
    """Share of keys a uniform hash moves from `old` to `new` partitions: `1 - min/lcm`.

    Usage: `expected_moved_fraction(4, 8) == 0.5`.
    """
    _check_count("old_partitions", old_partitions)
    _check_count("new_partitions", new_partitions)
    return 1.0 - min(old_partitions, new_partitions) / math.lcm(old_partitions, new_partitions)


def moved_keys(
    keys: Iterable[bytes | str],
    old_partitions: int,
    new_partitions: int,
    partitioner: str = "murmur2",
) -> GrowthReport:
    """The keys that land on another partition after a topic grows (or shrinks).

    Args:
        keys: distinct record keys (text is UTF-8 encoded); duplicates count once.
        old_partitions, new_partitions: partition counts before and after.
        partitioner: the producer's `partitioner` (librdkafka names; `murmur2` is Java's).

    Returns:
        A `GrowthReport` with the moved keys, their old→new flows and the ideal share.

    Raises:
        TopicDesignError: a count below 1, an unknown partitioner, or a partitioner that
            places keys at random (nothing to compute).

    Usage: `moved_keys((f"device-{i}" for i in range(100_000)), 4, 5).moved_fraction`.
    """
    _check_count("old_partitions", old_partitions)
    _check_count("new_partitions", new_partitions)
    unique = list(dict.fromkeys(key_bytes(k) for k in keys))
    moved: list[bytes] = []
    flows: Counter[tuple[int, int]] = Counter()
    for key in unique:
        before = partition_for(key, old_partitions, partitioner)
        after = partition_for(key, new_partitions, partitioner)
        if before is None or after is None:
            raise TopicDesignError(
                f"partitioner {partitioner!r} leaves key {key!r} to the client's random choice, so its movement "
                "cannot be computed; use a hashing partitioner (murmur2, consistent, fnv1a) and non-empty keys"
            )
        if before != after:
            moved.append(key)
            flows[(before, after)] += 1
    return GrowthReport(old_partitions, new_partitions, partitioner, len(unique), tuple(moved), dict(flows))


def growth_table(
    keys: Sequence[bytes | str],
    changes: Iterable[tuple[int, int]],
    partitioners: Iterable[str] = ("murmur2",),
) -> list[dict[str, Any]]:
    """One `GrowthReport.row()` per (old, new) change and partitioner, for a notebook table.

    Usage: `pd.DataFrame(growth_table(keys, [(4, 5), (4, 8), (6, 12)]))`.
    """
    encoded = [key_bytes(k) for k in keys]
    return [moved_keys(encoded, old, new, p).row() for p in partitioners for old, new in changes]


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TopicDesignError(f"{name} must be a whole number ≥ 1, got {value!r}")
