"""The benchmark toolkit's pure parts: summaries, grids, parameters, spread and compare."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from workbench import results
from workbench.bench import BenchError, cpu_per_mb, get_experiment, grid_points, latency_summary
from workbench.bench.command import parse_params, read_grid
from workbench.bench.payload import key_pool, value_pool
from workbench.compare import compare_runs
from workbench.config import load_profile
from workbench.errors import ConfigError
from workbench.measure.resources import cpu_seconds
from workbench.measure.timeline import mean_rate, timed_reads, timeline_cv, timeline_rates


def test_latency_summary_gives_percentiles_in_milliseconds() -> None:
    summary = latency_summary([i / 1000 for i in range(1, 101)])  # 1..100 ms
    assert summary["latency_p50_ms"] == pytest.approx(50.5)
    assert summary["latency_p99_ms"] == pytest.approx(99.01)
    assert summary["latency_max_ms"] == pytest.approx(100.0)


def test_latency_summary_of_nothing_is_nan_not_zero() -> None:
    assert all(math.isnan(v) for v in latency_summary([]).values())


def test_grid_points_are_the_cartesian_product_in_order() -> None:
    points = grid_points({"linger.ms": [0, 10], "compression.type": ["none", "lz4", "zstd"]})
    assert len(points) == 6
    assert points[0] == {"linger.ms": 0, "compression.type": "none"}
    assert points[-1] == {"linger.ms": 10, "compression.type": "zstd"}
    assert grid_points(None) == [{}]
    assert grid_points([{"a": 1}, {"a": 2}]) == [{"a": 1}, {"a": 2}]


def test_a_grid_value_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(BenchError, match=r"'linger\.ms' must be a non-empty list"):
        grid_points({"linger.ms": 5})  # type: ignore[dict-item]


def test_params_are_typed_like_yaml_scalars() -> None:
    assert parse_params(["records_per_call=500", "session_reuse=false", "acks=all", "x=1.5"]) == {
        "records_per_call": 500,
        "session_reuse": False,
        "acks": "all",
        "x": 1.5,
    }
    with pytest.raises(BenchError, match="is not k=v"):
        parse_params(["records_per_call"])


def test_grid_file_must_map_parameters_to_lists(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("linger.ms: [0, 5]\nbatch.size: [16384]\n")
    assert read_grid(good) == {"linger.ms": [0, 5], "batch.size": [16384]}
    bad = tmp_path / "bad.yaml"
    bad.write_text("linger.ms: 5\n")
    with pytest.raises(BenchError, match=r"'linger\.ms' must be a non-empty list"):
        read_grid(bad)
    with pytest.raises(BenchError, match="cannot read grid file"):
        read_grid(tmp_path / "missing.yaml")


def test_unknown_parameters_are_named_with_the_known_ones() -> None:
    with pytest.raises(
        BenchError, match=r"proxy_produce has no parameter record_per_call; it takes \[.*'records_per_call'"
    ):
        get_experiment("proxy_produce").check({"record_per_call": 5})
    get_experiment("native_produce").check({"linger.ms": 5, "acks": "all", "records": 10})  # dotted pass through
    listed = (
        "no experiment 'nope'; experiments: active_active, compaction_progress, consumer_failover, cut_link, "
        "device_read"
    )
    with pytest.raises(BenchError, match=listed):
        get_experiment("nope")


def test_value_pool_gives_distinct_values_of_the_exact_size() -> None:
    values = value_pool(100)
    assert len(values) == 1024 and len(set(values)) == 1024
    assert {len(v) for v in values} == {100}
    big = value_pool(2_000_000)
    assert len(big) >= 2 and {len(v) for v in big} == {2_000_000}
    assert len(set(key_pool(1000))) == 1000


def test_timeline_cv_is_zero_for_a_steady_rate() -> None:
    steady = [(t / 10, t * 100) for t in range(20)]
    assert timeline_cv(steady) == pytest.approx(0.0, abs=1e-9)
    bursty = [(0.0, 0), (0.1, 1000), (0.2, 1000), (0.3, 2000), (0.4, 2000)]
    assert timeline_cv(bursty) == pytest.approx(1.0)


def test_a_timeline_rate_is_since_the_previous_reading_and_the_first_reading_has_none() -> None:
    readings = [(0.0, 0), (0.5, 100), (0.5, 100), (1.5, 400)]
    frame = timeline_rates(readings, setting="x")
    assert frame.columns.tolist() == ["t", "total", "msg_s", "setting"]
    assert frame["t"].tolist() == [0.5, 0.5, 1.5] and frame["total"].tolist() == [100, 100, 400]
    rates = frame["msg_s"].tolist()
    assert rates[0] == 200.0 and rates[1] != rates[1] and rates[2] == 300.0  # the same instant: NaN
    assert mean_rate(readings) == pytest.approx(400 / 1.5)
    assert mean_rate(readings[:1]) != mean_rate(readings[:1])
    assert timeline_rates([]).empty


def test_cpu_seconds_reads_a_process_by_pid_and_a_gone_one_as_zero() -> None:
    before = cpu_seconds(os.getpid())
    sum(i * i for i in range(300_000))  # some CPU of our own
    after = cpu_seconds(os.getpid(), descendants=True)
    assert 0 < before < after
    assert cpu_seconds(4_194_304 + 1) == 0.0  # past Linux's largest PID: no such process


def _rows(run_value: list[float], point: str) -> list[dict[str, object]]:
    return [{"experiment": "t", "records_per_call": point, "params": "records_per_call", "msg_s": v} for v in run_value]


def test_spread_and_compare_runs_point_by_point(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = load_profile()
    monkeypatch.setenv("WORKBENCH_RUN_ID", "run-a")
    results.record("unit_compare", _rows([100, 110, 105], "1") + _rows([500, 520, 510], "100"), profile)
    monkeypatch.setenv("WORKBENCH_RUN_ID", "run-b")
    results.record("unit_compare", _rows([104, 108, 112], "1") + _rows([900, 950, 1000], "100"), profile)

    spread = results.spread(results.load("unit_compare", run_id="run-a", profile=profile))
    assert spread.set_index("records_per_call").loc["100", ["min", "median", "max", "n"]].tolist() == [500, 510, 520, 3]

    table = compare_runs("run-a", "run-b", experiment="unit_compare", metrics=["msg_s"], profile=profile)
    ratio = dict(zip(table["point"], table["ratio"], strict=True))
    assert ratio["t records_per_call=100"] == pytest.approx(950 / 510)
    assert ratio["t records_per_call=1"] == pytest.approx(108 / 105)


def test_compare_names_the_runs_that_exist_when_one_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_RUN_ID", "only-run")
    results.record("unit_missing", _rows([1.0], "1"), load_profile())
    with pytest.raises(
        ConfigError, match=r"no result rows with run id 'no-such-run' in .*; list runs with `workbench runs`"
    ):
        compare_runs("only-run", "no-such-run", experiment="unit_missing")


def test_columns_mixing_types_are_stored_as_text() -> None:
    rows = [{"acks": 0, "params": "acks", "msg_s": 1.0}, {"acks": "all", "params": "acks", "msg_s": 2.0}]
    written = results.record("unit_mixed", rows, load_profile())
    assert len(written) == 2
    assert results.load("unit_mixed")["acks"].tolist() == ["0", "all"]


def test_a_point_keeps_one_key_when_rows_without_its_parameter_land_between_its_repeats() -> None:
    """A row without `acks` leaves gaps, and parquet gives the column back as floats (1.0):
    the next text conversion must still write the repeats' value as one text ("1")."""
    profile = load_profile()
    for row in (
        {"acks": 1, "params": "acks", "msg_s": 1.0},
        {"linger.ms": 5, "params": "linger.ms", "msg_s": 1.0},
        {"acks": "all", "params": "acks", "msg_s": 2.0},
        {"acks": 1, "params": "acks", "msg_s": 3.0},
    ):
        results.record("unit_gaps", row, profile)
    acks = results.load("unit_gaps")["acks"]
    assert acks.dropna().tolist() == ["1", "all", "1"]
    assert results.spread(results.load("unit_gaps").dropna(subset=["acks"]))["n"].tolist() == [2, 1]


def test_appends_from_processes_ending_together_all_land(tmp_path: Path) -> None:
    path = tmp_path / "table.parquet"
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: results.append_rows(path, pd.DataFrame([{"i": i}])), range(40)))
    assert sorted(pd.read_parquet(path)["i"]) == list(range(40))


def test_param_columns_come_from_the_rows_params_column() -> None:
    frame = pd.DataFrame([{"a": 1, "b": 2, "msg_s": 3.0, "params": "a,b"}])
    assert results.param_columns(frame) == ["a", "b"]


def test_cpu_per_mb_splits_each_path_by_process_and_skips_what_was_not_measured() -> None:
    nan = float("nan")
    native = {"bytes": 2_000_000, "mb_s": 100.0, "broker_cpu_s": 0.006, "client_cpu_s": 0.004, "proxy_cpu_s": nan}
    floor = {"bytes": 4_000_000, "mb_s": 200.0, "broker_cpu_s": nan, "proxy_cpu_s": 0.002, "client_cpu_s": 0.012}
    frame = cpu_per_mb({"native": native, "http": floor})
    got = {(r.path, r.process): round(r.ms_per_mb, 6) for r in frame.itertuples()}
    expected = {("native", "broker"): 3.0, ("native", "client"): 2.0, ("http", "proxy"): 0.5, ("http", "client"): 3.0}
    assert got == expected
    assert set(frame.mb_s) == {100.0, 200.0}


@pytest.mark.parametrize(("param", "value"), [("direction", "sideways"), ("format", "avro")])
def test_proxy_vs_native_refuses_what_it_cannot_measure_before_touching_the_stack(param: str, value: str) -> None:
    from typing import Any, cast

    from workbench.bench import proxy_vs_native

    params: dict[str, Any] = {param: value}
    with pytest.raises(BenchError, match=f"{param} must be"):
        proxy_vs_native(cast(Any, None), **params)


def test_bench_prints_an_experiments_own_columns_and_the_spread_of_its_ratios() -> None:
    from rich.console import Console

    from workbench.bench.command import _results_table, _spread_table

    spec = get_experiment("proxy_vs_native")
    rows = [{"direction": "produce", "repeat": r, "mb_s": 50.0 + r, "mb_s_ratio": 0.5 + r / 10} for r in range(3)]
    frame = pd.DataFrame(rows).assign(cpu_ratio=1.5, msg_s=1.0)
    console = Console(width=250, record=True)
    console.print(_results_table(spec.name, frame, ["direction"], spec.shown))
    for metric in spec.spread_of:
        console.print(_spread_table(frame, ["direction"], metric))
    text = console.export_text()
    assert "mb_s_ratio" in text and "cpu_ratio" in text and "msg_s" not in text.split("spread")[0]
    assert "mb_s_ratio min" in text and "0.6" in text  # the median of 0.5, 0.6, 0.7


def test_timed_reads_asks_each_read_for_no_more_than_is_missing() -> None:
    """librdkafka's consume(n) waits until it has n records: a read asked for more than
    remain would time its own wait (5,000 records read "at 10 MB/s")."""
    asked: list[int] = []

    def read(missing: int) -> int:
        asked.append(missing)
        return min(missing, 4_000)

    count, _, polls = timed_reads(read, 10_000, max_seconds=60, sample_interval=1.0, timeline=[])
    assert count == 10_000 and asked == [10_000, 6_000, 2_000] and len(polls) == 3


def test_the_run_facts_stamped_on_a_row_are_the_one_list_of_them() -> None:
    """`RUN_FACTS` is the definition the contract's check, the report and `param_columns` read."""
    assert tuple(results.run_metadata(load_profile())) == results.RUN_FACTS
