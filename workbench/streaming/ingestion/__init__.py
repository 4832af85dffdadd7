"""What notebook 09 measures about Spark reading Kafka, one module per question.

    runs             a fresh telemetry topic, one query run to its end and timed, a warm session
    ceiling          one plain consumer, and the source's reader without Spark
    connectors       Spark's Kafka connector against the workbench's source, side by side
    reads            partitions, sinks and source options (`spark_ingest`)
    read_cpu         where a read's CPU went, per row and by process
    aggregation      the windowed aggregation by shuffle partitions (`spark_aggregate`)
    trigger_latency  record latency by trigger interval, and the floors (`spark_trigger_latency`)
    real_time        real-time mode against micro-batches, end to end (`spark_real_time`), and which source it takes
    topic_layout     one topic per device against one shared topic (`spark_topic_layout`)
    restart          nothing lost or twice across a restart (`spark_restart`)

Each returns tidy rows and deletes the topics it wrote. The six `spark_*` functions are
the Spark experiments `workbench bench` and `sweep` run (`workbench.bench.experiments`):
one point, one contract row. Importing this package imports no pyspark.

    from workbench.streaming import ingestion
    ingestion.warm_up(spark, stack, work)
    rows = ingestion.parallelism_sweep(spark, stack, work, records=1_000_000)
"""

from workbench.streaming.ingestion.aggregation import shuffle_sweep, spark_aggregate
from workbench.streaming.ingestion.ceiling import consumer_ceiling, reader_alone, source_vs_ceiling
from workbench.streaming.ingestion.connectors import (
    PARITY_GOAL,
    available_connectors,
    connector_sentence,
    connector_table,
)
from workbench.streaming.ingestion.read_cpu import cpu_per_row, cpu_sentence
from workbench.streaming.ingestion.reads import PLAIN_SINKS, SINKS, parallelism_sweep, rate_limit_runs, spark_ingest
from workbench.streaming.ingestion.real_time import (
    MODES,
    real_time_latency,
    real_time_refusal,
    real_time_sentence,
    spark_real_time,
)
from workbench.streaming.ingestion.restart import check_restarts, restart_check, restart_exact, spark_restart
from workbench.streaming.ingestion.runs import bench_session, ingest, spark_row, telemetry_topic, warm_up
from workbench.streaming.ingestion.topic_layout import LAYOUTS, layout_sentence, per_device_topics, spark_topic_layout
from workbench.streaming.ingestion.trigger_latency import (
    spark_trigger_latency,
    trigger_floor,
    trigger_latency,
    trigger_sentence,
)

__all__ = [
    "LAYOUTS", "MODES", "PARITY_GOAL", "PLAIN_SINKS", "SINKS", "available_connectors",
    "bench_session", "check_restarts", "connector_sentence", "connector_table", "consumer_ceiling",
    "cpu_per_row", "cpu_sentence", "ingest", "layout_sentence", "parallelism_sweep", "per_device_topics",
    "rate_limit_runs", "reader_alone", "real_time_latency", "real_time_refusal",
    "real_time_sentence", "restart_check", "restart_exact", "shuffle_sweep", "source_vs_ceiling",
    "spark_aggregate", "spark_ingest", "spark_real_time", "spark_restart", "spark_row",
    "spark_topic_layout", "spark_trigger_latency", "telemetry_topic", "trigger_floor",
    "trigger_latency", "trigger_sentence", "warm_up"
]  # fmt: skip
