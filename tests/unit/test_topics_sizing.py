"""Sizing and capacity formulas against hand-worked examples."""

from __future__ import annotations

import pytest

from workbench.topics import (
    TopicDesignError,
    capacity,
    open_file_handles,
    partitions_needed,
    producer_buffer_memory,
    proxy_heap,
    replication_latency,
    sizing,
    unavailability_window,
)

MIB = 1024 * 1024
GIB = 1024 * MIB


def test_partitions_for_a_produce_bound_target() -> None:
    # 40 MB/s at 4 MB/s produced and 8 MB/s consumed per partition: max(10, 5) = 10.
    plan = partitions_needed(40, 4, 8)
    assert (plan.for_produce, plan.for_consume, plan.minimum, plan.recommended) == (10, 5, 10, 10)
    assert plan.bound_by == "produce"


def test_partitions_for_a_consume_bound_target_with_a_margin() -> None:
    # 100 msg/s at 50 produced and 20 consumed: max(2, 5) = 5; 50 % margin: ceil(7.5) = 8.
    plan = partitions_needed(100, 50, 20, margin=0.5)
    assert (plan.minimum, plan.recommended, plan.bound_by) == (5, 8, "consume")
    assert plan.formula == "max(⌈100 / 50⌉, ⌈100 / 20⌉) = max(2, 5) = 5; with a 50% margin: ⌈5 * 1.5⌉ = 8"


def test_exact_ratios_are_not_rounded_up_by_float_noise() -> None:
    assert partitions_needed(0.3, 0.1, 0.1).minimum == 3
    assert partitions_needed(1, 3, 3).minimum == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 1, 1), "target must be a positive number, got 0"),
        ((10, -1, 1), "produce_per_partition must be a positive number, got -1"),
        ((10, 1, float("nan")), "consume_per_partition must be a positive number"),
    ],
)
def test_bad_rates_are_clear_errors(args: tuple[float, float, float], message: str) -> None:
    with pytest.raises(TopicDesignError, match=message):
        partitions_needed(*args)


def test_producer_buffer_memory_is_partitions_times_tens_of_kilobytes() -> None:
    estimate = producer_buffer_memory(1_000)
    assert estimate.value == 1_000 * 32 * 1024 == 32_768_000
    assert str(estimate) == "producer buffer memory = 1,000 partitions * 32,768 B = 32,768,000 bytes"
    assert producer_buffer_memory(10, bytes_per_partition=64_000).value == 640_000


def test_file_handles_count_segment_and_index_per_replica_on_the_broker() -> None:
    # 3,000 partitions, 3 replicas over 3 brokers: 3,000 replicas each, 2 files each.
    assert open_file_handles(3_000, brokers=3, replication_factor=3).value == 6_000
    # 5 segments each, time index too: 1,000 partitions x 2 replicas / 4 brokers x 5 x 3.
    assert (
        open_file_handles(1_000, brokers=4, replication_factor=2, segments_per_partition=5, files_per_segment=3).value
        == 7_500
    )


def test_replication_latency_reproduces_the_20_ms_per_1000_partitions_reference() -> None:
    # The reference: one broker follows 1,000 partitions (2,000 partitions, r=2, 2 brokers).
    assert replication_latency(2_000, brokers=2, replication_factor=2).value == pytest.approx(20.0)
    assert replication_latency(1_000, brokers=2, replication_factor=2).value == pytest.approx(10.0)
    # 10,000 partitions, r=3 over 10 brokers: 2,000 followers each, 40 ms.
    assert replication_latency(10_000, brokers=10, replication_factor=3).value == pytest.approx(40.0)
    assert replication_latency(5_000, brokers=3, replication_factor=1).value == 0


def test_replication_factor_above_the_broker_count_is_refused_with_the_limit() -> None:
    with pytest.raises(TopicDesignError, match=r"replication_factor 3 exceeds the 2 brokers; .* use at most 2"):
        replication_latency(100, brokers=2, replication_factor=3)


def test_unavailability_window_of_an_unclean_failure() -> None:
    # 2,000 partitions over 2 brokers: 1,000 leaders x 5 ms = 5 s.
    assert unavailability_window(2_000, brokers=2).value == pytest.approx(5.0)
    # Controller too: 10,000 / 5 x 5 ms + 10,000 x 2 ms = 10 s + 20 s.
    estimate = unavailability_window(10_000, brokers=5, controller_failed=True)
    assert estimate.value == pytest.approx(30.0)
    assert estimate.formula == "10,000 partitions / 5 brokers * 5 ms + 10,000 partitions * 2 ms"


def test_proxy_heap_is_a_base_plus_16_mb_per_consumer_spread_over_8_gb_processes() -> None:
    heap, processes = proxy_heap(1_000)
    assert heap.value == GIB + 1_000 * 16 * MIB
    # 1,000 x 16 MiB = 15.6 GiB over processes with 7 GiB to spare each: 3.
    assert processes.value == 3
    assert proxy_heap(0)[1].value == 1
    assert proxy_heap(448)[1].value == 1  # 448 x 16 MiB = 7 GiB exactly fits one
    assert proxy_heap(449)[1].value == 2


def test_capacity_row_sweeps_to_a_million_topics_with_plain_numbers() -> None:
    row = capacity(1_000_000, partitions_per_topic=1, brokers=10, replication_factor=3, consumers=100)
    assert row["partitions"] == 1_000_000
    assert row["leaders_per_broker"] == 100_000
    assert row["file_handles_per_broker"] == 600_000
    assert row["replication_latency_ms"] == pytest.approx(4_000.0)
    assert row["unavailability_s"] == pytest.approx(500.0)
    assert row["proxy_processes"] == 1
    assert all(isinstance(v, int | float) for v in row.values())


def test_plan_text_gives_the_count_its_formula_and_its_costs() -> None:
    text = sizing.plan_text(40, 4, 8, 0.5, brokers=3, replication_factor=3, consumers=100)
    assert text.startswith("**15 partitions**: ")
    assert text.count("\n- ") == 6  # buffer memory, file handles, replication, unavailability, heap, processes


def test_plan_text_refuses_more_replicas_than_brokers_in_words() -> None:
    text = sizing.plan_text(40, 4, 8, brokers=2, replication_factor=3)
    assert text == "replication factor 3 needs at least 3 brokers"


def test_the_measured_cost_per_consumer_comes_from_instance_cost_rows() -> None:
    import pandas as pd

    from workbench.topics.sizing import measured_bytes_per_consumer

    rows = pd.DataFrame(
        {
            "kind": ["consumer", "consumer", "consumer", "share"],
            "instances": [10, 50, 50, 50],
            "idle_mb_per_instance": [0.9, 0.6, 0.7, 0.1],
            "fetching_mb_per_instance": [3.0, 17.0, 18.0, 0.2],
        }
    )
    assert measured_bytes_per_consumer(rows) == 17.5e6, "the median at the largest count, reading"
    assert measured_bytes_per_consumer(pd.DataFrame()) is None and measured_bytes_per_consumer(None) is None
    heap, _ = proxy_heap(1_000, 17.5e6)
    assert heap.name == "proxy heap (measured per consumer)"
