"""Whether the stack's brokers are warm: their uptime, and whether the warm-up load ran on them.

A JVM broker is slower for its first seconds of work (see `workbench.bench.warmup`); a
result row carries these two facts (`measure.contract.result_row`) so a comparison can
tell a run on a cold broker from one on a warm broker. What warms a JVM is work done,
not time passed, so `broker_warmth` asks whether the warm-up load ran on the brokers
running now, and the uptime is only reported beside it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import TYPE_CHECKING, Literal

from workbench.stack.state import StackState, locked

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["Warmth", "broker_uptime_s", "broker_warmth", "mark_warm"]

Warmth = Literal["warm", "cold", "unknown"]


def broker_uptime_s(stack: Stack) -> float:
    """Seconds since the stack's newest broker process started (a restarted node is cold
    again); NaN where the workbench did not start the brokers: a cluster's start time is
    not in the Kafka protocol."""
    started = [r.create_time for r in stack.services.values() if r.kind == "broker"]
    return time.time() - max(started) if started else math.nan


def broker_warmth(stack: Stack) -> Warmth:
    """ "warm" when the warm-up load ran on every running broker; "cold" when it did not
    (`workbench up --no-warm-up`, a stack started from Python, a node restarted since);
    "unknown" on a cluster the workbench did not start."""
    brokers = [r for r in stack.services.values() if r.kind == "broker"]
    if not brokers:
        return "unknown"
    return "warm" if all(r.extra.get("warmed_up") for r in brokers) else "cold"


def mark_warm(stack: Stack, seconds: float) -> Stack:
    """Record in the state file that `seconds` of warm-up load ran on every broker now running.

    Usage: `stack = mark_warm(stack, warm_up(stack).seconds)`.
    """
    from workbench.stack import Stack

    run_dir = stack.profile.path(stack.profile.run_dir)
    with locked(run_dir):
        state = StackState.load(run_dir)
        if state is None:
            return stack
        for name, record in state.services.items():
            if record.kind == "broker":
                extra = {**record.extra, "warmed_up": True, "warm_up_s": round(seconds, 1)}
                state.services[name] = dataclasses.replace(record, extra=extra)
        state.save(run_dir)
    return Stack(stack.profile, state.services, stack.started_here)
