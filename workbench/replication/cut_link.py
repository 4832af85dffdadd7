"""A cut link: the flow stopped for a while under load, then resumed. Backlog, catch-up, rate.

Between data centres the link goes down; the source keeps taking records. When it comes
back, MirrorMaker has a backlog to copy while new records keep arriving, and the question
an operator asks is how long until b is current again. The run offers records open-loop on
a (as `replication_lag` does, both appends stamped by the brokers), and `before_s` into the
load stops every MirrorMaker worker the stack started (SIGSTOP: the processes freeze with
their connections open, as behind a dead link) for `cut_s` seconds, then lets them go on
(SIGCONT); the load goes on `after_s` more. Each record's two appends then say:

- the **backlog** at the resume: records appended on a by then and not yet on b;
- the **first copy** after the resume: how long MirrorMaker took to move again;
- **caught up**: when b appended the first record, of those appended on a after the
  resume, whose lag is back under the lag before the cut (twice its p99, at least
  100 ms); and the **catch-up rate**: the records b appended from the resume to then, per
  second, against the offered rate. The
  backlog clears at the catch-up rate minus the offered rate, so a flow whose catch-up
  rate barely exceeds the offered one takes long to recover.

A cut shorter than the Connect group's session timeout (10 s) only pauses the tasks; a
longer one also costs a rebalance of the workers' group on b when they come back.
Only workers the workbench started are stopped, and they are always let go on.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import BenchError
from workbench.replication.lag import check_ranges
from workbench.replication.load import Load, under_load
from workbench.stack import process

if TYPE_CHECKING:
    from workbench.stack import Stack
    from workbench.stack.state import ServiceRecord

__all__ = [
    "CATCH_UP_LIMIT_S",
    "CAUGHT_UP_FLOOR_MS",
    "CUT_DEFAULTS",
    "CutLinkRun",
    "UNAVAILABLE",
    "catch_up",
    "cut_link",
    "cut_link_run",
    "cut_link_unavailable",
    "own_workers",
]

#: The run's defaults: 3 s of load before the cut, a 5 s cut, 4 s of load after it.
CUT_DEFAULTS: dict[str, Any] = {"rate": 1_000.0, "before_s": 3.0, "cut_s": 5.0, "after_s": 4.0, "partitions": 3}
#: Seconds the run waits, after the load, for b to hold every record.
CATCH_UP_LIMIT_S = 120.0
#: The smallest lag counted as "caught up" (ms): a flow's normal lag on an idle stack is a few ms.
CAUGHT_UP_FLOOR_MS = 100.0
#: Why a stack's link is not cut: it runs no MirrorMaker worker the workbench started.
UNAVAILABLE = (
    "the workbench cuts only a link it started, and this stack runs no MirrorMaker worker of its own "
    "(a cluster profile's MirrorMaker is its operator's to stop)"
)


@dataclass(frozen=True)
class CutLinkRun:
    """A run's contract row; each record's appends (`seq`, `a_ms`, `b_ms`, `lag_ms`); and the
    cut's wall-clock window in epoch ms (`stopped_ms`, `resumed_ms`)."""

    row: dict[str, Any]
    records: pd.DataFrame
    stopped_ms: float
    resumed_ms: float


def cut_link_run(
    stack: Stack,
    *,
    rate: float = CUT_DEFAULTS["rate"],
    before_s: float = CUT_DEFAULTS["before_s"],
    cut_s: float = CUT_DEFAULTS["cut_s"],
    after_s: float = CUT_DEFAULTS["after_s"],
    partitions: int = CUT_DEFAULTS["partitions"],
    record_bytes: int = 100,
    topic_prefix: str = "wb-geo-cut",
) -> CutLinkRun:
    """Offer `rate` records/s on a for `before_s + cut_s + after_s`, the flow stopped for `cut_s` of it.

    Raises:
        BenchError: a parameter out of range, or a stack whose MirrorMaker the workbench did
            not start (it cuts only links it started). Records b lacks `CATCH_UP_LIMIT_S` after
            the load are counted as `missing` in the row.
    """
    _check(rate, before_s, cut_s, after_s, partitions, record_bytes)
    workers = own_workers(stack)
    if not workers:
        raise BenchError(UNAVAILABLE)
    cut = _Cut(workers, before_s, cut_s)
    with under_load(
        stack,
        topic_prefix=topic_prefix,
        partitions=partitions,
        rate=rate,
        seconds=before_s + cut_s + after_s,
        record_bytes=record_bytes,
        disruption=cut,
    ) as load:
        settle_s = load.settle(CATCH_UP_LIMIT_S)
        records = load.records()
    params = {"rate": rate, "before_s": before_s, "cut_s": cut_s, "after_s": after_s, "partitions": partitions}
    row = _row(load, params, records, cut, settle_s)
    return CutLinkRun(row, records, cut.stopped_ms, cut.resumed_ms)


def cut_link(stack: Stack, *, topic_prefix: str = "wb-geo-cut", **params: Any) -> dict[str, Any]:
    """One run's row (the registered experiment `cut_link`). See `cut_link_run`."""
    return cut_link_run(stack, topic_prefix=topic_prefix, **params).row


def catch_up(records: pd.DataFrame, stopped_ms: float, resumed_ms: float) -> dict[str, float]:
    """What a cut cost, from each record's appends (see the module's docstring); NaN where a
    figure cannot be read (no record after the resume, none before the cut)."""
    arrived = records.dropna(subset=["b_ms"])
    before = arrived.loc[arrived["a_ms"] < stopped_ms, "lag_ms"]
    before_p99 = float(np.percentile(before, 99)) if len(before) else float("nan")
    threshold = max(2 * before_p99 if len(before) else 0.0, CAUGHT_UP_FLOOR_MS)
    after = arrived[arrived["a_ms"] >= resumed_ms].sort_values("a_ms")
    current = after[after["lag_ms"] <= threshold]
    caught_ms = float(current["b_ms"].iloc[0]) if len(current) else float("nan")  # when b was current again
    copied_after = arrived.loc[arrived["b_ms"] >= resumed_ms, "b_ms"]
    first_copy_ms = float(copied_after.min()) if len(copied_after) else float("nan")
    in_catch_up = int(((arrived["b_ms"] >= resumed_ms) & (arrived["b_ms"] <= caught_ms)).sum())
    catch_up_s = (caught_ms - resumed_ms) / 1000
    return {
        "backlog": int(((records["a_ms"] <= resumed_ms) & ~(records["b_ms"] <= resumed_ms)).sum()),
        "lag_before_p99_ms": before_p99,
        "first_copy_s": (first_copy_ms - resumed_ms) / 1000,
        "catch_up_s": catch_up_s,
        "catch_up_msg_s": in_catch_up / catch_up_s if catch_up_s > 0 else float("nan"),
        "lag_max_ms": float(arrived["lag_ms"].max()) if len(arrived) else float("nan"),
    }


def _check(rate: float, before_s: float, cut_s: float, after_s: float, partitions: int, record_bytes: int) -> None:
    check_ranges(
        ("rate", rate, 1, 20_000),
        ("before_s", before_s, 0.5, 300),
        ("cut_s", cut_s, 0.5, 300),
        ("after_s", after_s, 0.5, 300),
        ("partitions", partitions, 1, 64),
        ("record_bytes", record_bytes, 10, 1_000_000),
        whole=("partitions", "record_bytes"),
    )


def cut_link_unavailable(stack: Stack) -> str | None:
    """Why this stack's link cannot be cut (one line), or None: only workers the workbench started are stopped."""
    return None if own_workers(stack) else UNAVAILABLE


def own_workers(stack: Stack) -> list[ServiceRecord]:
    """The stack's MirrorMaker workers that the workbench started and that run now (as the
    state file has them: a worker a kill restarted since `stack` was made has a new PID)."""
    workers = [r for r in stack.refreshed().services.values() if r.kind == "mirror-maker"]
    return [r for r in workers if process.is_ours(r.pid, r.create_time)]


class _Cut(threading.Thread):
    """Stops the workers `at_s` after it starts, for `for_s`; `resume` lets them go on in any case.

    Stopping and resuming hold one lock, and nothing is stopped once `resume` has run: a run
    that fails just as the cut begins cannot leave MirrorMaker frozen.
    """

    def __init__(self, workers: list[ServiceRecord], at_s: float, for_s: float) -> None:
        super().__init__(name="cut-link", daemon=True)
        self.workers, self.at_s, self.for_s = workers, at_s, for_s
        self.stopped_ms = self.resumed_ms = float("nan")
        self._resumed = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        if self._resumed.wait(self.at_s):
            return
        with self._lock:
            if self._resumed.is_set():
                return
            self._signal(signal.SIGSTOP)
            self.stopped_ms = time.time() * 1000
        self._resumed.wait(self.for_s)
        self.resume()

    def resume(self) -> None:
        with self._lock:
            if not self._resumed.is_set():
                # Read before the signal: a thread descheduled after it would date the resume
                # after copies the workers already made (stopped_ms is read after SIGSTOP, likewise).
                self.resumed_ms = time.time() * 1000
                self._signal(signal.SIGCONT)
                self._resumed.set()

    def end(self) -> None:
        """The run's way out (`load.Disruption`): let the workers go on, if the cut has not yet."""
        self.resume()

    def _signal(self, which: signal.Signals) -> None:
        for worker in self.workers:
            if process.is_ours(worker.pid, worker.create_time):
                os.kill(worker.pid, which)


def _row(load: Load, params: dict[str, Any], records: pd.DataFrame, cut: _Cut, settle_s: float) -> dict[str, Any]:
    return load.row(
        "cut_link",
        params,
        records,
        latency_of="append on a → append on b, the cut included",
        extra={
            **catch_up(records, cut.stopped_ms, cut.resumed_ms),
            "cut_measured_s": (cut.resumed_ms - cut.stopped_ms) / 1000,
            "workers_stopped": len(cut.workers),
            "pickup_s": load.pickup_s,
            "settle_s": settle_s,
            "slips": load.run.slips,
        },
    )
