"""`sweep`: run an experiment over a grid of parameters, repeatedly, and keep the rows.

Each point runs in a fresh topic whose name carries a per-point prefix; after the
point, every topic with that prefix is deleted, whatever happened, because the embedded
broker holds all data in memory. Rows are appended to the experiment's results table
as each point finishes, so an interrupted sweep keeps what it measured.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from workbench import kafka, results
from workbench.bench.experiments import get_experiment
from workbench.errors import BenchError
from workbench.measure.drift import drift_columns, run_order
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
    warm_up_runs: int = 0,
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
        warm_up_runs: runs of the first point made before any is measured, neither
            returned nor recorded (JMH's warm-up iterations): a new client process's first
            run carries its own start-up (connections, metadata, first topic).

    The repeats run in rounds, each point once a round in a shuffled order
    (`measure.drift.run_order`), so a broker that warms up or slows down during the sweep
    biases no point; each row records its `run_index` and the `order_seed`. A point whose
    repeats trend with their order is marked `drifting` (`drift_tau`, `drift_p`).

    Returns:
        All rows, by point and repeat, with `point` (grid index), `repeat`, `run_index`,
        `order_seed` and the drift columns. Rows recorded as each run ends carry no drift
        columns: the test needs every repeat.

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
    seed = random.randrange(2**31)
    runs = [(i, r, points[i]) for i, r in run_order(len(points), repeat, seed)]
    bar = _progress(len(runs), experiment) if progress else None
    rows: list[dict[str, Any]] = []
    try:
        for _ in range(warm_up_runs if runs else 0):
            prefix = f"bench-{uuid.uuid4().hex[:6]}"
            try:
                spec.run(stack, topic_prefix=prefix, **runs[0][2])
            finally:
                delete_bench_topics(stack, prefix)
        for run_index, (index, rep, point) in enumerate(runs):
            if bar is not None:
                bar.set_postfix_str(", ".join(f"{k}={v}" for k, v in point.items() if k not in (fixed or {}))[:60])
            prefix = f"bench-{uuid.uuid4().hex[:6]}"
            try:
                row = spec.run(stack, topic_prefix=prefix, **point)
            finally:
                delete_bench_topics(stack, prefix)
            row.update(point=index, repeat=rep, run_index=run_index, order_seed=seed)
            rows.append(row)
            if record:
                results.record(experiment, row, profile=stack.profile)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return drift_columns(frame, spec.spread_of[0]).sort_values(["point", "repeat"], ignore_index=True)


def delete_bench_topics(stack: Stack, prefix: str = "bench") -> list[str]:
    """Delete the topics named `<prefix>-...` (a generator's topics); returns their names."""
    conf = stack.kafka_config("admin")
    leftovers = [t for t in kafka.list_topics(conf) if t.startswith(prefix + "-")]
    kafka.delete_topics(conf, leftovers)
    return leftovers


def _progress(total: int, label: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=label, unit="run", leave=True)
