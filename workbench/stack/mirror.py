"""MirrorMaker 2 in dedicated mode: the stack's replication between its two Kafka clusters.

`workbench up` on a profile with `replication.enabled` starts a second Kafka cluster
(`kafka.PeerKafkaNode`) and `replication.workers` MirrorMaker processes, each
`java -cp <jars> org.apache.kafka.connect.mirror.MirrorMaker <its properties>`, the
class `connect-mirror-maker.sh` runs. The workers of a flow form one Kafka Connect
cluster through the target's topics and, with KIP-710's internal REST server on, pass
task configurations to their leader, so a dead worker's tasks move to the others.

The jars are Apache Kafka's own `connect-mirror`, resolved once like the broker's, or an
installation's `libs/` (`broker.kafka_home`, `$KAFKA_HOME`), which ship it.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from pathlib import Path

from workbench.config import Profile, environment
from workbench.errors import StackError
from workbench.stack import process
from workbench.stack.kafka import JVM_OPTIONS, kafka_classpath, log4j_config, release_classpath
from workbench.stack.services import Service, log_tail
from workbench.stack.state import ServiceRecord

__all__ = ["MAIN_CLASS", "MirrorWorker", "STARTED_LINE", "mirror_cause", "mirror_classpath", "mirror_workers"]

#: What `connect-mirror-maker.sh` runs.
MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker"

#: The line MirrorMaker logs once its herders have started (`MirrorMaker.start`).
STARTED_LINE = "Kafka MirrorMaker started"

#: Loggers that print every client's whole configuration, or a line per record batch.
_QUIET_LOGGERS = (
    "org.apache.kafka.clients.consumer.ConsumerConfig",
    "org.apache.kafka.clients.producer.ProducerConfig",
    "org.apache.kafka.clients.admin.AdminClientConfig",
    "org.apache.kafka.connect.runtime.distributed.DistributedConfig",
    "org.apache.kafka.connect.runtime.SourceConnectorConfig",
    "org.apache.kafka.connect.runtime.ConnectorConfig",
    "org.apache.kafka.connect.runtime.TaskConfig",
    "org.apache.kafka.connect.mirror.MirrorSourceConfig",
    "org.apache.kafka.connect.mirror.MirrorCheckpointConfig",
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConfig",
    "org.apache.kafka.connect.mirror.MirrorMakerConfig",
    "org.apache.kafka.common.utils.AppInfoParser",
    "org.apache.kafka.common.config.AbstractConfig",
    "org.reflections",
)


def mirror_classpath(profile: Profile) -> tuple[list[str], str]:
    """MirrorMaker's jars and release: an installation's, else `replication.version` from Maven.

    Raises:
        StackError: the release cannot be resolved (one line naming the ways out).
    """
    home = profile.broker.kafka_home or environment().kafka_home
    if home is not None:
        return kafka_classpath(profile)  # an installation's libs/ hold connect-mirror beside the broker
    return release_classpath("mirror-maker", "connect-mirror", profile.replication.version)


class MirrorWorker(Service):
    """One MirrorMaker 2 process in dedicated mode, running every enabled flow of the profile."""

    kind = "mirror-maker"
    wave = 2

    def __init__(
        self, profile: Profile, name: str | None = None, index: int = 0, *, awaits_flows: bool | None = None
    ) -> None:
        if name is not None and name.startswith("mirror-") and name[7:].isdigit():
            index = int(name[7:]) - 1
        super().__init__(profile, name or f"mirror-{index + 1}")
        self.index = index
        #: Whether `wait_ready` also waits for every flow to settle: for the last worker `up`
        #: starts, and for any worker started again, since its return rebalances the group.
        self.awaits_flows = index == profile.replication.workers - 1 if awaits_flows is None else awaits_flows
        self._properties: dict[str, str] = {}
        self._version = ""

    def listen_on(self) -> tuple[str, int]:
        return self.profile.broker.host, 0  # its internal REST listener

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        from workbench.stack.mirror_plan import mirror_properties

        source = _addresses(started, "broker")
        target = _addresses(started, "peer-broker")
        values = mirror_properties(self.profile, source, target, listener=f"http://{host}:{port}")
        self._properties = values
        folder = (run_dir / "mirror").resolve()
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / f"{self.name}.properties"
        config.write_text(
            "# Written by `workbench up` from the profile; rewritten at every start.\n"
            + "".join(f"{key}={value}\n" for key, value in values.items())
        )
        classpath, self._version = mirror_classpath(self.profile)
        heap = self.profile.replication.heap
        return [
            _java(), f"-Xms{heap}", f"-Xmx{heap}", *JVM_OPTIONS,
            f"-Dlog4j2.configurationFile={log4j_config(folder / 'log4j2.properties', _QUIET_LOGGERS)}",
            "-cp", ":".join(classpath), MAIN_CLASS, str(config),
        ]  # fmt: skip

    def start(self, run_dir: Path, started: Mapping[str, ServiceRecord]) -> ServiceRecord:
        from workbench.stack.mirror_plan import flows

        log_path = run_dir / "logs" / f"{self.name}.log"
        written = log_path.stat().st_size if log_path.exists() else 0  # the log is appended to: this run's part
        record = super().start(run_dir, started)
        record.extra.update({"version": self._version, "flows": flows(self._properties), "log_from": written})
        return record

    def wait_ready(self, record: ServiceRecord, timeout: float) -> None:
        """Its REST listener answers and, once the last worker is up, every flow's source
        connector runs (Connect's own status), so a topic made after `up` is replicated;
        a worker that exits first, or a connector that fails, is MirrorMaker's own cause in one line."""
        deadline = time.monotonic() + timeout
        try:
            super().wait_ready(record, timeout)
            self._wait_started(record, deadline)
            if self.awaits_flows:
                self._wait_flows(record, deadline)
        except StackError:
            if process.is_ours(record.pid, record.create_time):
                raise
            raise StackError(f"{self.name} (MirrorMaker) exited during start-up: {mirror_cause(record.log)}") from None

    def _wait_started(self, record: ServiceRecord, deadline: float) -> None:
        """MirrorMaker says in its log when its herders have started (`STARTED_LINE`); it
        serves no endpoint that says so, and its REST server answers before a bad
        configuration stops it."""
        log_path, since = Path(record.log), int(record.extra.get("log_from", 0))
        while STARTED_LINE not in _read_from(log_path, since):
            if not process.is_ours(record.pid, record.create_time):
                raise StackError(f"{self.name} exited")  # the caller names MirrorMaker's cause
            if time.monotonic() > deadline:
                raise StackError(f"{self.name} did not say it started; see {record.log}")
            time.sleep(0.2)

    def _wait_flows(self, record: ServiceRecord, deadline: float) -> None:
        """Every flow's source connector and task run, and have stayed where they run for
        `mirror_status.SETTLED_S`: the workers started last join the group and take over
        work a few seconds after they say they started, and a flow measured meanwhile stops.
        The flows settle side by side: a stack replicating both ways waits the time once."""
        from workbench.stack.mirror_plan import flows
        from workbench.stack.mirror_status import SETTLED_S, flow_states, source_task

        targets = {}
        for flow in flows(self._properties):
            source, target = flow.split("->")
            targets[flow] = (source, {"bootstrap.servers": self._properties[f"{target}.bootstrap.servers"]})
        seen: dict[str, tuple[str | None, int]] = {}
        since: dict[str, float] = {}
        while True:
            for flow, (source, conf) in targets.items():
                states = flow_states(conf, source)
                failed = next((s for s in states.values() if s.state == "FAILED"), None)
                if failed is not None:
                    first = (failed.trace or "no trace").splitlines()[0]
                    raise StackError(f"MirrorMaker's flow {flow} failed: {first}")
                now = source_task(states)
                if now != seen.get(flow):
                    seen[flow], since[flow] = now, time.monotonic()
            if all(seen[f][0] is not None and time.monotonic() - since[f] >= SETTLED_S for f in targets):
                return
            if not process.is_ours(record.pid, record.create_time):
                raise StackError(f"{self.name} exited")  # the caller names MirrorMaker's cause
            if time.monotonic() > deadline:
                idle = [f for f in targets if seen[f][0] is None]
                said = "did not start its connectors" if idle else "kept moving its copier between workers"
                raise StackError(f"MirrorMaker's flow {', '.join(idle or targets)} {said}; see {record.log}")
            time.sleep(0.25)

    def is_healthy(self, address: str) -> bool:
        """Its internal REST server takes connections (it serves only the workers' own calls)."""
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                return True
        except OSError:
            return False

    @property
    def startup_timeout(self) -> float:
        return 90.0

    @property
    def stop_grace(self) -> float:
        """Connect stops each task (`task.shutdown.graceful.timeout.ms`, 5 s) and commits its
        source offsets before the worker exits: a replica resumes where the stop left it. A
        stack that keeps no data (`broker.keep_data: false`) loses those offsets with its
        clusters' logs at `down`, so its workers get the tasks' own timeout and a little more:
        a worker stopped while the other rebalanced once took 22 s to exit (1 December 2026)."""
        return 30.0 if self.profile.broker.keep_data else 7.0


def mirror_workers(profile: Profile) -> list[Service]:
    """The MirrorMaker processes an embedded replication profile starts."""
    return [MirrorWorker(profile, index=i) for i in range(profile.replication.workers)]


def mirror_cause(log: str) -> str:
    """The line of a MirrorMaker log that says why it stopped (`java.java_cause` of its tail)."""
    from workbench.java import java_cause

    return java_cause(log_tail(log, lines=400))


def _read_from(path: Path, offset: int) -> str:
    with path.open("rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def _addresses(started: Mapping[str, ServiceRecord], kind: str) -> str:
    addresses = [r.address for r in started.values() if r.kind == kind]
    if not addresses:
        raise StackError(f"MirrorMaker needs both clusters running first; no {kind} was started")
    return ",".join(addresses)


def _java() -> str:
    from workbench.java import java_version

    return java_version("MirrorMaker 2", ())[1]
