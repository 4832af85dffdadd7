"""`sweep`: run an experiment over a grid of parameters, repeatedly, and keep the rows.

Each point runs in a fresh topic whose name carries a per-point prefix; after the
point, every topic with that prefix is deleted, whatever happened, because the embedded
broker holds all data in memory. Rows are appended to the experiment's results table
as each point finishes, so an interrupted sweep keeps what it measured.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from workbench import kafka, results
from workbench.bench.experiments import get_experiment
from workbench.errors import BenchError
from workbench.stack import Stack

__all__ = ["delete_bench_topics", "grid_points", "sweep"]


def grid_points(grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """The points of a grid: the cartesian product of `{param: [values]}`, or an explicit list.

    Raises:
        BenchError: a grid value is not a list, or a list is empty.

    Usage: `grid_points({"linger.ms": [0, 10], "batch.size": [16384, 1000000]})` → 4 points.
    """
    if not grid:
        return [{}]
    if isinstance(grid, Mapping):
        for name, values in grid.items():
            if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
                raise BenchError(f"grid parameter {name!r} must be a non-empty list of values, got {values!r}")
        names = list(grid)
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(grid[n] for n in names))]
    return [dict(point) for point in grid]


def sweep(
    experiment: str,
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | None = None,
    *,
    repeat: int = 1,
    stack: Stack | None = None,
    fixed: Mapping[str, Any] | None = None,
    record: bool = True,
    progress: bool = True,
) -> pd.DataFrame:
    """Run `experiment` at every grid point, `repeat` times each.

    Args:
        experiment: a name from `EXPERIMENTS` (`workbench bench --list`).
        grid: `{param: [values]}` (cartesian product) or a list of point dicts.
        repeat: runs per point; the spread of the repeats is what `compare` tests against.
        stack: the stack to load (default: the profile's, started if needed).
        fixed: parameters every point shares (`{"records": 20_000}`).
        record: append the rows to `<results_dir>/<experiment>.parquet`.
        progress: a tqdm bar (a widget in Jupyter, text in a terminal).

    Returns:
        All rows, with `point` (grid index) and `repeat` columns.

    Raises:
        BenchError: an unknown experiment or parameter, or repeat < 1.

    Usage: `sweep("proxy_produce", {"records_per_call": [1, 10, 100]}, repeat=3, stack=active)`.
    """
    spec = get_experiment(experiment)
    if repeat < 1:
        raise BenchError(f"repeat must be at least 1, got {repeat}")
    points = [{**(fixed or {}), **point} for point in grid_points(grid)]
    for point in points:
        spec.check(point)
    if stack is None:
        from workbench.stack import up

        stack = up()
    runs = [(i, r, point) for i, point in enumerate(points) for r in range(repeat)]
    bar = _progress(len(runs), experiment) if progress else None
    rows: list[dict[str, Any]] = []
    try:
        for index, rep, point in runs:
            if bar is not None:
                bar.set_postfix_str(", ".join(f"{k}={v}" for k, v in point.items() if k not in (fixed or {}))[:60])
            prefix = f"bench-{uuid.uuid4().hex[:6]}"
            try:
                row = spec.run(stack, topic_prefix=prefix, **point)
            finally:
                delete_bench_topics(stack, prefix)
            row.update(point=index, repeat=rep)
            rows.append(row)
            if record:
                results.record(experiment, row, profile=stack.profile)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(rows)


def delete_bench_topics(stack: Stack, prefix: str = "bench") -> list[str]:
    """Delete the topics named `<prefix>-...` (a generator's topics); returns their names."""
    conf = stack.kafka_config("admin")
    leftovers = [t for t in kafka.list_topics(conf) if t.startswith(prefix + "-")]
    kafka.delete_topics(conf, leftovers)
    return leftovers


def _progress(total: int, label: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=label, unit="run", leave=True)
