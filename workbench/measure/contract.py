"""The one result row every registered experiment returns, whatever it measures.

An experiment of `bench`, `topics` or `streaming` gives one row per run of a point: its
parameters as columns (named in `params`), then the standard metrics in one vocabulary,
then its own extra measures, then the run facts. `sweep`, `workbench bench`, `workbench
compare` and the reports read these names, so a new experiment is comparable and
plottable the day it is registered.

Standard metrics (a row has every one of them):

- throughput: `records`, `bytes` (payload), `seconds`, `msg_s`, `mb_s`;
- latency: `latency_of` (what was timed), `latency_p50_ms`, `latency_p95_ms`,
  `latency_p99_ms`, `latency_max_ms`;
- CPU seconds by process: `client_cpu_s` (the load generator, this Python process),
  `broker_cpu_s`, `proxy_cpu_s`, `balancer_cpu_s`;
- run facts: `experiment`, `params`, `run_id`, `recorded_at`, `profile`, ... (see
  `workbench.results.run_metadata`), and the broker's `broker_uptime_s` when the run
  started and `broker_warmth` (`broker_facts`).

"Not measured" is NaN, never 0.0 and never None: 0 msg/s is a measurement (nothing got
through), and a comparison or a plot must not mistake a missing figure for one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.measure.latency import LATENCY_COLUMNS, latency_summary
from workbench.results import RUN_FACTS, run_metadata
from workbench.stack import Stack
from workbench.stack.warmth import broker_uptime_s, broker_warmth

__all__ = [
    "CPU_COLUMNS",
    "DESCRIPTIVE",
    "NOT_MEASURED",
    "RUN_FACTS",
    "STANDARD_METRICS",
    "THROUGHPUT_COLUMNS",
    "broker_facts",
    "contract_problems",
    "is_measured",
    "result_row",
]

#: The value of every metric that was not measured.
NOT_MEASURED = float("nan")

THROUGHPUT_COLUMNS = ("records", "bytes", "seconds", "msg_s", "mb_s")
#: CPU seconds by process; a role without processes on this profile is NaN.
CPU_COLUMNS = ("client_cpu_s", "broker_cpu_s", "proxy_cpu_s", "balancer_cpu_s")
STANDARD_METRICS = (*THROUGHPUT_COLUMNS, *LATENCY_COLUMNS, *CPU_COLUMNS)
#: Text columns that say what a row is: its experiment, its parameters' names, what its latency timed.
DESCRIPTIVE = ("experiment", "params", "latency_of")


def is_measured(value: Any) -> bool:
    """False for NaN (and None, which a row must not carry but old rows may)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _rate(amount: float, seconds: float) -> float:
    return amount / seconds if is_measured(amount) and is_measured(seconds) and seconds > 0 else NOT_MEASURED


def result_row(
    stack: Stack,
    *,
    experiment: str,
    params: Mapping[str, Any],
    records: float = NOT_MEASURED,
    payload_bytes: float = NOT_MEASURED,
    seconds: float = NOT_MEASURED,
    latencies: Sequence[float] | np.ndarray | None = None,
    latency_of: str = "",
    resources: Mapping[str, float] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One row of the contract: parameters as columns, standard metrics, extras, run facts.

    Args:
        params: the values that identify the point (they are also listed in `params`, so
            `compare` and `spread` know what to group by).
        records, payload_bytes, seconds: what went through and how long it took; `msg_s`
            and `mb_s` are derived from them. Leave out what the experiment does not measure.
        latencies: samples in seconds (summarised as percentiles in ms), or None.
        latency_of: what one latency sample is (`"send → ack"`, `"read call"`).
        resources: `ResourceMonitor.columns()`, or None when CPU was not measured.
        extra: the experiment's own measures; None values become NaN.
    """
    row: dict[str, Any] = {
        "experiment": experiment,
        **dict(params),
        "params": ",".join(params),
        "records": records,
        "bytes": payload_bytes,
        "seconds": seconds,
        "msg_s": _rate(records, seconds),
        "mb_s": _rate(payload_bytes / 1e6 if is_measured(payload_bytes) else NOT_MEASURED, seconds),
        "latency_of": latency_of if latencies is not None else "",
        **latency_summary([] if latencies is None else latencies),
        **dict.fromkeys(CPU_COLUMNS, NOT_MEASURED),
        **dict(resources or {}),
        **{k: NOT_MEASURED if v is None else v for k, v in (extra or {}).items()},
        **broker_facts(stack, seconds),
        **run_metadata(stack.profile),
    }
    return row


def broker_facts(stack: Stack, seconds: float = NOT_MEASURED) -> dict[str, Any]:
    """`broker_uptime_s` when the run started (NaN on a cluster the workbench did not start)
    and `broker_warmth` ("warm", "cold", "unknown"): what `compare` needs to tell a run on a
    cold JVM broker from one on a warm one."""
    uptime = broker_uptime_s(stack)
    return {
        "broker_uptime_s": uptime - seconds if is_measured(seconds) and is_measured(uptime) else uptime,
        "broker_warmth": broker_warmth(stack),
    }


def contract_problems(row: Mapping[str, Any]) -> list[str]:
    """What keeps a row from being a contract row (empty when it is one).

    Checked: every standard metric and run fact present, `params` naming columns the
    row has, no None outside the parameters, numbers where numbers belong.
    """
    problems = [f"missing column {name!r}" for name in (*STANDARD_METRICS, *DESCRIPTIVE, *RUN_FACTS) if name not in row]
    listed = [n for n in str(row.get("params") or "").split(",") if n]
    problems += [f"parameter {name!r} listed in params but not a column" for name in listed if name not in row]
    # A parameter may be None (a setting left at its default); a measure may not.
    problems += [
        f"{name!r} is None; 'not measured' is NaN"
        for name, value in row.items()
        if value is None and name not in listed
    ]
    for name in STANDARD_METRICS:
        value = row.get(name)
        if value is not None and not isinstance(value, int | float | np.integer | np.floating):
            problems.append(f"{name!r} is {type(value).__name__}, not a number")
    return problems
