"""Run order and drift: measuring several points on a system that keeps changing under them.

A JVM broker gets faster for minutes after it starts (JIT compilation, page cache, first
connections): measured one after the other, all repeats of point A then all of point B,
B looks faster for no reason of its own. Two rules, as OpenMessaging Benchmark and JMH
apply them, keep that out of a comparison:

- **interleave**: `run_order` runs the repeats in rounds, each round every point once in
  a shuffled order (seeded, and the seed is recorded with the rows), so a drift spreads
  over every point instead of favouring the last;
- **detect**: `drift_columns` tests each point's repeats for a trend with the order they
  ran in (the Mann-Kendall test: Kendall's tau of the metric with the run index, its
  p-value exact for a handful of repeats): a point whose value climbs or falls with time
  is marked `drifting`, with the p-value, and a comparison does not take it at face value.

Why Kendall and not Spearman: at five repeats a perfectly monotone run is one ordering
in 60 (two-sided p = 0.017), and Kendall's exact test says so; Spearman's p-value in scipy
comes from a t approximation that calls the same five values p = 1e-24, which turned a
chance ordering of two identical runs into "drifting" at any threshold.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pandas as pd

__all__ = ["DRIFT_ALPHA", "MIN_DRIFT_REPEATS", "drift_columns", "drift_test", "run_order"]

#: A trend with the run order counts as drift below this p-value.
DRIFT_ALPHA = 0.05
#: Fewer repeats than this cannot show a trend: the smallest exact two-sided p of 4 is
#: 2/24 = 0.083, above `DRIFT_ALPHA`; of 5 it is 2/120 = 0.017.
MIN_DRIFT_REPEATS = 5


def run_order(points: int, repeat: int, seed: int) -> list[tuple[int, int]]:
    """(point index, repeat index) in the order to run them: `repeat` rounds, each of every
    point once, in an order shuffled per round by `seed` (one point: its repeats in turn).

    Usage: `run_order(2, 3, seed=7)` → `[(1, 0), (0, 0), (0, 1), (1, 1), (1, 2), (0, 2)]` (some such).
    """
    shuffler = random.Random(seed)
    order: list[tuple[int, int]] = []
    for rep in range(repeat):
        round_ = list(range(points))
        shuffler.shuffle(round_)
        order.extend((point, rep) for point in round_)
    return order


def drift_test(values: Sequence[float]) -> tuple[float, float]:
    """Kendall's tau of `values` with their order, and its two-sided p-value (exact when no
    two values tie); NaN for fewer than `MIN_DRIFT_REPEATS` values or values that do not vary."""
    clean = [v for v in values if v is not None and not math.isnan(v)]
    if len(clean) < MIN_DRIFT_REPEATS or len(set(clean)) < 2:
        return math.nan, math.nan
    from scipy.stats import kendalltau

    result = kendalltau(range(len(clean)), clean)
    return float(result.statistic), float(result.pvalue)


def drift_columns(
    rows: pd.DataFrame, metric: str = "msg_s", *, by: str = "point", order: str = "run_index"
) -> pd.DataFrame:
    """`rows` with `drift_tau`, `drift_p` and `drifting` per point (`by`): the trend of
    `metric` over the point's repeats in the order they ran (`order`).

    `drifting` is True when p < `DRIFT_ALPHA`, False when the repeats show no trend, and
    NaN (not measured, as the row contract has it) when there were too few repeats to tell.

    Usage: `drift_columns(sweep_rows, "msg_s")`.
    """
    if rows.empty or metric not in rows or by not in rows or order not in rows:
        return rows
    out = rows.copy()
    out["drift_tau"], out["drift_p"] = math.nan, math.nan
    out["drifting"] = pd.Series(math.nan, index=out.index, dtype=object)
    for _, group in out.groupby(by, sort=False):
        tau, p = drift_test(group.sort_values(order)[metric].astype(float).tolist())
        out.loc[group.index, "drift_tau"] = tau
        out.loc[group.index, "drift_p"] = p
        out.loc[group.index, "drifting"] = math.nan if math.isnan(p) else bool(p < DRIFT_ALPHA)
    return out
