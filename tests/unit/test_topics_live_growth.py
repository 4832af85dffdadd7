"""Live growth's pure parts: a result's shares and agreement, and the inputs refused before
any topic is created (the growth itself runs on the broker: tests/integration)."""

from __future__ import annotations

import re

import pytest

from workbench.config import load_profile
from workbench.stack import Stack
from workbench.topics import TopicDesignError
from workbench.topics.live_growth import GrowthRun, LiveGrowth, grow_live


def _growth(**changes: object) -> LiveGrowth:
    values: dict[str, object] = {
        "old_partitions": 4,
        "new_partitions": 5,
        "partitioner": "murmur2_random",
        "keys": 200,
        "records_read": 400,
        "moved": 160,
        "computed_moved": 160,
        "disagreeing": 0,
        "misplaced": 0,
        "create_partitions_s": 0.1,
    }
    values.update(changes)
    return LiveGrowth(**values)  # type: ignore[arg-type]


def test_shares_are_of_the_keys_and_agreement_needs_every_record_in_place() -> None:
    growth = _growth()
    assert (growth.moved_fraction, growth.computed_fraction, growth.agrees) == (0.8, 0.8, True)
    assert not _growth(disagreeing=1).agrees
    assert not _growth(misplaced=1).agrees
    assert not _growth(records_read=399).agrees
    assert _growth(keys=0, records_read=0).moved_fraction == 0.0


def test_a_row_carries_the_measured_and_the_computed_movement() -> None:
    row = _growth().row()
    assert row["moved"] == row["computed_moved"] == 160 and row["agrees"] is True
    assert set(row) >= {"old_partitions", "new_partitions", "records_read", "create_partitions_s", "misplaced"}
    assert GrowthRun((_growth(),), None).rows() == [row]


@pytest.mark.parametrize(
    ("keys", "old", "new", "partitioner", "message"),
    [
        ([], 4, 5, "murmur2_random", "needs at least one key"),
        (["a"], 5, 4, "murmur2_random", "a topic can only grow: 5 → 4"),
        (["a"], 4, 4, "murmur2_random", "a topic can only grow: 4 → 4"),
        (["a"], 0, 4, "murmur2_random", "old_partitions must be a whole number ≥ 1"),
        (["a"], 4, 5, "random", "leaves key b'a' to the client's random choice"),
    ],
)
def test_impossible_growths_are_refused_before_anything_is_created(
    keys: list[str], old: int, new: int, partitioner: str, message: str
) -> None:
    stack = Stack(load_profile())  # no service: a refusal must come before any broker is asked
    with pytest.raises(TopicDesignError, match=re.escape(message)):
        grow_live(stack, keys, old, new, partitioner=partitioner)


def test_the_summary_states_each_change_from_its_numbers_and_a_refusal_in_one_line() -> None:
    agreeing = _growth(create_partitions_s=0.125)
    differing = _growth(
        old_partitions=4, new_partitions=8, moved=99, computed_moved=100, disagreeing=1, records_read=399
    )
    assert GrowthRun((agreeing, differing), "no CreatePartitions here").summary() == [
        "4 → 5: 160 of 200 keys (80.0%) changed partition on the broker, exactly the keys the partitioner computes; "
        "every record read back, 0 misplaced; the new count reached every broker's metadata 0.12 s after "
        "CreatePartitions.",
        "4 → 8: 99 of 200 keys (49.5%) changed partition on the broker, 1 key(s) differ from the 100 the partitioner "
        "computes; 399 of 400 records read back, 0 misplaced; the new count reached every broker's metadata 0.10 s "
        "after CreatePartitions.",
        "Not grown on this cluster, so the computed movement above stands alone: no CreatePartitions here.",
    ]
