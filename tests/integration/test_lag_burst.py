"""A burst above a consumer's capacity: its lag rises and comes back, the reported time to clear
is where the readings put it, and every record is read once; for a native group member and a
REST consumer instance, on the embedded stack and on someone else's cluster (Tansu + our proxy).
The sampler's cap holds, and hostile settings are refused in one line before anything runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from lag_checks import check_burst

from workbench import kafka
from workbench.bench.burst import lag_burst, lag_burst_run
from workbench.bench.burst_plan import plan_burst
from workbench.config import load_profile
from workbench.errors import BenchError
from workbench.measure.lag import GroupOffsets, LagSampler
from workbench.stack import Stack

#: Capacity 500 records/s (2 ms a record); 1.5 s at 800 records/s leaves a backlog of about
#: 450 that clears at 400 records/s spare: the run takes about 5 s.
SMALL: dict[str, Any] = {
    "normal_msg_s": 100.0,
    "burst_msg_s": 800.0,
    "process_ms": 2.0,
    "lead_in_s": 2.0,
    "warm_up_s": 0.5,
    "burst_s": 1.5,
    "interval_s": 0.1,
    "clear_deadline_s": 30.0,
}


@pytest.mark.parametrize("consumer", ["native", "proxy"])
def test_a_bursts_lag_rises_and_clears_where_the_readings_say(stack: Stack, consumer: str) -> None:
    before = set(kafka.list_topics(stack.kafka_config()))
    plan = plan_burst(consumer=consumer, **SMALL)
    run = lag_burst_run(stack, plan)
    check_burst(run, plan)
    row = run.row
    assert row["consumer"] == consumer and row["capacity_msg_s"] == 500.0
    assert "committed offsets" in row["lag_of"] and row["connector"] is None
    # Every record read has its latency on the same clock: due time, then processed.
    assert run.latency is not None and len(run.latency) == row["read"]
    assert (run.latency["latency_ms"] >= 0).all()
    assert row["latency_of"].startswith("scheduled send") and row["latency_p50_ms"] > 0
    assert set(kafka.list_topics(stack.kafka_config())) == before  # the run's topic is gone


def test_the_registered_generator_returns_the_row(stack: Stack) -> None:
    row = lag_burst(stack, consumer="native", partitions=1, **SMALL)
    assert row["experiment"] == "lag_burst" and row["partitions"] == 1
    assert row["sent"] == row["read"] and row["cleared"] is True
    assert row["partition_peaks"] == f"p0={int(row['lag_peak'])}"


@pytest.mark.xdist_group("foreign-03_consumer_tuning")  # with notebook 03's run on the same cluster
def test_a_rest_consumer_on_someone_elses_cluster_clears_its_burst(foreign_cluster: Any) -> None:
    """Tansu (its end offsets read from the log) and a proxy the workbench did not start."""
    stack = Stack(load_profile(str(foreign_cluster.profile_path)))
    plan = plan_burst(consumer="proxy", partitions=2, **SMALL)
    check_burst(lag_burst_run(stack, plan), plan)


def test_the_sampler_keeps_at_most_its_cap_and_reads_committed_offsets(stack: Stack, topic: Callable[..., str]) -> None:
    name = topic(partitions=2)
    conf = stack.kafka_config()
    for partition, count in ((0, 6), (1, 4)):
        kafka.produce(stack.kafka_config("producer"), name, [(None, b"x")] * count, partition=partition)
    group = f"{name}-readers"
    committer = kafka.consumer(stack.kafka_config("consumer"), group)
    try:
        committer.commit(offsets=[_at(name, 0, 1)], asynchronous=False)  # partition 1: no commit
    finally:
        committer.close()
    parts = [(name, 0), (name, 1)]
    ticks: list[Any] = []
    with GroupOffsets(conf, group, parts) as committed:
        assert committed() == {(name, 0): 1}
        sampler = LagSampler(conf, parts, committed, interval_s=0.05, max_rows=7, on_sample=ticks.append)
        with sampler:
            while len(ticks) < 6:
                time.sleep(0.05)
    # 7 rows hold 3 readings of 2 partitions; the others were taken, counted, not kept.
    assert len(sampler.ticks) == 3 and sampler.full
    assert sampler.dropped == len(ticks) - 3 >= 3
    assert sampler.latest is ticks[-1] and sampler.latest.t > sampler.ticks[-1].t
    frame = sampler.frame()
    assert len(frame) == 6
    # Partition 0 is behind its commit; partition 1, with none, from its log's start (0).
    assert {p: set(part["lag"]) for p, part in frame.groupby("partition")} == {0: {5}, 1: {4}}
    assert set(frame["end_offset"]) == {6, 4} and set(frame["position"]) == {1, 0}


def _at(topic: str, partition: int, offset: int) -> Any:
    from confluent_kafka import TopicPartition

    return TopicPartition(topic, partition, offset)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"consumer": "flink"}, "consumer must be one of"),
        ({"burst_msg_s": -1.0}, "burst_msg_s must be above 0"),
        ({"normal_msg_s": float("nan")}, "normal_msg_s must be a finite number"),
        ({"burst_msg_s": 5e9}, "at most 100,000"),
        ({"burst_s": 0.1, "interval_s": 0.25}, "must cover at least two lag readings"),
        ({"process_ms": 0.0}, "process_ms must be above 0"),
    ],
)
def test_hostile_settings_are_one_line_before_any_topic(stack: Stack, params: dict[str, Any], message: str) -> None:
    before = set(kafka.list_topics(stack.kafka_config()))
    with pytest.raises(BenchError, match=message) as refused:
        lag_burst(stack, **params)
    assert "\n" not in str(refused.value)
    assert set(kafka.list_topics(stack.kafka_config())) == before
