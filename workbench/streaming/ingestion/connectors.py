"""Spark's Kafka connector against the workbench's source, from one parallelism sweep.

Notebook 09 reads each topic with both sources (`parallelism_sweep(connectors=...)`), one
after the other, and with one plain consumer: these functions put the rows side by side
and say what they show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from workbench.streaming import official_connector_available
from workbench.streaming.ingestion.read_cpu import cpu_per_row
from workbench.streaming.ingestion.reads import PLAIN_SINKS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from workbench.config import Profile

__all__ = ["PARITY_GOAL", "available_connectors", "connector_sentence", "connector_table"]

#: What the workbench's source aims at: this share of Spark's connector's rows/s.
PARITY_GOAL = 0.8


def available_connectors(spark: SparkSession, profile: Profile) -> list[str]:
    """The sources this session can read Kafka with: Spark's connector (when its jars are on
    the classpath and the profile does not rule it out) and the workbench's, always."""
    if profile.spark.connector != "workbench" and official_connector_available(spark):
        return ["kafka", "workbench"]
    return ["workbench"]


def connector_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """Rows/s and CPU per row of each source by topic partitions (noop sink, unsplit), beside
    the plain consumer: one row per partition count, `ours_over_connector` where both ran."""
    reads = sweep[(sweep["sink"] == "noop") & sweep["min_partitions"].isna()]
    cpu = cpu_per_row(reads).assign(msg_s=reads["msg_s"].to_numpy())
    plain = sweep[sweep["sink"] == PLAIN_SINKS[0]].groupby("topic_partitions")["msg_s"].median()
    table = pd.DataFrame({"plain_consumer_msg_s": plain})
    for connector, rows in cpu.groupby("connector"):
        by_count = rows.groupby("topic_partitions")
        table[f"{connector}_msg_s"] = by_count["msg_s"].median()
        table[f"{connector}_cpu_us_per_row"] = by_count["total"].median()
    if {"kafka_msg_s", "workbench_msg_s"} <= set(table.columns):
        table["ours_over_connector"] = table["workbench_msg_s"] / table["kafka_msg_s"]
        table["ours_cpu_over_connector"] = table["workbench_cpu_us_per_row"] / table["kafka_cpu_us_per_row"]
    return table.reset_index()


def connector_sentence(table: pd.DataFrame) -> str:
    """Markdown bullets from `connector_table`: how far ours is from Spark's connector, and why."""
    if "ours_over_connector" not in table:
        return (
            "- Only the workbench's source read here: Spark's Kafka connector is not on this session's "
            "classpath (or the profile asks for ours), so there is nothing to compare it with."
        )
    ratios = table.set_index("topic_partitions")["ours_over_connector"]
    cpu = table.set_index("topic_partitions")["ours_cpu_over_connector"]
    short = [str(n) for n, r in ratios.items() if r < PARITY_GOAL]
    verdict = "met at every partition count" if not short else f"missed at {', '.join(short)} partition(s)"
    lines = [
        "- The workbench's source read at "
        + ", ".join(f"**{r:.0%}** ({n} partition{'s' if n > 1 else ''})" for n, r in ratios.items())
        + f" of Spark's connector's rows/s: the {PARITY_GOAL:.0%} goal is {verdict}.",
        "- Per row it spent "
        + ", ".join(f"{c:.1f}x ({n} partition{'s' if n > 1 else ''})" for n, c in cpu.items())
        + " the CPU of Spark's connector (all processes: Spark's JVM, its Python workers, the broker). "
        + "Ours hands every record from librdkafka to Python and then through Arrow to the JVM; Spark's "
        + "connector reads in the JVM it runs in.",
    ]
    if "plain_consumer_msg_s" in table and table["plain_consumer_msg_s"].notna().all():
        best = (
            table.set_index("topic_partitions")["kafka_msg_s"]
            / table.set_index("topic_partitions")["plain_consumer_msg_s"]
        )
        lines.append(
            "- Spark's connector reached "
            + ", ".join(f"{r:.0%}" for r in best)
            + " of one plain confluent-kafka consumer's rate on the same topics."
        )
    return "\n".join(lines)
