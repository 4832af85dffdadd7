"""Is a difference between two runs real, or noise? Medians, a bootstrap interval, a rank test.

For two sets of result rows (run A, the baseline, and run B) and each point both measured
(same experiment, same parameters) and each metric whose direction is known, the
comparison gives both medians, their ratio B / A, a bootstrap confidence interval of that
ratio, the Mann-Whitney U test's two-sided p-value and a verdict:

- **faster** / **slower**: p < `alpha` *and* the interval excludes 1; "faster" means better
  in the metric's own direction (more msg/s, less latency);
- **no evidence of change**: otherwise; a difference may exist, the repeats do not show it;
- **too few repeats**: fewer than `min_repeats` on a side, or so few that no ordering of
  the values could reach p < `alpha` (3 against 3 cannot: its smallest p is 0.1);
- **untrusted: ...**: a side ran on a cold broker, or its repeats trend with the order they
  ran in (`caveat`); the verdict says which and what the figures said, and a report's
  `--fail-on-regression` does not fail on it.

It also says whether each side's load generator was saturated, since such a run measures
the client rather than the system: the client's CPU (`client_cpu_s` over `seconds`) near
the machine's cores, or an offered rate (`offered_msg_s`) not reached; "not measured" when
the rows carry neither.

    from workbench.compare import compare_rows
    table = compare_rows(rows_a, rows_b)           # one line per point and metric
    workbench compare 20261122-0900 20261123-0900  # run ids from `workbench runs`, or result files
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from workbench.config import Profile, load_profile
from workbench.errors import ConfigError
from workbench.measure.drift import MIN_DRIFT_REPEATS, drift_test

__all__ = [
    "Comparison",
    "Direction",
    "FASTER",
    "HEADLINE",
    "NO_EVIDENCE",
    "SLOWER",
    "TOO_FEW",
    "Thresholds",
    "UNTRUSTED",
    "caveat",
    "compare_rows",
    "compare_runs",
    "compare_samples",
    "comparison_html",
    "comparison_table",
    "is_headline",
    "load_rows",
    "metric_direction",
    "point_label",
    "regressions",
    "saturation",
]

FASTER = "faster"
SLOWER = "slower"
NO_EVIDENCE = "no evidence of change"
#: The start of a verdict whose side was cold or drifting: no regression, whatever the figures said.
UNTRUSTED = "untrusted"
TOO_FEW = "too few repeats"

Direction = Literal["higher", "lower"]

#: Columns of a result row that are rates: more is better.
_HIGHER = ("msg_s", "mb_s", "lookups_s")
#: The figures a scheduled report is judged by: throughput and tail latency.
HEADLINE = ("msg_s", "mb_s", "latency_p99_ms")
#: Bookkeeping columns that end like a metric but are not one.
_NOT_METRICS = {"offered_msg_s", "client_cpu_s", "seconds"}


@dataclass(frozen=True)
class Thresholds:
    """What a verdict needs; stated beside every comparison so a reader can judge it.

    Attributes:
        alpha: a change needs a Mann-Whitney p-value below this.
        confidence: level of the bootstrap interval of the ratio, which must exclude 1.
        min_repeats: fewer rows than this on either side give "too few repeats".
        resamples: bootstrap resamples.
        seed: the bootstrap's random seed, so a comparison prints the same numbers twice.
        saturated_share: the load generator counts as saturated at this share of the cores.
        reached_share: an offered rate counts as reached at this share of it.
    """

    alpha: float = 0.05
    confidence: float = 0.95
    min_repeats: int = 3
    resamples: int = 2000
    seed: int = 0
    saturated_share: float = 0.9
    reached_share: float = 0.95

    def describe(self) -> str:
        """One sentence for the output: the rule every verdict followed."""
        return (
            f"faster/slower: Mann-Whitney U p < {self.alpha:g} and the {self.confidence:.0%} bootstrap interval "
            f"of B/A excludes 1; at least {self.min_repeats} repeats per side (and enough to reach p < "
            f"{self.alpha:g}); load generator saturated: client CPU >= {self.saturated_share:.0%} of the cores "
            f"or < {self.reached_share:.0%} of the offered rate reached"
        )


@dataclass(frozen=True)
class Comparison:
    """One metric at one point: A (baseline) against B."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str


def metric_direction(name: str) -> Direction | None:
    """Whether more (`"higher"`) or less (`"lower"`) of a metric is better; None when unknown.

    Rates (`msg_s`, `mb_s`, `lookups_s`, ...) are higher-is-better; latencies
    (`latency_*_ms`) lower-is-better. Other columns are not compared unless named with a
    direction, because a verdict of "faster" on an unknown column would be a guess.
    """
    if name in _NOT_METRICS:
        return None
    if name.endswith(_HIGHER):
        return "higher"
    if name.startswith("latency_") and name.endswith("_ms"):
        return "lower"
    return None


def _smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided exact Mann-Whitney p-value n_a against n_b values can give."""
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def compare_samples(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    direction: Direction = "higher",
    thresholds: Thresholds | None = None,
) -> Comparison:
    """Compare repeated measurements of one metric: medians, ratio B / A, interval, p-value, verdict.

    Args:
        a: the baseline's values (NaN values are dropped: "not measured").
        b: the values to judge against it.
        direction: `"higher"` when more is better (msg/s), `"lower"` when less is (latency).
        thresholds: the rule; `Thresholds()` by default.

    Returns:
        A `Comparison`; its `verdict` is one of FASTER, SLOWER, NO_EVIDENCE, TOO_FEW.

    Usage: `compare_samples([100, 102, 99], [120, 118, 121, 119], direction="higher")`.
    """
    from scipy.stats import mannwhitneyu

    rule = thresholds or Thresholds()
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    xa, xb = xa[~np.isnan(xa)], xb[~np.isnan(xb)]
    n_a, n_b = len(xa), len(xb)
    nan = float("nan")
    median_a = float(np.median(xa)) if n_a else nan
    median_b = float(np.median(xb)) if n_b else nan
    ratio = median_b / median_a if n_a and n_b and median_a != 0 else nan
    if min(n_a, n_b) < rule.min_repeats or _smallest_p(n_a, n_b) >= rule.alpha:
        return Comparison(n_a, n_b, median_a, median_b, ratio, nan, nan, nan, TOO_FEW)
    low, high = _bootstrap_ratio(xa, xb, rule)
    if np.all(xa == xa[0]) and np.all(xb == xa[0]):
        p_value = 1.0  # identical constants: the test is undefined, and nothing changed
    else:
        p_value = float(mannwhitneyu(xb, xa, alternative="two-sided").pvalue)
    verdict = NO_EVIDENCE
    if p_value < rule.alpha and not (low <= 1.0 <= high) and not math.isnan(ratio):
        better = ratio > 1.0 if direction == "higher" else ratio < 1.0
        verdict = FASTER if better else SLOWER
    return Comparison(n_a, n_b, median_a, median_b, ratio, low, high, p_value, verdict)


def _bootstrap_ratio(a: np.ndarray, b: np.ndarray, rule: Thresholds) -> tuple[float, float]:
    """Percentile bootstrap interval of median(B) / median(A), each side resampled on its own."""
    rng = np.random.default_rng(rule.seed)
    med_a = np.median(a[rng.integers(0, len(a), size=(rule.resamples, len(a)))], axis=1)
    med_b = np.median(b[rng.integers(0, len(b), size=(rule.resamples, len(b)))], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = med_b / med_a
    ratios = ratios[np.isfinite(ratios)]
    if not len(ratios):
        return float("nan"), float("nan")
    tail = (1.0 - rule.confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


def saturation(rows: pd.DataFrame, thresholds: Thresholds | None = None) -> str:
    """Whether the load generator limited these rows: "saturated (...)", "ok (...)" or "not measured".

    Saturated when the client's CPU (`client_cpu_s` / `seconds`, in cores) reached
    `saturated_share` of the machine's cores (`cpu_cores`) in any row, or when a row with
    an `offered_msg_s` achieved less than `reached_share` of it (`msg_s`): such rows
    measure the client, not the system.
    """
    rule = thresholds or Thresholds()
    notes: list[str] = []
    saturated = False
    if {"client_cpu_s", "seconds"} <= set(rows.columns):
        seconds = pd.to_numeric(rows["seconds"], errors="coerce")
        used = pd.to_numeric(rows["client_cpu_s"], errors="coerce") / seconds.where(seconds > 0)
        cores = pd.to_numeric(rows.get("cpu_cores", pd.Series(dtype=float)), errors="coerce").reindex(rows.index)
        if used.notna().any():
            peak = float(used.max())
            limit = float(cores.max()) if cores.notna().any() else float("nan")
            if not math.isnan(limit):
                saturated |= peak >= rule.saturated_share * limit
                notes.append(f"client {peak:.2f} of {limit:g} cores")
            else:
                notes.append(f"client {peak:.2f} cores, machine cores not recorded")
    if {"offered_msg_s", "msg_s"} <= set(rows.columns):
        offered = pd.to_numeric(rows["offered_msg_s"], errors="coerce")
        achieved = pd.to_numeric(rows["msg_s"], errors="coerce") / offered.where(offered > 0)
        if achieved.notna().any():
            worst = float(achieved.min())
            saturated |= worst < rule.reached_share
            notes.append(f"{worst:.0%} of offered rate reached")
    if not notes:
        return "not measured"
    return f"{'saturated' if saturated else 'ok'} ({'; '.join(notes)})"


def caveat(rows: pd.DataFrame, side: str, metric: str, thresholds: Thresholds | None = None) -> str | None:
    """Why one side's figures cannot be taken at face value, or None: a cold broker (the
    rows' `broker_warmth`, with `broker_uptime_s`), or repeats whose `metric` trends with the
    order they ran in (`run_index`; `measure.drift`). Rows without those facts have none.

    Usage: `caveat(rows_b, "B", "msg_s")` → "B ran 8 s after the broker started: cold".
    """
    rule = thresholds or Thresholds()
    notes = []
    if "broker_warmth" in rows and (rows["broker_warmth"] == "cold").any():
        uptime = pd.to_numeric(rows.get("broker_uptime_s", pd.Series(dtype=float)), errors="coerce").min()
        after = f"{uptime:,.0f} s after the broker started" if uptime == uptime else "on a broker"
        notes.append(f"{side} ran {after}: cold")
    if "run_index" in rows and metric in rows and len(rows) >= MIN_DRIFT_REPEATS:
        ordered = rows.sort_values("run_index")
        tau, p = drift_test(pd.to_numeric(ordered[metric], errors="coerce").tolist())
        if p == p and p < rule.alpha:
            notes.append(f"{side}'s repeats drift with their order (Kendall's tau {tau:+.2f}, p = {p:.3g})")
    return "; ".join(notes) or None


def point_label(row: pd.Series, ignore: Sequence[str] = ()) -> str:
    """The point a row measured: its experiment and its own parameters, as `name=value` text."""
    names = [n for n in str(row.get("params") or "").split(",") if n and n in row.index and n not in ignore]
    parts = [f"{n}={_text(row[n])}" for n in sorted(names)]
    experiment = row.get("experiment")
    return f"{experiment if isinstance(experiment, str) else ''} {' '.join(parts)}".strip()


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 10 and 10.0 are one point, whichever way parquet stored it
    return str(value)


def compare_rows(
    a: pd.DataFrame,
    b: pd.DataFrame,
    metrics: Sequence[str] | Mapping[str, Direction] | None = None,
    *,
    ignore: Sequence[str] = (),
    thresholds: Thresholds | None = None,
) -> pd.DataFrame:
    """Compare two sets of result rows point by point and metric by metric.

    A point is an experiment with its parameters (the names a row lists in `params`);
    only points both sides measured are compared. Each row of a point is one repeat.

    Args:
        a: the baseline's rows (one run, or any rows).
        b: the rows to judge.
        metrics: metric names (their direction from `metric_direction`), or a mapping of
            name → "higher"/"lower"; default: every column of both with a known direction.
        ignore: parameters left out of a point's identity, to compare one setting against
            another: A with `linger.ms=0`, B with `linger.ms=50`, `ignore=["linger.ms"]`.
        thresholds: the rule; `Thresholds()` by default.

    Returns:
        One line per point and metric: `point`, `metric`, `direction`, `n_a`, `n_b`,
        `median_a`, `median_b`, `ratio`, `ci_low`, `ci_high`, `p_value`, `verdict`,
        `load_a`, `load_b` (see `saturation`). Its `attrs["thresholds"]` states the rule.

    Raises:
        ConfigError: the two sides have no point in common, or a named metric is unknown.

    Usage: `compare_rows(results.load("native_produce", run_a), results.load("native_produce", run_b))`.
    """
    rule = thresholds or Thresholds()
    chosen = _metrics(a, b, metrics)
    labels_a = a.apply(point_label, axis=1, ignore=tuple(ignore)) if len(a) else pd.Series(dtype=str)
    labels_b = b.apply(point_label, axis=1, ignore=tuple(ignore)) if len(b) else pd.Series(dtype=str)
    common = [p for p in dict.fromkeys(labels_a) if p in set(labels_b)]
    if not common:
        raise ConfigError(
            None,
            None,
            f"the two runs share no point (A: {sorted(set(labels_a))[:3]}, "
            f"B: {sorted(set(labels_b))[:3]}); compare runs of the same experiment "
            "and parameters",
        )
    lines = []
    for point in common:
        rows_a, rows_b = a[labels_a == point], b[labels_b == point]
        load_a, load_b = saturation(rows_a, rule), saturation(rows_b, rule)
        for metric, direction in chosen.items():
            if metric not in rows_a.columns or metric not in rows_b.columns:
                continue
            values_a = pd.to_numeric(rows_a[metric], errors="coerce").to_numpy(dtype=float)
            values_b = pd.to_numeric(rows_b[metric], errors="coerce").to_numpy(dtype=float)
            if np.isnan(values_a).all() and np.isnan(values_b).all():
                continue  # not measured at this point
            result = compare_samples(values_a, values_b, direction=direction, thresholds=rule)
            caveats = [c for c in (caveat(rows_a, "A", metric, rule), caveat(rows_b, "B", metric, rule)) if c]
            if caveats and result.verdict != TOO_FEW:
                result = replace(
                    result, verdict=f"{UNTRUSTED}: {'; '.join(caveats)}; the figures said {result.verdict}"
                )
            lines.append(
                {
                    "point": point,
                    "metric": metric,
                    "direction": direction,
                    **result.__dict__,
                    "load_a": load_a,
                    "load_b": load_b,
                }
            )
    columns = ["point", "metric", "direction", *Comparison.__dataclass_fields__, "load_a", "load_b"]
    table = pd.DataFrame(lines, columns=columns)
    table.attrs["thresholds"] = rule.describe()
    return table


def _metrics(
    a: pd.DataFrame, b: pd.DataFrame, metrics: Sequence[str] | Mapping[str, Direction] | None
) -> dict[str, Direction]:
    if isinstance(metrics, Mapping):
        return dict(metrics)
    if metrics is None:
        found = {c: metric_direction(c) for c in a.columns if c in b.columns}
        return {c: d for c, d in found.items() if d is not None}
    chosen: dict[str, Direction] = {}
    for name in metrics:
        direction = metric_direction(name)
        if direction is None:
            raise ConfigError(
                None,
                None,
                f"metric {name!r} has no known direction; compare rates (msg_s) or "
                f"latencies (latency_p99_ms), or pass {{{name!r}: 'higher'}}",
            )
        chosen[name] = direction
    return chosen


def load_rows(source: str | Path, profile: Profile | None = None, experiment: str | None = None) -> pd.DataFrame:
    """The result rows of a run id (every experiment's table in the results folder) or of a file.

    Args:
        source: a run id (`run_id` column; see `workbench runs`) or a `.parquet` / `.csv` file.
        profile: where the results folder is.
        experiment: only this experiment's rows.

    Raises:
        ConfigError: no file of that name and no rows with that run id.
    """
    path = Path(source)
    if path.suffix in (".parquet", ".csv") or path.is_file():
        if not path.is_file():
            raise ConfigError(path, None, "no such results file")
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
        if experiment is not None and "experiment" in frame.columns:
            frame = frame[frame["experiment"] == experiment]
        return frame.reset_index(drop=True)
    from workbench import results

    profile = profile or load_profile()
    names = [experiment] if experiment else results.experiments(profile)
    frames = []
    for name in names:
        rows = results.load(name, run_id=str(source), profile=profile)
        if not rows.empty:
            frames.append(rows.assign(experiment=rows["experiment"] if "experiment" in rows.columns else name))
    if not frames:
        where = profile.path(profile.results_dir)
        raise ConfigError(
            None,
            None,
            f"no result rows with run id {str(source)!r} in {where}; "
            "list runs with `workbench runs` or give a .parquet file",
        )
    return pd.concat(frames, ignore_index=True)


def compare_runs(
    a: str | Path,
    b: str | Path,
    *,
    experiment: str | None = None,
    metrics: Sequence[str] | Mapping[str, Direction] | None = None,
    ignore: Sequence[str] = (),
    profile: Profile | None = None,
    thresholds: Thresholds | None = None,
) -> pd.DataFrame:
    """`compare_rows` of two runs named by run id or results file.

    Raises:
        ConfigError: a run has no rows, or the two share no point.

    Usage: `compare_runs("20261122T2000Z-ab12cd", "20261123T0900Z-ef34ab", experiment="native_produce")`.
    """
    profile = profile or load_profile()
    rows_a = load_rows(a, profile, experiment)
    rows_b = load_rows(b, profile, experiment)
    return compare_rows(rows_a, rows_b, metrics, ignore=ignore, thresholds=thresholds)


def is_headline(metric: str) -> bool:
    """Whether a metric is a headline figure: `msg_s`, `mb_s`, `latency_p99_ms`, or a `*_msg_s` rate."""
    return metric in HEADLINE or (metric.endswith("_msg_s") and metric_direction(metric) is not None)


def regressions(table: pd.DataFrame) -> pd.DataFrame:
    """The lines of a comparison where a headline figure is slower with evidence."""
    if table.empty:
        return table
    return table[(table["verdict"] == SLOWER) & table["metric"].map(is_headline).astype(bool)]


def _cells(row: Any) -> list[str]:
    """One comparison line's cells before its verdict, as the page and the terminal show them."""
    from workbench.numbers import format_number

    def cell(value: float, digits: str = ".3f") -> str:
        return "-" if value != value else format(value, digits)  # NaN: not measured

    interval = "-" if row["ci_low"] != row["ci_low"] else f"{row['ci_low']:.3f} to {row['ci_high']:.3f}"
    return [
        str(row["point"]), str(row["metric"]), str(row["n_a"]), str(row["n_b"]),
        format_number(row["median_a"]), format_number(row["median_b"]),
        cell(row["ratio"]), interval, cell(row["p_value"], ".3g"), str(row["load_a"]), str(row["load_b"]),
    ]  # fmt: skip


#: The headings of `_cells`'s columns but the interval's (after "B / A"), which the page and
#: the terminal name each their own way, as they draw the verdict's (last).
_FIGURES = ("point", "metric", "n A", "n B", "median A", "median B", "B / A", "p", "load A", "load B")


def comparison_html(table: pd.DataFrame, baseline: str, run: str) -> str:
    """A comparison as an HTML section for a report's index page: headline figures first, rule stated."""
    import html

    head = (*_FIGURES[:7], "interval", *_FIGURES[7:], "verdict")
    later = ~table["metric"].map(is_headline).astype(bool)
    ordered = table.assign(_later=later).sort_values(["_later", "point"], kind="stable")
    rows = []
    for _, r in ordered.iterrows():
        verdict_class = {SLOWER: "failed", FASTER: "ok"}.get(r["verdict"], "")
        values = _cells(r)
        cells = "".join(f"<td>{html.escape(str(v))}</td>" for v in values)
        rows.append(f"<tr>{cells}<td class='{verdict_class}'>{html.escape(r['verdict'])}</td></tr>")
    header = "".join(f"<th>{h}</th>" for h in head)
    return (
        f"<h2>Compared with run {html.escape(baseline)}</h2>"
        f"<p class='meta'>A = {html.escape(baseline)}, B = {html.escape(run)}. "
        f"{html.escape(str(table.attrs.get('thresholds', '')))}</p>"
        f"<div class='scroll'><table><tr>{header}</tr>{''.join(rows)}</table></div>"
    )


def comparison_table(frame: pd.DataFrame, a: str, b: str) -> Any:
    """A comparison as a rich terminal table: the verdict last, where the eye lands.

    The interval and the verdict keep each cell on one line; print it with
    `workbench.output.print_table`, which cuts no cell at any terminal width. An untrusted
    verdict's reasons would push every other column into wrapping, so its cell says
    "untrusted [n]" and note n, under the table, says why and what the figures said.
    """
    from rich.table import Column, Table

    verdicts, notes = _verdict_cells(frame["verdict"].tolist())
    table = Table(
        *_FIGURES[:7],
        Column("95 % interval", no_wrap=True),
        *_FIGURES[7:],
        Column("verdict", no_wrap=True),
        title=f"{b} against {a}",
        caption="\n".join(notes) or None,
        caption_justify="left",
    )
    for (_, row), verdict in zip(frame.iterrows(), verdicts, strict=True):
        table.add_row(*_cells(row), verdict)
    return table


def _verdict_cells(verdicts: Sequence[str]) -> tuple[list[str], list[str]]:
    """Short verdict cells, and the numbered notes their untrusted ones point to (one per reason)."""
    cells, numbers = [], dict[str, int]()
    for verdict in verdicts:
        reason = verdict.removeprefix(f"{UNTRUSTED}: ")
        if reason == verdict:
            cells.append(verdict)
            continue
        number = numbers.setdefault(reason, len(numbers) + 1)
        cells.append(f"{UNTRUSTED} [{number}]")
    return cells, [f"[{n}] {reason}" for reason, n in numbers.items()]
