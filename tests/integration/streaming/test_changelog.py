"""A compacted changelog topic read by Spark into a table: exactly the table the log holds
and the one written, whichever connector reads, and read from fewer records than an
uncompacted copy of the same writes. Exact tables and counts, never speed.

One module-scoped pair of topics (one compacted, one `cleanup.policy=delete`) gets the same
writes: 20 keys in rounds 0.2 s apart, so segments roll at the appends and the embedded
broker's cleaner (every second, docs/brokers.md) compacts while the writes go on; 4 keys
deleted by tombstones half-way. The tests wait for the cleaner once, on the log itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from workbench.errors import BenchError, KafkaError
from workbench.retention import ChangelogTwins, changelog_twins, scan_log
from workbench.stack import Stack
from workbench.streaming import Connector, changelog_read_cost, changelog_table

KEYS, DELETED = 20, 4


@pytest.fixture(scope="module")
def changelog(stack: Stack) -> Iterator[ChangelogTwins]:
    """A compacted topic and an uncompacted one with the same writes (`changelog_twins`)."""
    with changelog_twins(stack, keys=KEYS, deleted=DELETED) as twins:
        yield twins


def test_spark_builds_the_table_the_compacted_log_holds(
    spark: SparkSession, stack: Stack, changelog: ChangelogTwins, connector: Connector
) -> None:
    table = changelog_table(spark, stack, changelog.compacted, connector=connector)
    in_log = scan_log(stack, changelog.compacted, 0.0)[1]
    assert table == {k: v for k, v in in_log.items() if k is not None and v is not None}, "what a consumer reads"
    assert table == changelog.table, "and the one written last"
    deleted = {b"key-%05d" % k for k in range(DELETED)}
    assert len(table) == KEYS - DELETED and not set(table) & deleted


def test_reading_what_compaction_left_reads_fewer_records_for_the_same_table(
    spark: SparkSession, stack: Stack, changelog: ChangelogTwins
) -> None:
    compacted, uncompacted, writes = changelog.compacted, changelog.uncompacted, changelog.writes
    assert changelog_table(spark, stack, compacted) == changelog_table(spark, stack, uncompacted)
    short, whole = (changelog_read_cost(spark, stack, t, repeat=1) for t in (compacted, uncompacted))
    assert short["table_keys"] == whole["table_keys"] == KEYS - DELETED
    assert whole["records_read"] == whole["offsets"] == len(writes), "nothing removed from the uncompacted log"
    assert short["offsets"] == len(writes) and short["records_read"] < whole["records_read"]
    assert short["seconds"] > 0 and short["msg_s"] == short["records_read"] / short["seconds"]


def test_an_unknown_topic_or_a_bad_repeat_is_one_line(spark: SparkSession, stack: Stack) -> None:
    missing = f"changelog-missing-{uuid.uuid4().hex[:8]}"
    with pytest.raises(KafkaError, match=r"(?i)unknown topic") as caught:
        changelog_table(spark, stack, missing)
    assert "\n" not in str(caught.value)
    with pytest.raises(BenchError, match="repeat must be from 1 to 100, got 0"):
        changelog_read_cost(spark, stack, missing, repeat=0)
