"""`workbench compare A B` on two results files: a table with the verdict and the rule it followed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from result_tables import results_file
from typer.testing import Result


def test_compare_two_result_files(cli: Callable[..., Result], tmp_path: Path) -> None:
    a = results_file(tmp_path / "a.parquet", [100.0, 101, 99, 100, 102])
    b = results_file(tmp_path / "b.parquet", [80.0, 79, 81, 80, 78])
    result = cli("compare", str(a), str(b))
    assert result.exit_code == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if "msg_s" in x)
    assert "native_produce records=1000" in line and "slower" in line and "0.800" in line
    assert "ok (client 0.50 of 2 cores)" in line
    assert "rule: faster/slower: Mann-Whitney U p < 0.05" in result.stdout


def test_unknown_run_is_one_line_on_stderr(cli: Callable[..., Result], tmp_path: Path) -> None:
    result = cli("compare", "no-such-run", str(results_file(tmp_path / "a.parquet", [1.0])))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: no result rows with run id 'no-such-run'")
    assert len(result.stderr.strip().splitlines()) == 1
