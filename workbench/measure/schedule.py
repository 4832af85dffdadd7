"""An open-loop schedule: when each record is due, at an offered rate that may change by phase.

A load generator that sends the next record only when the previous one is done slows down
exactly when the system does ("coordinated omission"). On a schedule, record `i` is due at a
time fixed in advance by the offered rates, whatever happened before; a producer sends what
is due at every tick, and a record sent more than `SLIP_S` after it was due is a **schedule
slip**: the load generator, not the system under test, fell behind (k6 calls them dropped
iterations). A row reports its slips beside every figure measured under the schedule.

The rates are phases, each a rate held for some seconds (a lead-in, a burst, a recovery):
record `i` is due when the records offered so far, the integral of the rate, reach `i`.
A constant rate is one phase. `run_open_loop` drives any sender through a schedule until it
ends or the caller says stop, sending what is due every tick; `OpenLoopSchedule` hands out
records one at a time (or in batches) exactly at their turn, for a measurement in which a
tick's wait would be part of every record's latency (the latency waterfall).
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from workbench.errors import BenchError
from workbench.measure.latency import SLIP_S
from workbench.measure.timeline import Timeline

__all__ = [
    "MAX_OFFERED_MSG_S",
    "MAX_READINGS",
    "OpenLoopRun",
    "OpenLoopSchedule",
    "Phase",
    "RateSchedule",
    "SLIP_S",
    "TICK_S",
    "run_open_loop",
]

#: A producer tick: the records due are sent every this many seconds.
TICK_S = 0.005
#: The highest offered rate `OpenLoopSchedule` takes: a Python sender cannot keep a finer one.
MAX_OFFERED_MSG_S = 200_000.0
#: Readings of (seconds, records sent) a run keeps; later ones are counted, not kept.
MAX_READINGS = 100_000


@dataclass(frozen=True)
class Phase:
    """`msg_s` records per second offered for `seconds`, under a name a figure can show."""

    name: str
    seconds: float
    msg_s: float


class RateSchedule:
    """Phases one after another from t = 0; says how many records are due at any time.

    Usage:
        schedule = RateSchedule([Phase("lead-in", 5, 200), Phase("burst", 3, 2_000), Phase("after", 60, 200)])
        schedule.due(5.5)      # records due in the first 5.5 s: 1,000 + 1,000 + 1
        schedule.window("burst")   # (5.0, 8.0)
    """

    def __init__(self, phases: Sequence[Phase]) -> None:
        if not phases:
            raise ValueError("a schedule needs at least one phase")
        for phase in phases:
            if not (math.isfinite(phase.seconds) and phase.seconds > 0):
                raise ValueError(f"phase {phase.name!r}: seconds must be positive, got {phase.seconds}")
            if not (math.isfinite(phase.msg_s) and phase.msg_s > 0):
                raise ValueError(f"phase {phase.name!r}: msg_s must be positive, got {phase.msg_s}")
        self.phases = tuple(phases)
        #: When each phase starts, and the records offered before it (the rate's integral).
        self._starts = [0.0]
        self._offered = [0.0]
        for phase in self.phases:
            self._starts.append(self._starts[-1] + phase.seconds)
            self._offered.append(self._offered[-1] + phase.seconds * phase.msg_s)

    @property
    def seconds(self) -> float:
        """When the last phase ends."""
        return self._starts[-1]

    @property
    def total(self) -> int:
        """Records due over the whole schedule: those due before its end."""
        return math.ceil(self._offered[-1] - 1e-9)

    def window(self, name: str) -> tuple[float, float]:
        """(start, end) of the first phase called `name`, in seconds from t = 0."""
        for index, phase in enumerate(self.phases):
            if phase.name == name:
                return self._starts[index], self._starts[index + 1]
        raise KeyError(f"no phase {name!r}; phases: {[p.name for p in self.phases]}")

    def rate_at(self, t: float) -> float:
        """The offered rate at `t` (0 before the start and after the end)."""
        if t < 0 or t >= self.seconds:
            return 0.0
        return self.phases[bisect.bisect_right(self._starts, t) - 1].msg_s

    def offered(self, t: float) -> float:
        """Records offered from 0 to `t`: the integral of the rate (a real number)."""
        if t <= 0:
            return 0.0
        if t >= self.seconds:
            return self._offered[-1]
        index = bisect.bisect_right(self._starts, t) - 1
        return self._offered[index] + (t - self._starts[index]) * self.phases[index].msg_s

    def due(self, t: float) -> int:
        """Records due by `t`: record `i` is due once `offered(t) >= i` (record 0 at t = 0)."""
        if t < 0:
            return 0
        return min(self.total, math.floor(self.offered(t) + 1e-9) + 1)

    def due_at(self, index: int) -> float:
        """When record `index` is due, in seconds from t = 0 (the inverse of `due`)."""
        if not 0 <= index < self.total:
            raise IndexError(f"record {index} is not in this schedule of {self.total}")
        phase = bisect.bisect_right(self._offered, index) - 1
        phase = min(phase, len(self.phases) - 1)
        return self._starts[phase] + (index - self._offered[phase]) / self.phases[phase].msg_s

    def due_times(self, indexes: np.ndarray) -> np.ndarray:
        """`due_at` of many records at once (the offered count is piecewise linear in time,
        so its inverse is an interpolation between the phases' boundaries)."""
        times: np.ndarray = np.interp(np.asarray(indexes, dtype=float), self._offered, self._starts)
        return times

    def mean_rate(self, t0: float, t1: float) -> float:
        """The offered rate averaged over [t0, t1] (NaN when no time passes)."""
        return (self.offered(t1) - self.offered(t0)) / (t1 - t0) if t1 > t0 else math.nan

    def frame(self, until: float | None = None) -> pd.DataFrame:
        """The offered rate as a step line for a figure: `t`, `offered_msg_s` at each phase's
        start and end, cut at `until` (when a run stopped before the schedule's end)."""
        end = self.seconds if until is None else min(until, self.seconds)
        rows: list[tuple[float, float]] = []
        for index, phase in enumerate(self.phases):
            start, stop = self._starts[index], min(self._starts[index + 1], end)
            if start >= end:
                break
            rows += [(start, phase.msg_s), (stop, phase.msg_s)]
        return pd.DataFrame(rows, columns=["t", "offered_msg_s"])


@dataclass
class OpenLoopRun:
    """How a schedule went: records handed to the sender, slips, and (seconds, sent) readings."""

    sent: int = 0
    slips: int = 0
    #: Seconds from the schedule's t = 0 to when the run stopped sending.
    seconds: float = math.nan
    #: (seconds, records sent so far) every `reading_every_s`, at most `MAX_READINGS` of them.
    readings: Timeline = field(default_factory=list)
    #: Readings not kept because `MAX_READINGS` were.
    readings_dropped: int = 0


def run_open_loop(
    schedule: RateSchedule,
    send: Callable[[int, int], None],
    *,
    started: float,
    stop: Callable[[float], bool] | None = None,
    reading_every_s: float = 0.25,
    tick_s: float = TICK_S,
    slip_s: float = SLIP_S,
) -> OpenLoopRun:
    """Call `send(first, upto)` with the records due (indexes `first` to `upto - 1`) every tick.

    Args:
        schedule: when each record is due.
        send: hands records over (a producer's `produce` calls); it must not wait for them.
        started: the schedule's t = 0, a `time.perf_counter()` value (one clock with the
            caller's other series).
        stop: called every tick with the seconds since `started`; True ends the run early
            (a backlog cleared, a consumer failed). It must be cheap.
        reading_every_s: how often a (seconds, sent) reading is kept, for the achieved rate.
        tick_s: how often due records are sent.
        slip_s: a record sent more than this after it was due counts as a slip.

    Returns:
        Records sent, slips, when the run stopped, and the readings.

    Usage: `run = run_open_loop(schedule, lambda a, b: produce(range(a, b)), started=time.perf_counter())`.
    """
    run = OpenLoopRun(readings=[(0.0, 0)])
    next_reading = reading_every_s
    total = schedule.total
    while run.sent < total:
        now = time.perf_counter() - started
        if stop is not None and stop(now):
            break
        due = schedule.due(now)
        if due > run.sent:
            # Records whose due time is more than slip_s ago are sent late by more than that.
            run.slips += max(0, schedule.due(now - slip_s) - run.sent)
            send(run.sent, due)
            run.sent = due
        if now >= next_reading:
            _keep(run, (now, run.sent))
            next_reading = now + reading_every_s
        time.sleep(tick_s)
    run.seconds = time.perf_counter() - started
    _keep(run, (run.seconds, run.sent))
    return run


def _keep(run: OpenLoopRun, reading: tuple[float, int]) -> None:
    if len(run.readings) < MAX_READINGS:
        run.readings.append(reading)
    else:
        run.readings_dropped += 1


class OpenLoopSchedule:
    """`total` records at `rate` per second from `start()`: their due times on the wall clock.

    Due times are wall-clock nanoseconds (`time.time_ns`), the clock the broker stamps a
    log-append time with and every process on the machine shares; waiting is done on the
    monotonic clock, so a wall-clock step during a run moves no record's turn.

    Usage:
        schedule = OpenLoopSchedule(rate=1_000, seconds=10)
        for due in schedule.batches(max_batch=500):
            send(records(due))   # due: a range of sequence numbers, all due now
    """

    def __init__(self, rate: float, seconds: float) -> None:
        if not 0 < rate <= MAX_OFFERED_MSG_S:
            raise BenchError(f"offered rate must be above 0 and at most {MAX_OFFERED_MSG_S:,.0f}/s, got {rate}")
        if not 0 < seconds <= 3600:
            raise BenchError(f"offered seconds must be above 0 and at most 3,600, got {seconds}")
        self.rate, self.seconds = float(rate), float(seconds)
        #: The same schedule as one phase (its due times, for a figure or a series).
        self.phases = RateSchedule([Phase("steady", self.seconds, self.rate)])
        self.total = max(1, int(rate * seconds))
        self.interval_ns = 1e9 / rate
        #: Wall-clock nanoseconds at which record 0 is due (set by `start`).
        self.started_ns = 0
        self._started_perf_ns = 0

    def start(self) -> None:
        """Record 0 is due now.

        The wall clock is read before the monotonic one that times the turns: a pause between
        the two reads (a busy machine takes the thread away for milliseconds) then starts the
        turns later than the wall-clock due times, so a record handed out on its turn is never
        stamped as sent before it was due. Read the other way round, such a pause put records
        sent exactly on time up to the pause's length before their due time, and the
        waterfall counted them as disordered.
        """
        self.started_ns = time.time_ns()
        self._started_perf_ns = time.perf_counter_ns()

    def due_ns(self, seq: int) -> int:
        """Record `seq`'s due time, wall-clock nanoseconds."""
        return self.started_ns + int(seq * self.interval_ns)

    def batches(self, max_batch: int = 1, stop: Callable[[], bool] | None = None) -> Iterator[range]:
        """Ranges of the records due now, at most `max_batch` each, until all were handed out.

        Waits for the next record's turn when none is due; hands out at once what is overdue
        (the wait the sender caused is then part of those records' latency). Starts the
        schedule if `start` was not called. `stop` ends it early (a reader that failed).
        """
        if not self._started_perf_ns:
            self.start()
        seq = 0
        while seq < self.total and not (stop is not None and stop()):
            elapsed = time.perf_counter_ns() - self._started_perf_ns
            due = min(self.total, int(elapsed / self.interval_ns) + 1)
            if due <= seq:
                time.sleep(max(0.0, (self._started_perf_ns + seq * self.interval_ns - time.perf_counter_ns()) / 1e9))
                continue
            upto = min(due, seq + max(1, max_batch))
            yield range(seq, upto)
            seq = upto
