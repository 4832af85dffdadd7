"""Run by test_standalone.py in a process of its own (one SparkContext per process):
connect to the stack's standalone master, show where tasks run, check a restart, print JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import psutil

from workbench import load_profile, stack, streaming
from workbench.streaming import ingestion


def _executor_jvms(active: stack.Stack) -> dict[int, str]:
    """The executor JVMs the workers started: pid → the worker that owns it."""
    found = {}
    for name, record in active.services.items():
        if record.kind == "spark-worker":
            for child in psutil.Process(record.pid).children(recursive=True):
                try:
                    command = " ".join(child.cmdline())
                except psutil.Error:  # a short-lived helper that just ended (a zombie until reaped)
                    continue
                if "CoarseGrainedExecutorBackend" in command:
                    found[child.pid] = name
    return found


def _where(_: Iterable[int]) -> Iterator[tuple[str, int]]:
    import psutil

    import workbench

    jvm = next(p.pid for p in psutil.Process().parents() if p.name() == "java")
    yield workbench.__file__, jvm


def main(profile_path: str, work_dir: str) -> None:
    profile = load_profile(profile_path)
    active = stack.attach(profile)
    assert active is not None, "the test starts the stack first"
    spark = streaming.spark_session(profile, app_name="standalone-probe")
    try:
        context = spark.sparkContext
        tasks = sorted(set(context.parallelize(range(8), 8).mapPartitions(_where).collect()))
        tracker = context._jsc.sc().statusTracker()
        executors = sorted(f"{i.host()}:{i.port()}" for i in tracker.getExecutorInfos())
        driver = f"{context.getConf().get('spark.driver.host')}:{context.getConf().get('spark.driver.port')}"
        jvms = _executor_jvms(active)
        restart = {
            connector: ingestion.restart_check(
                spark, active, Path(work_dir), first=4_000, second=2_000, connector=connector
            )
            for connector in ("kafka", "workbench")
        }
        fmt, _ = streaming.choose_connector(spark, profile)
        result = {
            "master": context.master,
            "driver_pid": context._gateway.proc.pid,  # type: ignore[union-attr]
            # Spark's own list of executors (the driver is not one of them).
            "executor_ids": sorted(filter(None, context._jsc.sc().getExecutorIds().mkString(",").split(","))),
            "driver_rpc": driver,
            "executors": executors,
            "executor_jvms": {str(k): v for k, v in jvms.items()},
            "tasks": tasks,
            "connector": fmt,
            "restart": restart,
        }
    finally:
        streaming.stop_spark(spark)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
