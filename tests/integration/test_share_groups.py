"""Share groups (KIP-932) on the embedded Kafka 4.4, natively: every record processed, none lost,
members past the partition count at work, and a killed member's records delivered again."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench.bench.sweep import sweep
from workbench.stack import Stack
from workbench.topics import share_groups, share_redelivery

sys.path.insert(0, str(Path(__file__).resolve().parent))  # contract_points, beside this file
from contract_points import CHEAP, check_contract


@pytest.fixture
def filled(stack: Stack, topic: Callable[..., str]) -> str:
    name = topic(partitions=4)
    share_groups.fill_for_sharing(stack, name, 600)
    return name


def test_a_share_group_puts_members_past_the_partition_count_to_work(stack: Stack, filled: str) -> None:
    run = share_groups.run_group(stack, filled, kind="share group", members=6, processing_ms=20, records=600)
    assert run.complete and run.unique == 600 and run.duplicates == 0
    assert run.busy_members >= 5  # 4 partitions: a consumer group could keep only 4 busy
    assert {d.delivery_count for d in run.deliveries} == {1}


def test_a_consumer_group_keeps_each_key_in_order(stack: Stack, filled: str) -> None:
    run = share_groups.run_group(stack, filled, kind="consumer group", members=6, processing_ms=2, records=600)
    # A classic rebalance while members join may hand a partition on before its last
    # records were committed: the new owner reads them again (counted, not hidden).
    assert run.complete and run.unique == 600 and len(run.deliveries) == 600 + run.duplicates
    assert share_groups.order_breaks(run.deliveries) == 0  # a partition is read by one member at a time


def test_released_and_killed_members_records_come_again_and_each_is_accepted_once(stack: Stack) -> None:
    run = share_redelivery.redelivery_check(stack, records=300, lock_ms=1_000, partitions=2)
    assert run.accepted == 300
    assert run.released and run.abandoned
    again = {(d.partition, d.offset): d.delivery_count for d in run.deliveries}
    assert all(again[p] >= 2 for p in run.released | run.abandoned)  # each came again, counted
    assert len(run.waits_s) == len(run.abandoned)  # every record the killed process held came back
    assert "records were accepted, each once" in share_redelivery.redelivery_sentence(run)


@pytest.mark.parametrize("path, acks", [("native", "next_fetch"), ("proxy", "next_fetch"), ("proxy", "call")])
def test_share_consume_rows_follow_the_experiment_contract(stack: Stack, path: str, acks: str) -> None:
    """Natively and through share-consumer instances on the REST proxy (accepting each answer
    with the next read, or with the acknowledgements call): every record once."""
    point = {**CHEAP["share_consume"], "path": path, "proxy_acks": acks}
    rows = sweep("share_consume", [point], repeat=2, stack=stack, record=False, progress=False)
    check_contract("share_consume", rows)
    assert (rows["records"] == 200).all() and (rows["duplicates"] == 0).all() and rows["complete"].all()
    assert (rows["path"] == path).all()
    assert (rows["proxy_acks"] == acks).all() if path == "proxy" else rows["proxy_acks"].isna().all()
