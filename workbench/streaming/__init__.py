"""Spark Structured Streaming from Kafka: session, source, pipelines, progress metrics.

    spark = streaming.spark_session(profile)
    df = streaming.kafka_source(spark, stack, subscribe="telemetry", startingOffsets="earliest")
    df.kafka_connector   # "workbench" (our Python source) or "kafka" (Spark's own connector)

Importing this package imports nothing heavy; pyspark is loaded by the functions that
need it, so `import workbench` stays instant in a notebook.

Modules:

    session          the Spark session a profile describes, our source registered
    connector        Spark's own Kafka connector, resolved for the installed PySpark
    source           our Kafka source, on PySpark's Python Data Source API
    range_reader     a task's offset ranges read into Arrow batches (the source's executor side)
    options          the Kafka source's options, checked as Spark's own source checks them
    offsets          a micro-batch's offset ranges, checkpoint JSON and rate limits
    null_source      a source that reads nothing: the least a Python source's batch costs
    ship             the workbench as a zip for executors that lack it
    telemetry        device readings, some out of order and some late, produced into Kafka
    pipelines        the telemetry pipeline: parse, watermark, aggregate, sink
    progress         a query's progress as a table
    kafka_reader     a Kafka DataFrame: which connector reads it, with what options
    changelog        a compacted changelog topic as the table Spark builds; reading the whole log against it
    ingestion        what notebook 09 measures, one module per question
"""

from workbench.streaming.changelog import (
    changelog_read_cost,
    changelog_sentence,
    changelog_study,
    changelog_table,
)
from workbench.streaming.connector import installed_spark_version
from workbench.streaming.kafka_reader import (
    FORMAT_NAME,
    KAFKA_FORMAT,
    Connector,
    choose_connector,
    connector_name,
    kafka_source,
    official_connector_available,
    source_options,
)
from workbench.streaming.options import KafkaOptionError
from workbench.streaming.session import spark_session, stop_spark, to_pandas

__all__ = [
    "Connector",
    "FORMAT_NAME",
    "KAFKA_FORMAT",
    "KafkaOptionError",
    "changelog_read_cost",
    "changelog_sentence",
    "changelog_study",
    "changelog_table",
    "choose_connector",
    "connector_name",
    "installed_spark_version",
    "kafka_source",
    "official_connector_available",
    "source_options",
    "spark_session",
    "stop_spark",
    "to_pandas",
]
