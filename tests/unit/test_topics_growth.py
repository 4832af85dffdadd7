"""Partition growth: which keys move, checked by hand and against the ideal share."""

from __future__ import annotations

import pytest

from workbench.topics import TopicDesignError, expected_moved_fraction, growth_table, moved_keys


@pytest.mark.parametrize(
    ("old", "new", "share"),
    [(4, 5, 0.8), (4, 8, 0.5), (6, 12, 0.5), (3, 3, 0.0), (12, 6, 0.5), (1, 2, 0.5), (2, 3, 2 / 3)],
)
def test_expected_share_is_one_minus_min_over_lcm(old: int, new: int, share: float) -> None:
    assert expected_moved_fraction(old, new) == pytest.approx(share)


def test_hand_worked_keys_move_as_their_hashes_say() -> None:
    # murmur2 & 0x7fffffff: "21" 1173551340, "foobar" 1357151166, "abc" 479470107.
    # 4 -> 8: 21 goes 0 -> 4, foobar 2 -> 6, abc stays at 3.
    report = moved_keys([b"21", "foobar", b"abc"], 4, 8)
    assert report.moved == (b"21", b"foobar")
    assert report.flows == {(0, 4): 1, (2, 6): 1}
    assert (report.keys, report.moved_count) == (3, 2)
    # 4 -> 5: 21 stays at 0, foobar 2 -> 1, abc 3 -> 2.
    assert moved_keys([b"21", b"foobar", b"abc"], 4, 5).moved == (b"foobar", b"abc")


def test_duplicates_count_once_and_flows_add_up_to_the_moved_keys() -> None:
    keys = [f"device-{i % 5_000}" for i in range(10_000)]
    report = moved_keys(keys, 6, 12)
    assert report.keys == 5_000
    assert sum(report.flows.values()) == report.moved_count
    assert all(new - old == 6 for old, new in report.flows)  # 6 -> 12: h%12 is h%6 or h%6 + 6
    assert abs(report.moved_fraction - 0.5) < 0.03


def test_no_growth_moves_nothing_and_says_order_is_kept() -> None:
    report = moved_keys(["a", "b"], 4, 4)
    assert report.moved_count == 0
    assert "per-key order is kept" in report.ordering_note()


def test_the_ordering_note_gives_the_numbers() -> None:
    note = moved_keys([b"21", b"foobar", b"abc"], 4, 8).ordering_note()
    assert note.startswith("2 of 3 keys (66.7%) change partition going from 4 to 8")


def test_growth_table_has_one_row_per_change_and_partitioner() -> None:
    rows = growth_table([f"k{i}" for i in range(1_000)], [(4, 5), (4, 8)], ["murmur2", "consistent"])
    assert [(r["partitioner"], r["old_partitions"], r["new_partitions"]) for r in rows] == [
        ("murmur2", 4, 5),
        ("murmur2", 4, 8),
        ("consistent", 4, 5),
        ("consistent", 4, 8),
    ]
    assert all(r["keys"] == 1_000 for r in rows)


def test_a_random_partitioner_cannot_be_computed() -> None:
    with pytest.raises(TopicDesignError, match="leaves key b'a' to the client's random choice"):
        moved_keys([b"a"], 4, 5, "random")


def test_partition_counts_below_one_are_refused() -> None:
    with pytest.raises(TopicDesignError, match="new_partitions must be a whole number ≥ 1, got 0"):
        moved_keys([b"a"], 4, 0)
