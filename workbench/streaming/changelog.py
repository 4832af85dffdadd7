"""A compacted changelog topic as a table built by Spark, and what reading the whole log costs.

A changelog topic holds, per key, every value the key ever had; the table it stands for
is the latest value per key, a tombstone (a null value) deleting the key. Compaction
removes a key's older records, eventually (never in the active segment, only once the
dirty share passes `min.cleanable.dirty.ratio`), so a reader still gets some stale
records and must reduce the log itself. The answer does not depend on how far compaction
got: it only removes records a later one of the same key overrides, and tombstones after
`delete.retention.ms`, whose keys are absent from the table either way. So the table Spark
builds is comparable, exactly, with the one a plain consumer reads off the log, and with
the one written; only the records read, and so the time, differ.

    table = changelog_table(spark, stack, "prices")            # {key: value}, live keys only
    rows = [changelog_read_cost(spark, stack, t) for t in (compacted, uncompacted)]

"Latest" is by (partition, offset), the order Kafka gives, not by timestamp (a producer
sets the timestamp; clocks differ). A keyed topic keeps each key in one partition, where
the offset orders its records; the partition only breaks ties, so a key written to two
partitions by hand gets the record of the higher partition, deterministically.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any

from workbench.errors import BenchError
from workbench.kafka.admin import describe_topic
from workbench.kafka.offsets import total_records
from workbench.streaming.kafka_reader import Connector, connector_name, kafka_source

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import Column, DataFrame, SparkSession

    from workbench.stack import Stack

__all__ = ["changelog_read_cost", "changelog_sentence", "changelog_study", "changelog_table"]

#: Most timed reads `changelog_read_cost` takes of one topic.
_MAX_REPEAT = 100


def changelog_table(
    spark: SparkSession, stack: Stack, topic: str, *, connector: Connector | None = None
) -> dict[bytes, bytes]:
    """The table `topic` stands for: each live key's latest value, tombstoned keys left out.

    A batch read of everything the log holds now (earliest to latest), through the Kafka
    source the rest of `workbench.streaming` uses, reduced in Spark to one row per key, so
    only the table reaches Python (a log is as long as its history; its table is as long
    as its keys). Records without a key belong to no row and are skipped.

    Args:
        connector: `kafka` (Spark's) or `workbench` (ours) instead of the profile's choice.

    Raises:
        KafkaError: the topic does not exist (asked first, so it is our one-line error).
        KafkaOptionError, ConfigError: as `kafka_source`.

    Usage: `changelog_table(spark, stack, "prices") == {b"AAPL": b"231.4", ...}`.
    """
    describe_topic(stack.kafka_config("admin"), topic)  # an unknown topic is our error, not an empty table
    rows = _per_key(spark, stack, topic, connector).where(_live()).select("key", "value").collect()
    return {bytes(row["key"]): bytes(row["value"]) for row in rows}


def changelog_read_cost(
    spark: SparkSession, stack: Stack, topic: str, *, repeat: int = 3, connector: Connector | None = None
) -> dict[str, Any]:
    """What building `topic`'s table costs Spark: records read, seconds, records/s, table size.

    One read is one Spark job that reads every record the log holds now and reduces it to
    the table (`changelog_table`'s plan, counted rather than collected). Run it on a
    compacted topic and on an uncompacted copy of the same writes (`cleanup.policy=delete`)
    and the two rows compare reading what compaction left with reading the whole history:
    `table_keys` must be equal, `records_read` and `seconds` are the difference.

    The session's first job pays for starting Python workers and the JVM's cold code, so
    one untimed read comes first, whichever topic a caller reads first; `seconds` is the
    median of the `repeat` timed reads after it, and includes Spark's fixed cost per job
    (measured: 0.8-1.0 s for 32 records on local[2], two cores), which dominates a small topic.

    Returns:
        `topic`, `connector` (`kafka` or `workbench`), `offsets` (end minus start over the
        partitions: what the log spans, all of it had nothing been compacted), `records_read`
        (what the log still holds), `table_keys` (live keys), `seconds`, `msg_s`
        (records read per second), `repeat`.

    Raises:
        BenchError: `repeat` is not from 1 to 100.
        KafkaError: the topic does not exist.

    Usage: `pd.DataFrame([changelog_read_cost(spark, stack, t) for t in (compacted, copy)])`.
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= _MAX_REPEAT:
        raise BenchError(f"repeat must be from 1 to {_MAX_REPEAT}, got {repeat!r}")
    describe_topic(stack.kafka_config("admin"), topic)  # before the clock: an unknown topic is our error
    times: list[float] = []
    for _ in range(repeat + 1):  # the first: untimed, warming the session
        started = time.perf_counter()
        records_read, table_keys = _count(spark, stack, topic, connector)
        times.append(time.perf_counter() - started)
    seconds = statistics.median(times[1:])
    return {
        "topic": topic,
        "connector": connector_name(spark, stack.profile, connector),
        "offsets": total_records(stack.kafka_config("consumer"), topic),
        "records_read": records_read,
        "table_keys": table_keys,
        "seconds": seconds,
        "msg_s": records_read / seconds if seconds > 0 else float("nan"),
        "repeat": repeat,
    }


def _per_key(spark: SparkSession, stack: Stack, topic: str, connector: Connector | None) -> DataFrame:
    """One row per key of the whole log: `records` read under it, its latest `value` by (partition, offset).

    `max_by` of a struct, which is never null, so a tombstone stays the latest value
    whatever `max_by` does with a null (PySpark 4.2 keeps it; its documentation does not
    say); one aggregation, no sort of the log.
    """
    from pyspark.sql import functions as F

    frame = kafka_source(
        spark,
        stack,
        streaming=False,
        connector=connector,
        subscribe=topic,
        startingOffsets="earliest",
        endingOffsets="latest",
    )
    latest = F.max_by(F.struct("value"), F.struct("partition", "offset"))
    return frame.groupBy("key").agg(F.count("*").alias("records"), latest["value"].alias("value"))


def _count(spark: SparkSession, stack: Stack, topic: str, connector: Connector | None) -> tuple[int, int]:
    """Records read and live keys: the table's whole plan, one row to Python."""
    from pyspark.sql import functions as F

    totals = (
        _per_key(spark, stack, topic, connector)
        .agg(F.sum("records").alias("records"), F.count_if(_live()).alias("keys"))
        .collect()[0]  # an aggregation without groups: always one row
    )
    return int(totals["records"] or 0), int(totals["keys"] or 0)


def _live() -> Column:
    """A key's row that belongs in the table: a key, and a latest value that is not a tombstone."""
    from pyspark.sql import functions as F

    return F.col("key").isNotNull() & F.col("value").isNotNull()


def changelog_study(
    spark: SparkSession, stack: Stack, *, keys: int = 1_000, deleted: int = 100, rounds: int = 15, repeat: int = 3
) -> pd.DataFrame:
    """The same changelog written to a compacted topic and to one kept whole
    (`retention.changelog_twins`: `rounds` rounds of `keys` keys, `deleted` of them deleted
    half-way), each read by Spark into its table: one row per topic with `cleanup.policy`,
    `written`, `changelog_read_cost`'s columns and `table_matches` (Spark's table is the
    one written).

    Raises:
        RetentionError: the cleaner did not compact within a minute (the message says why).
        TopicConfigRefused: the broker refused a topic's settings.
    """
    import pandas as pd

    from workbench.retention.twins import changelog_twins

    before = max(1, rounds // 3)
    twins_of = changelog_twins(stack, keys=keys, deleted=deleted, rounds_before=before, rounds_after=rounds - before)
    with twins_of as twins:
        rows = []
        for policy, topic in (("compact", twins.compacted), ("delete", twins.uncompacted)):
            cost = changelog_read_cost(spark, stack, topic, repeat=repeat)
            matches = changelog_table(spark, stack, topic) == twins.table
            rows.append({"cleanup.policy": policy, "written": len(twins.writes), **cost, "table_matches": matches})
    return pd.DataFrame(rows)


def changelog_sentence(rows: pd.DataFrame) -> str:
    """What the study says: the records each read took for the same table, and the time."""
    by = rows.set_index("cleanup.policy")
    compact, whole = by.loc["compact"], by.loc["delete"]
    same = "the same table" if bool(by["table_matches"].all()) else "**not** the same table"
    return (
        f"Spark built {same} ({int(compact['table_keys']):,} live keys) from {int(compact['records_read']):,} records "
        f"of the compacted topic in {compact['seconds']:.2f} s and from all {int(whole['records_read']):,} of the "
        f"uncompacted one in {whole['seconds']:.2f} s: {whole['records_read'] / compact['records_read']:.1f}x the "
        f"records for {whole['seconds'] / compact['seconds']:.2f}x the time (each read includes Spark's fixed cost "
        "per job)."
    )
