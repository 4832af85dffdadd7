"""A Kafka source for Spark written with PySpark's Python Data Source API, on confluent-kafka.

Spark's own `kafka` source lives in a jar that only Maven publishes; this one mirrors its
options and output schema (see `options.py`) so the same notebook code runs with either.
It is registered as `workbench_kafka`, because Spark reserves the name `kafka` even when
the jar is absent.

How a micro-batch works, and why:

- Offsets are `{"topic": {"partition": next offset}}`, sorted, as the official source
  checkpoints them; Spark keeps them in its offset log, and this source commits nothing to
  Kafka. A batch is `[start, end)` of each partition.
- `latestOffset(start, limit)` (PySpark 4.2+ admission control) asks the broker for the
  *true* log end (`workbench.kafka.OffsetReader.ends`: Kafka's ListOffsets, or the log's
  own end on Tansu, whose answer is off by a record batch), through one AdminClient kept for the query's life
  (the driver-side runner process lives as long as the query), and applies
  `maxOffsetsPerTrigger` as `ReadMaxRows`, shared in proportion to each partition's
  backlog. `prepareForTriggerAvailableNow` snapshots the ends once, so
  `Trigger.AvailableNow` drains exactly what was there, in as many rate-limited batches
  as it takes, then stops.
- `partitions(start, end)` turns the two offsets into ranges, one task each, split further
  by `minPartitions`; new partitions (and, with a pattern, new topics) start at their
  earliest offset. A batch smaller than `ONE_TASK_BELOW` records (and no `minPartitions`)
  is one task reading all its ranges: a task's fixed cost dwarfs such a read, and the
  low-latency queries that make small batches pay it on every trigger.
- `read(ranges)` runs on an executor: one consumer is created there for the task (the
  reader is pickled, and Kafka clients cannot be), assigned to each partition at its
  `start` with no group join, and stops at each `end` exactly. It is closed when the
  task ends: a consumer kept in the reused Python worker would crash it once a topic it
  read is deleted on Tansu (librdkafka 2.16, measured). Records come out
  as Arrow record batches, which Spark takes as they are (1.3-1.6x faster than tuples in
  the prototype). So a restart from the checkpoint re-reads exactly the ranges of the
  batch that did not commit: nothing is skipped and nothing is read twice into a
  committed result.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import pyarrow as pa
from confluent_kafka import KafkaException
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from workbench.errors import KafkaError
from workbench.kafka.offsets import OffsetReader
from workbench.streaming.offsets import (
    OffsetRange,
    Partition,
    from_json,
    plan_ranges,
    rate_limit,
    split_ranges,
    to_json,
)
from workbench.streaming.options import (
    EARLIEST,
    LATEST,
    KafkaOptionError,
    SourceOptions,
    TimestampOffsets,
    parse_options,
)
from workbench.streaming.range_reader import DATA_LOSS_HINT, read_ranges

__all__ = [
    "FORMAT_NAME",
    "KafkaBatchReader",
    "KafkaDataSource",
    "KafkaRangePartition",
    "KafkaStreamReader",
    "ONE_TASK_BELOW",
    "kafka_schema",
]

_T = TypeVar("_T")

log = logging.getLogger("workbench.streaming")

#: The format name: `spark.readStream.format(FORMAT_NAME)`.
FORMAT_NAME = "workbench_kafka"

#: A micro-batch of fewer records is read by one task, its ranges one after another.
#: Each task costs Spark and its Python worker a fixed ~100 ms and more (on 2 cores, measured
#: by `experiments.trigger_latency`), while reading 10,000 records takes ~20 ms: for the small
#: batches of a low-latency query, one task per partition is mostly that fixed cost.
ONE_TASK_BELOW = 10_000


def kafka_schema(include_headers: bool = False) -> StructType:
    """The official source's fixed output schema (`headers` only with includeHeaders)."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
        fields.append(StructField("headers", ArrayType(header)))
    return StructType(fields)


class KafkaDataSource(DataSource):
    """`spark.readStream.format("workbench_kafka")` and `spark.read.format(...)`.

    Options are those of `format("kafka")`; see `workbench.streaming.options`.
    """

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> StructType:
        # Runs when the DataFrame is defined: the checks common to read and readStream
        # happen here, so a bad option fails at load(), not at the first trigger.
        return kafka_schema(parse_options(self.options, streaming=None).include_headers)

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        options = parse_options(self.options, streaming=True)
        _check_schema(schema, options)
        return KafkaStreamReader(options, schema)

    def reader(self, schema: StructType) -> KafkaBatchReader:
        options = parse_options(self.options, streaming=False)
        _check_schema(schema, options)
        return KafkaBatchReader(options, schema)


def _check_schema(schema: StructType, options: SourceOptions) -> None:
    if schema != kafka_schema(options.include_headers):
        raise KafkaOptionError(None, "Kafka source has a fixed schema and cannot be set with a custom one")


class KafkaRangePartition(InputPartition):
    """One Spark task: the records `[start, end)` of one topic-partition, or of a few read in turn."""

    def __init__(self, *ranges: OffsetRange) -> None:
        super().__init__(tuple(tuple(r) for r in ranges))
        self.ranges = ranges

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.topic}[{r.partition}] {r.start}..{r.end}" for r in self.ranges)
        return f"KafkaRangePartition({shown})"


class _Broker:
    """Driver-side questions to Kafka: which partitions, and where their logs start and end.

    One per reader, asked on every trigger through one AdminClient (`OffsetReader`).
    """

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self.offsets = OffsetReader(options.kafka, probe=options.read_ends_from_log or None)

    def close(self) -> None:
        self.offsets.close()

    def partitions(self) -> list[Partition]:
        """The partitions the strategy names now (topics are re-listed on every call)."""
        kind, value = self.options.strategy
        if kind == "assign":
            return sorted((topic, p) for topic, parts in value.items() for p in parts)
        metadata = self._retry("list topics", lambda: self.offsets.admin.list_topics(timeout=10))
        if kind == "subscribe":
            wanted = set(value)
            chosen = [t for t in metadata.topics.values() if t.topic in wanted]
        else:
            pattern = re.compile(value)
            chosen = [
                t
                for t in metadata.topics.values()
                if not str(t.topic).startswith("__") and pattern.fullmatch(str(t.topic))
            ]
        # A topic being created may not have its partitions yet: it is picked up next time.
        return sorted((str(t.topic), p) for t in chosen if t.error is None for p in t.partitions)

    def earliest(self, partitions: Sequence[Partition]) -> dict[Partition, int]:
        if not partitions:
            return {}
        return self._retry("earliest offsets", lambda: self.offsets.reported(partitions, "earliest"))

    def latest(self, partitions: Sequence[Partition]) -> dict[Partition, int]:
        """True log-end offsets (on Tansu, ListOffsets(latest) stops a batch short: read from the log)."""
        if not partitions:
            return {}
        return self._retry("latest offsets", lambda: self.offsets.ends(partitions))

    def resolve(
        self,
        wanted: str | Mapping[Partition, int] | TimestampOffsets,
        partitions: Sequence[Partition],
        option: str = "startingOffsets",
    ) -> dict[Partition, int]:
        """`earliest`, `latest`, per-partition JSON (with -2/-1) or timestamps as concrete offsets."""
        if isinstance(wanted, TimestampOffsets):
            return self._by_timestamp(wanted, partitions)
        if wanted == "earliest":
            return self.earliest(partitions)
        if wanted == "latest":
            return self.latest(partitions)
        assert isinstance(wanted, Mapping)
        if set(wanted) != set(partitions):
            raise KafkaOptionError(
                option,
                f"If {option} contains specific offsets, you must specify all TopicPartitions. "
                f"Use -1 for latest, -2 for earliest. Specified: {sorted(wanted)} Assigned: {sorted(partitions)}",
            )
        earliest = self.earliest([tp for tp, o in wanted.items() if o == EARLIEST])
        latest = self.latest([tp for tp, o in wanted.items() if o == LATEST])
        return {tp: earliest[tp] if o == EARLIEST else latest[tp] if o == LATEST else o for tp, o in wanted.items()}

    def _by_timestamp(self, wanted: TimestampOffsets, partitions: Sequence[Partition]) -> dict[Partition, int]:
        """The first offset at or after each partition's timestamp; where none is, the end or an error."""
        stamps = wanted.timestamps
        if isinstance(stamps, int):
            stamps = dict.fromkeys(partitions, stamps)
        elif set(stamps) != set(partitions):
            position = "start" if wanted.option.startswith("starting") else "end"
            raise KafkaOptionError(
                wanted.option,
                f"Partitions specified for Kafka timestamp based {position} offsets don't match what are assigned. "
                "Maybe topic partitions are created or deleted while the query is running, or you didn't specify "
                f"all the partitions. Specified: {sorted(stamps)} Assigned: {sorted(partitions)}",
            )
        found = self._retry("offsets by timestamp", lambda: self.offsets.by_timestamp(stamps))
        unmatched = sorted(tp for tp, offset in found.items() if offset is None)
        if unmatched and wanted.no_match == "error":
            tp = unmatched[0]
            raise KafkaOptionError(
                wanted.option,
                f"No offset matched from request of topic-partition {tp[0]}-{tp[1]} and timestamp {stamps[tp]}. "
                "Set startingOffsetsByTimestampStrategy to latest to start such partitions at their end.",
            )
        ends = self.latest(unmatched)
        return {tp: ends[tp] if offset is None else offset for tp, offset in found.items()}

    def _retry(self, what: str, call: Callable[[], _T]) -> _T:
        attempts = self.options.offset_fetch_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return call()
            except (KafkaError, KafkaException) as exc:
                if attempt == attempts:
                    raise KafkaError(
                        f"Kafka source ({self.options.topic_description}): cannot get {what} "
                        f"after {attempts} attempts: {exc}"
                    ) from None
                log.warning("fetching %s failed (attempt %d of %d): %s", what, attempt, attempts, exc)
                time.sleep(self.options.offset_retry_interval_ms / 1000)
        raise AssertionError("unreachable")


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches as offset ranges; admission control and AvailableNow (PySpark 4.2+).

    The driver-side methods run in one long-lived Python process per query; `read` runs
    on executors against a pickled copy made when the query was planned, so it may only
    use `options` and the partition it is given.
    """

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self._target: dict[Partition, int] | None = None
        self._latest: dict[Partition, int] | None = None
        self._last_batch_at = time.monotonic()
        self._kept_broker: _Broker | None = None
        self._initial: dict[str, dict[str, int]] | None = None

    @property
    def _broker(self) -> _Broker:
        """The driver's one `_Broker`: the runner process lives as long as the query."""
        if self._kept_broker is None:
            self._kept_broker = _Broker(self.options)
        return self._kept_broker

    def __getstate__(self) -> dict[str, Any]:
        # Kafka clients cannot be pickled; a copy made for the executors makes its own.
        return {**self.__dict__, "_kept_broker": None}

    def stop(self) -> None:
        if self._kept_broker is not None:
            self._kept_broker.close()
            self._kept_broker = None

    def initialOffset(self) -> dict[str, dict[str, int]]:
        """Where a new query starts, resolved once: Spark (4.3) asks twice before the first
        batch and plans it from the second answer, so a `latest` resolved again on a live
        topic would start past the end it planned to (a false data-loss error, measured)."""
        if self._initial is None:
            broker = self._broker
            self._initial = to_json(broker.resolve(self.options.starting, broker.partitions()))
        return self._initial

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        if self.options.min_offsets_per_trigger is not None:
            return ReadMinRows(self.options.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        broker = self._broker
        self._target = broker.latest(broker.partitions())

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: ReadLimit | None = None
    ) -> dict[str, dict[str, int]]:
        broker = self._broker
        begin = from_json(start or {})
        latest = dict(self._target) if self._target is not None else broker.latest(self._current(broker, begin))
        self._latest = latest
        # New partitions start at their earliest offset; the limit is shared with them.
        base = {**broker.earliest([tp for tp in latest if tp not in begin]), **begin}
        if limit is None or isinstance(limit, ReadAllAvailable):
            end = latest
        else:
            if self._holds_back(base, latest):
                return to_json(begin)
            max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else self.options.max_offsets_per_trigger
            end = rate_limit(max_rows, base, latest) if max_rows else latest
        if end != {tp: base[tp] for tp in end}:
            self._last_batch_at = time.monotonic()
        return to_json(end)

    def _current(self, broker: _Broker, begin: Mapping[Partition, int]) -> list[Partition]:
        """The partitions now; asked twice before a known partition counts as gone.

        A topic's metadata can carry a transient error (a leader moving), and a partition
        missing once must not fail the query for data loss.
        """
        current = broker.partitions()
        if any(tp not in current for tp in begin):
            time.sleep(self.options.offset_retry_interval_ms / 1000)
            current = broker.partitions()
        return current

    def _holds_back(self, base: Mapping[Partition, int], latest: Mapping[Partition, int]) -> bool:
        """minOffsetsPerTrigger: wait for enough new records, at most maxTriggerDelay."""
        wanted = self.options.min_offsets_per_trigger
        if wanted is None or self._target is not None:  # AvailableNow must drain, never wait
            return False
        backlog = sum(max(end - base[tp], 0) for tp, end in latest.items())
        waited_ms = (time.monotonic() - self._last_batch_at) * 1000
        return backlog < wanted and waited_ms < self.options.max_trigger_delay_ms

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        return to_json(self._latest) if self._latest is not None else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[KafkaRangePartition]:
        begin, stop = from_json(start), from_json(end)
        if begin == stop:
            return []  # also how Spark announces a restart's position: nothing to plan
        new = [tp for tp in stop if tp not in begin]
        if new:
            earliest = self._broker.earliest(new)
            for tp in new:
                if earliest[tp] != 0:
                    self._data_loss(f"Added partition {tp[0]}-{tp[1]} starts from {earliest[tp]} instead of 0.")
            begin = {**earliest, **begin}
        gone = sorted(tp for tp in begin if tp not in stop)
        if gone:
            self._data_loss(f"{len(gone)} partitions are gone: {gone}.")
        for tp, offset in stop.items():
            if offset < begin[tp]:
                self._data_loss(f"Partition {tp[0]}-{tp[1]}'s offset was changed from {begin[tp]} to {offset}.")
        if self._target is not None:
            beyond = {tp: o for tp, o in stop.items() if o > self._target.get(tp, o)}
            if beyond:
                raise KafkaError(f"AvailableNow planned past its target offsets: {beyond}")
        ranges = split_ranges(plan_ranges(begin, stop), self.options.min_partitions)
        if self.options.min_partitions is None and len(ranges) > 1 and sum(r.size for r in ranges) < ONE_TASK_BELOW:
            return [KafkaRangePartition(*ranges)]
        return [KafkaRangePartition(r) for r in ranges]

    def _data_loss(self, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise KafkaError(f"{message} {DATA_LOSS_HINT}", "DATA_LOSS")
        log.warning("%s Some data may have been lost.", message)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, KafkaRangePartition)
        return read_ranges(self.options, partition.ranges, self.schema)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: like the official source, offsets live only in the checkpoint."""


class KafkaBatchReader(DataSourceReader):
    """`spark.read`: startingOffsets (default earliest) to endingOffsets (default latest)."""

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema

    def partitions(self) -> list[KafkaRangePartition]:
        broker = _Broker(self.options)
        try:
            current = broker.partitions()
            start = broker.resolve(self.options.starting, current)
            end = broker.resolve(self.options.ending, current, "endingOffsets")
        finally:
            broker.close()
        for tp in end:
            if end[tp] < start[tp]:
                raise KafkaOptionError(
                    "endingOffsets",
                    f"ending offset {end[tp]} is before starting offset {start[tp]} for {tp[0]}-{tp[1]}",
                )
        ranges = split_ranges(plan_ranges(start, end), self.options.min_partitions)
        # Spark wants at least one partition; an empty range reads nothing.
        return [KafkaRangePartition(r) for r in ranges] or [KafkaRangePartition(OffsetRange("", 0, 0, 0))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, KafkaRangePartition)
        return read_ranges(self.options, partition.ranges, self.schema)
