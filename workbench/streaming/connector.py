"""Spark's own Kafka connector (`spark-sql-kafka-0-10`), resolved once for the installed PySpark.

PySpark's `jars/` holds Spark without its Kafka connector: `format("kafka")` answers
`[KAFKA_DATA_SOURCE_NOT_ENABLED]` until the connector is on the classpath. Spark's own
way, `spark.jars.packages`, resolves it with Ivy at every JVM start and reports a
failure only as `JAVA_GATEWAY_EXITED`. The workbench resolves it once with the same Ivy
(`workbench.maven`) into the jar cache, checks it offline after that, and hands the
files to the session as `spark.jars`, which Spark also serves to a standalone cluster's
executors.

Only four jars are needed on top of PySpark's own: the connector, its token provider,
and the `kafka-clients` and `commons-pool2` versions Spark's build names
(`spark-parent` POM). Everything else they depend on (Scala's parallel collections,
snappy, lz4, zstd, SLF4J, jsr305) PySpark already ships, in the versions Spark was
built with, so those four are taken without their dependencies.
"""

from __future__ import annotations

from pathlib import Path

from workbench.maven import Artifact, ResolutionError, resolve

__all__ = ["CONNECTOR_VERSIONS", "connector_artifacts", "connector_jars", "installed_spark_version"]

#: For each PySpark release whose connector Maven Central serves: the `kafka-clients` and
#: `commons-pool2` versions in its `spark-parent_2.13` POM (`kafka.version`,
#: `commons-pool2.version`). Maven Central has no connector for 4.2.1 or 4.3.0, which is
#: why the project pins PySpark 4.2.0.
CONNECTOR_VERSIONS: dict[str, tuple[str, str]] = {
    "4.2.0": ("3.9.2", "2.13.1"),
}

_INSTEAD = "or set spark.connector: workbench in the profile to read Kafka with the workbench's Python source"


def installed_spark_version() -> str:
    """The installed PySpark's version (`4.2.0`), read from its metadata: no pyspark import."""
    from importlib.metadata import version

    return version("pyspark")


def connector_artifacts(spark_version: str) -> list[Artifact]:
    """The four Maven modules Spark `spark_version`'s Kafka connector adds to PySpark's jars.

    Raises:
        ResolutionError: no connector set is known for that Spark version.
    """
    try:
        clients, pool = CONNECTOR_VERSIONS[spark_version]
    except KeyError:
        known = ", ".join(sorted(CONNECTOR_VERSIONS))
        raise ResolutionError(
            f"no Kafka connector jars are known for PySpark {spark_version} (known: {known}); "
            f"install the PySpark the project pins (`make setup`), {_INSTEAD}"
        ) from None
    return [
        Artifact("org.apache.spark", "spark-sql-kafka-0-10_2.13", spark_version, transitive=False),
        Artifact("org.apache.spark", "spark-token-provider-kafka-0-10_2.13", spark_version, transitive=False),
        Artifact("org.apache.kafka", "kafka-clients", clients, transitive=False),
        Artifact("org.apache.commons", "commons-pool2", pool, transitive=False),
    ]


def connector_jars(spark_version: str | None = None) -> list[Path]:
    """The connector's jars for the installed PySpark (or `spark_version`), resolved once.

    Raises:
        ResolutionError: not cached and not resolvable, in one line naming the
            coordinates, the cause and the ways to provide them.
    """
    version = spark_version or installed_spark_version()
    return resolve(f"spark-kafka-{version}", connector_artifacts(version), how_else=_INSTEAD)
