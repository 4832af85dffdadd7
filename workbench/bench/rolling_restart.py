"""Proxies restarted one at a time under load: what a group of consumer instances sees.

The REST proxy deployment guide calls a rolling restart of the proxies a safe
zero-downtime upgrade, "leaving sufficient time for rebalance operations": a v2 consumer
instance lives in one proxy process, so a restart ends it and its group rebalances twice,
once when it leaves and once when its client makes it again. How long the others stop
depends on the group protocol: the classic one is eager (every member gives up its
partitions and waits for the new assignment), KIP-848's (`group.protocol=consumer`, GA in
Kafka 4.0) is driven by the broker and moves only the partitions that change hands.

`rolling_restart_run` starts proxies of its own behind nginx (a side stack, with the group
protocol as a proxy setting), writes numbered records through the balancer at `rate`, reads
them with one consumer instance per proxy in one group (each made on its own proxy, as a
client pinned to it does), and restarts the proxies one at a time, each as an upgrade would
(graceful stop, start: `stack.restart_service`). A client whose instance is gone (404, or
its proxy refusing connections) makes it again on the same proxy. After the last restart it
stops writing and reads until every acknowledged record has been delivered. From the run:

- each restart's consumption gap: the longest any record acknowledged in the window from the
  restart to the next one waited for its first delivery, against the same measure before any
  restart (a record's wait, not a partition's silence: a writer that stalls is no gap);
- records delivered more than once (a partition's offset seen again: re-read after a
  rebalance from the last commit) and acknowledged records never delivered (lost, must be 0);
- produce calls that failed and were sent again, and records the log holds twice because of it;
- records/s written and read over time, with the restarts marked (`timeline`).

It restarts only proxies the workbench started: on someone else's cluster it says so in
one line rather than restart proxies it does not own.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Any

from workbench.bench.rolling_clients import SEQUENCE, Delivery, Reader, Writer, await_every_partition, drain
from workbench.errors import BenchError
from workbench.measure.contract import result_row

if TYPE_CHECKING:
    import pandas as pd

    from workbench.stack import ServiceRestart, Stack

__all__ = [
    "GROUP_PROTOCOLS",
    "ROLLING_DEFAULTS",
    "RollingRestart",
    "RollingSweep",
    "protocol_properties",
    "record_waits",
    "rolling_restart",
    "rolling_restart_run",
    "rolling_restart_sentences",
    "rolling_restart_sweep",
]

#: The group protocols compared: the classic (eager) rebalance and KIP-848's.
GROUP_PROTOCOLS = ("classic", "consumer")
#: The parameters a notebook and the registered experiment start from.
ROLLING_DEFAULTS: dict[str, Any] = {
    "proxies": 3,
    "protocol": "classic",
    "heartbeat_ms": 500,
    "auto_commit": True,
    "rate": 1_000,
    "record_bytes": 200,
    "partitions": 6,
    "settle_s": 5.0,
    "between_s": 6.0,
    "drain_s": 30.0,
    "commit_interval_s": 1.0,
}
#: Width of the timeline's bins.
_BIN_S = 0.5


def protocol_properties(protocol: str, heartbeat_ms: int = 0) -> dict[str, str]:
    """The proxy properties for a group protocol. A classic member's heartbeat interval is
    its own setting (`heartbeat_ms`; 0 keeps the proxy's file's); KIP-848's refuses the classic
    group's timings (`consumer.session.timeout.ms`, `consumer.heartbeat.interval.ms`), so they
    are unset: its interval is the group's, set on the broker (`configure_consumer_group`)."""
    if protocol not in GROUP_PROTOCOLS:
        raise BenchError(f"protocol must be one of {list(GROUP_PROTOCOLS)}, got {protocol!r}")
    if protocol == "classic":
        return {"consumer.heartbeat.interval.ms": str(heartbeat_ms)} if heartbeat_ms else {}
    return {
        "consumer.group.protocol": "consumer",
        "consumer.session.timeout.ms": "",
        "consumer.heartbeat.interval.ms": "",
    }


@dataclass
class RollingRestart:
    """One rolling restart: what was written and read, the restarts, and the row."""

    params: dict[str, Any]
    started_at: float
    acknowledged: dict[tuple[int, int], int]
    #: When each acknowledged record's acknowledgement came (`time.monotonic()`).
    acked_at: dict[tuple[int, int], float]
    deliveries: list[Delivery]
    restarts: list[ServiceRestart]
    #: When every partition had been read once (the group was formed and reading).
    reading_at: float
    stopped_writing_at: float
    written_at: list[tuple[float, int]]
    produce_failed: int
    instances_made: int
    #: Records requests and commits an instance refused other than with a 404.
    calls_refused: int = 0
    #: Failed produce calls by cause ("HTTP 502", "no proxy answered").
    produce_causes: dict[str, int] = field(default_factory=dict)
    row: dict[str, Any] = field(default_factory=dict)

    def gaps(self) -> list[float]:
        """Each restart's consumption gap, seconds (see `record_waits`)."""
        ends = [r.asked_at for r in self.restarts[1:]] + [self.stopped_writing_at]
        windows = [(r.asked_at, end) for r, end in zip(self.restarts, ends, strict=True)]
        return record_waits(self.acked_at, self.deliveries, windows)

    def gap_before(self) -> float:
        """The same measure before the first restart: how long a record waits normally."""
        first = self.restarts[0].asked_at if self.restarts else self.stopped_writing_at
        return record_waits(self.acked_at, self.deliveries, [(self.reading_at, first)])[0]

    def produce_stall(self) -> float:
        """The longest time between two acknowledged produce calls: how long the writer could
        not write through the balancer (normally a tick, 0.05 s)."""
        times = sorted(at for at, count in self.written_at if count > 0)
        return max((b - a for a, b in itertools.pairwise(times)), default=math.nan)

    def redelivered(self) -> int:
        """Deliveries of an offset already delivered once: the records read twice."""
        return len(self.deliveries) - len({(d.partition, d.offset) for d in self.deliveries})

    def lost(self) -> int:
        """Acknowledged records no reader got."""
        return len(set(self.acknowledged) - {(d.partition, d.offset) for d in self.deliveries})

    def written_twice(self) -> int:
        """Numbers the log holds at two offsets or more (a produce sent again after an
        answer was lost had landed the first time)."""
        places: dict[int, set[tuple[int, int]]] = defaultdict(set)
        for place, number in self.acknowledged.items():
            places[number].add(place)
        for d in self.deliveries:
            places[d.sequence].add((d.partition, d.offset))
        return sum(1 for where in places.values() if len(where) > 1)

    def timeline(self) -> pd.DataFrame:
        """Records/s written (acknowledged) and read, in half-second bins from the start,
        with `restart` naming the proxy whose restart began in the bin."""
        import pandas as pd

        last = max([self.stopped_writing_at, *(d.at for d in self.deliveries)]) - self.started_at
        bins = max(1, math.ceil(last / _BIN_S))
        written, read = Counter[int](), Counter[int]()
        for at, count in self.written_at:
            written[int((at - self.started_at) / _BIN_S)] += count
        for d in self.deliveries:
            read[int((d.at - self.started_at) / _BIN_S)] += 1
        marks = {int((r.asked_at - self.started_at) / _BIN_S): r.name for r in self.restarts}
        return pd.DataFrame(
            {
                "second": [i * _BIN_S for i in range(bins)],
                "written_per_s": [written[i] / _BIN_S for i in range(bins)],
                "read_per_s": [read[i] / _BIN_S for i in range(bins)],
                "restart": [marks.get(i, "") for i in range(bins)],
            }
        )


def record_waits(
    acked_at: Mapping[tuple[int, int], float], deliveries: Iterable[Delivery], windows: Sequence[tuple[float, float]]
) -> list[float]:
    """For each window `(start, end)`, the longest any record acknowledged in it waited for its
    first delivery: how long the group left a waiting record unread (NaN when no record
    acknowledged in the window was read: the writer stalled, nothing waited).

    Usage: `record_waits(run.acked_at, run.deliveries, [(restart.asked_at, next_restart.asked_at)])`.
    """
    first: dict[tuple[int, int], float] = {}
    for d in deliveries:
        place = (d.partition, d.offset)
        first[place] = min(first.get(place, d.at), d.at)
    waits = []
    for start, end in windows:
        waited = [first[p] - at for p, at in acked_at.items() if start <= at < end and p in first]
        waits.append(max(waited, default=math.nan))
    return waits


def rolling_restart(stack: Stack, *, topic_prefix: str = "bench-rolling", **params: Any) -> dict[str, Any]:
    """One rolling restart's row (the registered experiment `rolling_restart`). See `rolling_restart_run`."""
    return rolling_restart_run(stack, topic_prefix=topic_prefix, **params).row


def rolling_restart_run(
    stack: Stack,
    *,
    proxies: int = ROLLING_DEFAULTS["proxies"],
    protocol: str = ROLLING_DEFAULTS["protocol"],
    heartbeat_ms: int = ROLLING_DEFAULTS["heartbeat_ms"],
    auto_commit: bool = ROLLING_DEFAULTS["auto_commit"],
    rate: int = ROLLING_DEFAULTS["rate"],
    record_bytes: int = ROLLING_DEFAULTS["record_bytes"],
    partitions: int = ROLLING_DEFAULTS["partitions"],
    settle_s: float = ROLLING_DEFAULTS["settle_s"],
    between_s: float = ROLLING_DEFAULTS["between_s"],
    drain_s: float = ROLLING_DEFAULTS["drain_s"],
    commit_interval_s: float = ROLLING_DEFAULTS["commit_interval_s"],
    topic_prefix: str = "bench-rolling",
) -> RollingRestart:
    """Restart `proxies` proxies one at a time while one group reads through all of them.

    Args:
        proxies: proxy processes behind nginx, one consumer instance on each (2 or more).
        protocol: the group protocol of the proxies' consumers, "classic" or "consumer" (KIP-848).
        heartbeat_ms: the members' heartbeat interval, the same for both protocols (classic:
            the proxies' consumer setting; KIP-848: the group's config on the broker); 0
            leaves each its default (the proxy file's 500 ms; the broker's 5 s).
        auto_commit: the instances commit on their own, and on a graceful close; off, the
            client commits what it processed every `commit_interval_s`.
        rate: records a second written through the balancer.
        settle_s: reading before the first restart (the baseline gap is measured in it).
        between_s: reading after a restarted proxy answers, before the next restart.
        drain_s: the longest wait, after writing stops, for the last acknowledged records.

    Raises:
        BenchError: a parameter out of range, a profile whose proxies the workbench did not
            start, or a reader that never got every partition.
    """
    _check(stack, proxies, protocol, rate, record_bytes, partitions, (settle_s, between_s, drain_s, commit_interval_s))
    if heartbeat_ms and not 500 <= heartbeat_ms <= 5_000:
        raise BenchError(f"heartbeat_ms must be 0 (each protocol's default) or 500 to 5,000, got {heartbeat_ms}")
    from workbench.bench._run import bench_topic
    from workbench.bench.scale import side_stack
    from workbench.stack import restart_service

    params = {
        "proxies": proxies,
        "protocol": protocol,
        "heartbeat_ms": heartbeat_ms,
        "auto_commit": auto_commit,
        "rate": rate,
    }
    properties = protocol_properties(protocol, heartbeat_ms)
    with (
        side_stack(stack, instances=proxies, proxy_properties=properties, label="rolling") as side,
        bench_topic(side, partitions, topic_prefix) as topic,
    ):
        group = f"rolling-{uuid.uuid4().hex[:8]}"
        if protocol == "consumer" and heartbeat_ms:
            from workbench.topics.group_join import configure_consumer_group

            configure_consumer_group(side.kafka_config("admin"), group, heartbeat_ms=heartbeat_ms)
        auth = side.profile.proxy.auth.credentials() if side.profile.proxy.auth else None
        stop_reading, stop_writing = threading.Event(), threading.Event()
        readers = [
            Reader(url, group, topic, auto_commit, commit_interval_s, auth, stop_reading) for url in side.proxy_urls
        ]
        writer = Writer(
            side.balancer_url or side.proxy_urls[0], topic, partitions, rate, record_bytes, auth, stop_writing
        )
        started_at = time.monotonic()
        for thread in (*readers, writer):
            thread.start()
        restarts: list[ServiceRestart] = []
        try:
            reading_at = await_every_partition(readers, partitions, started_at + 60)
            time.sleep(settle_s)
            for index in range(proxies):
                restarts.append(restart_service(side, f"proxy-{index}"))
                time.sleep(between_s)
        finally:
            stop_writing.set()
            writer.join()
            stopped_writing_at = time.monotonic()
            drain(readers, writer.acknowledged, stopped_writing_at + drain_s)
            stop_reading.set()
            for reader in readers:
                reader.join()
    run = RollingRestart(
        params=params,
        started_at=started_at,
        acknowledged=dict(writer.acknowledged),
        acked_at=dict(writer.acked_at),
        deliveries=sorted((d for r in readers for d in r.deliveries), key=lambda d: d.at),
        restarts=restarts,
        reading_at=reading_at,
        stopped_writing_at=stopped_writing_at,
        written_at=list(writer.written_at),
        produce_failed=writer.failed,
        instances_made=sum(r.made for r in readers),
        calls_refused=sum(r.refused for r in readers),
        produce_causes=dict(writer.causes),
    )
    run.row = _row(stack, run, record_bytes)
    return run


@dataclass
class RollingSweep:
    """Rolling restarts by group protocol: a row each, the last run of each protocol (its
    timeline), or, where none can run, the one line that says why."""

    rows: pd.DataFrame | None
    runs: dict[str, RollingRestart]
    note: str | None = None


def rolling_restart_sweep(
    stack: Stack, protocols: Sequence[str] = GROUP_PROTOCOLS, *, repeat: int = 1, **params: Any
) -> RollingSweep:
    """`rolling_restart_run` for each protocol, `repeat` times, the protocols taking turns
    (classic, consumer, classic, ...) so a machine that warms up or slows down favours neither.

    A profile whose proxies the workbench did not start gives no rows and a `note`.
    """
    import pandas as pd

    if not stack.profile.embedded:
        return RollingSweep(None, {}, _not_ours(stack))
    runs: dict[str, RollingRestart] = {}
    rows = []
    for _ in range(repeat):
        for protocol in protocols:
            run = rolling_restart_run(stack, protocol=protocol, **params)
            runs[protocol] = run
            rows.append(run.row)
    return RollingSweep(pd.DataFrame(rows), runs)


def rolling_restart_sentences(rows: pd.DataFrame) -> list[str]:
    """What the rolling restarts say, per protocol and between them, from the rows alone."""
    lines = []
    medians = rows.groupby("protocol")[["gap_median_s", "gap_before_s", "redelivered", "lost", "produce_failed"]]
    summary = medians.median()
    for protocol, row in summary.iterrows():
        name = "KIP-848 (`group.protocol=consumer`)" if protocol == "consumer" else "the classic protocol"
        lines.append(
            f"With {name}, a record written during a restart waited up to {row['gap_median_s']:.2f} s for a "
            f"reader (median over restarts; {row['gap_before_s']:.2f} s before any), {row['redelivered']:,.0f} "
            f"records were read twice and {row['lost']:,.0f} lost; {row['produce_failed']:,.0f} produce calls "
            "through the balancer failed and were sent again."
        )
    if {"classic", "consumer"} <= set(summary.index):
        classic, kip848 = summary.loc["classic", "gap_median_s"], summary.loc["consumer", "gap_median_s"]
        heartbeat = rows["heartbeat_ms"].iloc[0]
        pace = f"both heartbeating every {heartbeat:,} ms" if heartbeat else "each at its default heartbeat"
        if kip848 <= classic / 2:
            verdict = f"at most half the classic one ({kip848 / classic:.2f} of it): the guide's pause shrank"
        elif kip848 < classic:
            verdict = f"shorter than the classic one, but not by half ({kip848 / classic:.2f} of it)"
        else:
            verdict = (
                f"no shorter than the classic one ({kip848 / classic:.2f} of it): a member hears of a partition moved "
                "to it on its next heartbeat, and here a classic rebalance after a clean leave is as quick"
            )
        lines.append(f"KIP-848's gap, {pace}, was {verdict}.")
    return lines


def _not_ours(stack: Stack) -> str:
    return (
        f"rolling_restart restarts proxies, and the workbench restarts only proxies it started; "
        f"profile {stack.profile.name!r} names proxies of yours (restart them one at a time yourself "
        "while a group reads through them)"
    )


def _check(
    stack: Stack,
    proxies: int,
    protocol: str,
    rate: int,
    record_bytes: int,
    partitions: int,
    seconds: tuple[float, ...],
) -> None:
    if not stack.profile.embedded:
        raise BenchError(_not_ours(stack))
    if not 2 <= proxies <= 8:
        raise BenchError(f"a rolling restart needs two or more proxies (at most 8 here), got proxies={proxies}")
    protocol_properties(protocol)
    for name, value, low, high in (
        ("rate", rate, 1, 50_000),
        ("record_bytes", record_bytes, SEQUENCE.size, 1_000_000),
        ("partitions", partitions, proxies, 64),
    ):
        if not low <= value <= high:
            raise BenchError(f"{name} must be {low:,} to {high:,} (partitions: at least one per proxy), got {value}")
    if not all(0 <= s <= 600 for s in seconds):
        raise BenchError(f"settle_s, between_s, drain_s and commit_interval_s must be 0 to 600 s, got {seconds}")


def _row(stack: Stack, run: RollingRestart, record_bytes: int) -> dict[str, Any]:
    gaps = [g for g in run.gaps() if math.isfinite(g)]
    delivered = len({(d.partition, d.offset) for d in run.deliveries})
    seconds = run.stopped_writing_at - run.started_at
    measured = {
        "restarts": len(run.restarts),
        "restart_s": median(r.seconds for r in run.restarts) if run.restarts else math.nan,
        "gap_before_s": run.gap_before(),
        "gap_median_s": median(gaps) if gaps else math.nan,
        "gap_max_s": max(gaps) if gaps else math.nan,
        "acknowledged": len(run.acknowledged),
        "delivered": delivered,
        "redelivered": run.redelivered(),
        "lost": run.lost(),
        "written_twice": run.written_twice(),
        "produce_failed": run.produce_failed,
        "produce_stall_s": run.produce_stall(),
        "produce_causes": ", ".join(f"{cause}: {n}" for cause, n in sorted(run.produce_causes.items())),
        "instances_made": run.instances_made,
        "calls_refused": run.calls_refused,
    }
    return result_row(
        stack,
        experiment="rolling_restart",
        params=run.params,
        records=delivered,
        payload_bytes=delivered * record_bytes,
        seconds=seconds,
        extra=measured,
    )
