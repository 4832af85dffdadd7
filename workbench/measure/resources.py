"""CPU seconds and peak memory of the stack's processes while a load runs.

The question behind every tuning choice is also "what does it cost": a proxy that is
twice as fast but burns three times the CPU is not a free win. The pids come from the
stack's service records; on a cluster profile there are none and the columns are NaN.
"""

from __future__ import annotations

import gc
import os
import time
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import psutil

from workbench.measure.sampling import Sampler
from workbench.stack import ServiceRecord

__all__ = [
    "CHILDREN_EVERY_S",
    "ROLES",
    "ResourceMonitor",
    "SPARK_ROLES",
    "cpu_per_mb",
    "cpu_seconds",
    "freeze_startup_objects",
    "role_of",
    "rss_bytes",
]

#: Roles the result columns are named after; several processes of a role are summed.
ROLES = ("broker", "proxy", "balancer")

#: Spark's own processes, measured when a monitor is asked to (`ResourceMonitor(spark=True)`):
#: its JVMs (driver, executors, a standalone master and workers) and its Python workers.
SPARK_ROLES = ("spark_jvm", "spark_python")

#: How often the memory sampler looks again for a service's child processes (a proxy's
#: workers, nginx's). Finding children reads every process's stat file on the machine,
#: reading one's memory a single file: looking at every 0.1 s sample cost 2.2 ms of CPU a
#: sample with one stack up (2 % of a core, counted as the client's own CPU), 0.07 ms with this.
CHILDREN_EVERY_S = 1.0


def cpu_seconds(process: psutil.Process | int, *, descendants: bool = False) -> float:
    """CPU seconds (user + system) a process has used so far, by PID or `psutil.Process`.

    The one CPU reading of the bench: a measurement is the difference of two readings.
    With `descendants`, the live child processes are added (a proxy's workers, nginx's);
    without, only the process itself, for a client whose children are measured apart. A
    process that has gone counts 0: a dead service is reported by the stack, not here.
    """
    total = 0.0
    for member in _members(process, descendants):
        try:
            times = member.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def rss_bytes(process: psutil.Process | int, *, descendants: bool = True) -> int:
    """Resident memory of a process now, by PID or `psutil.Process`, its live children added
    unless `descendants` is off; 0 for a process that has gone."""
    return _rss(_members(process, descendants))


def freeze_startup_objects() -> None:
    """Take every object alive now out of the garbage collector's future passes (`gc.freeze`).

    A benchmark point collects garbage in its caller's thread three times (see
    `ResourceMonitor`), and a full collection walks every object the process tracks:
    measured, 46 ms in a kernel that has imported pandas, plotly and the workbench, and
    100 ms in a test worker after collection. Once what a process imported at start-up is
    frozen, those passes walk only what came later. For a process that has finished
    importing what it will use (`notebook_setup` calls it; the REST proxy does the same).
    """
    gc.collect()
    gc.freeze()


def role_of(kind: str, name: str = "") -> str | None:
    """The resource role of a service record's kind (`broker`, `proxy`, `balancer`), if any."""
    label = f"{kind} {name}".lower()
    if "broker" in label:
        return "broker"
    if "nginx" in label or "balancer" in label:
        return "balancer"
    if "proxy" in label or "rest" in label:
        return "proxy"
    return None


class ResourceMonitor(Sampler):
    """Measures CPU seconds and peak RSS of the stack's processes during a `with` block.

    CPU is the difference of `cpu_seconds` (descendants included) between entry and
    exit; RSS is sampled by a background thread, because a peak is only seen
    while it happens.

    Usage:
        with ResourceMonitor(stack.services) as monitor:
            run_load()
        row.update(monitor.columns())
    """

    def __init__(
        self, services: Mapping[str, ServiceRecord] | None, *, interval: float = 0.1, spark: bool = False
    ) -> None:
        super().__init__(interval)
        self._spark_roots = _spark_roots(services) if spark else []
        self._spark_start: dict[str, float] = {}
        self._spark_cpu: dict[str, float] = {}
        self._processes: dict[str, list[psutil.Process]] = defaultdict(list)
        for name, record in (services or {}).items():
            role = role_of(record.kind, name)
            if role is None:
                continue
            try:
                self._processes[role].append(psutil.Process(record.pid))
            except psutil.Error:
                continue  # a service that died is reported by the stack, not here
        self._cpu_start: dict[str, list[float]] = {}
        self._cpu: dict[str, list[float]] = {}
        self._peak: dict[str, float] = defaultdict(float)
        self._client = psutil.Process()
        self._client_start = 0.0
        self._client_cpu = 0.0
        self._members: dict[str, list[psutil.Process]] = {}
        self._members_at = float("-inf")

    def _first(self) -> None:
        # Collect garbage here, in the caller's thread: Kafka clients caught in reference
        # cycles must not be destroyed by a collection that happens to run in the sampling
        # thread (confluent-kafka-python #1761: segfaults on GC in another thread).
        gc.collect()
        self._cpu_start = self._role_cpu()
        self._spark_start = _spark_cpu(self._spark_roots)
        self._client_start = cpu_seconds(self._client)
        self._read()

    def _join(self) -> None:
        # The client's CPU first: the collection in `_last` is bookkeeping, not load, and on a
        # short run it would make the client look busier than the machine has cores.
        self._client_cpu = cpu_seconds(self._client) - self._client_start
        self._spark_cpu = {
            role: now - self._spark_start.get(role, 0.0) for role, now in _spark_cpu(self._spark_roots).items()
        }
        super()._join()

    def _last(self) -> None:
        gc.collect()
        self._read()

    def _close(self) -> None:
        self._cpu = {
            role: [now - start for now, start in zip(readings, self._cpu_start[role], strict=True)]
            for role, readings in self._role_cpu().items()
        }

    def columns(self) -> dict[str, float]:
        """Per role: `<role>_cpu_s` (all its processes), `<role>_cpu_s_max` (the busiest one),
        `<role>_rss_peak_mb`, `<role>_processes`; `client_cpu_s` (this process); and, when
        asked for, `spark_jvm_cpu_s` and `spark_python_cpu_s`."""
        nan = float("nan")
        row: dict[str, float] = {"client_cpu_s": self._client_cpu}
        if self._spark_roots:
            row.update({f"{role}_cpu_s": self._spark_cpu.get(role, nan) for role in SPARK_ROLES})
        for role in ROLES:
            each = self._cpu.get(role, [])
            row[f"{role}_processes"] = len(self._processes.get(role, []))
            row[f"{role}_cpu_s"] = sum(each) if each else nan
            row[f"{role}_cpu_s_max"] = max(each) if each else nan
            row[f"{role}_rss_peak_mb"] = self._peak[role] / 1e6 if role in self._processes else nan
        return row

    def _role_cpu(self) -> dict[str, list[float]]:
        return {role: [cpu_seconds(p, descendants=True) for p in procs] for role, procs in self._processes.items()}

    def _read(self) -> None:
        if time.monotonic() - self._members_at >= CHILDREN_EVERY_S:
            self._members = {
                role: [m for p in procs for m in _with_children(p)] for role, procs in self._processes.items()
            }
            self._members_at = time.monotonic()
        for role, members in self._members.items():
            self._peak[role] = max(self._peak[role], _rss(members))


def cpu_per_mb(rows: Mapping[str, Mapping[str, Any]]) -> Any:
    """Where the CPU of each measured path went, in ms per MB of payload: a tidy frame.

    Args:
        rows: a label per path (e.g. "native producer") and the result row measured for it.

    Returns:
        A DataFrame with `path`, `process` (broker, proxy, balancer, client), `cpu_s`,
        `ms_per_mb` and `mb_s`, one line per process that was measured; the client is
        the load generator (the producer itself on the native path).

    Usage: `cpu_per_mb({"native": native_row, "proxy": proxy_row})`.
    """
    import pandas as pd

    lines = []
    for path, row in rows.items():
        megabytes = row["bytes"] / 1e6
        for process in (*ROLES, "client"):
            seconds = row.get(f"{process}_cpu_s")
            if seconds is None or seconds != seconds or not megabytes:  # NaN: not measured here
                continue
            lines.append(
                {
                    "path": path,
                    "process": process,
                    "cpu_s": seconds,
                    "ms_per_mb": seconds / megabytes * 1000,
                    "mb_s": row["mb_s"],
                }
            )
    return pd.DataFrame(lines, columns=["path", "process", "cpu_s", "ms_per_mb", "mb_s"])


def _spark_roots(services: Mapping[str, ServiceRecord] | None) -> list[psutil.Process]:
    """Where Spark's processes hang: this process (a local session's JVM is its child) and a
    standalone cluster's master and workers (their executors are their children)."""
    roots = [psutil.Process()]
    for record in (services or {}).values():
        if record.kind.startswith("spark"):
            try:
                roots.append(psutil.Process(record.pid))
            except psutil.Error:
                continue
    return roots


def _spark_cpu(roots: list[psutil.Process]) -> dict[str, float]:
    """CPU seconds so far of Spark's JVMs and Python workers under `roots`, by role.

    Processes that ended still count, through their parent's reaped-children times: a
    Python worker is reaped by its daemon, and a query's Python runner (and a daemon) by
    the JVM, so a JVM's reaped children are Python's, not the JVM's.
    """
    totals = dict.fromkeys(SPARK_ROLES, 0.0)
    # Each process once: a standalone cluster the caller started is both a root and among
    # the caller's descendants. The caller itself is a root, never a member: its CPU is the client's.
    members = {member.pid: member for root in roots for member in _with_children(root)}
    members.pop(os.getpid(), None)
    for member in members.values():
        try:
            role = _spark_role(member)
            if role is None:
                continue
            times = member.cpu_times()
        except psutil.Error:
            continue
        totals[role] += times.user + times.system
        totals["spark_python"] += times.children_user + times.children_system
    return totals


def _spark_role(process: psutil.Process) -> str | None:
    if process.name() == "java":
        return "spark_jvm"
    return "spark_python" if "pyspark" in " ".join(process.cmdline()) else None


def _members(process: psutil.Process | int, descendants: bool) -> list[psutil.Process]:
    """The process (by PID or itself) and, with `descendants`, its live children; none when it has gone."""
    try:
        proc = process if isinstance(process, psutil.Process) else psutil.Process(process)
    except psutil.Error:
        return []
    return _with_children(proc) if descendants else [proc]


def _rss(members: list[psutil.Process]) -> int:
    """Resident bytes of the processes still alive among `members`."""
    total = 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            continue
    return total


def _with_children(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return [proc]
