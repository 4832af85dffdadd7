"""A JVM broker's warm-up: how long it takes to reach steady speed, and the load that gets it there.

Apache Kafka runs on the JVM: for its first seconds of work it interprets, then compiles
the hot paths (JIT), fills the page cache and opens its first connections. Two identical
benchmarks run one after the other right after `workbench up` compare as "faster",
because the second ran on a warmer broker. What warms a JVM is work done, not time
passed: a broker that idled for a minute is as cold as a new one.

- `warm_up_curve` measures it: one experiment run back to back from a fresh start,
  each row stamped with the broker's uptime; `docs/brokers.md` shows the curves.
- `warm_up` is the load `workbench up` puts on an embedded stack before it reports ready
  (native produce and consume, and produce through the proxy), for the profile's
  `broker.warm_up_s` seconds, the time the curves took to flatten; the stack records that
  it ran.
- `warm_stack` runs it once on a cold stack and records it (`workbench.stack.warmth`);
  every result row carries the broker's uptime and warmth, so a comparison can tell a cold
  side from a warm one (`workbench.compare`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.stack import Stack
from workbench.stack.warmth import broker_uptime_s, broker_warmth, mark_warm

__all__ = ["WarmUp", "warm_stack", "warm_up", "warm_up_curve"]


#: What each warm-up step runs: small, so the load cycles through every path many times.
_STEPS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("native_produce", {"records": 50_000, "record_bytes": 100, "linger.ms": 5}),
    ("native_consume", {"records": 50_000, "record_bytes": 100}),
    ("proxy_produce", {"records": 20_000, "record_bytes": 100, "records_per_call": 500, "max_seconds": 2.0}),
)


@dataclass(frozen=True)
class WarmUp:
    """What `warm_up` did: seconds of load, experiment runs, and the records they moved."""

    seconds: float
    runs: int
    records: int


def warm_up_curve(
    stack: Stack, experiment: str = "native_produce", *, seconds: float = 90.0, **params: Any
) -> pd.DataFrame:
    """Run `experiment` back to back for `seconds`; one row a run, with `broker_uptime_s` at its start.

    Run it right after a fresh `workbench up --no-warm-up` to see the broker warm.

    Usage: `warm_up_curve(stack, "native_produce", seconds=90, records=100_000, **{"linger.ms": 5})`.
    """
    from workbench.bench.experiments import get_experiment

    run = get_experiment(experiment).run
    rows: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        uptime = broker_uptime_s(stack)
        rows.append({**run(stack, **params), "broker_uptime_s": uptime, "run_index": len(rows)})
    return pd.DataFrame(rows)


def warm_up(stack: Stack, seconds: float) -> WarmUp:
    """Put `seconds` of load on the stack's broker (and proxy, if it has one), cycling through
    native produce, native consume and proxy produce; nothing is recorded.

    Usage: `warm_up(stack)` right after the brokers start (`workbench up` does it).
    """
    from workbench.bench.experiments import get_experiment

    steps = [(name, params) for name, params in _STEPS if name != "proxy_produce" or stack.proxy_urls]
    started = time.monotonic()
    runs = records = 0
    while time.monotonic() - started < seconds:
        name, params = steps[runs % len(steps)]
        row = get_experiment(name).run(stack, **params)
        runs += 1
        records += int(row["records"]) if row["records"] == row["records"] else 0
    return WarmUp(time.monotonic() - started, runs, records)


def warm_stack(stack: Stack, seconds: float | None = None) -> Stack:
    """Warm an embedded stack's brokers once (`warm_up`, for `seconds`, else the profile's
    `broker.warm_up_s`) and record it; a warm stack, a cluster the workbench did not start,
    or a profile whose `warm_up_s` is 0 is returned as it is.

    Usage: `stack = warm_stack(up())` (`workbench up`, `demo`, `report` and `lab` do it).
    """
    seconds = stack.profile.broker.warm_up_s if seconds is None else seconds
    if broker_warmth(stack) != "cold" or seconds <= 0:
        return stack
    done = warm_up(stack, seconds)
    return mark_warm(stack, done.seconds)
