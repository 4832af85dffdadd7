"""Retention, compaction, a reader behind retention and replay on the session's real Kafka
and REST proxy: exact offsets and counts, never speed.

The embedded broker looks for work every second (docs/brokers.md), so each test sees
retention and compaction act within seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from workbench import kafka
from workbench.kafka.clients import read_records
from workbench.proxy.client import ProxyClient
from workbench.retention import (
    RetentionError,
    TopicConfigRefused,
    apply_log_settings,
    compaction_run,
    reader_behind_retention,
    replay,
    topic_log_settings,
)
from workbench.retention.log_state import LogWatch
from workbench.stack import Stack


def test_retention_moves_the_log_start_and_a_reader_from_the_beginning_gets_exactly_what_is_left(
    stack: Stack, topic: Callable[..., str]
) -> None:
    name = topic()
    apply_log_settings(stack, name, {"retention.ms": 1000, "segment.ms": 200})
    written: list[bytes] = []
    with LogWatch(stack, name) as watch:
        deadline = time.monotonic() + 30
        while watch.snapshot().start_offset == 0 and time.monotonic() < deadline:
            batch = [b"%d" % i for i in range(len(written), len(written) + 20)]
            kafka.produce(stack.kafka_config("producer"), name, [(None, v) for v in batch])
            written += batch  # appends spread over time: segments roll at them
            time.sleep(0.1)
        moved = watch.snapshot()
    assert moved.start_offset > 0, "retention deleted the first segments"
    read = list(read_records(stack.kafka_config("consumer"), [(name, 0)]))
    offsets = [r.offset for r in read]
    if not read:
        # The last records outlived their second before the read began (a loaded machine):
        # Kafka then rolls the active segment and deletes it too, and nothing is left to get.
        start, end = kafka.record_ranges(stack.kafka_config("consumer"), name)[(name, 0)]
        assert start == end == len(written), "an empty read is an empty log, every record expired"
        return
    assert offsets[0] >= moved.start_offset, "the read starts at or after the log start it saw moved"
    assert offsets == list(range(offsets[0], len(written))), "contiguous to the end, none twice"
    assert [r.value for r in read] == written[offsets[0] :]


def test_a_compacted_topic_keeps_each_keys_latest_value_and_forgets_deleted_keys(stack: Stack) -> None:
    # A low dirty ratio and a short tombstone retention while writes go on: the cleaner passes
    # every second, and a tombstone goes at the first pass after its delete horizon. (Once
    # writes stop, a log under its dirty ratio is not cleaned again: notebook 14 shows it; so
    # on a loaded machine, whose cleaner passes come late, writes go on until it has passed.)
    settings: dict[str, Any] = {"min.cleanable.dirty.ratio": 0.01, "delete.retention.ms": 300}
    run = compaction_run(
        stack, keys=20, rate=200.0, write_s=4.0, deleted_keys=4, settle_s=4.0, until_clean_s=60.0, **settings
    )
    assert run.table == run.expected, "the log's latest value per key is the one written last"
    assert not set(run.table) & {b"key-%05d" % k for k in range(4)}, "deleted keys are absent"
    assert run.row["tombstones_final"] == 0, "tombstones are gone after delete.retention.ms"
    assert run.row["stale_final"] < run.row["stale_peak"], "compaction removed stale records"
    assert run.row["live_keys"] == 16


def test_no_record_is_compacted_away_before_min_compaction_lag_ms(stack: Stack) -> None:
    """With `min.compaction.lag.ms` 2 s and the cleaner looking every second, stale values go,
    but none sooner than 2 s after its own timestamp (a removal is dated by the end of the
    first read of the whole log without it: late by up to a scan, never early)."""
    settings: dict[str, Any] = {"min.cleanable.dirty.ratio": 0.01, "min.compaction.lag.ms": 2000}
    run = compaction_run(stack, keys=10, rate=200.0, write_s=3.0, deleted_keys=0, settle_s=5.0, **settings)
    assert run.fates is not None
    gone = run.fates.dropna(subset=["gone_s"])
    assert len(gone) > 0, "the cleaner removed stale values within the run"
    assert gone["stale_s"].notna().all(), "only superseded values were removed"
    assert ((gone["gone_s"] - gone["written_s"]) >= 2.0).all(), "none before it was 2 s old"
    assert run.row["stale_removed"] == len(gone) and run.table == run.expected


def test_outside_the_active_segment_a_compacted_log_holds_each_key_once_with_its_latest_value(
    stack: Stack, topic: Callable[..., str]
) -> None:
    """20 keys written 20 times in one batch (one segment), that segment closed by one more
    record, then the cleaner's pass: every key exactly once below the closing record, at the
    offset and with the value of its last write. A cleaner pass swaps a segment whole, so the
    first shrink seen is the compacted segment, never part of one."""
    config = {
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
    }
    name = topic(config=config)
    conf = stack.kafka_config("producer")
    writes = [(b"key-%02d" % k, b"round-%02d" % r) for r in range(20) for k in range(20)]
    kafka.produce(conf, name, writes, partition=0, settings={"linger.ms": 100, "batch.size": 1_000_000})
    time.sleep(0.3)  # past segment.ms: the next append rolls the segment
    kafka.produce(conf, name, [(b"closer", b"x")], partition=0)
    closer = len(writes)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        below = [r for r in read_records(stack.kafka_config("consumer"), name) if r.offset < closer]
        if len(below) < closer:
            break
        time.sleep(0.5)
    assert len(below) < closer, "the cleaner took the closed segment within 60 s"
    last = {key: offset for offset, (key, _) in enumerate(writes)}
    assert sorted((r.key, r.offset, r.value) for r in below) == sorted(
        (key, offset, writes[offset][1]) for key, offset in last.items()
    ), "each key once, at its last write's offset, with its value"


@pytest.mark.parametrize("through", ["native", "proxy"])
def test_a_reader_behind_retention_with_reset_none_gets_one_line_saying_so(stack: Stack, through: str) -> None:
    row = reader_behind_retention(
        stack, reset="none", through=through, records=60, read_first=20, rate=200.0, retention_ms=1500, segment_ms=100
    )
    error = row["out_of_range_error"]
    assert error and "\n" not in error and "out of range" in error.lower()
    assert row["read_after"] == 0


@pytest.mark.parametrize("through", ["native", "proxy"])
def test_a_reader_behind_retention_reset_to_earliest_misses_exactly_what_was_deleted(
    stack: Stack, through: str
) -> None:
    row = reader_behind_retention(
        stack,
        reset="earliest",
        through=through,
        records=60,
        read_first=20,
        rate=200.0,
        retention_ms=1500,
        segment_ms=100,
    )
    assert row["first_read_after"] >= row["log_start_at_resume"] > row["committed"] == 20
    assert row["missed"] == row["first_read_after"] - 20
    assert row["duplicates"] == 0
    assert row["read_after"] == row["log_end_at_resume"] - row["first_read_after"] + 10  # the markers too


@pytest.mark.parametrize("through", ["native", "proxy"])
def test_replay_to_a_moment_lands_on_the_first_record_at_or_after_it(stack: Stack, through: str) -> None:
    row = replay(stack, to="timestamp", through=through, records=2_000)
    assert row["landed_right"] and row["landed_offset"] == row["expected_offset"]
    assert row["replayed"] == 2_000 - row["expected_offset"] and row["duplicates"] == 0


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"retention.ms": -5}, "Value must be at least -1"),
        ({"retention.ms": "soon"}, "Not a number of type LONG"),
        ({"cleanup.policy": "forever"}, "String must be one of: compact, delete"),
        ({"segment.bytes": 1000}, "Value must be at least 1048576"),
    ],
)
@pytest.mark.parametrize("through", ["native", "proxy"])
def test_a_setting_the_broker_refuses_is_its_reason_in_one_line_and_changes_nothing(
    stack: Stack, topic: Callable[..., str], settings: dict[str, object], reason: str, through: str
) -> None:
    name = topic()
    before = topic_log_settings(stack, name)
    proxy = ProxyClient.for_stack(stack) if through == "proxy" else None
    with pytest.raises(TopicConfigRefused) as raised:
        apply_log_settings(stack, name, {"segment.ms": 1234, **settings}, proxy=proxy)
    message = str(raised.value)
    assert reason in message and "\n" not in message
    if proxy is not None:
        assert "HTTP 400, error_code 40002" in message
        proxy.close()
    assert topic_log_settings(stack, name) == before, "nothing changed, segment.ms included"


def test_a_name_that_is_not_a_log_setting_never_reaches_the_broker(stack: Stack) -> None:
    with pytest.raises(RetentionError, match=r"retention\.mss: not a log setting"):
        apply_log_settings(stack, "no-such-topic-needed", {"retention.mss": 5})
