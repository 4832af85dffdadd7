"""Consumer lag over time: how many records a consumer still has to read, per partition, sampled.

Lag is the true log-end offset (the high watermark, `kafka.OffsetReader.ends`) minus the
consumer's position, per partition. What "position" means is the caller's choice, through
a callable: a consumer group's committed offsets read with the admin client
(`GroupOffsets`), an in-process consumer's delivered positions, a REST consumer's commits,
or the end offsets of the last batch a Spark query completed. `LagSampler` reads both every
`interval_s` in a background thread and keeps (t, topic, partition, end_offset, position,
lag) rows, t in seconds since the caller's start (one clock for every series of a run).

Each reading takes the positions first and the ends second: ends only grow, so a lag is
never negative; it may count a few records produced between the two reads (milliseconds).

The figures a burst is judged by are pure functions of those rows (`summarise_lag`):

- **baseline**: the largest total lag of the readings taken after the warm-up and before
  the burst (`WARM_UP_S`, the workbench's one warm-up rule, `after_warm_up`): what the
  consumer normally carries (the batch it is working on, the fetch in flight);
- **peak**: the largest total lag and when it was first read;
- **time to clear**: from the end of the burst to the first reading, at or after that end,
  whose total lag is at or below the baseline. Every reading between the two is above it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import pandas as pd
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from workbench._types import Partition
from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.kafka.admin import AdminOwner, admin_client
from workbench.kafka.offsets import OffsetReader
from workbench.measure.latency import WARM_UP_S, after_warm_up
from workbench.measure.sampling import Sampler

__all__ = [
    "GroupOffsets",
    "INTERVAL_S",
    "LAG_COLUMNS",
    "LagSampler",
    "LagSummary",
    "LagTick",
    "MAX_INTERVAL_S",
    "MAX_ROWS",
    "MIN_INTERVAL_S",
    "Positions",
    "baseline_lag",
    "clear_time",
    "lag_peak",
    "partition_peaks",
    "summarise_lag",
    "total_lag",
]

#: The columns of a sampler's rows (`LagSampler.frame`).
LAG_COLUMNS = ("t", "topic", "partition", "end_offset", "position", "lag")
#: Default seconds between readings, and the bounds a caller may choose within.
INTERVAL_S = 0.25
MIN_INTERVAL_S = 0.05
MAX_INTERVAL_S = 10.0
#: Rows (readings x partitions) a sampler keeps by default: about 10 MB.
MAX_ROWS = 200_000

#: The consumer's position per partition: the next offset it will read (or has committed).
Positions = Callable[[], Mapping[Partition, int]]


@dataclass(frozen=True)
class LagTick:
    """One reading: seconds since the start, log ends and positions per partition."""

    t: float
    ends: Mapping[Partition, int]
    positions: Mapping[Partition, int]

    @property
    def lags(self) -> dict[Partition, int]:
        """Records behind, per partition."""
        return {p: max(end - self.positions[p], 0) for p, end in self.ends.items()}

    @property
    def total(self) -> int:
        """Records behind, summed over the partitions."""
        return sum(self.lags.values())

    @property
    def total_end(self) -> int:
        """Records written so far: the log ends summed (from offset 0 of fresh topics)."""
        return sum(self.ends.values())

    @property
    def total_position(self) -> int:
        """The positions summed: records read so far, for fresh topics."""
        return sum(self.positions.values())


class LagSampler(Sampler):
    """Reads log ends and a consumer's positions every `interval_s` in a background thread.

    Args:
        conf: admin settings of the cluster (`stack.kafka_config("admin")`).
        partitions: the `(topic, partition)` pairs to follow.
        positions: returns the consumer's position per partition; a partition it leaves out
            (nothing committed yet) counts from the log's start offset, read once at start.
        interval_s: seconds between readings, 0.05 to 10.
        started: the run's t = 0, a `time.perf_counter()` value (default: when `start` runs).
        max_rows: rows kept (readings x partitions). At the cap the sampler keeps reading,
            updates `latest` and calls `on_sample` as before, but keeps no more rows: it
            counts the readings it did not keep in `dropped` and `full` turns True.
        on_sample: called from the sampling thread with each `LagTick` (a live chart).

    A failure of a reading (the broker, the positions callable) ends the sampling; `stop`
    raises it.

    Usage:
        with GroupOffsets(conf, "readers", parts) as committed, LagSampler(conf, parts, committed) as lag:
            run_load()
        lag.frame()   # t, topic, partition, end_offset, position, lag
    """

    def __init__(
        self,
        conf: KafkaConf,
        partitions: Iterable[Partition],
        positions: Positions,
        *,
        interval_s: float = INTERVAL_S,
        started: float | None = None,
        max_rows: int = MAX_ROWS,
        on_sample: Callable[[LagTick], None] | None = None,
    ) -> None:
        if not (math.isfinite(interval_s) and MIN_INTERVAL_S <= interval_s <= MAX_INTERVAL_S):
            raise ValueError(f"interval_s must be between {MIN_INTERVAL_S} and {MAX_INTERVAL_S}, got {interval_s}")
        self.partitions = sorted(set(partitions))
        if not self.partitions:
            raise ValueError("give at least one (topic, partition) to follow")
        if max_rows < len(self.partitions):
            raise ValueError(f"max_rows must hold one reading of {len(self.partitions)} partitions, got {max_rows}")
        super().__init__(interval_s)
        self.conf = conf
        self.positions = positions
        self.started = started
        self.max_ticks = max_rows // len(self.partitions)
        self.on_sample = on_sample
        #: Readings kept, in time order (at most `max_ticks`).
        self.ticks: list[LagTick] = []
        #: The last reading taken, kept or not.
        self.latest: LagTick | None = None
        #: Readings taken but not kept, because the cap was reached.
        self.dropped = 0
        self._starts: dict[Partition, int] = {}
        self._reader = OffsetReader(conf)

    @property
    def full(self) -> bool:
        """True once the cap was reached and readings are no longer kept."""
        return len(self.ticks) >= self.max_ticks

    def stop(self) -> list[LagTick]:  # type: ignore[override]
        """Take a last reading, stop, and return the readings kept; raises a reading's failure."""
        super().stop()
        return self.ticks

    def _first(self) -> None:
        """The log start offsets are read first, which also connects the admin client, so
        that the first reading (at t = 0 when `started` was not given) is not slowed by it."""
        self._starts = self._reader.reported(self.partitions, "earliest")
        if self.started is None:
            self.started = time.perf_counter()
        self._read()

    def _wait(self) -> float:
        """On a fixed grid from the start, so readings do not drift by their own duration; a
        reading that overran skips the grid points it covered."""
        assert self.started is not None
        return self.interval_s - ((time.perf_counter() - self.started) % self.interval_s)

    def _close(self) -> None:
        self._reader.close()  # in the caller's thread, not whenever the collector gets to it

    def frame(self) -> pd.DataFrame:
        """The rows kept: `t`, `topic`, `partition`, `end_offset`, `position`, `lag`."""
        rows = [
            (tick.t, topic, partition, end, tick.positions[(topic, partition)], lag)
            for tick in self.ticks
            for ((topic, partition), end), lag in zip(tick.ends.items(), tick.lags.values(), strict=True)
        ]
        return pd.DataFrame(rows, columns=list(LAG_COLUMNS))

    def _read(self) -> None:
        assert self.started is not None
        t = time.perf_counter() - self.started
        given = self.positions()  # before the ends: ends only grow, so no lag is negative
        ends = self._reader.ends(self.partitions)
        positions = {p: int(given.get(p, self._starts.get(p, 0))) for p in self.partitions}
        tick = LagTick(t, ends, positions)
        self.latest = tick
        if self.full:
            self.dropped += 1
        else:
            self.ticks.append(tick)
        if self.on_sample is not None:
            self.on_sample(tick)


class GroupOffsets(AdminOwner):
    """A consumer group's committed offsets, read through one AdminClient: a sampler's `positions`.

    A partition without a commit is left out (the sampler counts it from the log's start).
    Use it as a context manager, so its AdminClient is destroyed in the calling thread.

    Usage: `with GroupOffsets(conf, "readers", [("orders", 0)]) as committed: committed()`.
    """

    def __init__(self, conf: KafkaConf, group: str, partitions: Iterable[Partition], *, timeout: float = 10.0) -> None:
        self.group = group
        self.partitions = sorted(set(partitions))
        self.timeout = timeout
        self._admin: AdminClient | None = admin_client(conf)

    def __call__(self) -> dict[Partition, int]:
        if self._admin is None:
            raise KafkaError(f"the committed offsets of group {self.group!r} are asked after close()")
        request = ConsumerGroupTopicPartitions(self.group, [TopicPartition(t, p) for t, p in self.partitions])
        try:
            future = self._admin.list_consumer_group_offsets([request], request_timeout=self.timeout)[self.group]
            answer = future.result()
        except KafkaException as exc:
            error = exc.args[0]
            raise KafkaError(f"cannot read the committed offsets of group {self.group!r}: {error}") from None
        return {(tp.topic, tp.partition): int(tp.offset) for tp in answer.topic_partitions or [] if tp.offset >= 0}


# The figures a burst is judged by: pure functions of a sampler's rows. --------------------


def total_lag(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows summed per reading: `t`, `end_offset`, `position`, `lag`, in time order."""
    if frame.empty:
        return pd.DataFrame(columns=["t", "end_offset", "position", "lag"])
    summed = frame.groupby("t", sort=True)[["end_offset", "position", "lag"]].sum().reset_index()
    return summed.astype({"end_offset": "int64", "position": "int64", "lag": "int64"})


def baseline_lag(totals: pd.DataFrame, *, before: float, warm_up_s: float = WARM_UP_S) -> float:
    """The largest total lag of the readings at `warm_up_s <= t < before` (the lead-in after its warm-up).

    Raises:
        ValueError: no reading in that stretch.
    """
    t = totals["t"].to_numpy()
    counted = after_warm_up(t, 0.0, warm_up_s) & (t < before)
    if not counted.any():
        raise ValueError(f"no lag reading between the warm-up's end ({warm_up_s:g} s) and {before:g} s")
    return float(totals["lag"].to_numpy()[counted].max())


def lag_peak(totals: pd.DataFrame) -> tuple[float, float]:
    """(the largest total lag, when it was first read); NaN for no readings."""
    if totals.empty:
        return math.nan, math.nan
    index = int(totals["lag"].to_numpy().argmax())
    return float(totals["lag"].iloc[index]), float(totals["t"].iloc[index])


def clear_time(totals: pd.DataFrame, *, after: float, level: float) -> float:
    """Seconds from `after` to the first reading at or after it whose total lag is at or below
    `level`; NaN when no reading is."""
    later = totals[totals["t"] >= after]
    cleared = later[later["lag"] <= level]
    return float(cleared["t"].iloc[0] - after) if len(cleared) else math.nan


def partition_peaks(frame: pd.DataFrame) -> dict[Partition, int]:
    """The largest lag of each partition."""
    if frame.empty:
        return {}
    peaks = frame.groupby(["topic", "partition"], sort=True)["lag"].max()
    return {(str(topic), int(partition)): int(lag) for (topic, partition), lag in peaks.items()}


@dataclass(frozen=True)
class LagSummary:
    """A burst judged by its lag readings (see the module's definitions)."""

    baseline: float
    peak: float
    peak_s: float
    #: Seconds from the burst's end to the first reading at or below the baseline; NaN if none.
    clear_s: float
    by_partition: dict[Partition, int]

    @property
    def cleared(self) -> bool:
        """Whether the lag came back to its baseline."""
        return not math.isnan(self.clear_s)


def summarise_lag(
    frame: pd.DataFrame, *, burst_start: float, burst_end: float, warm_up_s: float = WARM_UP_S
) -> LagSummary:
    """Baseline (lead-in after warm-up), peak, time to clear and per-partition peaks of a burst.

    Args:
        frame: a sampler's rows (`LagSampler.frame`).
        burst_start, burst_end: the burst's window, on the rows' clock.
        warm_up_s: readings before this are not part of the baseline.

    Raises:
        ValueError: no reading between the warm-up and the burst, so no baseline.

    Usage: `summarise_lag(sampler.frame(), burst_start=5.0, burst_end=8.0)`.
    """
    totals = total_lag(frame)
    baseline = baseline_lag(totals, before=burst_start, warm_up_s=warm_up_s)
    peak, peak_s = lag_peak(totals)
    return LagSummary(
        baseline=baseline,
        peak=peak,
        peak_s=peak_s,
        clear_s=clear_time(totals, after=burst_end, level=baseline),
        by_partition=partition_peaks(frame),
    )
