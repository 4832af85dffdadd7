"""A `Stack`: where a profile's services are, and what a client needs to reach them.

`workbench.stack.lifecycle` makes one (starting the embedded services, or finding a
cluster's); experiments, notebooks and tests take one and ask it for client settings,
URLs and throw-away topics.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from workbench.config import KafkaConf, Profile
from workbench.errors import StackError
from workbench.secrets import ClientConf
from workbench.stack.services import broker_addresses
from workbench.stack.state import ServiceRecord, StackState

__all__ = ["CREATE_BATCH", "Stack", "TemporaryTopics"]

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
        `kafka.offsets`), in this process and, told explicitly, in the ones it starts."""
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

    @property
    def peer_bootstrap_servers(self) -> str:
        """`bootstrap.servers` of a replication profile's second cluster (`replication.target`):
        the embedded one's nodes, or the profile's `replication.target_bootstrap`.

        Raises:
            StackError: the profile has no second cluster, or it is not running.
        """
        settings = self.profile.replication
        if not settings.enabled:
            raise StackError(
                f"profile {self.profile.name!r} has no second cluster; replication.enabled is false "
                "(conf/local-geo.yaml has one)"
            )
        if settings.target_bootstrap:
            return settings.target_bootstrap
        addresses = [r.address for r in self.services.values() if r.kind == "peer-broker"]
        if not addresses:
            raise StackError(
                f"cluster {settings.target!r} of profile {self.profile.name!r} is not running; run `workbench up`"
            )
        return ",".join(addresses)

    @property
    def peer_proxy_url(self) -> str:
        """The REST proxy of a replication profile's second cluster: the embedded `b-proxy`, or
        the profile's `replication.target_proxy_url`.

        Raises:
            StackError: the profile names no such proxy, or it is not running.
        """
        settings = self.profile.replication
        if not self.profile.embedded:
            if settings.enabled and settings.target_proxy_url:
                return settings.target_proxy_url
            raise StackError(
                f"profile {self.profile.name!r} names no REST proxy for its second cluster "
                "(replication.target_proxy_url)"
            )
        url = next((r.url for r in self.services.values() if r.kind == "peer-proxy" and r.url), None)
        if url is None:
            raise StackError(
                f"no REST proxy of cluster {settings.target!r} runs in the {self.profile.name!r} stack "
                "(replication.target_proxy: true starts one with `workbench up`)"
            )
        return url

    def peer_config(self, role: Literal["producer", "consumer", "admin"] = "admin") -> KafkaConf:
        """librdkafka settings for a client of the second cluster, with the profile's client settings."""
        return ClientConf({"bootstrap.servers": self.peer_bootstrap_servers, **self.profile.kafka.for_role(role)})

    def refreshed(self) -> Stack:
        """This stack with its services as the state file has them now (a node restarted
        since this object was made has a new PID); a cluster profile's stack as it is.
        A state file another profile wrote (one run directory named for every profile,
        `WORKBENCH_RUN_DIR`) holds none of this stack's services: an experiment that kills
        or freezes this stack's processes must never find another stack's there."""
        if not self.profile.embedded:
            return self
        state = StackState.load(self.profile.path(self.profile.run_dir))
        ours = state is not None and state.profile == self.profile.name
        return Stack(self.profile, state.services if state is not None and ours else {}, self.started_here)

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
        peer: bool = False,
    ) -> list[str]:
        """Create `{name: partitions}` with the profile's replication factor and min.insync.replicas.

        Every experiment creates its topics here, so none is measured at a replication
        the profile did not ask for. `config` adds topic settings of the experiment's own
        (`{"message.timestamp.type": "LogAppendTime"}`). `peer` creates them on a
        replication profile's second cluster, at the replication its nodes allow. Returns
        the names, in order.

        Raises:
            KafkaError: a topic exists (unless `exist_ok`), or the cluster refused it
                (a replication factor above its broker count, for one).

        Usage: `stack.create_topics({"readings": 4})`.
        """
        from workbench import kafka

        settings = self.profile.topics
        replication, topic_config = settings.replication_factor, settings.topic_config()
        if peer:
            nodes = self.profile.replication.target_nodes
            replication = min(replication, nodes)
            topic_config = {**topic_config, "min.insync.replicas": str(min(settings.min_insync_replicas, nodes))}
        kafka.create_topics(
            self.peer_config("admin") if peer else self.kafka_config("admin"),
            topics,
            replication_factor=replication,
            config={**topic_config, **(config or {})},
            exist_ok=exist_ok,
            timeout=timeout,
        )
        return list(topics)

    def delete_topics(self, names: Iterable[str], *, timeout: float = 30.0, peer: bool = False) -> None:
        """Delete topics this stack's experiments created (missing ones are fine); `peer`: on the second cluster."""
        from workbench import kafka

        conf = self.peer_config("admin") if peer else self.kafka_config("admin")
        kafka.delete_topics(conf, names, timeout=timeout)

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
