"""Both ways at once (`conf/local-geo-2way.yaml`, the `geo_both_ways` fixture): MirrorMaker 2
copying a -> b and b -> a under its default policy; every copy counted on both clusters."""

from __future__ import annotations

import pytest
from contract_points import CHEAP, check_contract

from workbench.bench.sweep import sweep
from workbench.stack import Stack, status

pytestmark = pytest.mark.timeout(600)


def test_each_worker_runs_both_flows(geo_both_ways: Stack) -> None:
    rows = status(geo_both_ways.profile)["services"]
    assert rows["mirror-1"]["flows"] == rows["mirror-2"]["flows"] == ["a->b", "b->a"]


def test_each_record_lands_once_on_each_cluster_no_copy_loops_and_a_pattern_reads_both(geo_both_ways: Stack) -> None:
    rows = sweep("active_active", [CHEAP["active_active"]], repeat=2, stack=geo_both_ways, record=False, progress=False)
    check_contract("active_active", rows)
    for row in rows.to_dict("records"):
        assert row["per_side"] == 300 and row["records"] == 600, "300 records offered on each cluster"
        assert row["replicated"] == 600 and row["missing"] == 0 and row["duplicates"] == 0, "each copied once"
        on_a, on_b = row["topics_on_a"].split(","), row["topics_on_b"].split(",")
        name = min(on_a, key=len)
        assert on_a == [f"b.{name}", name] and on_b == [f"a.{name}", name], "its own topic and the other's copy only"
        assert row["loop_topics"] == 0 and row["counts_stable"], "no copy of a copy, and the counts held still"
        assert row["pattern_read_a"] == row["pattern_read_b"] == 600 and row["pattern_twice"] == 0


def test_with_exactly_once_a_killed_worker_s_task_copies_no_record_twice(geo_both_ways: Stack) -> None:
    """This module's workers copy with KIP-618's exactly-once delivery (the fixture enables it):
    the task a SIGKILL moves resumes from the last transaction it committed on b, so nothing
    is copied twice where `geo`'s at-least-once workers copy again what came since their
    last offset commit. Read with read_committed, as librdkafka's consumers do by default."""
    rows = sweep("worker_kill", [CHEAP["worker_kill"]], repeat=1, stack=geo_both_ways, record=False, progress=False)
    check_contract("worker_kill", rows, repeats=1)
    row = rows.to_dict("records")[0]
    assert row["exactly_once"] and row["task_moved"], "the flow's task moved to the other worker"
    assert row["records"] == row["replicated"] == 900 and row["missing"] == 0, "every record offered is on b"
    assert row["duplicates"] == 0, "exactly-once: no record copied twice"
