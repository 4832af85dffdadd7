"""Profiles: where the broker, the REST proxies and Spark are, read from `conf/<name>.yaml`.

A profile is the only place a host, a port or a path is written. The order is fixed and
documented: the YAML file first, then environment variables on top of it:

- `WORKBENCH_PROFILE` picks the profile (default `local`); a value ending in `.yaml`
  is taken as a path to a profile file.
- `WORKBENCH_CONF_DIR` says where the `conf/` folder is (default: the project's own).
- `WORKBENCH_<SECTION>__<KEY>=value` overrides one key, `__` separating the levels:
  `WORKBENCH_BROKER__PORT=0`, `WORKBENCH_RUN_DIR=/tmp/run`. Inside the `kafka` client
  dictionaries an underscore stands for a dot, since shells cannot export dotted names:
  `WORKBENCH_KAFKA__CONSUMER__SESSION_TIMEOUT_MS=10000`.
- A few variables are not profile keys (`ENV_VARIABLES`: the run id a report gives its
  notebooks, a report's cell timeout). Any other `WORKBENCH_*` name is an error, so a
  typo (`WORKBENCH_BROKER_PORT`) is reported instead of silently doing nothing.

This module is the one place the environment is read (`environment()`); the rest of the
workbench takes the values from here.

Relative paths in a profile are relative to the project root (the parent of `conf/`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from workbench.errors import ConfigError
from workbench.secrets import ClientConf, is_secret_key, masked

__all__ = [
    "BalancerSettings",
    "BrokerSettings",
    "DEFAULT_PROFILE",
    "ENV_PREFIX",
    "ENV_VARIABLES",
    "Environment",
    "KafkaConf",
    "KafkaSettings",
    "Profile",
    "ProxyAuth",
    "ProxySettings",
    "ProxyVariant",
    "ReplicationSettings",
    "SchemaRegistrySettings",
    "SparkSettings",
    "TopicSettings",
    "conf_dir",
    "end_probe",
    "environment",
    "load_profile",
    "project_root",
]

ENV_PREFIX = "WORKBENCH_"
DEFAULT_PROFILE = "local"

#: `WORKBENCH_*` variables that are not profile overrides, and what each sets.
ENV_VARIABLES = {
    "WORKBENCH_PROFILE": "the profile: a name in conf/ or a path to a YAML file",
    "WORKBENCH_CONF_DIR": "the folder profiles are read from",
    "WORKBENCH_RUN_ID": "the run id a report gives the notebooks it runs",
    "WORKBENCH_CELL_TIMEOUT": "seconds a report lets one notebook cell run",
    "WORKBENCH_END_PROBE": "clusters whose end offsets are read from the log (given to the services the stack starts)",
    "WORKBENCH_CACHE_DIR": "where resolved jars are kept (default: ~/.cache/workbench)",
    "WORKBENCH_MAVEN_REPOSITORY": "a Maven repository to resolve jars from instead of Maven Central",
}

#: librdkafka settings are plain dotted-key dictionaries, passed through untouched.
KafkaConf = dict[str, Any]


def _property_lines(value: dict[str, Any], name: str, like: str) -> dict[str, Any]:
    """Properties that become lines of a `.properties` file: each name matching `name`, each value one line."""
    for key, item in value.items():
        if not re.fullmatch(name, key):
            raise ValueError(f"{key[:80]!r} is not {like}")
        if any(c in str(item) for c in "\n\r\x00"):
            raise ValueError(f"{key}: a property value is one line")
    return value


class _Section(BaseModel):
    """Unknown keys are errors: a typo in a profile must not be silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class BrokerSettings(_Section):
    """The embedded broker: Apache Kafka (KRaft, 1-5 nodes) or Tansu.

    Kafka's jars come from Maven Central once (`workbench.maven`), or from an Apache
    Kafka installation (`kafka_home`, else `$KAFKA_HOME`). Node i listens on `port + i`.
    A profile with `embedded: false` starts nothing and reads only `kind`: `tansu` says
    the cluster is Tansu, whose end offsets must be read from the logs; left unwritten,
    the cluster is checked once for ends reported short (`stack.log_ends`).
    """

    kind: Literal["kafka", "tansu"] = "kafka"
    nodes: int = Field(1, ge=1, le=5, description="Kafka nodes, each broker and controller (KRaft)")
    version: str = Field("4.4.0", pattern=r"^4\.\d+\.\d+$", description="Apache Kafka release from Maven Central")
    kafka_home: Path | None = Field(None, description="an Apache Kafka 4.x installation to run instead (its libs/)")
    heap: str = Field("512m", pattern=r"^\d+[kmg]$", description="each Kafka node's JVM heap (-Xms and -Xmx)")
    keep_data: bool = Field(False, description="`down` keeps the Kafka logs for the next `up` (default: wiped)")
    properties: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Kafka broker properties on top of the stack's (`num.io.threads: 4`)"
    )
    host: str = "127.0.0.1"
    port: int = Field(9092, ge=0, le=65535, description="0 picks a free port at start")
    startup_timeout_s: float = Field(
        60.0, gt=0, description="seconds each node may take to answer after it starts (a JVM on a busy machine: 30-60)"
    )
    warm_up_s: float = Field(
        60.0,
        ge=0,
        le=600,
        description="seconds of load `workbench up` puts on a new broker before it reports ready (0: none)",
    )

    @field_validator("properties")
    @classmethod
    def _properties_are_lines(cls, value: dict[str, Any]) -> dict[str, Any]:
        """They become lines of server.properties: dotted names, one-line values."""
        return _property_lines(value, r"[a-z0-9][a-z0-9._-]{0,254}", "a broker property name like num.io.threads")

    @model_validator(mode="after")
    def _tansu_is_one_node(self) -> BrokerSettings:
        if self.kind == "tansu" and self.nodes != 1:
            raise ValueError("Tansu runs as one node here; nodes > 1 needs kind: kafka")
        return self


class ProxyAuth(_Section):
    """HTTP basic auth, by the names of the environment variables holding the secrets."""

    username_env: str
    password_env: str

    def credentials(self) -> tuple[str, str]:
        """Read the secrets now, so they are never stored in the profile object."""
        missing = [n for n in (self.username_env, self.password_env) if n not in os.environ]
        if missing:
            raise ConfigError(None, "proxy.auth", f"environment variable(s) not set: {missing}")
        return os.environ[self.username_env], os.environ[self.password_env]


class ProxyVariant(_Section):
    """Proxies a user runs with other settings, so a notebook can compare them on a cluster.

    The workbench cannot restart someone else's proxy with another buffer time; a user
    who runs one (say with `producer.linger.ms=0`, or MapR's
    `streams.buffer.max.time.ms=0`) lists it here with the properties it differs by, and
    the notebook that needs those settings uses it instead of starting its own.
    """

    urls: list[str] = Field(min_length=1, description="the variant's base URLs")
    properties: dict[str, Any] = Field(default_factory=dict, description="how it is configured, upstream names")
    description: str = ""


class ProxySettings(_Section):
    """REST proxies: embedded instances on consecutive ports, or a cluster's base URLs."""

    instances: int = Field(1, ge=1, le=64)
    host: str = "127.0.0.1"
    first_port: int = Field(8082, ge=0, le=65535, description="0 picks free ports")
    properties: Path = Path("conf/kafka-rest.properties")
    overrides: dict[str, Any] = Field(
        default_factory=dict, description="properties set on top of the file, upstream names (`producer.linger.ms: 0`)"
    )
    urls: list[str] = Field(default_factory=list, description="cluster proxies' base URLs")
    auth: ProxyAuth | None = None
    variants: dict[str, ProxyVariant] = Field(default_factory=dict, description="cluster proxies with other settings")
    unresponsive_s: float = Field(
        60.0,
        ge=0,
        le=3600,
        description="an embedded proxy that answers no request for this long is killed and restarted, its threads' "
        "stacks in its log first (0: never)",
    )

    @field_validator("overrides")
    @classmethod
    def _overrides_fit_the_environment(cls, value: dict[str, Any]) -> dict[str, Any]:
        """They reach the proxies as `KAFKA_REST_<NAME>` variables: dotted names, scalar values, no NUL."""
        for key, item in value.items():
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}", key):
                raise ValueError(f"property name {key[:80]!r} is not a dotted name like producer.linger.ms")
            if not isinstance(item, str | int | float | bool) or "\x00" in str(item):
                raise ValueError(f"{key}: a property value is one string or number, got {str(item)[:80]!r}")
        return value


class BalancerSettings(_Section):
    """nginx in front of the embedded proxies when there is more than one; a cluster's own balancer by `url`."""

    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    url: str | None = Field(None, description="a cluster profile's load balancer in front of proxy.urls")


class TopicSettings(_Section):
    """What every topic the workbench creates gets: a cluster user measures `acks=all` at RF 3.

    Applied by `Stack.create_topics` to every experiment's topics and stamped on every
    result row, so a figure always says which replication it was measured with.
    """

    replication_factor: int = Field(1, ge=1, le=32)
    min_insync_replicas: int = Field(1, ge=1, le=32)

    @model_validator(mode="after")
    def _insync_within_replicas(self) -> TopicSettings:
        if self.min_insync_replicas > self.replication_factor:
            raise ValueError(
                f"min_insync_replicas {self.min_insync_replicas} exceeds replication_factor "
                f"{self.replication_factor}: no write with acks=all could ever succeed"
            )
        return self

    def topic_config(self) -> dict[str, str]:
        """The topic-level configuration to create a topic with (Kafka's names, string values)."""
        return {"min.insync.replicas": str(self.min_insync_replicas)}


class SchemaRegistrySettings(_Section):
    """The Schema Registry: the embedded one (`enabled`), or a cluster's `url`."""

    enabled: bool = Field(False, description="start the embedded registry (embedded profiles)")
    host: str = "127.0.0.1"
    port: int = Field(8081, ge=0, le=65535, description="0 picks a free port")
    url: str | None = Field(None, description="a cluster's registry base URL")
    auth: ProxyAuth | None = Field(None, description="basic auth for `url`, by environment variable")


class SparkSettings(_Section):
    """Spark session settings; `connector` picks the Kafka source.

    `workers: N` (embedded profiles) makes `workbench up` start a Spark standalone master
    and N workers, Spark's own daemons, and sessions connect to that master instead of
    `master`; the executors then run in JVMs of their own, as on a real cluster.
    """

    master: str = "local[*]"
    shuffle_partitions: int = Field(4, ge=1)
    connector: Literal["auto", "kafka", "workbench"] = "auto"
    conf: dict[str, str] = Field(default_factory=dict)
    workers: int = Field(0, ge=0, le=16, description="standalone workers `workbench up` starts; 0: none")
    worker_cores: int = Field(1, ge=1, description="cores each standalone worker offers")
    worker_memory: str = Field("1g", pattern=r"^\d+[kmgt]$", description="memory each worker offers (Spark syntax)")
    host: str = "127.0.0.1"
    master_port: int = Field(7077, ge=0, le=65535, description="the standalone master's RPC port; 0 picks one")
    master_ui_port: int = Field(8080, ge=0, le=65535, description="its web UI and JSON status; 0 picks one")
    ship_source: bool = Field(True, description="ship the workbench package to executors with the session")
    ui_url: str | None = Field(None, description="a cluster master's web UI, checked by `workbench status`")


class KafkaSettings(_Section):
    """Client settings as librdkafka dictionaries: common to all, then per role."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    bootstrap_servers: str | None = Field(None, alias="bootstrap.servers")
    common: KafkaConf = Field(default_factory=dict)
    producer: KafkaConf = Field(default_factory=dict)
    consumer: KafkaConf = Field(default_factory=dict)
    admin: KafkaConf = Field(default_factory=dict)

    def for_role(self, role: Literal["producer", "consumer", "admin"]) -> KafkaConf:
        """The common settings overlaid with the role's own (without bootstrap servers)."""
        return ClientConf({**self.common, **getattr(self, role)})

    def __repr_args__(self) -> Any:
        """A printed profile shows `sasl.password` and the like as a mask."""
        for name, value in super().__repr_args__():
            yield name, masked(value) if isinstance(value, dict) else value


class ReplicationSettings(_Section):
    """A second Kafka cluster and MirrorMaker 2 between the two (`conf/local-geo.yaml`).

    The profile's own cluster is `source` and the second is `target`, by MirrorMaker's
    aliases (they prefix replicated topics: `a.orders` on b). An embedded profile starts
    the second cluster (`target_nodes` KRaft nodes of its own, its own cluster id) and
    `workers` MirrorMaker processes in dedicated mode; a cluster profile names the second
    cluster's `target_bootstrap` and starts nothing. `properties` are MirrorMaker's own
    (`a->b.topics`, `sync.group.offsets.interval.seconds`, `tasks.max`), on top of the
    stack's (`workbench.replication.plan`).
    """

    enabled: bool = Field(False, description="a second cluster and MirrorMaker 2 between them")
    source: str = Field("a", description="MirrorMaker's alias of this profile's cluster")
    target: str = Field("b", description="MirrorMaker's alias of the second cluster")
    target_bootstrap: str | None = Field(None, description="the second cluster's bootstrap list (cluster profiles)")
    target_nodes: int = Field(1, ge=1, le=3, description="KRaft nodes of the embedded second cluster")
    target_proxy: bool = Field(True, description="a REST proxy for the embedded second cluster too (`b-proxy`)")
    target_proxy_url: str | None = Field(None, description="the second cluster's REST proxy (cluster profiles)")
    workers: int = Field(2, ge=0, le=4, description="MirrorMaker processes the embedded stack starts")
    version: str = Field("4.3.1", pattern=r"^[34]\.\d+\.\d+$", description="MirrorMaker's release from Maven Central")
    heap: str = Field("384m", pattern=r"^\d+[kmg]$", description="each MirrorMaker process's JVM heap")
    properties: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="MirrorMaker properties on top of the stack's (`a->b.topics: orders.*`)"
    )

    @field_validator("source", "target")
    @classmethod
    def _alias_is_a_name(cls, value: str) -> str:
        """An alias prefixes topic names, joined by the policy's '.': letters, digits, _ and -."""
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", value):
            raise ValueError(f"{value[:40]!r} is not a cluster alias: 1-32 letters, digits, '_' or '-'")
        return value

    @field_validator("properties")
    @classmethod
    def _properties_are_lines(cls, value: dict[str, Any]) -> dict[str, Any]:
        """They become lines of MirrorMaker's properties file; a flow's names hold `->`."""
        return _property_lines(
            value, r"[A-Za-z0-9][A-Za-z0-9._>-]{0,254}", "a MirrorMaker property name like a->b.topics"
        )

    @model_validator(mode="after")
    def _two_clusters(self) -> ReplicationSettings:
        if self.source == self.target:
            raise ValueError(f"replication.source and replication.target are both {self.source!r}: two aliases")
        return self


class Profile(_Section):
    """One deployment the notebooks can run against, loaded by `load_profile`."""

    name: str
    embedded: bool = True
    description: str = ""
    learner: str = Field("", description="who the course's checks record progress for (`WORKBENCH_LEARNER`)")
    run_dir: Path = Path(".workbench/run")
    data_dir: Path = Path("data")
    results_dir: Path = Path("data/results")
    reports_dir: Path = Path("reports")
    broker: BrokerSettings = BrokerSettings()
    proxy: ProxySettings = ProxySettings()
    balancer: BalancerSettings = BalancerSettings()
    schema_registry: SchemaRegistrySettings = SchemaRegistrySettings()
    spark: SparkSettings = SparkSettings()
    kafka: KafkaSettings = KafkaSettings()
    topics: TopicSettings = TopicSettings()
    replication: ReplicationSettings = ReplicationSettings()
    source: Path | None = Field(None, description="the file this profile was read from")

    @field_validator("learner", mode="before")
    @classmethod
    def _learner_as_text(cls, value: Any) -> Any:
        """`WORKBENCH_LEARNER=007` is parsed as a YAML number; a name is text."""
        return value if value is None or isinstance(value, str) else str(value)

    @model_validator(mode="after")
    def _cluster_needs_addresses(self) -> Profile:
        if not self.embedded and not self.kafka.bootstrap_servers:
            raise ValueError("kafka.bootstrap.servers is required when embedded is false")
        if not self.embedded and self.replication.enabled and not self.replication.target_bootstrap:
            raise ValueError("replication.target_bootstrap is required when embedded is false")
        if not self.embedded and self.spark.workers:
            raise ValueError(
                "spark.workers starts Spark on this machine and needs embedded: true; "
                "a cluster profile names its master in spark.master"
            )
        return self

    def path(self, value: Path) -> Path:
        """Resolve a profile path against the project root."""
        return value if value.is_absolute() else project_root() / value


@dataclass(frozen=True)
class Environment:
    """The environment as the workbench reads it: checked once, then passed around as values."""

    profile: str | None = None
    conf_dir: Path | None = None
    run_id: str | None = None
    cell_timeout_s: float | None = None
    java_home: Path | None = None
    kafka_home: Path | None = None
    #: Where resolved jars are kept: `WORKBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/workbench`.
    cache_dir: Path | None = None
    #: `WORKBENCH_MAVEN_REPOSITORY`: a mirror to resolve jars from instead of Maven Central.
    maven_repository: str | None = None
    #: `WORKBENCH_END_PROBE`: clusters (`bootstrap.servers`) whose end offsets are read from the log.
    end_probe: frozenset[str] = frozenset()
    #: `WORKBENCH_<SECTION>__<KEY>` profile overrides, by variable name.
    overrides: Mapping[str, str] = field(default_factory=dict)


def environment(environ: Mapping[str, str] | None = None) -> Environment:
    """Read and check every variable the workbench uses (`os.environ` unless given).

    Raises:
        ConfigError: a `WORKBENCH_*` name that is neither a profile section nor one of
            `ENV_VARIABLES`, or a value of the wrong type; the message names the variable.
    """
    env = os.environ if environ is None else environ
    overrides: dict[str, str] = {}
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX) or name in ENV_VARIABLES:
            continue
        section = name[len(ENV_PREFIX) :].lower().split("__")[0]
        if section not in Profile.model_fields or section == "source":
            sections = ", ".join(f for f in Profile.model_fields if f != "source")
            raise ConfigError(
                name,
                None,
                f"unknown variable: not a profile key (sections: {sections}) nor one of {', '.join(ENV_VARIABLES)}",
            )
        overrides[name] = value
    return Environment(
        profile=env.get(f"{ENV_PREFIX}PROFILE") or None,
        conf_dir=Path(env[f"{ENV_PREFIX}CONF_DIR"]).resolve() if env.get(f"{ENV_PREFIX}CONF_DIR") else None,
        run_id=env.get(f"{ENV_PREFIX}RUN_ID") or None,
        cell_timeout_s=_seconds(env, f"{ENV_PREFIX}CELL_TIMEOUT"),
        java_home=Path(env["JAVA_HOME"]) if env.get("JAVA_HOME") else None,
        kafka_home=Path(env["KAFKA_HOME"]) if env.get("KAFKA_HOME") else None,
        cache_dir=_cache_dir(env),
        maven_repository=env.get(f"{ENV_PREFIX}MAVEN_REPOSITORY") or None,
        end_probe=end_probe(env),
        overrides=overrides,
    )


def _cache_dir(env: Mapping[str, str]) -> Path | None:
    if env.get(f"{ENV_PREFIX}CACHE_DIR"):
        return Path(env[f"{ENV_PREFIX}CACHE_DIR"])
    return Path(env["XDG_CACHE_HOME"]) / "workbench" if env.get("XDG_CACHE_HOME") else None


def end_probe(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """`WORKBENCH_END_PROBE` alone, as `environment().end_probe` reads it: for the readers of
    end offsets, made often and in processes (a proxy, Spark's Python workers) that must not
    fail on another variable they inherited.

    A JSON array of `bootstrap.servers` strings; anything else is none.
    """
    value = (os.environ if environ is None else environ).get(f"{ENV_PREFIX}END_PROBE")
    try:
        servers = json.loads(value or "[]")
    except ValueError:
        return frozenset()
    return frozenset(str(s) for s in servers) if isinstance(servers, list) else frozenset()


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    value = env.get(name)
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ConfigError(name, None, f"expected a positive number of seconds, got {value!r}")
    return seconds


def project_root() -> Path:
    """The folder that holds `conf/`: relative profile paths start here."""
    return conf_dir().parent


def conf_dir() -> Path:
    """`$WORKBENCH_CONF_DIR`, else the `conf/` beside the installed package's source."""
    override = environment().conf_dir
    if override is not None:
        return override
    return Path(__file__).resolve().parent.parent / "conf"


def load_profile(name: str | None = None) -> Profile:
    """Load a profile by name (or path), apply environment overrides, validate it.

    Args:
        name: a profile in `conf/` (`"local"`, `"cluster"`) or a path to a YAML file;
            `None` takes `$WORKBENCH_PROFILE`, else `"local"`.

    Returns:
        The typed, frozen profile.

    Raises:
        ConfigError: the file is missing or not YAML, or a key is unknown, missing or
            of the wrong type; the message names the file and the key.

    Usage: `profile = load_profile()`; `load_profile("cluster")`.
    """
    env = environment()
    name = name or env.profile or DEFAULT_PROFILE
    file = _profile_file(name)
    raw = _read_yaml(file)
    raw.setdefault("name", file.stem)
    _apply_env_overrides(raw, env.overrides)
    raw["source"] = str(file)
    try:
        return Profile.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"]) or None
        shown = "(secret)" if key and is_secret_key(key) else _clipped(repr(error.get("input")))
        given = f" (got {shown})" if key and "input" in error else ""
        raise ConfigError(file, key, f"{error['msg']}{given}") from None


def _clipped(text: str, limit: int = 120) -> str:
    """An echoed value, short enough for a one-line error."""
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def _profile_file(name: str) -> Path:
    is_path = name.endswith((".yaml", ".yml"))
    file = Path(name).expanduser().resolve() if is_path else conf_dir() / f"{name}.yaml"
    if not file.is_file():
        known = sorted(p.stem for p in conf_dir().glob("*.yaml"))
        raise ConfigError(file, None, f"no such profile file; profiles in conf/: {known}")
    return file


def _read_yaml(file: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(file, where, f"not valid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(file, None, "a profile must be a YAML mapping of sections")
    return data


def _apply_env_overrides(raw: dict[str, Any], overrides: Mapping[str, str]) -> None:
    """Overlay `WORKBENCH_A__B=value` on `raw["a"]["b"]`; values are parsed as YAML scalars."""
    for env_name, value in overrides.items():
        keys = env_name[len(ENV_PREFIX) :].lower().split("__")
        if keys[0] == "kafka" and len(keys) == 3 and keys[1] != "bootstrap_servers":
            keys[2] = keys[2].replace("_", ".")
        elif keys == ["kafka", "bootstrap_servers"]:
            keys[1] = "bootstrap.servers"
        node = raw
        for key in keys[:-1]:
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                raise ConfigError(env_name, ".".join(keys), "overrides a value that is not a section")
            node = child
        text_field = len(keys) == 1 and Profile.model_fields[keys[0]].annotation is str
        node[keys[-1]] = yaml.safe_load(value) if value and not text_field else value  # a name "007" stays text
