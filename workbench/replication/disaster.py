"""The source cluster lost under load: acknowledged records the target never received (the RPO).

When a data centre is lost, whatever MirrorMaker had not yet copied to b is gone for every
consumer that fails over, although cluster a acknowledged it to its producer with
`acks=all`. How much is that? The run offers numbered records open-loop on a (acks=all,
every delivery report kept), SIGKILLs every node of cluster a `before_s` into the load
(the load goes on `TAIL_S` more, so the kill lands under it), and waits until b has
received nothing for `QUIET_S`. What b holds then is what a failover would find; counted
against the acknowledgements:

- `rpo_records`: records acknowledged on a and absent on b, the recovery point in records;
- `rpo_s`: from the oldest of them's append on a to the kill, the recovery point in time;
- against `lag_before_*`, the replication lag of the records appended one to two seconds
  before the kill, and `in_flight_expected`, the rate times that mean lag (Little's law):
  the estimate an operator makes from a lag graph.

On this machine the disaster is a process kill and a's disk survives, so the nodes start
again on their own data, MirrorMaker copies the rest, and the row says whether b then holds
every acknowledged record (`lost_for_good` 0): the records were late, not lost. A data
centre that burns gives no such second chance.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench import kafka
from workbench.errors import BenchError
from workbench.replication.lag import check_ranges
from workbench.replication.load import SETTLE_LIMIT_S, Load, appends, join_appends, settle, under_load
from workbench.replication.numbered import SEQ_DIGITS, seq_of
from workbench.replication.worker_kill import TimedKill
from workbench.stack import process

if TYPE_CHECKING:
    from workbench.stack import Stack
    from workbench.stack.state import ServiceRecord

__all__ = [
    "DELIVERY_TIMEOUT_MS",
    "DISASTER_DEFAULTS",
    "DisasterRun",
    "LAG_WINDOW_MS",
    "QUIET_S",
    "TAIL_S",
    "disaster",
    "disaster_run",
    "disaster_unavailable",
    "recovery_point",
]

#: The run's defaults: a notebook-sized load, the kill 5 s into it.
DISASTER_DEFAULTS: dict[str, Any] = {"rate": 1_000.0, "before_s": 5.0, "partitions": 3}
#: Seconds the load goes on after the kill: records offered to a dead cluster, never acknowledged.
TAIL_S = 1.0
#: b's record count unchanged this long after the kill: nothing more is coming from a.
QUIET_S = 3.0
#: The producer's `message.timeout.ms`: records a dead cluster never answers fail after it.
DELIVERY_TIMEOUT_MS = 5_000
#: The records whose lag stands for "just before the kill": appended 2 s to 1 s before it.
LAG_WINDOW_MS = (2_000.0, 1_000.0)


@dataclass(frozen=True)
class DisasterRun:
    """A run's contract row; each record on a (`seq`, `partition`, `a_offset`, `a_ms`, `b_ms`,
    `lag_ms`, `copies` after a came back, `acked`, `on_b_at_loss`); the kill in epoch ms."""

    row: dict[str, Any]
    records: pd.DataFrame
    killed_ms: float

    def by_fate(self) -> dict[str, pd.DataFrame]:
        """The records in three groups, for a figure: on b before the loss, acknowledged but
        copied only once a came back (the recovery point), and never acknowledged."""
        records = self.records
        return {
            "on b before the loss": records[records["on_b_at_loss"]],
            "acknowledged, on b only after a came back": records[records["acked"] & ~records["on_b_at_loss"]],
            "never acknowledged": records[~records["acked"] & ~records["on_b_at_loss"]],
        }


def disaster_run(
    stack: Stack,
    *,
    rate: float = DISASTER_DEFAULTS["rate"],
    before_s: float = DISASTER_DEFAULTS["before_s"],
    partitions: int = DISASTER_DEFAULTS["partitions"],
    record_bytes: int = 100,
    topic_prefix: str = "wb-geo-loss",
) -> DisasterRun:
    """Offer `rate` records/s on a, SIGKILL all of cluster a `before_s` in, count what b lacks.

    Raises:
        BenchError: a parameter out of range, a cluster a the workbench did not start, or
            MirrorMaker did not pick the topic up. Cluster a is started again in any case.
        StackError: a's nodes did not come back (their logs say why).
    """
    check_ranges(
        ("rate", rate, 1, 20_000),
        ("before_s", before_s, 2, 300),
        ("partitions", partitions, 1, 64),
        ("record_bytes", record_bytes, SEQ_DIGITS, 1_000_000),
        whole=("partitions", "record_bytes"),
    )
    reason = disaster_unavailable(stack)
    if reason is not None:
        raise BenchError(reason)
    kill = TimedKill(_source_nodes(stack), before_s, restart=functools.partial(_restore, stack))
    acked = _Acknowledged()
    with under_load(
        stack,
        topic_prefix=topic_prefix,
        partitions=partitions,
        rate=rate,
        seconds=before_s + TAIL_S,
        record_bytes=record_bytes,
        disruption=kill,
        on_delivery=acked.report,
        producer_conf={"message.timeout.ms": DELIVERY_TIMEOUT_MS},
    ) as load:
        _until_quiet(stack.peer_config("admin"), load.target)
        at_loss = appends(stack.peer_config("consumer"), load.target)
        kill.end()  # a back on its own data before what it kept is counted; the way out then does nothing
        on_a = kafka.total_records(stack.kafka_config("admin"), load.source)  # the marker and every record a kept
        recovery_s = settle(stack.peer_config("admin"), load.target, on_a, SETTLE_LIMIT_S)
        records = _records(stack, load.source, load.target, acked, at_loss)
    params = {"rate": rate, "before_s": before_s, "partitions": partitions}
    last_copy_s = (float(at_loss["ms"].max()) - kill.killed_ms) / 1000 if len(at_loss) else float("nan")
    facts = {
        "last_copy_s": last_copy_s,
        "restart_s": kill.restart_s,
        "recovery_s": recovery_s,
        "pickup_s": load.pickup_s,
    }
    row = _row(load, params, records, kill, acked, facts)
    return DisasterRun(row, records, kill.killed_ms)


def disaster(stack: Stack, *, topic_prefix: str = "wb-geo-loss", **params: Any) -> dict[str, Any]:
    """One run's row (the registered experiment `disaster`). See `disaster_run`."""
    return disaster_run(stack, topic_prefix=topic_prefix, **params).row


def disaster_unavailable(stack: Stack) -> str | None:
    """Why cluster a of this stack cannot be killed (one line), or None."""
    if not stack.profile.embedded or not _source_nodes(stack):
        return (
            "the workbench kills only a cluster it started, and this stack's cluster a is not its own "
            "(on your clusters, the lag measured above times the rate is the estimate of what a loss would cost)"
        )
    return None


def recovery_point(records: pd.DataFrame, killed_ms: float) -> dict[str, float]:
    """What the loss cost, from each record's `acked`, `on_b_at_loss`, `a_ms` and `lag_ms`:
    `rpo_records`, acknowledged and not on b; `rpo_s`, from the oldest such record's append on
    a to the kill (0 when none); and the lag of the records appended in `LAG_WINDOW_MS`
    before the kill (`lag_before_p50_ms`, `lag_before_p99_ms`, `lag_before_mean_ms`)."""
    lost = records[records["acked"] & ~records["on_b_at_loss"]]
    earliest, latest = killed_ms - LAG_WINDOW_MS[0], killed_ms - LAG_WINDOW_MS[1]
    window = records[(records["a_ms"] >= earliest) & (records["a_ms"] < latest)]["lag_ms"].dropna()
    lags = window.to_numpy(dtype=float)
    nan = float("nan")
    return {
        "rpo_records": float(len(lost)),
        "rpo_s": (killed_ms - float(lost["a_ms"].min())) / 1000 if len(lost) else 0.0,
        "lag_before_p50_ms": float(np.percentile(lags, 50)) if len(lags) else nan,
        "lag_before_p99_ms": float(np.percentile(lags, 99)) if len(lags) else nan,
        "lag_before_mean_ms": float(lags.mean()) if len(lags) else nan,
    }


class _Acknowledged:
    """The sequence numbers cluster a acknowledged, and how many deliveries failed."""

    def __init__(self) -> None:
        self.seqs: set[int] = set()
        self.failed = 0
        self._lock = threading.Lock()

    def report(self, error: Any, message: Any) -> None:
        with self._lock:
            if error is None:
                self.seqs.add(seq_of(message.value()))
            else:
                self.failed += 1


def _source_nodes(stack: Stack) -> list[ServiceRecord]:
    """Cluster a's Kafka nodes that the workbench started and that run now."""
    nodes = [r for r in stack.refreshed().services.values() if r.kind == "broker"]
    return [r for r in nodes if process.is_ours(r.pid, r.create_time)]


def _until_quiet(b_conf: dict[str, Any], target: str) -> None:
    """Wait until b's count of `target` holds still for `QUIET_S` (at most `SETTLE_LIMIT_S`)."""
    count, changed = kafka.total_records(b_conf, target), time.monotonic()
    deadline = changed + SETTLE_LIMIT_S
    while time.monotonic() - changed < QUIET_S and time.monotonic() < deadline:
        time.sleep(0.25)
        now = kafka.total_records(b_conf, target)
        if now != count:
            count, changed = now, time.monotonic()


def _restore(stack: Stack, names: list[str]) -> None:
    """Start a's killed nodes again on their own data."""
    from workbench.stack import restart_brokers

    restart_brokers(stack, names)


def _records(stack: Stack, source: str, target: str, acked: _Acknowledged, at_loss: pd.DataFrame) -> pd.DataFrame:
    """Every record of a's log, joined with b's copies now, flagged acked and on b at the loss."""
    records = join_appends(
        appends(stack.kafka_config("consumer"), source), appends(stack.peer_config("consumer"), target)
    )
    records["acked"] = records["seq"].isin(acked.seqs)
    records["on_b_at_loss"] = records["seq"].isin(set(at_loss["seq"]))
    return records


def _row(
    load: Load,
    params: dict[str, Any],
    records: pd.DataFrame,
    kill: TimedKill,
    acked: _Acknowledged,
    facts: dict[str, float],
) -> dict[str, Any]:
    point = recovery_point(records, kill.killed_ms)
    mean_lag_s = point["lag_before_mean_ms"] / 1000
    in_log = set(records["seq"])
    return load.row(
        "disaster",
        params,
        records,
        latency_of="append on a → append on b, the outage included",
        extra={
            **point,
            "in_flight_expected": float(params["rate"]) * mean_lag_s,
            "offered": load.run.sent,
            "acked": len(acked.seqs),
            "failed": acked.failed,
            "unacked_in_log": int((~records["acked"]).sum()),
            "lost_on_a": len(acked.seqs - in_log),
            "lost_for_good": len(acked.seqs - set(records.loc[records["copies"] > 0, "seq"])),
            "killed": ",".join(node.name for node in kill.victims),
            "slips": load.run.slips,
            **facts,
        },
    )
