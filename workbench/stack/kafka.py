"""Apache Kafka as the embedded broker: one KRaft node, or several on loopback.

Each node is broker and controller at once (`process.roles=broker,controller`), as the
stock `config/server.properties` of Kafka 4 runs a single node. The stack writes each
node's properties from the profile, formats its storage once (`kafka.tools.StorageTool`,
the class `kafka-storage.sh` runs), and starts `java -cp <jars> kafka.Kafka` with a
bounded heap, its log under the run directory and its data on disk beside it. The data
is wiped by `workbench down` unless `broker.keep_data` is set; then the next `up` starts
on the same logs.

The jars are Apache Kafka's own: resolved once from Maven Central (`workbench.maven`),
or taken from an installation (`broker.kafka_home`, else `$KAFKA_HOME`).
"""

from __future__ import annotations

import base64
import logging
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from workbench.config import Profile, environment
from workbench.errors import StackError
from workbench.java import java_cause
from workbench.stack import process
from workbench.stack.services import Service, log_tail
from workbench.stack.state import ServiceRecord

__all__ = [
    "JVM_OPTIONS",
    "KafkaCluster",
    "KafkaNode",
    "LOG4J_VERSION",
    "PeerKafkaNode",
    "kafka_classpath",
    "kafka_nodes",
    "log4j_config",
    "peer_nodes",
    "release_classpath",
    "restart_node",
]

log = logging.getLogger("workbench.stack")

#: The log4j 2 binding Kafka's tarball adds to its libs (the POM leaves SLF4J without a backend).
LOG4J_VERSION = "2.25.3"

#: JVM options `kafka-run-class.sh` uses when KAFKA_JVM_PERFORMANCE_OPTS is unset.
JVM_OPTIONS = (
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
)

#: Loggers that speak once per partition or per request at INFO: thousands of lines for
#: an experiment that creates thousands of topics. Warnings still show.
_QUIET_LOGGERS = (
    "kafka.log",
    "kafka.cluster",
    "kafka.server.ReplicaFetcherManager",
    "kafka.server.ReplicaAlterLogDirsManager",
    "org.apache.kafka.storage",
    "state.change.logger",
    "kafka.coordinator",
    "org.apache.kafka.coordinator",
    "kafka.server.metadata",
    "org.apache.kafka.image",
    "org.apache.kafka.controller",
    "kafka.request.logger",
)


def kafka_classpath(profile: Profile) -> tuple[list[str], str]:
    """The broker's jars and its version: an installation's, else the profile's release from Maven.

    Raises:
        StackError: the installation has no Kafka 4 jars, or the release cannot be
            resolved (one line naming the coordinates and the ways to provide them).
    """
    home = profile.broker.kafka_home or environment().kafka_home
    if home is not None:
        return _installed(profile.path(home))
    return release_classpath("kafka", "kafka_2.13", profile.broker.version)


def release_classpath(name: str, module: str, version: str) -> tuple[list[str], str]:
    """An Apache Kafka `module` of release `version` from Maven, with the log4j 2 binding
    Kafka's tarball adds (its POM leaves SLF4J without a backend): its jars and the version.

    Args:
        name: the jar set's name in the cache, before the version (`kafka` → `kafka-4.1.0`).
        module: the artifact id under `org.apache.kafka` (`kafka_2.13`, `connect-mirror`).
        version: the release.

    Raises:
        StackError: the release cannot be resolved (one line naming the coordinates and the
            ways to provide them, an installation among them).

    Usage: `release_classpath("mirror-maker", "connect-mirror", "4.1.0")`.
    """
    from workbench.maven import Artifact, resolve

    jars = resolve(
        f"{name}-{version}",
        [
            Artifact("org.apache.kafka", module, version),
            Artifact("org.apache.logging.log4j", "log4j-slf4j2-impl", LOG4J_VERSION),
        ],
        how_else="set KAFKA_HOME (or broker.kafka_home in the profile) to an Apache Kafka 4.x installation",
    )
    return [str(j) for j in jars], version


def _installed(home: Path) -> tuple[list[str], str]:
    """The jars of an Apache Kafka installation (`<home>/libs`) and its version."""
    libs = home / "libs"
    found = sorted(libs.glob("kafka_2.1[23]-*.jar"))
    versions = [m.group(1) for j in found if (m := re.fullmatch(r"kafka_2\.1[23]-(\d+\.\d+\.\d+)\.jar", j.name))]
    if not versions:
        raise StackError(f"KAFKA_HOME={home} is not an Apache Kafka installation (no libs/kafka_2.13-<version>.jar)")
    if int(versions[0].split(".")[0]) < 4:
        raise StackError(f"KAFKA_HOME={home} holds Kafka {versions[0]}; the embedded broker needs Kafka 4 (KRaft)")
    return [str(libs / "*")], versions[0]


@dataclass
class KafkaCluster:
    """The nodes of one embedded Kafka cluster: their ports, cluster id and storage, planned once.

    Every node must know every controller's address before any starts (the static
    quorum, `controller.quorum.voters`), so the ports are chosen here for all of them.
    """

    profile: Profile
    #: MirrorMaker's alias of a second cluster (`replication.target`); "" for the profile's own.
    alias: str = ""
    client_ports: list[int] = field(default_factory=list)
    controller_ports: list[int] = field(default_factory=list)
    classpath: list[str] = field(default_factory=list)
    version: str = ""
    _formatted: bool = False

    @property
    def nodes(self) -> int:
        return self.profile.replication.target_nodes if self.alias else self.profile.broker.nodes

    def plan(self) -> None:
        """Resolve the jars and choose every node's ports (free ones where the profile says
        0, and always for a second cluster, which has no ports of its own in the profile)."""
        if self.client_ports:
            return
        settings = self.profile.broker
        self.classpath, self.version = kafka_classpath(self.profile)
        host, base = settings.host, 0 if self.alias else settings.port
        self.client_ports = [base + i if base else process.free_port(host) for i in range(self.nodes)]
        self.controller_ports = [process.free_port(host) for _ in range(self.nodes)]

    @property
    def voters(self) -> str:
        host = self.profile.broker.host
        return ",".join(f"{i + 1}@{host}:{port}" for i, port in enumerate(self.controller_ports))

    def node_dir(self, run_dir: Path, index: int) -> Path:
        folder = f"kafka-{self.alias}" if self.alias else "kafka"
        return (run_dir / folder / f"node-{index + 1}").resolve()

    def properties(self, run_dir: Path, index: int) -> dict[str, str]:
        """Node `index`'s server.properties: the stock single-node file's settings, scaled to
        the node count, then the profile's `broker.properties`."""
        settings, nodes = self.profile.broker, self.nodes
        host, port, controller = settings.host, self.client_ports[index], self.controller_ports[index]
        replicas, in_sync = str(min(3, nodes)), str(min(2, nodes))
        values = {
            "process.roles": "broker,controller",
            "node.id": str(index + 1),
            "controller.quorum.voters": self.voters,
            "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller}",
            "advertised.listeners": f"PLAINTEXT://{host}:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.node_dir(run_dir, index) / "data"),
            # Internal topics at the replication the nodes allow (Kafka's defaults are 3 and 2).
            "offsets.topic.replication.factor": replicas,
            "transaction.state.log.replication.factor": replicas,
            "transaction.state.log.min.isr": in_sync,
            "share.coordinator.state.topic.replication.factor": replicas,
            "share.coordinator.state.topic.min.isr": in_sync,
            "default.replication.factor": str(min(nodes, self.profile.topics.replication_factor)),
            "min.insync.replicas": str(min(nodes, self.profile.topics.min_insync_replicas)),
            # As Kafka's stock server.properties: a development broker does not wait 3 s for
            # more members before a new group's first rebalance.
            "group.initial.rebalance.delay.ms": "0",
            # A share group's record lock (`share.record.lock.duration.ms`, 30 s by default)
            # and member session may be set as short as 1 s and 6 s per group, so a notebook
            # or a test shows a redelivery or a dead member in seconds (Kafka's floors are
            # 15 s and 45 s); the defaults stay Kafka's.
            "group.share.min.record.lock.duration.ms": "1000",
            "group.share.min.session.timeout.ms": "6000",
            "group.share.min.heartbeat.interval.ms": "500",
            # The same floor for KIP-848 consumer groups (Kafka's: 5 s, its default too): a
            # group may set `consumer.heartbeat.interval.ms` to 0.5 s, as the profiles' classic
            # members heartbeat, so a rolling restart compares the protocols at one interval.
            "group.consumer.min.heartbeat.interval.ms": "500",
            "num.partitions": "1",
            # Every topic is created by whoever uses it, at the profile's replication; a
            # metadata request must not create one. Spark's Kafka sink keeps its producer
            # (cached for 10 minutes) after its query stops, and that producer's metadata
            # refresh recreated an output topic an experiment had just deleted.
            "auto.create.topics.enable": "false",
            # The active controller appends a no-op record to the metadata log this often
            # when nothing changes (KIP-835; Kafka's default 500 ms): at 5 s an idle node
            # spent 1.4-1.8 % of a core instead of 2.0-2.9 % (measured, one node, no
            # clients). Brokers still heartbeat every 2 s; elections do not wait on it.
            "metadata.max.idle.interval.ms": "5000",
            # Retention and compaction act within seconds, so a notebook or a test sees them
            # (docs/brokers.md, "How long records stay"): the log manager looks for segments
            # past retention every second (Kafka: 5 min, first look 30 s after start), a
            # deleted segment's files go 1 s later (60 s), and an idle cleaner looks for a
            # dirty log every second (15 s). Topics keep Kafka's own defaults otherwise.
            "log.retention.check.interval.ms": "1000",
            "log.initial.task.delay.ms": "1000",
            "log.segment.delete.delay.ms": "1000",
            "log.cleaner.backoff.ms": "1000",
        }
        values.update({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in settings.properties.items()})
        return values

    def format(self, run_dir: Path) -> None:
        """Format every node's storage with one cluster id, the nodes at once (a JVM each,
        about 1.3 s); a node that holds data already (`keep_data`) is left as it is."""
        if self._formatted:
            return
        self._formatted = True
        cluster_id = _cluster_id()
        pending = []
        for index in range(self.nodes):
            node = self.node_dir(run_dir, index)
            if (node / "data" / "meta.properties").exists():
                continue
            shutil.rmtree(node / "data", ignore_errors=True)
            config = self.write_properties(run_dir, index)
            pending.append((index, config))
        if not pending:
            return

        def run(item: tuple[int, Path]) -> subprocess.CompletedProcess[str]:
            argv = [
                _java(),
                "-cp",
                ":".join(self.classpath),
                "kafka.tools.StorageTool",
                "format",
                "-t",
                cluster_id,
                "-c",
                str(item[1]),
            ]
            return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)

        with ThreadPoolExecutor(max_workers=len(pending)) as pool:
            for (index, _), done in zip(pending, pool.map(run, pending), strict=True):
                if done.returncode != 0:
                    raise StackError(
                        f"formatting Kafka node {index + 1}'s storage failed: {java_cause(done.stdout + done.stderr)}"
                    )

    def write_properties(self, run_dir: Path, index: int) -> Path:
        node = self.node_dir(run_dir, index)
        node.mkdir(parents=True, exist_ok=True)
        config = node / "server.properties"
        lines = [f"{key}={value}" for key, value in self.properties(run_dir, index).items()]
        config.write_text(
            "# Written by `workbench up` from the profile; rewritten at every start.\n" + "\n".join(lines) + "\n"
        )
        return config


class KafkaNode(Service):
    """One Apache Kafka node (broker and KRaft controller) of the embedded cluster."""

    kind = "broker"

    @staticmethod
    def alias_of(profile: Profile) -> str:
        """The cluster alias nodes of this class belong to: "" for the profile's own."""
        return ""

    def __init__(
        self, profile: Profile, name: str | None = None, cluster: KafkaCluster | None = None, index: int = 0
    ) -> None:
        cluster = cluster or KafkaCluster(profile, alias=self.alias_of(profile))
        stem = f"{cluster.alias}-broker" if cluster.alias else "broker"
        if name is not None and name.startswith(f"{stem}-") and name[len(stem) + 1 :].isdigit():
            index = int(name[len(stem) + 1 :]) - 1
        super().__init__(profile, name or (stem if cluster.nodes == 1 else f"{stem}-{index + 1}"))
        self.cluster = cluster
        self.index = index
        self._argv: list[str] = []

    def listen_on(self) -> tuple[str, int]:
        self.cluster.plan()
        host, ports = self.profile.broker.host, self.cluster.client_ports
        if not self.profile.broker.port and process.port_in_use(host, ports[self.index]):
            # Chosen free when the cluster was planned, taken since (an outgoing connection's
            # ephemeral port, while the nodes before this one started): a client port is in
            # no other node's settings yet, so this node takes another free one.
            ports[self.index] = process.free_port(host)
        return host, ports[self.index]

    def _command(self, run_dir: Path) -> list[str]:
        self.cluster.format(run_dir)
        config = self.cluster.write_properties(run_dir, self.index)
        log4j = _log4j_config(run_dir)
        heap = self.profile.broker.heap
        return [
            _java(), f"-Xms{heap}", f"-Xmx{heap}", *JVM_OPTIONS,
            f"-Dkafka.logs.dir={(run_dir / 'logs').resolve()}", f"-Dlog4j2.configurationFile={log4j}",
            "-cp", ":".join(self.cluster.classpath), "kafka.Kafka", str(config),
        ]  # fmt: skip

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        self._argv = self._command(run_dir)
        return self._argv

    def start(self, run_dir: Path, started: Mapping[str, ServiceRecord]) -> ServiceRecord:
        record = super().start(run_dir, started)
        record.extra.update(
            {
                "argv": self._argv,
                "broker": "kafka",
                "version": self.cluster.version,
                "node_id": self.index + 1,
                **({"alias": self.cluster.alias} if self.cluster.alias else {}),
                "controller": f"{self.profile.broker.host}:{self.cluster.controller_ports[self.index]}",
                "data_dir": str(self.cluster.node_dir(run_dir, self.index)),
                "keep_data": self.profile.broker.keep_data,
            }
        )
        return record

    def wait_ready(self, record: ServiceRecord, timeout: float) -> None:
        """A node alone cannot elect a controller among several voters: every node but the
        last is only checked to be running; the last waits until all have registered."""
        nodes = self.cluster.nodes
        if self.index < nodes - 1:
            if not process.is_ours(record.pid, record.create_time):
                raise StackError(f"{self.name} exited during start-up; its log ends:\n{log_tail(record.log)}")
            return
        super().wait_ready(record, timeout)
        if nodes > 1:
            self._wait_registered(record, nodes, timeout)

    def _wait_registered(self, record: ServiceRecord, nodes: int, timeout: float) -> None:
        from workbench.kafka.admin import broker_count

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if broker_count(record.address, timeout=1.0) >= nodes:
                return
            time.sleep(0.1)
        raise StackError(
            f"the Kafka cluster did not register {nodes} brokers within {timeout:.0f} s; "
            f"see the logs beside {record.log}"
        )

    def is_healthy(self, address: str) -> bool:
        from workbench.kafka.admin import broker_answers

        return broker_answers(address, timeout=1.0)

    @property
    def startup_timeout(self) -> float:
        return self.profile.broker.startup_timeout_s

    @property
    def stop_grace(self) -> float:
        """A controlled shutdown moves leadership away and closes the logs cleanly."""
        return 30.0


class PeerKafkaNode(KafkaNode):
    """A node of the second embedded cluster (`replication.target`): its own KRaft quorum,
    cluster id, data and ports, on the same Kafka release; MirrorMaker replicates into it."""

    kind = "peer-broker"

    @staticmethod
    def alias_of(profile: Profile) -> str:
        return profile.replication.target


def restart_node(record: ServiceRecord, timeout: float = 60.0) -> ServiceRecord:
    """Start a Kafka node again, as it was started, on the data it left (after a kill).

    Returns the new record (new PID); the caller saves it in the stack's state.

    Raises:
        StackError: it is still running, or it did not answer within `timeout`.
    """
    if process.is_ours(record.pid, record.create_time):
        raise StackError(f"{record.name} is still running (pid {record.pid})")
    process.stop(record.pid, record.create_time)  # reaps it, when it was this process's child
    argv = [str(arg) for arg in record.extra.get("argv", [])]
    if not argv:
        raise StackError(f"{record.name} was not started by this version of the stack; run `workbench down` and `up`")
    proc = process.spawn(argv, Path(record.log))
    fresh = ServiceRecord(
        name=record.name,
        kind=record.kind,
        pid=proc.pid,
        create_time=proc.create_time(),
        address=record.address,
        log=record.log,
        url=record.url,
        extra=dict(record.extra),
    )
    deadline = time.monotonic() + timeout
    from workbench.kafka.admin import broker_answers

    while not broker_answers(record.address, timeout=1.0):
        if not process.is_ours(fresh.pid, fresh.create_time):
            raise StackError(f"{record.name} exited on restart; its log ends:\n{log_tail(record.log)}")
        if time.monotonic() > deadline:
            raise StackError(f"{record.name} did not answer within {timeout:.0f} s of its restart")
        time.sleep(0.1)
    return fresh


def kafka_nodes(profile: Profile) -> list[Service]:
    """The nodes of the profile's Kafka cluster, sharing one plan."""
    cluster = KafkaCluster(profile)
    return [KafkaNode(profile, cluster=cluster, index=i) for i in range(cluster.nodes)]


def peer_nodes(profile: Profile) -> list[Service]:
    """The nodes of the second cluster a replication profile starts (`replication.target`)."""
    cluster = KafkaCluster(profile, alias=profile.replication.target)
    return [PeerKafkaNode(profile, cluster=cluster, index=i) for i in range(cluster.nodes)]


def _java() -> str:
    from workbench.java import java_version

    return java_version("Apache Kafka 4", ())[1]


def _cluster_id() -> str:
    """A cluster id as `kafka-storage.sh random-uuid` makes one: 16 random bytes in URL-safe
    base64 without padding, never starting with '-' (a command line would take it for a flag)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _log4j_config(run_dir: Path) -> Path:
    """Kafka's log to standard output (the stack's log file for the node), per-partition chatter at WARN."""
    return log4j_config((run_dir / "kafka" / "log4j2.properties").resolve(), _QUIET_LOGGERS)


def log4j_config(path: Path, quiet: Iterable[str]) -> Path:
    """Write a log4j 2 file at `path` sending a JVM's log to standard output (the stack's
    log file for the process), the `quiet` loggers at WARN; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "status = warn",
        "appender.out.type = Console",
        "appender.out.name = out",
        "appender.out.layout.type = PatternLayout",
        "appender.out.layout.pattern = [%d] %p %m (%c)%n",
        "rootLogger.level = INFO",
        "rootLogger.appenderRef.out.ref = out",
    ]
    for i, name in enumerate(quiet):
        lines += [f"logger.q{i}.name = {name}", f"logger.q{i}.level = WARN"]
    path.write_text("\n".join(lines) + "\n")
    return path
