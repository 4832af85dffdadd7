"""The Spark session a profile describes, with the workbench's Kafka source registered.

Everything a notebook would otherwise set by hand comes from `profile.spark`: the master,
shuffle partitions, extra Spark conf. Python workers run this very interpreter
(`sys.executable`), so they import the same `workbench`, `confluent_kafka` and `pyarrow`
as the notebook; Spark's data source runner pickles our reader by reference, and a worker
on another Python would fail with ModuleNotFoundError. Unless SPARK_HOME is set, the
JVM gets `lean_spark_home`, so that those Python processes import the installed PySpark
rather than compiling the copy in `pyspark.zip` each time.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import StackError

if TYPE_CHECKING:
    # pandas and the profile only in annotations: Spark's Python workers import this
    # package to run the source, and pandas would add about 0.3 s of CPU to every one of
    # them, the profile's models (pydantic) 0.1-0.2 s.
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

    from workbench.config import Profile

__all__ = ["spark_session", "stop_spark", "to_pandas"]

log = logging.getLogger("workbench.streaming")

#: Notices PySpark 4.3 gives with pandas 3: it is not certified with it yet, and its
#: Arrow conversion passes a `copy` keyword pandas 3 deprecates. Both are harmless for
#: the small result frames the workbench converts, and noise in a notebook.
_PANDAS3_NOTICES = ("PySpark does not yet fully support pandas", "The copy keyword is deprecated")


def spark_session(
    profile: Profile | str | None = None,
    *,
    master: str | None = None,
    shuffle_partitions: int | None = None,
    app_name: str = "workbench",
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """A SparkSession configured from the profile, with the workbench Kafka source registered.

    Args:
        profile: a profile, its name, or None for `$WORKBENCH_PROFILE` / `local`.
        master: overrides `profile.spark.master` (tests use `local[2]`).
        shuffle_partitions: overrides `profile.spark.shuffle_partitions`.
        app_name: the application name Spark shows.
        conf: extra Spark settings, on top of the profile's `spark.conf`.

    Returns:
        The session (Spark keeps one per process: a second call returns the same one
        with the runtime settings applied again).

    Raises:
        StackError: no supported Java (Spark 4 needs 17 or 21).

    Usage: `spark = spark_session(profile)`; stop it with `spark.stop()`.
    """
    from workbench.config import Profile, load_profile
    from workbench.java import java_version

    profile = profile if isinstance(profile, Profile) else load_profile(profile)
    java_version()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_PANDAS3_NOTICES[0])
        import pyspark.testing.utils  # noqa: F401  (warns once at import; later imports are silent)
        from pyspark.sql import SparkSession

        from workbench.streaming.source import KafkaDataSource

    # The JVM starts Python workers with these; they must find this environment's packages.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    chosen_master = master or _master_of(profile)
    standalone = _own_cluster(profile) if master is None else {}
    if "SPARK_HOME" not in os.environ:  # a user's own Spark install is theirs to keep
        from workbench.stack.spark import lean_spark_home

        os.environ["SPARK_HOME"] = str(lean_spark_home(profile.path(profile.run_dir)))  # see lean_spark_home
    if chosen_master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no "hostname resolves to loopback" warning
    elif standalone:
        os.environ["SPARK_LOCAL_IP"] = profile.spark.host  # executors reach the driver where the workers are
    quiet = _quiet_logging(profile.path(profile.run_dir))
    settings = {
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={quiet.as_uri()}",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        # Event times are shown and compared in UTC, whatever the machine's zone.
        "spark.sql.session.timeZone": "UTC",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        **standalone,
        **profile.spark.conf,
        **(conf or {}),
        **_with_connector(profile, {**profile.spark.conf, **(conf or {})}),
        "spark.sql.shuffle.partitions": str(shuffle_partitions or profile.spark.shuffle_partitions),
    }
    builder = SparkSession.builder.appName(app_name).master(chosen_master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.conf.set("spark.sql.shuffle.partitions", settings["spark.sql.shuffle.partitions"])
    spark.dataSource.register(KafkaDataSource)
    if not chosen_master.startswith("local") and profile.spark.ship_source:
        from workbench.streaming.ship import ship_package

        ship_package(spark, profile.path(profile.run_dir) / "spark")  # executors have no workbench installed
    log.info(
        "Spark %s session on %s, %s shuffle partitions",
        spark.version,
        spark.sparkContext.master,
        settings["spark.sql.shuffle.partitions"],
    )
    return spark


def _with_connector(profile: Profile, given: dict[str, str]) -> dict[str, str]:
    """`spark.jars` with Spark's Kafka connector added, unless the profile reads with ours.

    `connector: kafka` needs the jars (a failure to resolve them is the session's error,
    in one line); `auto` takes them when they resolve and reads with the workbench's
    source otherwise. A connector the user's settings already bring (their own
    `spark.jars.packages` or `spark.jars`) is left to them. The jars reach a standalone
    cluster's executors from the driver, so the workers need no copy of their own.
    """
    wanted = profile.spark.connector
    if wanted == "workbench" or any("spark-sql-kafka" in given.get(key, "") for key in _JAR_SETTINGS):
        return {}
    from workbench.maven import ResolutionError
    from workbench.streaming.connector import connector_jars

    try:
        jars = connector_jars()
    except ResolutionError as exc:
        if wanted == "kafka":
            raise
        log.warning("Spark's Kafka connector is not available, so Kafka is read with the workbench's source: %s", exc)
        return {}
    listed = [entry for entry in given.get("spark.jars", "").split(",") if entry]
    return {"spark.jars": ",".join([*listed, *map(str, jars)])}


#: Settings through which a user's own profile may already bring the connector.
_JAR_SETTINGS = ("spark.jars", "spark.jars.packages")


def _master_of(profile: Profile) -> str:
    """The profile's `spark.master`, or the standalone master its running stack started."""
    if not (profile.embedded and profile.spark.workers):
        return profile.spark.master
    from workbench.stack import attach

    stack = attach(profile)
    if stack is None or not stack.spark_master.startswith("spark://"):
        raise StackError(
            f"profile {profile.name!r} runs Spark on {profile.spark.workers} standalone worker(s) "
            f"and its stack is not up; start it with `workbench up --profile {profile.name}`"
        )
    return stack.spark_master


def _own_cluster(profile: Profile) -> dict[str, str]:
    """Settings for the stack's own standalone cluster: executors sized to fit the workers."""
    if not (profile.embedded and profile.spark.workers):
        return {}
    spark = profile.spark
    quiet = _quiet_logging(profile.path(profile.run_dir)).as_uri()
    return {
        "spark.cores.max": str(spark.workers * spark.worker_cores),
        "spark.executor.cores": str(spark.worker_cores),
        "spark.executor.memory": _executor_memory(spark.worker_memory),
        "spark.driver.host": spark.host,
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile={quiet}",
    }


def _executor_memory(worker_memory: str) -> str:
    """Three quarters of what a worker offers (Spark adds overhead on top of the heap)."""
    units = {"k": 1, "m": 1024, "g": 1024**2, "t": 1024**3}
    kib = int(worker_memory[:-1]) * units[worker_memory[-1]]
    return f"{max(kib * 3 // 4 // 1024, 256)}m"


def stop_spark(spark: SparkSession, timeout: float = 30.0) -> None:
    """Stop the session and the JVM behind it, and wait until that process has exited.

    `spark.stop()` leaves the JVM running until Python exits; a test session or a
    long-lived kernel that must leave no process behind ends it here instead. A later
    `spark_session()` starts a fresh JVM.
    """
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    spark.stop()
    if gateway is None:
        return
    process = getattr(gateway, "proc", None)
    gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if process is not None:
        if process.stdin:
            process.stdin.close()  # the JVM exits when its stdin closes (PySpark's own signal)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)


#: Spark's log4j defaults print INFO/WARN lines into every notebook cell; errors are enough.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def _quiet_logging(run_dir: Path) -> Path:
    """A log4j2 configuration that keeps only errors, written once into the run directory."""
    path = run_dir / "spark-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_LOG4J2)
    return path.resolve()


def to_pandas(frame: DataFrame) -> pd.DataFrame:
    """`frame.toPandas()` (through Arrow) without PySpark 4.3's pandas-3 notices.

    Under warnings-as-errors (the test suite) the `copy` notice would abort the Arrow
    conversion half-way, so it is silenced here, and only here.
    """
    with warnings.catch_warnings():
        for notice in _PANDAS3_NOTICES:
            warnings.filterwarnings("ignore", message=notice)
        return frame.toPandas()
