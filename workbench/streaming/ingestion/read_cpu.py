"""Where the CPU of a read went, per row and by process, and the sentence notebook 09 says it in."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from workbench.measure.contract import NOT_MEASURED
from workbench.streaming.ingestion.reads import PLAIN_SINKS

__all__ = ["cpu_per_row", "cpu_sentence"]


#: The processes a read is charged with, by the column of their CPU seconds.
_SPARK_READ_CPU = {
    "spark_jvm_cpu_s": "Spark JVM",
    "spark_python_cpu_s": "Spark Python workers",
    "broker_cpu_s": "broker",
}


_PLAIN_READ_CPU = {"client_cpu_s": "plain consumer", "broker_cpu_s": "broker"}


def cpu_per_row(sweep: pd.DataFrame) -> pd.DataFrame:
    """Where the CPU of each read in a `parallelism_sweep` went: µs of CPU per row, by process.

    Why a Spark read falls short of one plain consumer on the same machine: the consumer
    pays librdkafka and the broker; Spark's read pays those in its Python workers, plus the
    JVM's work on every row, on the same cores. `cores_busy` is the CPU of all of them over
    the read's wall time, both taken over the query's whole life (start and stop included).
    NaN where a process was not measured (no broker on a cluster the workbench did not start).

    Returns:
        One row per read (`sink`, `topic_partitions`, `min_partitions`), a column per process
        in µs of CPU per row, `total` (their sum) and `cores_busy`.
    """
    lines = []
    for read in sweep.to_dict("records"):
        processes = _PLAIN_READ_CPU if read["sink"] in PLAIN_SINKS else _SPARK_READ_CPU
        rows, cpu = read["records"], {name: read.get(column, NOT_MEASURED) for column, name in processes.items()}
        measured = [seconds for seconds in cpu.values() if seconds == seconds]
        lines.append(
            {
                "connector": read.get("connector", "workbench"),
                "sink": read["sink"],
                "topic_partitions": read["topic_partitions"],
                "min_partitions": read.get("min_partitions"),
                **{name: seconds / rows * 1e6 if rows else NOT_MEASURED for name, seconds in cpu.items()},
                "total": sum(measured) / rows * 1e6 if measured and rows else NOT_MEASURED,
                "cores_busy": sum(measured) / read["wall_s"] if measured and read["wall_s"] > 0 else NOT_MEASURED,
            }
        )
    return pd.DataFrame(lines)


def cpu_sentence(cpu: pd.DataFrame, cores: int | None = None) -> str:
    """One Markdown sentence from `cpu_per_row`: a Spark noop read against the GC-paused plain
    consumer on the fewest partitions, µs of CPU per row by process, on how many of the
    machine's `cores` (default: all of this one's)."""
    cores = cores or os.cpu_count() or 1
    spark = cpu[(cpu.sink == "noop") & cpu.min_partitions.isna()]
    if spark.connector.nunique() > 1:  # both sources were measured: Spark's connector speaks here
        spark = spark[spark.connector == "kafka"]
    plain = cpu[cpu.sink == PLAIN_SINKS[1]]
    if spark.empty or plain.empty:
        return "No noop read and GC-paused plain read to compare CPU with."
    fewest = spark.topic_partitions.min()
    ours, theirs = spark[spark.topic_partitions == fewest].iloc[0], plain[plain.topic_partitions == fewest].iloc[0]

    def parts(row: pd.Series, names: Sequence[str]) -> str:
        return ", ".join(f"{name} {row[name]:.2f}" for name in names if row[name] == row[name])

    source = "Spark's connector" if ours.connector == "kafka" else "the workbench's source"
    return (
        f"Per row ({fewest} partition{'s' if fewest > 1 else ''}), Spark's read through {source} cost "
        f"**{ours.total:.2f} µs of CPU** "
        f"({parts(ours, list(_SPARK_READ_CPU.values()))}), **{ours.total / theirs.total:.1f}x** the plain consumer's "
        f"{theirs.total:.2f} µs ({parts(theirs, list(_PLAIN_READ_CPU.values()))}), on the same {cores} cores; "
        f"over the query's life, start and stop included, it kept {ours.cores_busy:.1f} of them busy."
    )
