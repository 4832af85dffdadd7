"""Whether Spark's real-time mode (Spark 4.1+) takes this stack's Kafka source, in Spark's own words."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import kafka
from workbench.stack import Stack
from workbench.streaming import kafka_source
from workbench.streaming.pipelines import stopping

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["real_time_refusal"]


def _drop(_row: Any) -> None:
    """A foreach sink that keeps nothing."""


def real_time_refusal(spark: SparkSession, stack: Stack, work_dir: Path) -> str | None:
    """What Spark answers when this stack's Kafka source is asked for real-time mode (Spark 4.1+).

    Real-time mode keeps one long-running task per input partition and takes only sources
    on its allow-list (in 4.1-4.3, Spark's own Kafka table); a Python data source, whose
    reader plans finite offset ranges per micro-batch, is not on it. Returns Spark's error
    message, or None when the query was accepted (the official connector: it is stopped
    again at once).
    """
    from pyspark.errors import PySparkException

    topic = f"spark-rtm-{uuid.uuid4().hex[:8]}"
    stack.create_topics({topic: 1})
    checkpoint = work_dir / topic
    try:
        frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
        # A sink real-time mode takes (`noop` is not on its allow-list), so only the source is in question.
        writer = frame.writeStream.foreach(_drop).outputMode("update").option("checkpointLocation", str(checkpoint))
        spark.sparkContext.setLogLevel("OFF")  # the refusal is logged with a stack trace: it is the result here
        real_time: dict[str, Any] = {"realTime": "5 seconds"}  # PySpark's typed overloads do not list it
        try:
            query = writer.trigger(**real_time).start()
        except TypeError:
            return f"Spark {spark.version} has no real-time mode (it came with 4.1)"
        except PySparkException as exc:
            return str(exc).splitlines()[0]
        with stopping(query):
            deadline = time.monotonic() + 30
            while query.isActive and not query.recentProgress and time.monotonic() < deadline:
                time.sleep(0.1)
            failure = query.exception()
        return str(failure).splitlines()[0] if failure is not None else None
    finally:
        spark.sparkContext.setLogLevel("ERROR")
        kafka.delete_topics(stack.kafka_config("admin"), [topic])
        shutil.rmtree(checkpoint, ignore_errors=True)
