"""Command output at 80 columns cuts no id, number or verdict; `--format json|csv` is for scripts.

`workbench runs`, `runs show`, `compare`, `bench` and `status` print tables that wrap between
words (a narrow terminal wraps the lines of a table wider than itself) and never end a cell in
"…"; the json form is a list of records with NaN as null, the csv form has a header row, and
either is all that reaches stdout.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from result_tables import results_file
from rich.console import Console
from rich.table import Column, Table
from typer.testing import Result

from workbench import catalog
from workbench.bench.command import show_results
from workbench.bench.experiments import get_experiment
from workbench.config import Profile, load_profile
from workbench.output import OutputFormat, print_table, write_records

Cli = Callable[..., Result]

RUN_IDS = ["20261123T101530Z-3f9a1c", "20261124T091500Z-aa01bb", "20261125-183000"]


@pytest.fixture
def profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Profile:
    """A profile whose catalogue holds three runs with long ids; the last has no end (NaN seconds)."""
    monkeypatch.setenv("WORKBENCH_RESULTS_DIR", str(tmp_path / "results"))
    chosen = load_profile()
    start = dt.datetime(2026, 11, 23, 10, 15, 30)
    for number, run_id in enumerate(RUN_IDS):
        began = start + dt.timedelta(days=number)
        ended = None if number == 2 else began + dt.timedelta(seconds=1234.5 * (number + 1))
        facts = {"git_revision": "c5eb49e-dirty", "load_avg_1m": 12.345 + number, "broker": "kafka 4.4.0"}
        entry = catalog.RunEntry(
            run_id, "bench", "native_produce,proxy_produce", "cluster.example", began, ended, facts=facts
        )
        catalog.record_run(entry, chosen)
    return chosen


def _no_cut(text: str) -> None:
    assert "…" not in text, text


def test_print_table_keeps_every_word_whole_on_a_narrow_console() -> None:
    table = Table("id", "throughput", Column("verdict", no_wrap=True), "note")
    table.add_row("20261123T101530Z-3f9a1c", "20,123,456", "no evidence", "a note of many words " * 5)
    text = io.StringIO()
    print_table(Console(file=text, width=40), table)
    _no_cut(text.getvalue())
    for whole in ("20261123T101530Z-3f9a1c", "20,123,456", "no evidence"):
        assert whole in text.getvalue()
    assert max(len(line) for line in text.getvalue().splitlines()) > 40  # wider than the console: lines wrap there


def test_print_table_wraps_prose_to_fit_when_it_can() -> None:
    table = Table("id", "note")
    table.add_row("run-1", "a note of many words " * 10)
    text = io.StringIO()
    print_table(Console(file=text, width=60), table)
    assert max(len(line) for line in text.getvalue().splitlines()) <= 60
    assert "run-1" in text.getvalue()


def test_runs_at_80_columns_show_every_id_and_number_whole(cli: Cli, profile: Profile) -> None:
    result = cli("runs", columns=80)
    assert result.exit_code == 0, result.stderr
    _no_cut(result.stdout)
    for whole in [*RUN_IDS, "1,234.5", "2,469.0", "12.35", "13.35", "14.35", "c5eb49e-dirty", "2026-11-23"]:
        assert whole in result.stdout, whole


def test_runs_as_json_are_the_catalogues_rows_with_nan_as_null(cli: Cli, profile: Profile) -> None:
    result = cli("runs", "--format", "json", columns=80)
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)  # nothing else on stdout
    assert [row["run_id"] for row in rows] == RUN_IDS
    assert rows[2]["ended_at"] is None and rows[0]["ended_at"].startswith("2026-11-23T10:36:04")
    assert rows[0]["load_avg_1m"] == pytest.approx(12.345) and rows[0]["broker"] == "kafka 4.4.0"


def test_runs_as_csv_have_a_header_row(cli: Cli, profile: Profile) -> None:
    result = cli("runs", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["run_id"] for row in rows] == RUN_IDS and rows[2]["ended_at"] == ""


def test_no_runs_as_json_is_an_empty_list_and_the_note_on_stderr(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_RESULTS_DIR", str(tmp_path / "empty"))
    result = cli("runs", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [] and "no catalogued runs" in result.stderr


def test_runs_show_as_json_is_one_object_and_as_csv_one_row(cli: Cli, profile: Profile) -> None:
    shown = json.loads(cli("runs", "show", "20261124", "--format", "json").stdout)
    assert shown["run_id"] == RUN_IDS[1] and shown["git_revision"] == "c5eb49e-dirty"
    (row,) = csv.DictReader(io.StringIO(cli("runs", "show", RUN_IDS[2], "--format", "csv").stdout))
    assert row["run_id"] == RUN_IDS[2] and row["ended_at"] == ""


def _results(path: Path, msg_s: list[float]) -> str:
    return str(results_file(path, msg_s, records=1_000_000))


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[str, str]:
    return (
        _results(tmp_path / "a.parquet", [2_012_345.0, 2_012_346, 2_012_344, 2_012_345, 2_012_347]),
        _results(tmp_path / "b.parquet", [1_609_876.0, 1_609_875, 1_609_877, 1_609_876, 1_609_874]),
    )


def test_compare_at_80_columns_shows_numbers_and_verdict_whole(cli: Cli, two_runs: tuple[str, str]) -> None:
    result = cli("compare", *two_runs, "--metric", "msg_s", columns=80)
    assert result.exit_code == 0, result.stderr
    _no_cut(result.stdout)
    for whole in ("2,012,345", "1,609,876", "0.800", "slower", "records=1000000"):
        assert whole in result.stdout, whole
    assert "rule: faster/slower" in result.stdout


def test_compare_as_json_and_csv_hold_the_same_rows_and_the_rule_goes_to_stderr(
    cli: Cli, two_runs: tuple[str, str]
) -> None:
    table = json.loads(cli("compare", *two_runs, "--format", "json").stdout)
    assert [(row["point"], row["metric"], row["verdict"]) for row in table] == [
        ("native_produce records=1000000", "msg_s", "slower")
    ]
    assert table[0]["median_a"] == 2_012_345.0 and table[0]["ratio"] == pytest.approx(0.8, abs=0.001)
    as_csv = cli("compare", *two_runs, "--format", "csv")
    (row,) = csv.DictReader(io.StringIO(as_csv.stdout))
    assert row["verdict"] == "slower" and "rule: faster/slower" in as_csv.stderr


def test_compare_as_json_writes_nan_as_null(cli: Cli, tmp_path: Path) -> None:
    one = cli("compare", _results(tmp_path / "a.parquet", [1.0]), _results(tmp_path / "b.parquet", [2.0]), "-f", "json")
    (row,) = json.loads(one.stdout)
    assert row["p_value"] is None and row["ci_low"] is None


def _bench_rows() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "linger.ms": [5, 5],
            "repeat": [0, 1],
            "records": [2_000_000, 2_000_000],
            "msg_s": [20_123_456.7, 19_876_543.2],
            "mb_s": [1_234.5, 1_220.1],
            "latency_p99_ms": [12.5, float("nan")],
            "run_id": RUN_IDS[:2],
        }
    )


def test_bench_results_at_80_columns_show_every_number_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    show_results(get_experiment("native_produce"), _bench_rows(), ["linger.ms"], repeat=2)
    shown = capsys.readouterr().out
    _no_cut(shown)
    for whole in ("2,000,000", "20,123,457", "19,876,543", "1,234", "1,220", "spread over the repeats"):
        assert whole in shown, whole


@pytest.mark.parametrize("fmt", [OutputFormat.JSON, OutputFormat.CSV])
def test_bench_results_for_scripts_are_every_row_and_column(
    fmt: OutputFormat, capsys: pytest.CaptureFixture[str]
) -> None:
    show_results(get_experiment("native_produce"), _bench_rows(), ["linger.ms"], repeat=2, fmt=fmt)
    text = capsys.readouterr().out
    rows: list[dict[str, Any]] = (
        json.loads(text) if fmt is OutputFormat.JSON else list(csv.DictReader(io.StringIO(text)))
    )
    assert [str(row["run_id"]) for row in rows] == RUN_IDS[:2]
    assert rows[1]["latency_p99_ms"] in (None, "")  # NaN: null in JSON, empty in CSV


def test_bench_list_as_json_names_every_experiment(cli: Cli) -> None:
    listed = json.loads(cli("bench", "--list", "--format", "json").stdout)
    names = [row["experiment"] for row in listed]
    assert names == sorted(names) and "native_produce" in names
    assert all(row["question"] and "parameters" in row for row in listed)


def test_status_at_80_columns_shows_what_each_service_runs_whole(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    services = {
        "kafka": {
            "address": "127.0.0.1:39092",
            "pid": 123456,
            "healthy": True,
            "restarts": 0,
            "broker": "kafka",
            "version": "4.4.0",
        },
        "restproxy-1": {
            "url": "http://127.0.0.1:38082",
            "pid": 123457,
            "healthy": False,
            "restarts": 2,
            "reason": "GET / answered 503 after 5 s: the proxy is starting or its broker is away",
        },
    }
    monkeypatch.setattr("workbench.stack.status", lambda profile: {"profile": "local", "services": services})
    result = cli("status", columns=80)
    assert result.exit_code == 0, result.stderr
    _no_cut(result.stdout)
    for whole in ("kafka 4.4.0", "127.0.0.1:39092", "http://127.0.0.1:38082", "123456", "NO"):
        assert whole in result.stdout, whole


def test_write_records_refuses_the_table_format() -> None:
    with pytest.raises(ValueError, match="json or csv"):
        write_records(pd.DataFrame(), OutputFormat.TABLE, io.StringIO())
