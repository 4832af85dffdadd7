"""Run order that cancels drift, and the test that marks a drifting point."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.measure.drift import drift_columns, drift_test, run_order


def test_every_point_runs_once_a_round_and_the_seed_repeats_the_order() -> None:
    order = run_order(3, 4, seed=11)
    assert len(order) == 12
    for rep in range(4):
        assert sorted(p for p, r in order[rep * 3 : rep * 3 + 3]) == [0, 1, 2]
        assert {r for _, r in order[rep * 3 : rep * 3 + 3]} == {rep}
    assert order == run_order(3, 4, seed=11)
    assert any(run_order(3, 4, seed=s) != order for s in range(5))  # shuffled, not fixed


def test_one_point_runs_its_repeats_in_turn() -> None:
    assert run_order(1, 3, seed=0) == [(0, 0), (0, 1), (0, 2)]


def test_a_steady_climb_is_drift_and_noise_is_not() -> None:
    tau, p = drift_test([310_118, 325_157, 348_727, 403_575, 410_000, 420_000])
    assert tau == pytest.approx(1.0) and p < 0.05
    tau, p = drift_test([400, 380, 410, 390, 405, 385])
    assert p > 0.05


def test_five_values_in_order_are_one_ordering_in_sixty_not_a_certainty() -> None:
    # Exact: 2 of 120 orderings are monotone; a t approximation had called this p = 1e-24.
    tau, p = drift_test([278_000, 279_000, 280_000, 281_000, 282_000])
    assert tau == pytest.approx(1.0) and p == pytest.approx(2 / 120)


def test_too_few_or_flat_values_cannot_tell() -> None:
    assert all(math.isnan(x) for x in drift_test([1.0, 2.0, 3.0, 4.0]))
    assert all(math.isnan(x) for x in drift_test([5.0, 5.0, 5.0, 5.0]))


def test_drift_columns_mark_each_point_by_its_own_repeats() -> None:
    rows = pd.DataFrame(
        {
            "point": [0] * 5 + [1] * 5 + [2] * 2,
            "run_index": [0, 2, 4, 6, 8, 1, 3, 5, 7, 9, 10, 11],
            "msg_s": [100, 200, 300, 400, 500, 50, 52, 49, 51, 50, 1, 2],
        }
    )
    marked = drift_columns(rows).groupby("point")["drifting"].agg(lambda s: s.iloc[0])
    assert marked[0] is True and marked[1] is False and math.isnan(marked[2])  # too few: not measured
