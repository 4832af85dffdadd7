"""Comparisons of two runs on synthetic rows whose answer is known: A/A, A/B, too few repeats,
the direction of a metric, and the load generator's saturation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.compare import (
    FASTER,
    NO_EVIDENCE,
    SLOWER,
    TOO_FEW,
    Thresholds,
    compare_rows,
    compare_samples,
    metric_direction,
    saturation,
)
from workbench.errors import ConfigError

#: Run-to-run noise of the synthetic repeats: a 5 % coefficient of variation.
NOISE = 0.05


def _repeats(rng: np.random.Generator, centre: float, n: int) -> np.ndarray:
    return centre * (1 + NOISE * rng.standard_normal(n))


def test_identical_distributions_give_no_evidence_of_change_in_95_percent_of_trials() -> None:
    rng = np.random.default_rng(10)
    verdicts = [compare_samples(_repeats(rng, 1e6, 5), _repeats(rng, 1e6, 5)).verdict for _ in range(200)]
    assert TOO_FEW not in verdicts
    assert verdicts.count(NO_EVIDENCE) >= 190


def test_a_20_percent_shift_with_5_repeats_is_detected_in_90_percent_of_trials() -> None:
    rng = np.random.default_rng(20)
    faster = [compare_samples(_repeats(rng, 1e6, 5), _repeats(rng, 1.2e6, 5)).verdict for _ in range(200)]
    slower = [compare_samples(_repeats(rng, 1e6, 5), _repeats(rng, 0.8e6, 5)).verdict for _ in range(200)]
    assert faster.count(FASTER) >= 180 and SLOWER not in faster
    assert slower.count(SLOWER) >= 180 and FASTER not in slower


def test_latency_is_faster_when_it_drops() -> None:
    rng = np.random.default_rng(3)
    result = compare_samples(_repeats(rng, 10.0, 6), _repeats(rng, 7.0, 6), direction="lower")
    assert result.verdict == FASTER
    assert result.ratio < 1 and result.ci_high < 1 and result.p_value < 0.05


def test_one_repeat_is_too_few_and_guesses_nothing() -> None:
    result = compare_samples([100.0], [200.0])
    assert result.verdict == TOO_FEW
    assert result.ratio == 2.0 and np.isnan(result.p_value) and np.isnan(result.ci_low)


def test_three_against_three_cannot_reach_the_threshold() -> None:
    # Complete separation of 3 and 3 values gives p = 0.1 at best: no verdict is possible.
    assert compare_samples([1.0, 1.1, 1.2], [5.0, 5.1, 5.2]).verdict == TOO_FEW
    assert compare_samples([1.0, 1.1, 1.2, 1.15], [5.0, 5.1, 5.2, 5.05]).verdict == FASTER


def test_not_measured_values_do_not_count_as_repeats() -> None:
    assert compare_samples([1.0, np.nan, np.nan, 1.1], [1.0, 1.1, 1.2, 1.0]).verdict == TOO_FEW


def test_the_same_inputs_give_the_same_interval() -> None:
    a, b = [10.0, 11, 12, 10.5, 11.5], [12.0, 13, 12.5, 14, 13.5]
    assert compare_samples(a, b) == compare_samples(a, b)
    assert compare_samples(a, b, thresholds=Thresholds(seed=7)).verdict == compare_samples(a, b).verdict


def test_metric_directions() -> None:
    assert metric_direction("msg_s") == "higher"
    assert metric_direction("mb_s") == "higher"
    assert metric_direction("latency_p99_ms") == "lower"
    assert metric_direction("broker_cpu_s") is None
    assert metric_direction("offered_msg_s") is None
    assert metric_direction("seconds") is None


def _rows(msg_s: list[float], linger: int = 0, **extra: list[float]) -> pd.DataFrame:
    n = len(msg_s)
    return pd.DataFrame(
        {
            "experiment": ["native_produce"] * n,
            "linger.ms": [linger] * n,
            "records": [1000] * n,
            "params": ["records,linger.ms"] * n,
            "msg_s": msg_s,
            "latency_p50_ms": [2.0] * n,
            "seconds": [1.0] * n,
            "cpu_cores": [2] * n,
            "repeat": list(range(n)),
            **extra,
        }
    )


def test_rows_are_compared_per_common_point_and_metric() -> None:
    a = pd.concat([_rows([100, 101, 99, 100, 102]), _rows([50, 51, 49, 50, 52], linger=5)])
    b = pd.concat([_rows([130, 131, 129, 128, 132]), _rows([50, 52, 49, 51, 50], linger=50)])
    table = compare_rows(a, b)
    assert list(table["point"].unique()) == ["native_produce linger.ms=0 records=1000"]
    by_metric = table.set_index("metric")
    assert by_metric.loc["msg_s", "verdict"] == FASTER
    assert by_metric.loc["msg_s", "median_a"] == 100 and by_metric.loc["msg_s", "median_b"] == 130
    assert by_metric.loc["latency_p50_ms", "verdict"] == NO_EVIDENCE  # constant on both sides
    assert "p < 0.05" in table.attrs["thresholds"]
    assert set(table["load_a"]) == {"not measured"}


def test_parameters_stored_as_float_match_the_same_integers() -> None:
    a = _rows([100.0, 101, 99])
    b = _rows([100.0, 101, 99]).astype({"linger.ms": float})
    assert len(compare_rows(a, b, ["msg_s"])) == 1


def test_one_setting_against_another_with_ignore() -> None:
    a = _rows([100.0, 101, 99, 100, 102], linger=0)
    b = _rows([150.0, 151, 149, 150, 152], linger=50)
    (line,) = compare_rows(a, b, ["msg_s"], ignore=["linger.ms"]).to_dict("records")
    assert line["point"] == "native_produce records=1000" and line["verdict"] == FASTER


def test_runs_without_a_common_point_are_an_error() -> None:
    with pytest.raises(ConfigError, match="share no point"):
        compare_rows(_rows([1.0, 2.0]), _rows([1.0, 2.0], linger=5))


def test_a_metric_without_a_direction_is_refused() -> None:
    with pytest.raises(ConfigError, match="no known direction"):
        compare_rows(_rows([1.0]), _rows([1.0]), ["records"])


def test_saturation_from_client_cpu_and_offered_rate() -> None:
    busy = _rows([100.0, 100.0], client_cpu_s=[1.9, 1.5])
    assert saturation(busy) == "saturated (client 1.90 of 2 cores)"
    idle = _rows([100.0, 100.0], client_cpu_s=[0.5, 0.4])
    assert saturation(idle) == "ok (client 0.50 of 2 cores)"
    offered = _rows([900.0, 1000.0], offered_msg_s=[1000.0, 1000.0])
    assert saturation(offered) == "saturated (90% of offered rate reached)"
    assert saturation(_rows([1.0])) == "not measured"
