"""Offset arithmetic mirrors the official source: JSON shape, minPartitions, maxOffsetsPerTrigger."""

from __future__ import annotations

import json

from workbench.streaming.offsets import OffsetRange, from_json, plan_ranges, rate_limit, split_ranges, to_json


def test_offset_json_is_sorted_with_string_partitions_whatever_the_build_order() -> None:
    one = to_json({("b", 10): 5, ("a", 2): 7, ("a", 10): 1})
    other = to_json({("a", 10): 1, ("b", 10): 5, ("a", 2): 7})
    assert json.dumps(one) == json.dumps(other) == '{"a": {"2": 7, "10": 1}, "b": {"10": 5}}'
    assert from_json(one) == {("a", 2): 7, ("a", 10): 1, ("b", 10): 5}


def test_plan_ranges_drops_empty_ranges() -> None:
    ranges = plan_ranges({("t", 0): 5, ("t", 1): 9}, {("t", 0): 8, ("t", 1): 9})
    assert ranges == [OffsetRange("t", 0, 5, 8)]


def test_min_partitions_below_the_range_count_changes_nothing() -> None:
    ranges = [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 0, 50)]
    assert split_ranges(ranges, 2) == ranges
    assert split_ranges(ranges, None) == ranges


def test_min_partitions_splits_big_ranges_and_keeps_small_ones_whole() -> None:
    # Sizes 1, 10,000, 10,000 and minPartitions 5: the one-record range rounds to a single
    # part and stays whole; the two big ranges share the other 4 parts by size.
    ranges = [OffsetRange("t", 0, 0, 1), OffsetRange("t", 1, 0, 10_000), OffsetRange("t", 2, 0, 10_000)]
    result = split_ranges(ranges, 5)
    assert result[0] == OffsetRange("t", 0, 0, 1)
    assert [r for r in result if r.partition == 1] == [
        OffsetRange("t", 1, 0, 5_000),
        OffsetRange("t", 1, 5_000, 10_000),
    ]
    assert len(result) == 5
    assert sum(r.size for r in result) == 20_001


def test_min_partitions_last_piece_absorbs_the_rounding() -> None:
    result = split_ranges([OffsetRange("t", 0, 10, 20)], 3)
    assert [(r.start, r.end) for r in result] == [(10, 13), (13, 16), (16, 20)]


def test_rate_limit_is_proportional_to_backlog_and_never_starves() -> None:
    start = {("t", 0): 0, ("t", 1): 0, ("t", 2): 100}
    latest = {("t", 0): 1_000, ("t", 1): 3_000, ("t", 2): 101}
    assert rate_limit(400, start, latest) == {("t", 0): 99, ("t", 1): 299, ("t", 2): 101}


def test_rate_limit_above_the_backlog_returns_latest() -> None:
    start, latest = {("t", 0): 0}, {("t", 0): 10}
    assert rate_limit(1_000, start, latest) == latest
    assert rate_limit(5, latest, latest) == latest
