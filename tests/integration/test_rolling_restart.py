"""Three proxies restarted one at a time under one reading group, with each group protocol:
no acknowledged record is lost, every record is read, and what the experiment counts as
re-read is what the test counts from the same deliveries. Real Kafka, proxies and nginx
(a side stack the experiment starts and stops); exact counts, never speed."""

from __future__ import annotations

from collections import Counter

import psutil
import pytest
from contract_points import CHEAP

from workbench.bench import rolling_restart_run
from workbench.measure.contract import contract_problems
from workbench.stack import Stack


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_rolling_restart_of_three_proxies_loses_nothing_acknowledged(stack: Stack, protocol: str) -> None:
    run = rolling_restart_run(
        stack, proxies=3, protocol=protocol, rate=500, partitions=6, settle_s=1.0, between_s=2.0, drain_s=60.0
    )
    row = run.row
    assert [r.name for r in run.restarts] == ["proxy-0", "proxy-1", "proxy-2"]
    assert all(r.new_pid != r.old_pid for r in run.restarts), "each proxy process was replaced"
    delivered = Counter((d.partition, d.offset) for d in run.deliveries)
    assert set(run.acknowledged) <= set(delivered), "every acknowledged record was read"
    assert row["lost"] == 0 and row["acknowledged"] == len(run.acknowledged) > 0
    assert row["redelivered"] == sum(n - 1 for n in delivered.values()), "re-reads counted as the test sees them"
    assert row["instances_made"] >= 6, "three instances, and each made again after its proxy restarted"
    assert row["protocol"] == protocol and row["restarts"] == 3
    assert contract_problems(row) == [] and row["experiment"] == "rolling_restart"
    assert not any(psutil.pid_exists(r.new_pid) for r in run.restarts), "the side stack left nothing running"


def test_the_registered_point_is_a_cheap_one_of_the_same_experiment() -> None:
    """The contract's cheap point (run by `workbench bench`) names only parameters it takes."""
    from workbench.bench.experiments import get_experiment

    get_experiment("rolling_restart").check(dict(CHEAP["rolling_restart"]))
