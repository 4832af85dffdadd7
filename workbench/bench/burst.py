"""`lag_burst`: consumer lag over time and the time to clear a backlog, for three consumers.

What an on-call engineer watches first: a producer runs above what its consumer can take for
a while, a backlog builds, and the question is how high the lag goes and how long it takes
to come back. The scenario, open loop (`measure.schedule`: records are due at fixed times,
a record sent more than 50 ms late is a schedule slip):

1. a **lead-in** at the normal rate (`normal_msg_s`, below the consumer's capacity) for
   `lead_in_s`; its readings after the warm-up (`warm_up_s`) give the **baseline**: the
   largest total lag the consumer carries at the normal rate;
2. a **burst** at `burst_msg_s`, above the capacity, for `burst_s`;
3. the normal rate again until the lag is back at or below the baseline (**cleared**), or
   `clear_deadline_s` after the burst's end; then the producer stops and the consumer
   reads what is left, so every record sent is read and counted.

A `LagSampler` reads the log ends and the consumer's positions every `interval_s` on the
run's one clock (t = 0 when the lead-in starts). **Time to clear** (`clear_s`) is the time
from the burst's end to the first reading, at or after it, whose total lag is at or below
the baseline; every reading between the two was above it. The consumer's capacity is
stated, not guessed (see `burst_consumers`): `1000 / process_ms` records/s for a native
group member or a REST consumer instance, `maxOffsetsPerTrigger / trigger_s` for Spark, and
`predicted_clear_s` is what that capacity promises: the backlog the burst leaves over the
spare capacity at the normal rate. Spark's real-time mode is not offered: it takes no rate
limit (its capacity could not be set) and reports progress only at its checkpoints, every
5 s or more, too coarse to time a backlog by.

Usage (a plan comes from `burst_plan.plan_burst`):
    plan = plan_burst(consumer="native", process_ms=2.0, burst_msg_s=1_500, burst_s=5)  # capacity 500 records/s
    chart, on_sample = viz.live_time_axis(burst=plan.burst_window, offered=plan.schedule().rate_at)
    display(chart)
    run = lag_burst_run(stack, plan, on_sample=on_sample)
    viz.time_axis_figure(**run.series())
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
from confluent_kafka import Producer

from workbench.bench._run import bench_producer, bench_topic, result_row
from workbench.bench.burst_consumers import (
    SEQUENCE,
    BurstConsumer,
    NativeConsumer,
    RestConsumer,
    SparkConsumer,
)
from workbench.bench.burst_plan import BurstPlan, plan_burst
from workbench.errors import BenchError
from workbench.kafka.producing import DeliveryTally, Outgoing, enqueue
from workbench.measure.lag import (
    LagSampler,
    LagTick,
    baseline_lag,
    summarise_lag,
    total_lag,
)
from workbench.measure.latency import after_warm_up
from workbench.measure.resources import ResourceMonitor
from workbench.measure.schedule import OpenLoopRun, RateSchedule, run_open_loop
from workbench.stack import Stack

__all__ = ["BurstRun", "DRAIN_S", "MAX_DRAIN_S", "burst_sentence", "lag_burst", "lag_burst_run"]

#: Seconds the consumer is given, after the producer stops, to read what is left (more
#: when the backlog is large, at most `MAX_DRAIN_S`); a record not read by then is lost.
DRAIN_S = 30.0
MAX_DRAIN_S = 300.0


@dataclass
class BurstRun:
    """A burst's row and its time series, all on the run's one clock (seconds from the lead-in's start).

    Attributes:
        row: the contract row (`lag_burst`).
        lag: the sampler's rows: `t`, `topic`, `partition`, `end_offset`, `position`, `lag`.
        producer: `t`, `achieved_msg_s` (records handed to the producer per second since the
            previous reading) and `offered_msg_s` (the schedule over the same span).
        offered: the schedule's rate as a step line (`t`, `offered_msg_s`).
        consumer: `t`, `msg_s`: the consumer's positions per second, from the lag readings.
        batches: Spark's micro-batches (`t`, `t_end`, `rows`, `duration_ms`, `input_msg_s`,
            `processed_msg_s`), or None.
        latency: per record, `t` (when it was due) and `latency_ms` (due → processed), or None (Spark).
        burst: the burst's (start, end).
    """

    row: dict[str, Any]
    lag: pd.DataFrame
    producer: pd.DataFrame
    offered: pd.DataFrame
    consumer: pd.DataFrame
    batches: pd.DataFrame | None
    latency: pd.DataFrame | None
    burst: tuple[float, float]

    def series(self) -> dict[str, Any]:
        """The keyword arguments of `viz.time_axis_figure`: `viz.time_axis_figure(**run.series())`."""
        return {
            "producer": self.producer,
            "offered": self.offered,
            "lag": self.lag,
            "consumer": self.consumer,
            "batches": self.batches,
            "latency": self.latency,
            "burst": self.burst,
        }


def lag_burst_run(
    stack: Stack,
    plan: BurstPlan,
    *,
    on_sample: Callable[[LagTick], None] | None = None,
    topic_prefix: str = "bench-lag",
) -> BurstRun:
    """Run one burst scenario (see the module) and return its row and time series.

    Args:
        stack: the stack to run on (any profile; `proxy` needs a REST proxy, `spark` Spark).
        plan: the settings, from `plan_burst`.
        on_sample: called with every lag reading, from the sampler's thread (give it
            `viz.live_time_axis()`'s callback for a live chart).

    Raises:
        BenchError: no REST proxy for `proxy`, the consumer failed or did not join, the
            producer could not deliver.

    Usage: `run = lag_burst_run(stack, plan_burst(consumer="proxy"))`; `run.row["clear_s"]`.
    """
    if plan.consumer == "proxy" and not stack.proxy_urls:
        raise BenchError("consumer='proxy' needs a REST proxy, and this profile lists none (proxy.urls)")
    schedule = plan.schedule()
    with (
        bench_topic(stack, plan.partitions, topic_prefix) as topic,
        _consumer(stack, topic, plan, schedule.total) as reader,
    ):
        producer = bench_producer(stack, {"linger.ms": 5})  # made before the clock starts, like the rest
        sampler = LagSampler(
            stack.kafka_config("admin"),
            [(topic, p) for p in range(plan.partitions)],
            reader.positions,
            interval_s=plan.interval_s,
            on_sample=on_sample,
        )
        watch = _ClearWatch(plan, sampler, reader)
        with ResourceMonitor(stack.services, spark=plan.consumer == "spark") as monitor, sampler:
            # t = 0 is the sampler's first reading; the schedule and the consumer share it.
            assert sampler.started is not None
            origin = reader.started = sampler.started
            wall = time.time() - (time.perf_counter() - origin)
            produced, sent = _produce(producer, topic, plan, schedule, origin, watch)
            drained_s = _drain(plan, reader, sampler, sent)
        failure = reader.failure()
        if failure is not None:
            raise BenchError(f"the {plan.consumer} consumer failed: {str(failure).splitlines()[0]}") from failure
        counts = {"sent": sent, "read": reader.read(), "duplicates": reader.duplicates()}
        batches = reader.batches(wall)
        done_s = reader.arrivals.done_s[:sent] if reader.arrivals is not None else None
        spark_facts = _spark_facts(reader, batches)
    lag = sampler.frame()
    latency = _latency(schedule, done_s) if done_s is not None else None
    row = _row(stack, plan, reader, sampler, lag, produced, counts, drained_s, latency, monitor.columns(), spark_facts)
    return BurstRun(
        row=row,
        lag=lag,
        producer=_producer_rates(schedule, produced),
        offered=schedule.frame(until=produced.seconds),
        consumer=_consumer_rates(total_lag(lag)),
        batches=batches,
        latency=latency,
        burst=plan.burst_window,
    )


def lag_burst(stack: Stack, *, topic_prefix: str = "bench-lag", **settings: Any) -> dict[str, Any]:
    """One burst scenario's row: lag peak, time to clear, baseline, every record counted.

    The registered experiment (`workbench bench lag_burst`); its settings are `plan_burst`'s
    (the registry reads them there: `Experiment.parameters`), and `lag_burst_run` returns
    the time series too.

    Raises:
        BenchError: see `plan_burst` and `lag_burst_run`.

    Usage: `sweep("lag_burst", {"consumer": ["native", "proxy", "spark"]})`.
    """
    return lag_burst_run(stack, plan_burst(**settings), topic_prefix=topic_prefix).row


def _consumer(stack: Stack, topic: str, plan: BurstPlan, records: int) -> BurstConsumer:
    if plan.consumer == "spark":
        return SparkConsumer(
            stack, topic, plan.partitions, max_offsets=plan.max_offsets_per_trigger, trigger_s=plan.trigger_s
        )
    kind = NativeConsumer if plan.consumer == "native" else RestConsumer
    return kind(
        stack, topic, plan.partitions, process_ms=plan.process_ms, record_bytes=plan.record_bytes, records=records
    )


class _ClearWatch:
    """The producer's stop signal: the lag is back at its baseline after the burst, or the
    consumer or the sampler failed. Asked every producer tick, it looks again only when a
    new lag reading has come (the failure checks cost a call into Spark)."""

    def __init__(self, plan: BurstPlan, sampler: LagSampler, reader: BurstConsumer) -> None:
        self.burst_start, self.burst_end = plan.burst_window
        self.warm_up_s = plan.warm_up_s
        self.sampler = sampler
        self.reader = reader
        self.baseline: float | None = None
        self._seen: LagTick | None = None
        self._stop = False

    def __call__(self, now: float) -> bool:
        tick = self.sampler.latest
        if tick is self._seen or tick is None:
            return self._stop
        self._seen = tick
        if self.sampler.error is not None or self.reader.failure() is not None:
            self._stop = True
        elif tick.t >= self.burst_end:
            if self.baseline is None:
                self.baseline = _baseline(self.sampler.frame(), self.burst_start, self.warm_up_s)
            self._stop = tick.total <= self.baseline
        return self._stop


def _baseline(lag: pd.DataFrame, burst_start: float, warm_up_s: float) -> float:
    try:
        return baseline_lag(total_lag(lag), before=burst_start, warm_up_s=warm_up_s)
    except ValueError:
        raise BenchError(
            f"no lag reading between the warm-up's end ({warm_up_s:g} s) and the burst ({burst_start:g} s): "
            "each reading took longer than that stretch; lengthen the lead-in or raise interval_s"
        ) from None


def _produce(
    client: Producer, topic: str, plan: BurstPlan, schedule: RateSchedule, origin: float, stop: _ClearWatch
) -> tuple[OpenLoopRun, int]:
    """The open-loop producer: the records due each tick, partition `i % partitions`, then a
    bounded flush. Returns the run and the records acknowledged."""
    tally = DeliveryTally()
    padding = b"x" * (plan.record_bytes - SEQUENCE.size)
    parts = plan.partitions

    def send(first: int, upto: int) -> None:
        records = (Outgoing(topic, SEQUENCE.pack(i) + padding, None, i % parts) for i in range(first, upto))
        enqueue(client, records, on_delivery=tally, queue_full_wait_s=0.001, poll_every=upto - first)

    run = run_open_loop(schedule, send, started=origin, stop=stop, reading_every_s=plan.interval_s)
    unsent = client.flush(60)
    if unsent or tally.failed:
        raise BenchError(
            f"the producer left {unsent} of {run.sent} records unacknowledged after 60 s and {tally.failed} "
            f"refused (first: {tally.first_error or 'none refused'})"
        )
    return run, tally.acknowledged


def _drain(plan: BurstPlan, reader: BurstConsumer, sampler: LagSampler, sent: int) -> float:
    """Until the consumer has read every record sent and its lag reads 0, or the drain's time
    is up; returns seconds from the run's start to the last record read (or to giving up)."""
    left = sampler.latest.total if sampler.latest is not None else sent
    patience = min(MAX_DRAIN_S, DRAIN_S + 2 * left / plan.capacity_msg_s)
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline and reader.failure() is None and sampler.error is None:
        latest = sampler.latest
        if reader.read() >= sent and latest is not None and latest.total == 0:
            break
        time.sleep(0.02)
    assert sampler.started is not None
    return time.perf_counter() - sampler.started


def _latency(schedule: RateSchedule, done_s: np.ndarray) -> pd.DataFrame:
    """Per record processed: when it was due and how long after that it was processed."""
    indexes = np.flatnonzero(~np.isnan(done_s))
    due = schedule.due_times(indexes)
    return pd.DataFrame({"t": due, "latency_ms": (done_s[indexes] - due) * 1000.0})


def _producer_rates(schedule: RateSchedule, run: OpenLoopRun) -> pd.DataFrame:
    rows = [
        (t1, (n1 - n0) / (t1 - t0), schedule.mean_rate(t0, t1))
        for (t0, n0), (t1, n1) in pairwise(run.readings)
        if t1 > t0
    ]
    return pd.DataFrame(rows, columns=["t", "achieved_msg_s", "offered_msg_s"])


def _consumer_rates(totals: pd.DataFrame) -> pd.DataFrame:
    seconds = totals["t"].diff()
    rates = totals["position"].diff() / seconds
    return pd.DataFrame({"t": totals["t"], "msg_s": rates}).iloc[1:].reset_index(drop=True)


def _catch_up_rate(totals: pd.DataFrame, burst_end: float, clear_s: float) -> float:
    """Records per second the consumer read from the burst's end until the lag cleared."""
    if math.isnan(clear_s):
        return math.nan
    after = totals[totals["t"] >= burst_end]
    first, cleared = after.iloc[0], after[after["t"] >= burst_end + clear_s].iloc[0]
    seconds = float(cleared["t"] - first["t"])
    return float(cleared["position"] - first["position"]) / seconds if seconds > 0 else math.nan


def _spark_facts(reader: BurstConsumer, batches: pd.DataFrame | None) -> dict[str, Any]:
    """Spark's batches, and the capacity they allowed: a batch longer than the trigger
    delays the next, so the rate limit is reached only while batches take less."""
    if not isinstance(reader, SparkConsumer) or batches is None:
        return {}
    busy = batches[batches["rows"] > 0]
    median_ms = float(busy["duration_ms"].median()) if len(busy) else math.nan
    return {
        "batches": len(busy),
        "median_batch_ms": median_ms,
        "batch_capacity_msg_s": reader.max_offsets / max(reader.trigger_s, median_ms / 1000) if len(busy) else math.nan,
        "max_batch_rows": int(busy["rows"].max()) if len(busy) else 0,
        "missing_batches": reader.missing_batches(),
    }


def _row(
    stack: Stack,
    plan: BurstPlan,
    reader: BurstConsumer,
    sampler: LagSampler,
    lag: pd.DataFrame,
    produced: OpenLoopRun,
    counts: dict[str, int],
    drained_s: float,
    latency: pd.DataFrame | None,
    resources: dict[str, float],
    spark_facts: dict[str, Any],
) -> dict[str, Any]:
    start, end = plan.burst_window
    _baseline(lag, start, plan.warm_up_s)  # a missing baseline is said in the run's words
    summary = summarise_lag(lag, burst_start=start, burst_end=end, warm_up_s=plan.warm_up_s)
    peaks = list(summary.by_partition.values())
    latencies = None
    if latency is not None:
        counted = after_warm_up(latency["t"].to_numpy(), 0.0, plan.warm_up_s)
        latencies = latency["latency_ms"].to_numpy()[counted] / 1000.0
    schedule = plan.schedule()
    params = {**plan.params(), "connector": getattr(reader, "connector", None) or None}
    return result_row(
        stack,
        experiment="lag_burst",
        params=params,
        records=counts["read"],
        payload_bytes=counts["read"] * plan.record_bytes,
        seconds=drained_s,
        latencies=latencies,
        latency_of="scheduled send → processed, per record after the warm-up",
        resources=resources,
        extra={
            "capacity_msg_s": plan.capacity_msg_s,
            "capacity_rule": reader.capacity_rule,
            "lag_of": reader.position_of,
            "burst_start_s": start,
            "burst_end_s": end,
            "baseline_lag": summary.baseline,
            "lag_peak": summary.peak,
            "lag_peak_s": summary.peak_s,
            "clear_s": summary.clear_s,
            "cleared": summary.cleared,
            "predicted_clear_s": plan.predicted_clear_s,
            "catch_up_msg_s": _catch_up_rate(total_lag(lag), end, summary.clear_s),
            "partition_peaks": ", ".join(f"p{p}={n}" for (_, p), n in sorted(summary.by_partition.items())),
            "partition_peak_max": max(peaks) if peaks else math.nan,
            "partition_peak_min": min(peaks) if peaks else math.nan,
            **counts,
            "lost": max(counts["sent"] - counts["read"], 0),
            "schedule_slips": produced.slips,
            "offered_reached": produced.sent / schedule.offered(produced.seconds) if produced.seconds > 0 else math.nan,
            "producer_stopped_s": produced.seconds,
            "lag_samples": len(sampler.ticks),
            "lag_samples_dropped": sampler.dropped,
            **spark_facts,
        },
    )


def burst_sentence(rows: pd.DataFrame) -> str:
    """Markdown bullets from `lag_burst` rows, one per consumer: the peak, the time to clear
    against what the stated capacity promised, and the counts."""
    lines = []
    for _, row in rows.iterrows():
        cleared = (
            f"cleared **{row['clear_s']:,.1f} s** after the burst (its capacity promised "
            f"{row['predicted_clear_s']:,.1f} s; it caught up at {row['catch_up_msg_s']:,.0f} records/s)"
            if row["cleared"]
            else f"had not cleared {row['clear_deadline_s']:,.0f} s after the burst"
        )
        lines.append(
            f"- {row['consumer']} (capacity {row['capacity_msg_s']:,.0f} records/s, {row['capacity_rule']}): "
            f"lag peaked at **{int(row['lag_peak']):,} records** "
            f"{row['lag_peak_s'] - row['burst_start_s']:,.1f} s into the burst "
            f"(baseline {row['baseline_lag']:,.0f}) and {cleared}; {int(row['read']):,} of {int(row['sent']):,} "
            f"records read, {int(row['lost'])} lost, {int(row['duplicates'])} twice."
        )
    return "\n".join(lines)
