"""A MirrorMaker worker killed under load: how long the flow stops, and what is copied twice.

MirrorMaker's workers form a Kafka Connect cluster; a flow's source task runs on one of
them. When that process dies without a word (SIGKILL: a crashed host), nothing tells the
others at once. The Connect group on b notices when the worker's session times out (10 s,
Connect's `session.timeout.ms`), and the group's leader then waits
`scheduled.rebalance.max.delay.ms` for it to come back before it gives its tasks to the
survivors (five minutes by Connect's default; the embedded stack's
`mirror_plan.REBALANCE_DELAY_MS`). The task restarts on a survivor from the source
offsets its worker last committed (every `offset.flush.interval.ms`, 60 s by default),
so every record it copied after that commit is copied again: at least once, not once.

The run offers records open-loop on a (as `replication_lag` does, both appends stamped by
the brokers), `before_s` into the load kills the worker that runs the flow's source task
(only a worker the workbench started), and the load goes on `after_s` more. Each record's
two appends then say how long b received nothing (`silence`), when the task copied again
and when b was current again after that (`catch_up_s`, the rule of `cut_link.catch_up`),
and how many records b holds twice.
The killed worker is started again at the end, whatever happened.
"""

from __future__ import annotations

import functools
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import BenchError
from workbench.replication.cut_link import CATCH_UP_LIMIT_S, catch_up, own_workers
from workbench.replication.lag import check_ranges
from workbench.replication.load import Load, under_load
from workbench.stack import process

if TYPE_CHECKING:
    from workbench.stack import Stack
    from workbench.stack.state import ServiceRecord

__all__ = [
    "CONNECT_SESSION_TIMEOUT_S",
    "KILL_DEFAULTS",
    "SOURCE_TASK",
    "TimedKill",
    "VICTIM_WAIT_S",
    "WorkerKillRun",
    "exactly_once",
    "silence",
    "source_task_worker",
    "worker_kill",
    "worker_kill_run",
    "worker_kill_unavailable",
]

#: The run's defaults: 3 s of load before the kill, 25 s after it (the session timeout and
#: the rebalance delay must pass within it for the flow to move on while records still come).
KILL_DEFAULTS: dict[str, Any] = {"rate": 1_000.0, "before_s": 3.0, "after_s": 25.0, "partitions": 3}
#: Connect's worker `session.timeout.ms` (MirrorMaker leaves it at Connect's default), in seconds.
CONNECT_SESSION_TIMEOUT_S = 10.0
#: The flow's task whose worker is killed: MirrorMaker's copier of records.
SOURCE_TASK = "MirrorSourceConnector-0"
#: Seconds to wait for a worker to say it runs the source task (a rebalance may be under way).
VICTIM_WAIT_S = 90.0


@dataclass(frozen=True)
class WorkerKillRun:
    """A run's contract row; each record's appends (`seq`, `a_ms`, `b_ms`, `lag_ms`, `copies`);
    the kill's moment in epoch ms; and which worker ran the source task before and after."""

    row: dict[str, Any]
    records: pd.DataFrame
    killed_ms: float
    killed: str
    task_worker_after: str | None


def worker_kill_run(
    stack: Stack,
    *,
    rate: float = KILL_DEFAULTS["rate"],
    before_s: float = KILL_DEFAULTS["before_s"],
    after_s: float = KILL_DEFAULTS["after_s"],
    partitions: int = KILL_DEFAULTS["partitions"],
    record_bytes: int = 100,
    topic_prefix: str = "wb-geo-kill",
) -> WorkerKillRun:
    """Offer `rate` records/s on a for `before_s + after_s`; kill the source task's worker `before_s` in.

    Raises:
        BenchError: a parameter out of range, a stack without two MirrorMaker workers the
            workbench started, or a source task no worker of the stack runs. Records b lacks
            `CATCH_UP_LIMIT_S` after the load are counted as `missing` in the row.
    """
    _check(rate, before_s, after_s, partitions, record_bytes)
    reason = worker_kill_unavailable(stack)
    if reason is not None:
        raise BenchError(reason)
    kill = TimedKill([_victim(stack)], before_s, restart=functools.partial(_restart, stack))
    with under_load(
        stack,
        topic_prefix=topic_prefix,
        partitions=partitions,
        rate=rate,
        seconds=before_s + after_s,
        record_bytes=record_bytes,
        disruption=kill,
    ) as load:
        settle_s = load.settle(CATCH_UP_LIMIT_S)
        records = _every_copy(load)
        after = source_task_worker(stack)
    params = {"rate": rate, "before_s": before_s, "after_s": after_s, "partitions": partitions}
    row = _row(load, params, records, kill, after, settle_s)
    return WorkerKillRun(row, records, kill.killed_ms, kill.victims[0].name, after)


def worker_kill(stack: Stack, *, topic_prefix: str = "wb-geo-kill", **params: Any) -> dict[str, Any]:
    """One run's row (the registered experiment `worker_kill`). See `worker_kill_run`."""
    return worker_kill_run(stack, topic_prefix=topic_prefix, **params).row


def worker_kill_unavailable(stack: Stack) -> str | None:
    """Why no worker of this stack can be killed (one line), or None."""
    workers = own_workers(stack)
    if not workers:
        return (
            "the workbench kills only a MirrorMaker worker it started, and this stack runs none of its own "
            "(a cluster profile's MirrorMaker is its operator's)"
        )
    if len(workers) < 2:
        return f"a killed worker's tasks need another worker to move to; this stack runs {len(workers)}"
    return None


def source_task_worker(stack: Stack) -> str | None:
    """The worker (`host:port` of its REST listener) that last said it runs the flow's source task."""
    return _task_and_generation(stack)[0]


def _task_and_generation(stack: Stack) -> tuple[str | None, int]:
    from workbench.stack.mirror_status import flow_states, source_task

    return source_task(flow_states(stack.peer_config(), stack.profile.replication.source))


def silence(records: pd.DataFrame, killed_ms: float) -> dict[str, float]:
    """What a kill cost, from each record's appends: `silence_s`, the longest time from the kill
    on in which b appended no record (records the worker had already sent still land just after
    it); `copying_again_s`, from the kill to the end of that silence (the task running again
    elsewhere); then `cut_link.catch_up`'s figures from that moment (`backlog` then,
    `catch_up_s` to current again). NaN where nothing was copied after the kill."""
    copied = np.sort(records["b_ms"].dropna().to_numpy(dtype=float))
    stamps = np.concatenate([[killed_ms], copied[copied >= killed_ms]])
    if len(stamps) < 2 or not math.isfinite(killed_ms):
        nan = float("nan")
        return {"silence_s": nan, "copying_again_s": nan, **catch_up(records, killed_ms, nan)}
    longest = int(np.argmax(np.diff(stamps)))
    resumed_ms = float(stamps[longest + 1])
    found = catch_up(records, killed_ms, resumed_ms)
    del found["first_copy_s"]  # 0 by construction: the silence ends with a copy
    return {
        "silence_s": (resumed_ms - float(stamps[longest])) / 1000,
        "copying_again_s": (resumed_ms - killed_ms) / 1000,
        **found,
    }


def _check(rate: float, before_s: float, after_s: float, partitions: int, record_bytes: int) -> None:
    check_ranges(
        ("rate", rate, 1, 20_000),
        ("before_s", before_s, 0.5, 300),
        ("after_s", after_s, 1, 900),
        ("partitions", partitions, 1, 64),
        ("record_bytes", record_bytes, 10, 1_000_000),
        whole=("partitions", "record_bytes"),
    )


def _victim(stack: Stack, timeout_s: float = VICTIM_WAIT_S) -> ServiceRecord:
    """The worker the flow's source task runs on, once the workers' group is settled: the
    task's worker and the group's generation unchanged for `SETTLED_S` (a worker started
    again joins the group and takes tasks over a few seconds after it says it started;
    killing the task's worker meanwhile would kill one that is handing it over)."""
    from workbench.stack.mirror_status import SETTLED_S

    deadline = time.monotonic() + timeout_s
    seen, since = _task_and_generation(stack), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _task_and_generation(stack)
        if now != seen:
            seen, since = now, time.monotonic()
            continue
        worker = next((w for w in own_workers(stack) if w.address == now[0]), None)
        if worker is not None and time.monotonic() - since >= SETTLED_S:
            return worker
    raise BenchError(
        f"MirrorMaker's workers did not settle with {SOURCE_TASK} on one of this stack's workers within "
        f"{timeout_s:.0f} s (Connect's status names {seen[0]}); see `workbench status`"
    )


class TimedKill(threading.Thread):
    """SIGKILLs processes the workbench started `at_s` after it starts, unless cancelled first
    (a run that fails before); `killed_ms` is the moment, in epoch ms (NaN: not killed).
    `end` (the run's way out, `load.Disruption`) cancels it and has `restart` start the killed
    processes again, by name, once; `restart_s` is how long that took (0: none was killed)."""

    def __init__(
        self,
        victims: Sequence[ServiceRecord],
        at_s: float,
        *,
        restart: Callable[[list[str]], object] | None = None,
    ) -> None:
        super().__init__(name="timed-kill", daemon=True)
        self.victims, self.at_s = list(victims), at_s
        self.killed_ms = float("nan")
        self.restart_s = 0.0
        self._restart, self._restarted = restart, False
        self._cancelled = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        if self._cancelled.wait(self.at_s):
            return
        with self._lock:
            ours = [v for v in self.victims if process.is_ours(v.pid, v.create_time)]
            if not self._cancelled.is_set() and ours:
                for victim in ours:
                    os.kill(victim.pid, signal.SIGKILL)
                self.killed_ms = time.time() * 1000

    def cancel(self) -> None:
        with self._lock:
            self._cancelled.set()

    def end(self) -> None:
        self.cancel()
        if self.killed and self._restart is not None and not self._restarted:
            self._restarted = True  # first: a restart that fails is not tried again on the way out
            began = time.monotonic()
            self._restart([victim.name for victim in self.victims])
            self.restart_s = time.monotonic() - began

    @property
    def killed(self) -> bool:
        return math.isfinite(self.killed_ms)


def _rebalance_delay_s(stack: Stack) -> float:
    """`scheduled.rebalance.max.delay.ms` of the flow's workers, in seconds: the profile's, else the stack's."""
    from workbench.stack.mirror_plan import REBALANCE_DELAY_MS

    return float(_worker_setting(stack, "scheduled.rebalance.max.delay.ms", REBALANCE_DELAY_MS)) / 1000


def exactly_once(stack: Stack) -> bool:
    """Whether the flow's workers copy with exactly-once delivery (KIP-618): their
    `exactly.once.source.support`, which MirrorMaker leaves disabled unless the profile enables it."""
    return str(_worker_setting(stack, "exactly.once.source.support", "disabled")).lower() == "enabled"


def _worker_setting(stack: Stack, key: str, default: Any) -> Any:
    """A setting of the workers that write to the target: MirrorMaker builds a flow's worker
    from the target's settings (`b.key`); a top-level `key` is no worker's. Else Connect's default."""
    return stack.profile.replication.properties.get(f"{stack.profile.replication.target}.{key}", default)


def _every_copy(load: Load) -> pd.DataFrame:
    """Each record's appends, read again until b holds every one or `CATCH_UP_LIMIT_S` passed:
    b's count reaches the records offered early when some are there twice."""
    deadline = time.monotonic() + CATCH_UP_LIMIT_S
    while True:
        records = load.records()
        if records["b_ms"].notna().all() or time.monotonic() > deadline:
            return records
        time.sleep(1.0)


def _restart(stack: Stack, names: list[str]) -> None:
    """Start the killed worker again, so the stack is whole for what runs next."""
    from workbench.stack import restart_mirror_worker

    restart_mirror_worker(stack, names[0])


def _row(
    load: Load, params: dict[str, Any], records: pd.DataFrame, kill: TimedKill, after: str | None, settle_s: float
) -> dict[str, Any]:
    stack = load.stack
    return load.row(
        "worker_kill",
        params,
        records,
        latency_of="append on a → append on b, the kill included",
        extra={
            **silence(records, kill.killed_ms),
            "killed": kill.victims[0].name,
            "task_moved": after is not None and after != kill.victims[0].address,
            "session_timeout_s": CONNECT_SESSION_TIMEOUT_S,
            "rebalance_delay_s": _rebalance_delay_s(stack),
            "exactly_once": exactly_once(stack),
            "pickup_s": load.pickup_s,
            "settle_s": settle_s,
            "slips": load.run.slips,
        },
    )
