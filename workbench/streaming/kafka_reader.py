"""A Kafka DataFrame: which connector reads it (Spark's own or the workbench's), with what options.

`profile.spark.connector` decides, `kafka_source(connector=...)` overrides it; the
options are checked as Spark's own source checks them (`streaming.options`) before
Spark is asked, whichever connector reads, so a mistake is our error naming the option.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

from workbench.errors import ConfigError, StackError
from workbench.streaming.options import option_text, parse_options

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.config import Profile
    from workbench.stack import Stack

__all__ = [
    "Connector",
    "FORMAT_NAME",
    "KAFKA_FORMAT",
    "choose_connector",
    "connector_name",
    "kafka_source",
    "official_connector_available",
    "source_options",
]

log = logging.getLogger("workbench.streaming")

#: Spark's own Kafka source (the `spark-sql-kafka-0-10` jar).
KAFKA_FORMAT = "kafka"
#: The workbench's Python source (kept equal to `source.FORMAT_NAME`, which imports pyspark).
FORMAT_NAME = "workbench_kafka"
_OFFICIAL_CLASS = "org.apache.spark.sql.kafka010.KafkaSourceProvider"

#: What `spark.connector` (or `kafka_source(connector=...)`) may name.
Connector = Literal["auto", "kafka", "workbench"]


def official_connector_available(spark: SparkSession) -> bool:
    """True when Spark's own Kafka connector is on this session's classpath.

    Asked the way Spark itself looks a format up (`DataSource.lookupDataSource`, through
    the context class loader that holds `spark.jars`); a plain `Class.forName` from py4j
    does not see those jars.
    """
    try:
        jvm: Any = spark._jvm
        found = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            KAFKA_FORMAT, spark._jsparkSession.sessionState().conf()
        )
        return str(found.getName()) == _OFFICIAL_CLASS
    except Exception:  # py4j reports a missing format as a generic Py4JJavaError
        return False


def choose_connector(spark: SparkSession, profile: Profile, connector: Connector | None = None) -> tuple[str, str]:
    """The format to read Kafka with, and why: `("kafka" | "workbench_kafka", reason)`.

    `connector`, else `profile.spark.connector`, decides: `kafka` requires Spark's own
    connector, `workbench` always takes ours, `auto` takes Spark's when it is present.

    Raises:
        ConfigError: `kafka` is asked for but the connector is not on the classpath.
    """
    wanted = connector or profile.spark.connector
    if wanted not in ("auto", "kafka", "workbench"):
        raise ConfigError(
            profile.source, "spark.connector", f"must be 'auto', 'kafka' or 'workbench', not {str(wanted)[:80]!r}"
        )
    if wanted == "workbench":
        return (
            FORMAT_NAME,
            "spark.connector is 'workbench'" if connector is None else "connector='workbench' was asked for",
        )
    present = official_connector_available(spark)
    if wanted == "kafka" and not present:
        raise ConfigError(
            profile.source,
            "spark.connector",
            "is 'kafka' but Spark's Kafka connector is not on this session's classpath: the session "
            "was started without it; stop it (streaming.stop_spark) and start it with "
            "streaming.spark_session(profile), which adds the connector, or use 'auto'/'workbench'",
        )
    if present:
        return KAFKA_FORMAT, f"spark-sql-kafka-0-10 found on the classpath (spark.connector={wanted!r})"
    return FORMAT_NAME, "spark.connector is 'auto' and the spark-sql-kafka-0-10 jar is not on the classpath"


def connector_name(spark: SparkSession, profile: Profile, connector: Connector | None = None) -> str:
    """`kafka` (Spark's connector) or `workbench` (ours): what `kafka_source` reads with here.

    The name a result row records in its `connector` column.
    """
    fmt, _ = choose_connector(spark, profile, connector)
    return KAFKA_FORMAT if fmt == KAFKA_FORMAT else "workbench"


def source_options(target: Profile | Stack, **options: Any) -> dict[str, str]:
    """Source options for a stack: its `kafka.bootstrap.servers` and client settings, then yours.

    Values are turned into the strings Spark wants: booleans as true/false, dicts (for
    `assign`, `startingOffsets`) as JSON. A cluster whose log ends are read from the logs
    (Tansu) gets `readEndsFromLog`: the workbench source's reader runs in a Python worker
    Spark starts, which knows only what its options say (Spark's own connector ignores it).
    """
    from workbench.kafka.offsets import needs_end_probe

    stack = _stack(target)
    client = {f"kafka.{k}": v for k, v in stack.profile.kafka.common.items()}
    merged: dict[str, Any] = {"kafka.bootstrap.servers": stack.bootstrap_servers, **client}
    if needs_end_probe({"bootstrap.servers": stack.bootstrap_servers}):
        merged["readEndsFromLog"] = True
    merged.update(options)
    return {k: option_text(v) for k, v in merged.items()}


def kafka_source(
    spark: SparkSession,
    target: Profile | Stack,
    *,
    streaming: bool = True,
    connector: Connector | None = None,
    **options: Any,
) -> DataFrame:
    """A Kafka DataFrame from Spark's own connector or the workbench's source, as the profile says.

    Args:
        spark: the session (`spark_session(profile)`).
        target: the stack (or a profile whose stack is running) to read from.
        streaming: `readStream` (default) or a batch `read` of what is there now.
        connector: `kafka` or `workbench` instead of the profile's `spark.connector`
            (a notebook comparing the two reads the same topic with each).
        **options: the official source's options (`subscribe="t"`,
            `startingOffsets="earliest"`, `maxOffsetsPerTrigger=1000`, ...).

    Returns:
        The DataFrame, with `kafka_connector` set to the format used and `kafka_options`
        to the options given. The choice is logged on `workbench.streaming` too.

    Raises:
        KafkaOptionError: an option is missing, conflicting or malformed (checked here,
            before Spark is asked, so the error is ours and says which option).
        ConfigError: the profile requires the official connector and it is absent.
        StackError: the profile's stack is not running.

    Usage: `kafka_source(spark, stack, subscribe="orders", startingOffsets="earliest")`.
    """
    stack = _stack(target)
    fmt, reason = choose_connector(spark, stack.profile, connector)
    merged = source_options(stack, **options)
    parse_options(merged, streaming=streaming)  # the official source's checks, whichever runs
    if fmt == FORMAT_NAME:
        from workbench.streaming.source import KafkaDataSource

        spark.dataSource.register(KafkaDataSource)
    reader = spark.readStream if streaming else spark.read
    frame = reader.format(fmt).options(**merged).load()
    log.info("Kafka source: format(%r), because %s", fmt, reason)
    frame.kafka_connector = "workbench" if fmt == FORMAT_NAME else "kafka"  # type: ignore[attr-defined]
    frame.kafka_options = merged  # type: ignore[attr-defined]
    return frame


def _stack(target: Profile | Stack) -> Stack:
    from workbench.stack import Stack, attach

    if isinstance(target, Stack):
        return target
    stack = attach(target)
    if stack is None:
        raise StackError(f"profile {target.name!r} has no running stack; run `workbench up` or use stack.running()")
    return stack
