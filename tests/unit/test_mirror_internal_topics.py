"""MirrorMaker's offset syncs and checkpoints decoded from the bytes its Java classes write,
its translation rule, and the offset-shift run's input checks and phase table."""

from __future__ import annotations

import math
import struct
import subprocess
import time
from typing import Any

import pandas as pd
import psutil
import pytest

from workbench.config import load_profile
from workbench.errors import BenchError
from workbench.kafka.wire import KafkaProtocolError
from workbench.replication import (
    Checkpoint,
    OffsetShiftRun,
    OffsetSync,
    phase_table,
    translate,
)
from workbench.replication.internal_topics import (
    checkpoints_topic,
    decode_checkpoint,
    decode_offset_sync,
    offset_syncs_topic,
)
from workbench.replication.offset_shift import offset_shift_run
from workbench.stack.state import ServiceRecord


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def test_an_offset_sync_decodes_from_its_struct_layout() -> None:
    key = _string("orders") + struct.pack(">i", 2)
    value = struct.pack(">qq", 1_005, 5)
    assert decode_offset_sync(key, value) == OffsetSync("orders", 2, 1_005, 5)


def test_a_checkpoint_decodes_behind_its_version_header() -> None:
    key = _string("billing") + _string("orders") + struct.pack(">i", 0)
    value = struct.pack(">hqq", 0, 1_007, 6) + _string("")
    assert decode_checkpoint(key, value) == Checkpoint("billing", "orders", 0, 1_007, 6, "")


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        (_string("orders"), struct.pack(">qq", 1, 1), "short"),  # the partition is missing
        (_string("orders") + struct.pack(">i", 0), b"\x00\x01", "short"),
        (struct.pack(">h", 3) + b"\xff\xfe\xfd" + struct.pack(">i", 0), struct.pack(">qq", 1, 1), "UTF-8"),
        (struct.pack(">h", 30_000) + b"x", struct.pack(">qq", 1, 1), "short"),  # a length past the bytes
        (struct.pack(">h", -1) + struct.pack(">i", 0), struct.pack(">qq", 1, 1), "no name"),
    ],
)
def test_bytes_that_are_not_an_offset_sync_are_one_clear_error(key: bytes, value: bytes, says: str) -> None:
    with pytest.raises(KafkaProtocolError, match=says):
        decode_offset_sync(key, value)


def test_a_checkpoint_of_an_unknown_layout_version_is_refused() -> None:
    key = _string("g") + _string("t") + struct.pack(">i", 0)
    with pytest.raises(KafkaProtocolError, match="version 1"):
        decode_checkpoint(key, struct.pack(">hqq", 1, 1, 1) + _string(""))


SYNCS = [
    OffsetSync("t", 0, 0, 0),
    OffsetSync("t", 0, 1_005, 5),
    OffsetSync("t", 0, 1_200, 180),
    OffsetSync("u", 0, 0, 0),
]


@pytest.mark.parametrize(
    ("upstream", "expected"),
    [
        (1_005, 5),  # on a sync: its downstream offset
        (1_007, 6),  # past it: one further, never more (records between may have no copy)
        (1_199, 6),
        (1_200, 180),
        (5_000, 181),
        (0, 0),
    ],
)
def test_translation_takes_the_latest_sync_at_or_before_and_never_guesses_ahead(upstream: int, expected: int) -> None:
    assert translate(SYNCS, "t", 0, upstream) == expected


def test_no_sync_at_or_before_the_offset_translates_to_nothing() -> None:
    assert translate(SYNCS[1:], "t", 0, 1_000) is None
    assert translate(SYNCS, "t", 1, 1_000) is None


def test_internal_topic_names_follow_the_aliases_and_the_separator() -> None:
    profile = load_profile("local-geo")
    assert (offset_syncs_topic(profile), checkpoints_topic(profile)) == (
        "mm2-offset-syncs.b.internal",
        "a.checkpoints.internal",
    )
    other = profile.model_copy(
        update={
            "replication": profile.replication.model_copy(update={"properties": {"replication.policy.separator": "_"}})
        }
    )
    assert (offset_syncs_topic(other), checkpoints_topic(other)) == (
        "mm2-offset-syncs_b_internal",
        "a_checkpoints.internal",
    )


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"records": 10}, "records must be"),
        ({"deleted": 1_000, "aborted": 1_000}, "at most half"),
        ({"deleted": -1}, "0 or more"),
        ({"transaction": 0}, "transaction must be"),
    ],
)
def test_offset_shift_refuses_bad_input_before_touching_a_cluster(params: dict[str, Any], says: str) -> None:
    from workbench.stack import Stack

    with pytest.raises(BenchError, match=says):
        offset_shift_run(Stack(load_profile("local-geo")), **params)


def test_the_phase_table_reads_each_phase_s_copies_and_shift() -> None:
    records = pd.DataFrame(
        {
            "seq": [0, 1, 2, 3, 4, 5, 6],
            "phase": ["deleted", "plain", "plain", "aborted", "transactions", "transactions", "transactions"],
            "a_offset": [0, 1, 2, 3, 5, 6, 8],
            "b_offset": [float("nan"), 0, 1, float("nan"), 2, 3, 4],
        }
    )
    table = phase_table(OffsetShiftRun({}, records, Checkpoint("g", "t", 0, 6, 3, ""))).set_index("phase")
    assert table.loc["plain", ["records", "on_b", "shift_first", "shift_last"]].tolist() == [2, 2, 1, 1]
    assert table.loc["aborted", "on_b"] == 0 and pd.isna(table.loc["aborted", "shift_first"])
    assert table.loc["transactions", ["shift_first", "shift_last", "b_offsets"]].tolist() == [3, 4, "2-4"]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"cut_s": float("nan")}, "cut_s must be"),
        ({"rate": 0}, "rate must be"),
        ({"after_s": 0.0}, "after_s must be"),
    ],
)
def test_a_cut_link_refuses_bad_input_before_touching_a_process(params: dict[str, Any], says: str) -> None:
    from workbench.replication import cut_link_run
    from workbench.stack import Stack

    with pytest.raises(BenchError, match=says):
        cut_link_run(Stack(load_profile("local-geo")), **params)


def test_catch_up_reads_the_backlog_the_first_copy_and_when_the_lag_is_back() -> None:
    from workbench.replication import catch_up

    # 1 record per 100 ms on a; cut from 1,000 to 2,000 ms; copies resume at 2,300 and the lag is back by 2,600.
    a_ms = [float(t) for t in range(0, 4000, 100)]
    b_ms = [t + 5 if t < 1000 else max(t + 5, 2300 + (t - 1000) / 5) if t < 2600 else t + 5 for t in a_ms]
    records = pd.DataFrame({"a_ms": a_ms, "b_ms": b_ms})
    records["lag_ms"] = records["b_ms"] - records["a_ms"]
    found = catch_up(records, 1000.0, 2000.0)
    assert found["backlog"] == 11  # appended from 1,000 to 2,000 ms, none on b by then
    assert found["first_copy_s"] == pytest.approx(0.3)
    assert found["lag_before_p99_ms"] == pytest.approx(5.0)
    # The record appended at 2,500 ms is the first back at a 100 ms lag: b appended it at 2,600 ms,
    # and 16 records from 2,300 to 2,600 ms.
    assert found["catch_up_s"] == pytest.approx(0.6)
    assert found["catch_up_msg_s"] == pytest.approx(16 / 0.6)
    assert found["lag_max_ms"] == pytest.approx(1300.0)


def _sleeper() -> tuple[subprocess.Popen[bytes], ServiceRecord]:
    child = subprocess.Popen(["sleep", "30"])
    created = psutil.Process(child.pid).create_time()
    return child, ServiceRecord("mirror-1", "mirror-maker", child.pid, created, "127.0.0.1:1", "/dev/null")


def test_a_cut_freezes_the_workers_for_its_length_and_lets_them_go_on() -> None:
    from workbench.replication.cut_link import _Cut

    child, record = _sleeper()
    try:
        cut = _Cut([record], at_s=0.1, for_s=0.6)
        cut.start()
        time.sleep(0.4)
        assert psutil.Process(child.pid).status() == psutil.STATUS_STOPPED
        cut.join(5)
        assert psutil.Process(child.pid).status() != psutil.STATUS_STOPPED
        assert 550 < cut.resumed_ms - cut.stopped_ms < 2_000
    finally:
        child.kill()
        child.wait()


def test_a_run_that_ends_before_its_cut_begins_freezes_nothing() -> None:
    from workbench.replication.cut_link import _Cut

    child, record = _sleeper()
    try:
        cut = _Cut([record], at_s=0.3, for_s=5.0)
        cut.start()
        cut.resume()  # what the run's `finally` does when the load fails first
        cut.join(5)
        time.sleep(0.4)
        assert psutil.Process(child.pid).status() != psutil.STATUS_STOPPED and pd.isna(cut.stopped_ms)
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"after_s": float("nan")}, "after_s must be"),
        ({"rate": 0}, "rate must be"),
        ({"partitions": 65}, "partitions must be"),
        ({}, "kills only a MirrorMaker worker it started"),  # the stack of an unstarted profile runs none
    ],
)
def test_a_worker_kill_refuses_bad_input_and_foreign_workers_before_touching_a_process(
    params: dict[str, Any], says: str
) -> None:
    from workbench.replication import worker_kill_run
    from workbench.stack import Stack

    with pytest.raises(BenchError, match=says):
        worker_kill_run(Stack(load_profile("local-geo")), **params)


def test_a_kill_cancelled_before_its_moment_kills_nothing() -> None:
    from workbench.replication.worker_kill import TimedKill

    child, record = _sleeper()
    try:
        kill = TimedKill([record], at_s=0.3)
        kill.start()
        kill.cancel()  # what the run's `finally` does when the load fails first
        kill.join(5)
        assert child.poll() is None and not kill.killed
    finally:
        child.kill()
        child.wait()


def test_a_kill_ends_the_worker_at_its_moment() -> None:
    from workbench.replication.worker_kill import TimedKill

    child, record = _sleeper()
    try:
        kill = TimedKill([record], at_s=0.1)
        kill.start()
        kill.join(5)
        assert child.wait(5) == -9 and kill.killed
    finally:
        child.kill()
        child.wait()


def test_the_worker_kill_sentence_is_computed_from_the_row() -> None:
    from workbench.replication import worker_kill_sentence

    row = {
        "killed": "mirror-2",
        "rate": 1000.0,
        "after_s": 25.0,
        "silence_s": 16.9,
        "copying_again_s": 17.2,
        "catch_up_s": 0.6,
        "task_moved": True,
        "missing": 0,
        "duplicates": 2986,
        "session_timeout_s": 10.0,
        "rebalance_delay_s": 5.0,
    }
    said = worker_kill_sentence(row)
    assert "without a new record for 16.9 s; the task copied again 17.2 s after the kill" in said
    assert "10 s session timeout plus a 5 s rebalance delay, 15 s), on the other worker" in said
    assert "b was current again 17.8 s after the kill. 0 records were lost and 2,986 copied twice" in said
    lost = worker_kill_sentence({**row, "copying_again_s": float("nan")})
    assert "did not move to another worker within 25 s" in lost
    assert "rebalance delay" not in worker_kill_sentence({**row, "rebalance_delay_s": float("nan")})
    assert "source offsets its worker had last committed" in said
    once = worker_kill_sentence({**row, "duplicates": 0, "exactly_once": True})
    assert "0 copied twice: with exactly-once delivery (KIP-618) on" in once


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ({}, False),
        ({"b.exactly.once.source.support": "enabled"}, True),
        ({"b.exactly.once.source.support": "ENABLED"}, True),
        ({"exactly.once.source.support": "enabled"}, False),  # not a worker setting at the top level
        ({"a.exactly.once.source.support": "enabled"}, False),  # a's workers: the other flow's
        ({"b.exactly.once.source.support": "preparing"}, False),
    ],
)
def test_exactly_once_is_read_from_the_target_s_worker_setting(properties: dict[str, str], expected: bool) -> None:
    from workbench.config import load_profile
    from workbench.replication.worker_kill import exactly_once
    from workbench.stack import Stack

    profile = load_profile("local-geo")
    replication = profile.replication.model_copy(update={"properties": properties})
    assert exactly_once(Stack(profile.model_copy(update={"replication": replication}))) is expected


def test_a_kill_s_silence_is_the_longest_time_b_appended_nothing_after_it() -> None:
    from workbench.replication.worker_kill import silence

    # 1 record per 100 ms on a from 0 to 3,900 ms, killed at 1,000 ms: the records of 1,000 and
    # 1,100 ms were already sent and land at 1,005 and 1,105; the rest wait for 2,500 ms.
    a_ms = [float(t) for t in range(0, 4000, 100)]
    b_ms = [t + 5 if t <= 1100 else max(t + 5, 2500 + (t - 1200) / 10) for t in a_ms]
    records = pd.DataFrame({"a_ms": a_ms, "b_ms": b_ms})
    records["lag_ms"] = records["b_ms"] - records["a_ms"]
    found = silence(records, 1000.0)
    assert found["silence_s"] == pytest.approx(1.395)  # 1,105 to 2,500 ms
    assert found["copying_again_s"] == pytest.approx(1.5)
    assert found["backlog"] == 13  # appended from 1,300 to 2,500 ms (1,200's copy ends the silence)
    assert "first_copy_s" not in found
    assert math.isnan(silence(records.assign(b_ms=float("nan")), 1000.0)["copying_again_s"])
