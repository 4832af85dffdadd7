"""What only a broker shows: a topic grown with CreatePartitions moves exactly the keys the
partitioner computes; consumer groups of both protocols hand out every partition once; a
broker that cannot add partitions says so in one line (Tansu, the foreign cluster)."""

from __future__ import annotations

from typing import Any

import pytest

from workbench import kafka
from workbench.config import load_profile
from workbench.stack import Stack
from workbench.topics import moved_keys
from workbench.topics.errors import PartitionGrowthRefused
from workbench.topics.group_join import group_join_timing
from workbench.topics.live_growth import grow_live, measure_growth

KEYS = [f"device-{i}" for i in range(600)]


def test_a_live_growth_moves_exactly_the_keys_murmur2_computes_and_reads_every_record_back(stack: Stack) -> None:
    before = set(kafka.list_topics(stack.kafka_config()))
    run = measure_growth(stack, KEYS, [(3, 5), (4, 8)])
    assert run.refused is None and len(run.results) == 2
    for growth in run.results:
        computed = moved_keys(KEYS, growth.old_partitions, growth.new_partitions, "murmur2_random")
        assert growth.records_read == 2 * len(KEYS)
        assert (growth.misplaced, growth.disagreeing) == (0, 0)
        assert growth.moved == growth.computed_moved == computed.moved_count
        assert growth.moved_fraction == computed.moved_fraction
        assert growth.agrees and growth.create_partitions_s > 0
    assert set(kafka.list_topics(stack.kafka_config())) == before


def test_both_protocols_hand_out_every_partition_once_and_drop_the_refused_settings(stack: Stack) -> None:
    before = set(kafka.list_topics(stack.kafka_config()))
    rows = group_join_timing(stack, repeats=1, partitions=4)
    assert [(r["protocol"], r["outcome"]) for r in rows] == [("classic", "joined"), ("consumer", "joined")]
    for row in rows:
        assert (row["members_assigned"], row["held_twice"], row["unheld"], row["split"]) == (2, 0, 0, "2+2")
        assert row["first_join_s"] > 0 and row["second_join_s"] > 0 and row["leave_s"] > 0
    classic, consumer = rows
    assert classic["dropped_settings"] == ""
    # The profile tunes classic groups; librdkafka refuses those two with group.protocol=consumer.
    assert consumer["dropped_settings"] == "session.timeout.ms,heartbeat.interval.ms"
    assert classic["heartbeat_ms"] == stack.profile.kafka.for_role("consumer")["heartbeat.interval.ms"]
    assert consumer["heartbeat_ms"] == 5000  # the broker's default group.consumer.heartbeat.interval.ms
    assert set(kafka.list_topics(stack.kafka_config())) == before


@pytest.mark.xdist_group("foreign-08_partition_sizing")  # with notebook 08's run on the same cluster
def test_a_broker_without_create_partitions_refuses_in_one_line_and_keeps_no_topic(foreign_cluster: Any) -> None:
    stack = Stack(load_profile(str(foreign_cluster.profile_path)))
    with pytest.raises(PartitionGrowthRefused) as refused:
        grow_live(stack, KEYS[:20], 2, 3)
    assert refused.value.code == "_UNSUPPORTED_FEATURE"
    assert "did not add partitions" in str(refused.value) and "\n" not in str(refused.value)

    run = measure_growth(stack, KEYS[:20], [(2, 3), (2, 4)])
    assert run.results == () and run.refused is not None and "CreatePartitions" in run.refused
    assert kafka.list_topics(stack.kafka_config()) == []
