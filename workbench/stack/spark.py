"""A Spark standalone cluster as stack services: Spark's own master and worker daemons.

With `spark.workers: N` an embedded profile's `workbench up` also starts
`org.apache.spark.deploy.master.Master` and N `org.apache.spark.deploy.worker.Worker`s
through the `spark-class` launcher inside the PySpark package (SPARK_HOME is that
package's folder: it holds `bin/` and `jars/`). They are stack services like the broker:
started in their own session, known by PID and start time, stopped by `workbench down`.
A worker runs each application's executors as child JVMs and kills them when it is
stopped, so stopping the workers leaves no executor behind.

Sessions then connect to `spark://host:master_port` (`Stack.spark_master`), and their
executors run in JVMs that are not the notebook's: what a user's cluster does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.config import Profile, environment
from workbench.errors import StackError
from workbench.stack import process, supervisor
from workbench.stack.probes import probe_tcp
from workbench.stack.services import Service
from workbench.stack.state import ServiceRecord

__all__ = [
    "DAEMON_MEMORY",
    "SPARK_KINDS",
    "SparkMaster",
    "SparkWorker",
    "lean_spark_home",
    "master_state",
    "spark_home",
    "spark_services",
]

#: Heap of each daemon; executors get their own (`spark.executor.memory`).
DAEMON_MEMORY = "512m"


def spark_home() -> Path:
    """The PySpark package folder, which holds Spark's `bin/spark-class` and `jars/`."""
    try:
        import pyspark
    except ModuleNotFoundError:
        raise StackError("pyspark is not installed; run `make setup` (or pip install -e .)") from None
    home = Path(pyspark.__file__).resolve().parent
    launcher = home / "bin" / "spark-class"
    if not launcher.is_file():
        raise StackError(f"{launcher} is missing: this PySpark install cannot run standalone daemons")
    return home


def lean_spark_home(run_dir: Path) -> Path:
    """The SPARK_HOME the workbench starts Spark's JVMs with: the PySpark package's folders,
    linked under `run_dir`, all but `python/`.

    Spark puts `$SPARK_HOME/python/lib/pyspark.zip` first on the path of every Python process
    it starts (a streaming source's runner, the workers' daemon). The zip holds sources only,
    so each of those processes compiled PySpark again: 0.8 s of CPU to import a runner,
    against 0.3 s from the installed package's bytecode, which is the same PySpark. Without
    the zip, they import that one.
    """
    source = spark_home()
    home = run_dir / "spark-home"
    home.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        if entry.name == "python":
            continue
        link = home / entry.name
        if link.is_symlink() and link.resolve() == entry:
            continue
        staged = home / f".{entry.name}.{os.getpid()}"  # several processes may make it at once
        staged.unlink(missing_ok=True)
        staged.symlink_to(entry)
        staged.replace(link)
    return home


class _SparkDaemon(Service):
    """What master and worker share: the launcher, Spark's environment, a web UI port."""

    main_class = ""

    def __init__(self, profile: Profile, name: str | None = None) -> None:
        super().__init__(profile, name)
        self.ui_port = 0

    def env(self) -> dict[str, str]:
        home = spark_home()
        return {
            "SPARK_HOME": str(lean_spark_home(self.profile.path(self.profile.run_dir))),
            "SPARK_LOCAL_IP": self.profile.spark.host,
            "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
            # Spark's own conf/ would be $SPARK_HOME/conf; the package has none, and a
            # user's SPARK_CONF_DIR must not leak into the workbench's cluster.
            "SPARK_CONF_DIR": str(home / "conf"),
        }

    def launcher(self) -> list[str]:
        return [str(spark_home() / "bin" / "spark-class"), self.main_class]

    def pick_ui_port(self, host: str, configured: int) -> int:
        self.ui_port = configured or process.free_port(host)
        return self.ui_port

    def url(self, host: str, port: int) -> str | None:
        return f"http://{host}:{self.ui_port}" if self.ui_port else None

    @property
    def startup_timeout(self) -> float:
        return 90.0  # a JVM, and the launcher's JVM before it, on a busy 2-core machine


class SparkMaster(_SparkDaemon):
    """The standalone master: `spark://host:master_port`, web UI and `/json/` on `master_ui_port`."""

    kind = "spark-master"
    wave = 3
    main_class = "org.apache.spark.deploy.master.Master"

    def listen_on(self) -> tuple[str, int]:
        return self.profile.spark.host, self.profile.spark.master_port

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        ui = self.pick_ui_port(host, self.profile.spark.master_ui_port)
        return [*self.launcher(), "--host", host, "--port", str(port), "--webui-port", str(ui)]

    def is_healthy(self, address: str) -> bool:
        if not self.ui_port:  # asked again later (status): its RPC port is what sessions need
            return probe_tcp(address, timeout=1.0).healthy
        return master_state(f"http://{self.profile.spark.host}:{self.ui_port}").get("status") == "ALIVE"


class SparkWorker(_SparkDaemon):
    """Standalone worker `index`: offers `worker_cores` cores and `worker_memory` to executors."""

    kind = "spark-worker"
    wave = 4
    main_class = "org.apache.spark.deploy.worker.Worker"

    def __init__(self, profile: Profile, name: str | None = None, index: int = 0) -> None:
        if name is not None and name.startswith("spark-worker-") and name[13:].isdigit():
            index = int(name[13:])
        super().__init__(profile, name or f"spark-worker-{index}")
        self.index = index
        self.master_ui: str | None = None

    def listen_on(self) -> tuple[str, int]:
        return self.profile.spark.host, 0

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        master = next((r for r in started.values() if r.kind == SparkMaster.kind), None)
        if master is None:
            raise StackError(f"{self.name}: no Spark master was started before it")
        self.master_ui = master.url
        spark = self.profile.spark
        work_dir = (run_dir / "spark" / self.name).resolve()
        work_dir.mkdir(parents=True, exist_ok=True)
        return [
            *self.launcher(),
            "--host", host,
            "--port", str(port),
            "--webui-port", str(self.pick_ui_port(host, 0)),
            "--cores", str(spark.worker_cores),
            "--memory", spark.worker_memory,
            "--work-dir", str(work_dir),
            f"spark://{master.address}",
        ]  # fmt: skip

    @property
    def stop_grace(self) -> float:
        """On SIGTERM a worker kills its executors, giving each 10 s to exit, before it exits."""
        return 30.0

    def is_healthy(self, address: str) -> bool:
        """Registered with the master (when known), so a session gets its executors at once."""
        if not self.master_ui:
            return probe_tcp(address, timeout=1.0).healthy
        workers = master_state(self.master_ui).get("workers", [])
        return any(w.get("state") == "ALIVE" and f"{w.get('host')}:{w.get('port')}" == address for w in workers)


def master_state(ui_url: str, timeout: float = 1.0) -> dict[str, Any]:
    """The master's `/json/` document (status, workers, applications); empty when it does not answer."""
    try:
        with supervisor.DIRECT_HTTP.open(f"{ui_url.rstrip('/')}/json/", timeout=timeout) as response:
            data = json.load(response)
            return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def spark_services(profile: Profile) -> list[Service]:
    """A master and `spark.workers` workers, in start order (empty when workers is 0)."""
    if not profile.spark.workers:
        return []
    if environment().java_home is None:
        from workbench.java import java_version

        java_version()  # a missing or unsupported Java is a one-line error now, not a dead daemon
    return [SparkMaster(profile), *(SparkWorker(profile, index=i) for i in range(profile.spark.workers))]


#: Service classes by `kind`, for `health_check`.
SPARK_KINDS: dict[str, type[Service]] = {SparkMaster.kind: SparkMaster, SparkWorker.kind: SparkWorker}
