"""Bad inputs to the topic experiments are refused before anything touches a broker."""

from __future__ import annotations

import pytest

from workbench.topics import TopicDesignError, count_cost, device_io

NOWHERE = {"bootstrap.servers": "127.0.0.1:9"}


def test_metadata_cost_needs_at_least_one_repeat() -> None:
    with pytest.raises(TopicDesignError, match="repeats must be ≥ 1, got 0"):
        count_cost.metadata_cost(NOWHERE, repeats=0)


def test_produce_spread_needs_a_target() -> None:
    with pytest.raises(TopicDesignError, match=r"needs at least one \(topic, partition\) target"):
        count_cost.produce_spread(NOWHERE, [], 10)


def test_device_values_name_their_device_and_sequence_and_have_the_asked_size() -> None:
    value = device_io.device_value("car7", 12, 40)
    assert value.startswith(b"car7:000000012:") and len(value) == 40
    assert device_io.device_value("a-very-long-device-name", 1, 4) == b"a-very-long-device-name:000000001:"


@pytest.mark.parametrize("counts", [[], [10, 0], [1, 2.5]])
def test_topic_counts_are_checked_before_any_topic_is_created(counts: list[int]) -> None:
    from workbench.config import load_profile
    from workbench.stack import Stack

    with pytest.raises(TopicDesignError, match="topic counts must be whole numbers ≥ 1"):
        count_cost.topic_count_cost(Stack(load_profile()), counts)
