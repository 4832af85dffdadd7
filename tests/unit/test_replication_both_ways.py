"""Both ways at once: what the run refuses, and how a copy's name counts its hops."""

from __future__ import annotations

import pytest

from workbench.config import load_profile
from workbench.errors import BenchError
from workbench.replication import active_active_run
from workbench.replication.active_active import copy_hops
from workbench.stack import Stack


def test_both_ways_needs_a_stack_that_replicates_both_ways() -> None:
    with pytest.raises(BenchError, match=r"replicates one way, a->b; both ways need .*b->a\.enabled: true"):
        active_active_run(Stack(load_profile("local-geo")))


@pytest.mark.parametrize(("topic", "hops"), [("orders", 0), ("a.orders", 1), ("b.a.orders", 2), ("backorders", -1)])
def test_a_copy_s_hops_count_the_flows_it_came_through(topic: str, hops: int) -> None:
    assert copy_hops(topic, "orders") == hops


def test_bad_input_is_refused_before_anything_runs() -> None:
    with pytest.raises(BenchError, match="rate must be 1 to 20,000"):
        active_active_run(Stack(load_profile("local-geo-2way")), rate=0)


def test_the_stack_for_both_ways_is_the_one_that_copies_both_ways_or_a_reason() -> None:
    from workbench.replication import both_ways_stack

    one_way, two_way = Stack(load_profile("local-geo")), Stack(load_profile("local-geo-2way"))
    assert both_ways_stack(two_way, two_way, start=False) == (two_way, None)
    stack, why = both_ways_stack(one_way, one_way, start=False)
    assert stack is None and why is not None and why.startswith("quick mode leaves this out")
    cluster = Stack(load_profile("local-geo").model_copy(update={"embedded": False}))
    stack, why = both_ways_stack(cluster, cluster, start=True)
    assert stack is None and why is not None and "replicates one way, a->b" in why
