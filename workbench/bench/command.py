"""`workbench bench`: run an experiment from the shell and print its results as a table.

    workbench bench --list
    workbench bench proxy_produce --param records_per_call=500 --param session_reuse=false
    workbench bench native_produce --grid grid.yaml --repeat 3

Two recorded runs are compared by `workbench compare A B`, the one comparison command.

A grid file maps parameters to lists of values (`linger.ms: [0, 5, 50]`); `--param`
values are fixed for every point. Values are read as YAML scalars, so `500` is an int,
`false` a bool and `all` a string.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from workbench.bench.experiments import EXPERIMENTS, Experiment, get_experiment
from workbench.errors import BenchError
from workbench.numbers import format_number
from workbench.output import OutputFormat, print_table, write_records

__all__ = ["list_experiments", "parse_params", "read_grid", "run_bench_command", "show_results"]

#: Columns printed after the parameters, when present.
_SHOWN = ("records", "msg_s", "mb_s", "latency_p50_ms", "latency_p99_ms", "broker_cpu_s", "proxy_cpu_s")


def parse_params(items: list[str]) -> dict[str, Any]:
    """`["k=v", ...]` → `{k: v}` with YAML-typed values.

    Raises:
        BenchError: an item without `=` or with an empty name.
    """
    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise BenchError(f"--param {item!r} is not k=v; example: --param records_per_call=500")
        try:
            params[name.strip()] = yaml.safe_load(text) if text else ""
        except yaml.YAMLError:
            params[name.strip()] = text
    return params


def read_grid(path: Path) -> dict[str, list[Any]]:
    """A grid file: a YAML mapping of parameter → list of values.

    Raises:
        BenchError: the file is missing, not YAML, or not such a mapping.
    """
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise BenchError(f"cannot read grid file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise BenchError(f"grid file {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not data:
        raise BenchError(f"grid file {path} must map parameters to lists, e.g. 'linger.ms: [0, 5, 50]'")
    bad = [k for k, v in data.items() if not isinstance(v, list) or not v]
    if bad:
        raise BenchError(f"grid file {path}: {bad[0]!r} must be a non-empty list of values")
    return {str(k): v for k, v in data.items()}


def list_experiments(fmt: OutputFormat = OutputFormat.TABLE) -> None:
    """What `workbench bench --list` prints: every experiment, its question and its parameters."""
    import pandas as pd
    from rich.console import Console

    rows = [
        {"experiment": name, "question": spec.question, "parameters": _parameters(spec)}
        for name, spec in sorted(EXPERIMENTS.items())
    ]
    if fmt is not OutputFormat.TABLE:
        write_records(pd.DataFrame(rows), fmt, sys.stdout)
        return
    from rich.table import Table

    table = Table("experiment", "question", "parameters (defaults)", title="workbench bench experiments")
    for row in rows:
        table.add_row(*row.values())
    print_table(Console(), table)


def run_bench_command(
    experiment: str,
    params: list[str],
    grid: Path | None,
    repeat: int,
    profile: str | None,
    fmt: OutputFormat = OutputFormat.TABLE,
    warm_up_runs: int = 1,
) -> None:
    """What `workbench bench EXPERIMENT` does: run the experiment and print its rows.

    `warm_up_runs` unrecorded runs of the first point come first (see `sweep`).

    With `fmt` json or csv the rows are all that reaches stdout (the progress bar is on stderr).

    Raises:
        BenchError: an unknown experiment or parameter, or a bad grid file.
    """
    spec = get_experiment(experiment)
    fixed = parse_params(params)
    points = read_grid(grid) if grid is not None else None
    spec.check(fixed)
    for name, values in (points or {}).items():
        for value in values:
            spec.check({name: value})

    from workbench import catalog
    from workbench import stack as stacks
    from workbench.bench.sweep import sweep
    from workbench.bench.warmup import warm_stack
    from workbench.config import load_profile

    asked = {"fixed": fixed, "grid": points or {}, "repeat": repeat}
    with catalog.track("bench", experiment, load_profile(profile), asked), stacks.running(profile) as active:
        active = warm_stack(active)
        try:
            frame = sweep(
                experiment, points, repeat=repeat, stack=active, fixed=fixed, progress=True, warm_up_runs=warm_up_runs
            )
        finally:
            if spec.needs == "spark":
                _stop_spark()
    show_results(spec, frame, sorted(points or {}) or sorted(fixed), repeat=repeat, fmt=fmt)


def show_results(
    spec: Experiment, frame: Any, varied: list[str], *, repeat: int = 1, fmt: OutputFormat = OutputFormat.TABLE
) -> None:
    """Print a bench run's rows: a table of the varied parameters and the shown metrics (and the
    spread over the repeats) for people, or every column of every row as JSON or CSV for scripts.

    Usage: `show_results(get_experiment("native_produce"), frame, ["linger.ms"], repeat=3)`.
    """
    from rich.console import Console

    if fmt is not OutputFormat.TABLE:
        write_records(frame, fmt, sys.stdout)
        return
    console = Console()
    print_table(console, _results_table(spec.name, frame, varied, spec.shown or _SHOWN))
    if repeat > 1:
        for metric in spec.spread_of:
            print_table(console, _spread_table(frame, [v for v in varied if v in frame.columns], metric))


def _stop_spark() -> None:
    """Stop the session (and its JVM) a Spark experiment started: the command leaves no process behind."""
    from pyspark.sql import SparkSession

    from workbench.streaming import stop_spark

    session = SparkSession.getActiveSession()
    if session is not None:
        stop_spark(session)


def _parameters(spec: Experiment) -> str:
    defaults = ", ".join(f"{k}={v}" for k, v in spec.defaults().items())
    return defaults + (" + librdkafka settings (linger.ms=...)" if spec.kafka_settings else "")


def _results_table(experiment: str, frame: Any, varied: list[str], shown: tuple[str, ...] = _SHOWN) -> Any:
    from rich.table import Table

    columns = [c for c in dict.fromkeys([*varied, "repeat", *shown]) if c in frame.columns]
    table = Table(*columns, title=f"{experiment}: {len(frame)} run(s), recorded in results/{experiment}.parquet")
    for _, row in frame.iterrows():
        table.add_row(*(_cell(row[c]) for c in columns))
    return table


def _spread_table(frame: Any, varied: list[str], metric: str = "msg_s") -> Any:
    from rich.table import Table

    from workbench.results import spread

    summary = spread(frame, metric, varied or None)
    label = "msg/s" if metric == "msg_s" else metric
    table = Table(*varied, f"{label} min", "median", "max", "runs", title="spread over the repeats")
    for _, row in summary.iterrows():
        table.add_row(*(_cell(row[c]) for c in [*varied, "min", "median", "max", "n"]))
    return table


def _cell(value: Any) -> str:
    return format_number(value)
