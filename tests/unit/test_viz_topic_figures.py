"""The topic figures draw what the rows hold: growth computed and live, group join medians."""

from __future__ import annotations

import math

import pandas as pd

from workbench import viz


def test_growth_figure_puts_the_broker_s_share_next_to_the_computed_one() -> None:
    computed = [
        {
            "old_partitions": 4,
            "new_partitions": 5,
            "partitioner": "murmur2",
            "keys": 10,
            "moved_fraction": 0.8,
            "expected_fraction": 0.8,
        }
    ]
    live = [{"old_partitions": 4, "new_partitions": 5, "partitioner": "murmur2_random", "moved_fraction": 0.8}]
    names = [trace.name for trace in viz.growth_figure(computed, live).data]
    assert names == ["computed (murmur2)", "on the broker (murmur2_random)", "ideal hash: 1 - min/lcm"]
    assert [trace.name for trace in viz.growth_figure(computed).data] == [
        "computed (murmur2)",
        "ideal hash: 1 - min/lcm",
    ]


def test_group_join_figure_draws_the_median_of_completed_runs_per_protocol() -> None:
    nan = math.nan
    frame = pd.DataFrame(
        [
            {"protocol": "classic", "first_join_s": 0.1, "second_join_s": 0.5, "leave_s": 0.4, "outcome": "joined"},
            {"protocol": "classic", "first_join_s": 0.3, "second_join_s": 0.7, "leave_s": 0.6, "outcome": "joined"},
            {
                "protocol": "consumer",
                "first_join_s": nan,
                "second_join_s": nan,
                "leave_s": nan,
                "outcome": "no assignment",
            },
        ]
    )
    figure = viz.group_join_figure(frame)
    assert [trace.name for trace in figure.data] == ["group.protocol=classic"]
    assert list(figure.data[0].y) == [0.2, 0.6, 0.5]
    assert list(figure.data[0].x) == ["first member assigned", "second member joins", "a member leaves"]
    assert "classic: 2" in figure.layout.title.text
