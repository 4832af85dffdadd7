"""Group join timing's pure parts: the settings a member may start with, and the verdict
computed from rows (the timing itself runs on the broker: tests/integration)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from workbench.topics import TopicDesignError
from workbench.topics.group_join import PHASES, join_verdict, member_settings

PROFILE = {
    "bootstrap.servers": "b:9092",
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 500,
    "max.poll.interval.ms": 7000,
    "partition.assignment.strategy": "range",
}


def test_a_kip_848_member_drops_exactly_the_settings_librdkafka_refuses() -> None:
    settings, dropped = member_settings(PROFILE, "consumer")
    assert dropped == ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")
    assert settings == {"bootstrap.servers": "b:9092", "max.poll.interval.ms": 7000, "group.protocol": "consumer"}
    assert "session.timeout.ms" in PROFILE  # the caller's settings are left alone


def test_a_classic_member_keeps_every_setting() -> None:
    settings, dropped = member_settings(PROFILE, "classic")
    assert dropped == ()
    assert settings == {**PROFILE, "group.protocol": "classic"}


def test_an_unknown_protocol_is_refused_in_one_line() -> None:
    with pytest.raises(TopicDesignError, match=r"unknown group\.protocol 'streams'; use one of classic, consumer"):
        member_settings(PROFILE, "streams")


def _row(protocol: str, first: float, second: float, leave: float, heartbeat: float, outcome: str = "joined") -> Any:
    return {
        "protocol": protocol,
        "first_join_s": first,
        "second_join_s": second,
        "leave_s": leave,
        "heartbeat_ms": heartbeat,
        "outcome": outcome,
    }


def test_the_verdict_names_the_faster_protocol_per_moment_from_the_medians() -> None:
    rows = [
        _row("classic", 0.2, 0.5, 0.5, 500),
        _row("consumer", 0.1, 5.0, 5.0, 5000),
        _row("classic", 0.4, 0.7, 0.5, 500),
        _row("consumer", 0.1, 10.0, 5.0, 5000),
    ]
    assert join_verdict(rows) == [
        "First member assigned: `consumer` took 0.10 s and `classic` 0.30 s (medians), "
        "so `consumer` was 0.20 s faster, 3.0 times as fast.",
        "Second member joins: `classic` took 0.60 s and `consumer` 7.50 s (medians), "
        "so `classic` was 6.90 s faster, 12.5 times as fast.",
        "A member leaves: `classic` took 0.50 s and `consumer` 5.00 s (medians), "
        "so `classic` was 4.50 s faster, 10.0 times as fast.",
        "Members heard of each change at their next heartbeat: every 500 ms with `classic` "
        "and every 5,000 ms with `consumer`.",
    ]


def test_a_protocol_the_broker_never_assigned_is_said_in_one_line_and_the_other_stands_alone() -> None:
    nan = math.nan
    rows = [_row("classic", 3.0, 4.0, 3.5, 500), _row("consumer", nan, nan, nan, nan, "no assignment within 10 s")]
    assert join_verdict(rows) == [
        "`group.protocol=consumer`: every run stopped short on this broker: no assignment within 10 s.",
        "`group.protocol=classic` (medians): first member assigned 3.00 s, second member joins 4.00 s, "
        "a member leaves 3.50 s.",
        "Members heard of each change at their next heartbeat: every 500 ms with `classic`.",
    ]


def test_runs_that_stopped_short_are_counted_and_left_out_of_the_medians() -> None:
    stopped = _row("classic", 0.1, math.nan, math.nan, 500, "the second member's rebalance did not settle within 30 s")
    lines = join_verdict([_row("classic", 0.3, 0.5, 0.5, 500), stopped])
    assert lines[0] == (
        "`group.protocol=classic`: 1 of 2 runs stopped short on this broker: "
        "the second member's rebalance did not settle within 30 s."
    )
    assert "first member assigned 0.30 s" in lines[1]
    assert set(PHASES) == {"first_join_s", "second_join_s", "leave_s"}


def test_the_verdict_says_which_profile_settings_a_kip_848_member_went_without() -> None:
    rows = [{**_row("consumer", 0.1, 5.0, 5.0, 5000), "dropped_settings": "session.timeout.ms,heartbeat.interval.ms"}]
    assert join_verdict(rows)[1] == (
        "With `consumer` the profile's `session.timeout.ms` and `heartbeat.interval.ms` were left out: "
        "librdkafka refuses them with that protocol, whose timing the broker sets."
    )
