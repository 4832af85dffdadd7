"""An open-loop schedule: record i is due at a time fixed in advance, whatever came before.

A load generator that sends the next record when the previous one is done slows down
exactly when the system does, and then reports the latency of the few records it managed
to send ("coordinated omission"). Here record i is due at `i / rate` seconds after the
start; a sender that falls behind sends what is due at once, and every latency is taken
from the due time, so a stall shows up as the latency it causes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from workbench.errors import BenchError

__all__ = ["MAX_OFFERED_MSG_S", "OpenLoopSchedule"]

#: The highest offered rate a schedule takes: a Python sender cannot keep a finer one.
MAX_OFFERED_MSG_S = 200_000.0


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
        self.total = max(1, int(rate * seconds))
        self.interval_ns = 1e9 / rate
        #: Wall-clock nanoseconds at which record 0 is due (set by `start`).
        self.started_ns = 0
        self._started_perf_ns = 0

    def start(self) -> None:
        """Record 0 is due now."""
        self._started_perf_ns = time.perf_counter_ns()
        self.started_ns = time.time_ns()

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
