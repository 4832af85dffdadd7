"""A burst scenario's settings, checked before anything runs (`plan_burst`), and what
follows from them: the consumer's stated capacity, the burst's window, the rate schedule
and the time to clear that capacity promises (`BurstPlan`). `burst` runs a plan.

A plan that cannot show a backlog build and clear (a burst not above the capacity, a normal
rate not below it, a deadline shorter than the predicted time to clear) or that would pass a
bound (records, bytes, lag rows) is refused in one line before a topic is made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.bench.burst_consumers import CONSUMERS, SEQUENCE
from workbench.errors import BenchError
from workbench.measure.lag import INTERVAL_S, MAX_INTERVAL_S, MAX_ROWS, MIN_INTERVAL_S
from workbench.measure.latency import WARM_UP_S
from workbench.measure.schedule import Phase, RateSchedule

__all__ = ["BurstPlan", "MAX_BYTES", "MAX_DEADLINE_S", "MAX_MSG_S", "MAX_PHASE_S", "MAX_RECORDS", "plan_burst"]

#: The open-loop producer is one Python thread: offered rates above this are refused.
MAX_MSG_S = 100_000.0
#: Records one run may send (each is tracked in an 8-byte slot) and bytes it may write.
MAX_RECORDS = 2_000_000
MAX_BYTES = 1_000_000_000
#: Upper bounds of the phases' lengths (seconds).
MAX_PHASE_S = 600.0
MAX_DEADLINE_S = 3_600.0


@dataclass(frozen=True)
class BurstPlan:
    """A burst scenario's settings, checked (`plan_burst`), and what follows from them."""

    consumer: str
    normal_msg_s: float
    burst_msg_s: float
    lead_in_s: float
    burst_s: float
    clear_deadline_s: float
    warm_up_s: float
    process_ms: float
    max_offsets_per_trigger: int
    trigger_s: float
    partitions: int
    record_bytes: int
    interval_s: float

    @property
    def capacity_msg_s(self) -> float:
        """The most records per second the consumer can take (see `burst_consumers`)."""
        if self.consumer == "spark":
            return self.max_offsets_per_trigger / self.trigger_s
        return 1000.0 / self.process_ms

    @property
    def burst_window(self) -> tuple[float, float]:
        """(start, end) of the burst, in seconds of the run's clock."""
        return self.lead_in_s, self.lead_in_s + self.burst_s

    @property
    def predicted_clear_s(self) -> float:
        """Seconds to clear at the stated capacity: the backlog the burst leaves, over the
        capacity left over at the normal rate."""
        backlog = (self.burst_msg_s - self.capacity_msg_s) * self.burst_s
        return backlog / (self.capacity_msg_s - self.normal_msg_s)

    def schedule(self) -> RateSchedule:
        """Lead-in, burst, and the normal rate up to the deadline."""
        return RateSchedule(
            [
                Phase("lead-in", self.lead_in_s, self.normal_msg_s),
                Phase("burst", self.burst_s, self.burst_msg_s),
                Phase("after", self.clear_deadline_s, self.normal_msg_s),
            ]
        )

    def params(self) -> dict[str, Any]:
        """The row's parameters: every setting, None where the consumer does not use it."""
        spark = self.consumer == "spark"
        return {
            "consumer": self.consumer,
            "normal_msg_s": self.normal_msg_s,
            "burst_msg_s": self.burst_msg_s,
            "lead_in_s": self.lead_in_s,
            "burst_s": self.burst_s,
            "clear_deadline_s": self.clear_deadline_s,
            "warm_up_s": self.warm_up_s,
            "process_ms": None if spark else self.process_ms,
            "max_offsets_per_trigger": self.max_offsets_per_trigger if spark else None,
            "trigger_s": self.trigger_s if spark else None,
            "partitions": self.partitions,
            "record_bytes": self.record_bytes,
            "interval_s": self.interval_s,
        }


def plan_burst(
    *,
    consumer: str = "native",
    normal_msg_s: float = 200.0,
    burst_msg_s: float = 1_500.0,
    lead_in_s: float = 8.0,
    burst_s: float = 5.0,
    clear_deadline_s: float = 60.0,
    warm_up_s: float = WARM_UP_S,
    process_ms: float = 2.0,
    max_offsets_per_trigger: int = 500,
    trigger_s: float = 1.0,
    partitions: int = 4,
    record_bytes: int = 100,
    interval_s: float = INTERVAL_S,
) -> BurstPlan:
    """Check a burst scenario's settings and return its plan; nothing runs.

    Args:
        consumer: "native" (a consumer group member), "proxy" (a REST consumer instance) or
            "spark" (a micro-batch query; its connector is the profile's).
        normal_msg_s: the offered rate before and after the burst; below the capacity.
        burst_msg_s: the offered rate during the burst; above the capacity.
        lead_in_s, burst_s: how long the lead-in and the burst last.
        clear_deadline_s: how long after the burst the normal rate goes on, at most,
            waiting for the lag to clear.
        warm_up_s: lead-in readings before this are not part of the baseline.
        process_ms: per-record processing time of a native or REST consumer (capacity =
            1000 / process_ms records/s).
        max_offsets_per_trigger, trigger_s: Spark's rate limit and trigger interval
            (capacity = max_offsets_per_trigger / trigger_s records/s).
        partitions: of the fresh topic; the producer spreads records over them in turn.
        record_bytes: value size (at least 8: the sequence number travels in it).
        interval_s: seconds between lag readings.

    Raises:
        BenchError: a setting out of range, not a finite number, or a scenario that cannot
            show a backlog clearing (burst not above capacity, normal rate not below it,
            a deadline shorter than the predicted time to clear); one line each.

    Usage: `plan = plan_burst(consumer="spark", max_offsets_per_trigger=400, trigger_s=0.5)`.
    """
    if consumer not in CONSUMERS:
        raise BenchError(f"consumer must be one of {list(CONSUMERS)}, got {consumer!r}")
    _within("normal_msg_s", normal_msg_s, 0.0, MAX_MSG_S, low_open=True)
    _within("burst_msg_s", burst_msg_s, 0.0, MAX_MSG_S, low_open=True)
    _within("interval_s", interval_s, MIN_INTERVAL_S, MAX_INTERVAL_S)
    _within("lead_in_s", lead_in_s, 0.0, MAX_PHASE_S, low_open=True)
    _within("burst_s", burst_s, 0.0, MAX_PHASE_S, low_open=True)
    _within("clear_deadline_s", clear_deadline_s, 0.0, MAX_DEADLINE_S, low_open=True)
    _within("warm_up_s", warm_up_s, 0.0, MAX_PHASE_S)
    _within("process_ms", process_ms, 0.0, 1_000.0, low_open=True)
    _within("max_offsets_per_trigger", max_offsets_per_trigger, 1, 1_000_000, whole=True)
    _within("trigger_s", trigger_s, 0.1, 60.0)
    _within("partitions", partitions, 1, 64, whole=True)
    _within("record_bytes", record_bytes, SEQUENCE.size, 1_000_000, whole=True)
    plan = BurstPlan(
        consumer,
        float(normal_msg_s),
        float(burst_msg_s),
        float(lead_in_s),
        float(burst_s),
        float(clear_deadline_s),
        float(warm_up_s),
        float(process_ms),
        int(max_offsets_per_trigger),
        float(trigger_s),
        int(partitions),
        int(record_bytes),
        float(interval_s),
    )
    _check_shape(plan)
    return plan


def _within(name: str, value: Any, low: float, high: float, *, low_open: bool = False, whole: bool = False) -> None:
    """A finite number in range (an int where `whole`), or a one-line BenchError."""
    kinds = (int, np.integer) if whole else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(float(value)):
        wanted = "a whole number" if whole else "a finite number"
        raise BenchError(f"{name} must be {wanted}, got {value!r}")
    if value < low or (low_open and value == low) or value > high:
        bound = f"above {low:g}" if low_open else f"at least {low:g}"
        raise BenchError(f"{name} must be {bound} and at most {high:,g}, got {value:g}")


def _check_shape(plan: BurstPlan) -> None:
    """The scenario must be able to show a backlog build and clear, within the bounds."""
    capacity = plan.capacity_msg_s
    rule = (
        f"maxOffsetsPerTrigger / trigger_s = {plan.max_offsets_per_trigger} / {plan.trigger_s:g}"
        if plan.consumer == "spark"
        else f"1000 / process_ms = 1000 / {plan.process_ms:g}"
    )
    if plan.burst_msg_s <= capacity:
        raise BenchError(
            f"burst_msg_s ({plan.burst_msg_s:,g}) must be above the consumer's capacity ({capacity:,g} records/s = "
            f"{rule}), or no backlog builds"
        )
    if plan.normal_msg_s >= capacity:
        raise BenchError(
            f"normal_msg_s ({plan.normal_msg_s:,g}) must be below the consumer's capacity ({capacity:,g} "
            f"records/s = {rule}), or the backlog never clears"
        )
    readings = 2 * plan.interval_s
    if plan.burst_s < readings:
        raise BenchError(
            f"burst_s ({plan.burst_s:g}) must cover at least two lag readings (2 x interval_s = {readings:g} s)"
        )
    if plan.lead_in_s - plan.warm_up_s < readings:
        raise BenchError(
            f"lead_in_s ({plan.lead_in_s:g}) must exceed warm_up_s ({plan.warm_up_s:g}) by two lag readings "
            f"({readings:g} s): the baseline is read there"
        )
    if plan.predicted_clear_s > plan.clear_deadline_s:
        raise BenchError(
            f"at {capacity:,g} records/s the burst's backlog takes at least {plan.predicted_clear_s:,.1f} s to "
            f"clear at the normal rate; clear_deadline_s is {plan.clear_deadline_s:g}: raise it or shorten the burst"
        )
    records = plan.schedule().total
    if records > MAX_RECORDS or records * plan.record_bytes > MAX_BYTES:
        raise BenchError(
            f"the schedule could send {records:,} records ({records * plan.record_bytes / 1e6:,.0f} MB); the limit "
            f"is {MAX_RECORDS:,} records and {MAX_BYTES / 1e6:,.0f} MB: lower the rates or the durations"
        )
    rows = math.ceil(plan.schedule().seconds / plan.interval_s + 2) * plan.partitions
    if rows > MAX_ROWS:
        raise BenchError(
            f"{rows:,} lag rows (readings x partitions) would pass the sampler's cap of {MAX_ROWS:,}: "
            "raise interval_s, or shorten the run"
        )
