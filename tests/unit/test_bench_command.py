"""`workbench bench` from the shell: the experiment list, and bad input as one line."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Cli = Callable[..., Result]


def test_list_shows_every_experiment_with_its_parameters(cli: Cli) -> None:
    result = cli("bench", "--list")
    assert result.exit_code == 0, result.stderr
    for name in ("native_produce", "native_consume", "proxy_produce", "proxy_consume", "latency_waterfall"):
        assert name in result.stdout
    assert "records_per_call=100" in result.stdout


def test_no_experiment_and_no_list_is_one_line_naming_the_way_out(cli: Cli) -> None:
    result = cli("bench")
    assert result.exit_code == 1
    assert result.stderr.strip() == "error: name an experiment: `workbench bench --list` shows them"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["nope"],
            "error: no experiment 'nope'; experiments: active_active, compaction_progress, consumer_failover, "
            "cut_link, device_read",
        ),
        (["proxy_produce", "--param", "record_per_call=5"], "error: proxy_produce has no parameter record_per_call"),
        (["native_produce", "--param", "linger.ms"], "error: --param 'linger.ms' is not k=v"),
        (["native_produce", "--grid", "/no/such/grid.yaml"], "error: cannot read grid file /no/such/grid.yaml"),
        (["native_produce", "--param", "records=abc"], "error: native_produce: --param records='abc' is not an int"),
        (
            ["proxy_produce", "--param", "session_reuse=maybe"],
            "error: proxy_produce: --param session_reuse='maybe' is not a bool",
        ),
    ],
)
def test_bad_input_is_one_line_on_stderr(cli: Cli, args: list[str], message: str) -> None:
    result = cli("bench", *args)
    assert result.exit_code == 1
    assert result.stderr.startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_grid_naming_an_unknown_parameter_is_refused_before_anything_runs(cli: Cli, tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("records_per_cal: [1, 10]\n")
    result = cli("bench", "proxy_produce", "--grid", str(grid))
    assert result.exit_code == 1
    assert "proxy_produce has no parameter records_per_cal" in result.stderr


@pytest.mark.parametrize("name", ["workbench.bench", "workbench.proxy", "workbench.viz", "workbench.results"])
def test_public_names_are_sorted_and_exist(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__ == sorted(module.__all__)
    assert [n for n in module.__all__ if not hasattr(module, n)] == []


def test_compare_prints_two_recorded_runs_side_by_side(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench import results
    from workbench.config import load_profile

    for run, values in (("cli-a", [100.0, 110.0, 105.0]), ("cli-b", [300.0, 310.0, 305.0])):
        monkeypatch.setenv("WORKBENCH_RUN_ID", run)
        rows = [{"records_per_call": 500, "params": "records_per_call", "msg_s": v} for v in values]
        results.record("cli_compare", rows, load_profile())
    result = cli("compare", "cli-a", "cli-b", "--experiment", "cli_compare")
    assert result.exit_code == 0, result.stderr
    # medians 305 / 105; 3 against 3 cannot reach p < 0.05, so no verdict is guessed
    assert "2.905" in result.stdout and "too few repeats" in result.stdout


def test_compare_without_run_ids_says_what_it_needs(cli: Cli) -> None:
    result = cli("compare", "only-a")
    assert result.exit_code == 2
    assert "Missing argument 'b'" in result.stderr


def test_compare_is_not_an_experiment_name(cli: Cli) -> None:
    """Comparing runs is `workbench compare A B`, and only that."""
    result = cli("bench", "compare", "--param", "experiment=x")
    assert result.exit_code == 1
    listed = "experiments: active_active, compaction_progress, consumer_failover, cut_link"
    assert result.stderr.startswith(f"error: no experiment 'compare'; {listed}")


def test_a_grid_value_of_the_wrong_type_is_refused_before_anything_runs(cli: Cli, tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("records_per_call: [1, lots]\n")
    result = cli("bench", "proxy_produce", "--grid", str(grid))
    assert result.exit_code == 1
    assert "proxy_produce: --param records_per_call='lots' is not an int" in result.stderr
