"""The proxy's configuration: a `kafka-rest.properties` file with upstream names.

The names and defaults are Confluent REST Proxy's (`KafkaRestConfig`), so a properties
file written for Confluent's or MapR's proxy runs here, and a knob an article talks
about is spelled the same. The order is fixed:

1. the defaults below (Confluent's, except `listeners`: loopback, not 0.0.0.0);
2. the properties file;
3. `KAFKA_REST_<NAME>` environment variables, as in Confluent's container images
   (`KAFKA_REST_CONSUMER_INSTANCE_TIMEOUT_MS=2000` is `consumer.instance.timeout.ms`);
4. the command line (`--host`, `--port`, `--bootstrap-servers`).

Keys the proxy does not know are reported in one warning that names them, so a typo
is visible but an upstream file with settings we do not implement still starts. A
value of the wrong type stops the start with a one-line `ConfigError`.

Kafka client settings pass through with their prefix stripped (`producer.`,
`consumer.`, `admin.`, `client.` for all three). Java client names that librdkafka
spells differently are translated (`max.request.size` → `message.max.bytes`,
`buffer.memory` → `queue.buffering.max.kbytes`); Java-only ones are dropped with a
warning. MapR's `streams.buffer.max.time.ms` (also with a `producer.` prefix) is the
producer's buffer time, that is librdkafka's `linger.ms`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, SkipValidation, ValidationError

from workbench.errors import ConfigError
from workbench.kafka import java_names
from workbench.properties import (
    Flag,
    Integer,
    Text,
    config_error,
    environment_properties,
    known,
    parse_properties,
)
from workbench.secrets import ClientConf

__all__ = [
    "ENV_PREFIX",
    "IGNORED",
    "PASS_THROUGH",
    "RestProxySettings",
    "load_restproxy_settings",
    "parse_properties",
]

log = logging.getLogger("workbench.restproxy")

ENV_PREFIX = "KAFKA_REST_"

#: Upstream properties accepted and ignored on purpose (they tune a JVM server).
IGNORED = {
    "simpleconsumer.pool.size.max",
    "simpleconsumer.pool.timeout.ms",
    "thread.pool.min",
    "thread.pool.max",
    "request.queue.capacity",
    "compression.enable",
    "http2.enabled",
    "response.mediatype.preferred",
    "response.mediatype.default",
    "api.v3.produce.response.thread.pool.size",
    "schema.registry.enable",
    "streams.default.stream",
    "access.control.allow.origin",
    "access.control.allow.methods",
    "access.control.allow.headers",
}

PASS_THROUGH = ("client.", "producer.", "consumer.", "admin.")

_HOUR_MS = 3_600_000


def _advertised(value: str) -> str | None:
    first = next((item.strip() for item in value.split(",") if item.strip()), "")
    if not first:
        return None
    parts = urlsplit(first)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"must be scheme://host:port, got {first!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _method(value: str) -> str:
    method = value.upper()
    if method not in ("NONE", "BASIC"):
        raise ValueError(f"must be NONE or BASIC, got {method!r}")
    return method


def _registry_url(value: str) -> str:
    return value.rstrip("/")


class RestProxySettings(BaseModel):
    """Everything one REST proxy server process needs, typed; built by `load_restproxy_settings`.

    Each upstream property is one field: its dotted name is the alias, with its default
    (Confluent's, except `listeners`: loopback, not 0.0.0.0) and its bounds. The fields
    without an alias are derived by `load_restproxy_settings` (the address to bind, the
    users, the Kafka clients' settings). The server's own side: not the profile's `proxy`
    section (`config.ProxySettings`), which says where the proxies are and how clients
    reach them."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    bootstrap_servers: Text = Field("", alias="bootstrap.servers")
    listeners: Text = Field("http://127.0.0.1:8082", alias="listeners")
    #: The old single-port property; the port of `listeners` wins, then `--port`.
    port: Integer = Field(8082, alias="port")
    id: Text = Field("", alias="id")
    advertised_url: Annotated[Text, AfterValidator(_advertised)] | None = Field(None, alias="advertised.listeners")
    host_name: Text = Field("", alias="host.name")
    #: `schema.registry.url`: "" means none, and the schema formats answer 42205.
    schema_registry_url: Annotated[Text, AfterValidator(_registry_url)] = Field("", alias="schema.registry.url")
    consumer_request_timeout_ms: Integer = Field(1000, alias="consumer.request.timeout.ms", ge=0, le=_HOUR_MS)
    consumer_request_max_bytes: Integer = Field(67108864, alias="consumer.request.max.bytes")
    consumer_instance_timeout_ms: Integer = Field(300000, alias="consumer.instance.timeout.ms", ge=1, le=2**31)
    consumer_threads: Integer = Field(50, alias="consumer.threads", ge=-1, le=10_000)
    consumer_iterator_backoff_ms: Integer = Field(50, alias="consumer.iterator.backoff.ms")
    consumer_iterator_timeout_ms: Integer = Field(1, alias="consumer.iterator.timeout.ms")
    consumer_max_poll_records: Integer = Field(500, alias="consumer.max.poll.records", ge=1, le=1_000_000)
    fetch_min_bytes: Integer = Field(-1, alias="fetch.min.bytes", ge=-1, le=10_000_000)
    producer_threads: Integer = Field(5, alias="producer.threads")
    #: MapR's name for the producer's buffer time (librdkafka's `linger.ms`); -1: not set.
    streams_buffer_max_time_ms: Integer = Field(-1, alias="streams.buffer.max.time.ms")
    producer_streams_buffer_max_time_ms: Integer = Field(-1, alias="producer.streams.buffer.max.time.ms")
    request_max_bytes: Integer = Field(67108864, alias="request.max.bytes", ge=1, le=2**31)
    metadata_max_age_ms: Integer = Field(5000, alias="metadata.max.age.ms")
    api_v2_enable: Flag = Field(True, alias="api.v2.enable")
    api_v3_enable: Flag = Field(True, alias="api.v3.enable")
    auth_method: Annotated[Text, AfterValidator(_method)] = Field("NONE", alias="authentication.method")
    auth_realm: Text = Field("workbench", alias="authentication.realm")
    #: `user:password[,user:password...]`, read into `basic_auth` when the method is BASIC.
    basic_users: SecretStr = Field(SecretStr(""), alias="authentication.basic.users")
    debug: Flag = Field(False, alias="debug")
    shutdown_graceful_ms: Integer = Field(5000, alias="shutdown.graceful.ms")
    # Bounds on what one client can hold or send (see `Limits`).
    connection_limit: Integer = Field(1000, alias="server.connection.limit", ge=0, le=1_000_000)
    idle_timeout_ms: Integer = Field(30000, alias="idle.timeout.ms", ge=1, le=_HOUR_MS)
    header_max_bytes: Integer = Field(32768, alias="request.header.max.bytes", ge=1024, le=16 * 2**20)
    header_timeout_ms: Integer = Field(10000, alias="request.header.timeout.ms", ge=1, le=_HOUR_MS)
    body_timeout_ms: Integer = Field(30000, alias="request.body.timeout.ms", ge=1, le=_HOUR_MS)
    max_records_per_request: Integer = Field(100000, alias="producer.max.records.per.request", ge=1, le=10_000_000)
    max_block_ms: Integer = Field(60000, alias="producer.max.block.ms", ge=0, le=_HOUR_MS)
    consumer_instances_max: Integer = Field(500, alias="consumer.instances.max", ge=1, le=100_000)
    #: Share-consumer instances and affinity-free group members in one process.
    share_instances_max: Integer = Field(100, alias="share.consumer.instances.max", ge=1, le=100_000)
    consumer_request_timeout_max_ms: Integer = Field(60000, alias="consumer.request.timeout.max.ms", ge=0, le=_HOUR_MS)
    v3_request_max_bytes: Integer = Field(0, alias="api.v3.produce.request.size.limit.max.bytes", ge=0, le=2**62)
    v3_max_inflight: Integer = Field(10000, alias="api.v3.produce.streaming.max.inflight", ge=1, le=10_000_000)

    # Derived by load_restproxy_settings, not properties of their own.
    host: str = "127.0.0.1"
    basic_auth: SkipValidation[Mapping[str, SecretStr]] = Field(default_factory=dict)
    producer: SkipValidation[Mapping[str, Any]] = Field(default_factory=ClientConf)
    consumer: SkipValidation[Mapping[str, Any]] = Field(default_factory=ClientConf)
    admin: SkipValidation[Mapping[str, Any]] = Field(default_factory=ClientConf)
    source: str | None = None

    @property
    def full_batch_bytes(self) -> int:
        """Request size that is sent at once instead of lingering: `producer.batch.size`,
        else librdkafka's own default batch size (1,000,000 bytes).

        Not the Java producer's 16384: sending every 500 KB request at once made the
        broker take each request's records as batches of ~150 KB, and the broker's cost
        is per batch (measured on Tansu: 6.0-6.4 ms of its CPU per MB for
        150 KB batches, 4.2-4.5 for the ~850 KB batches of a lingering producer). Records
        of the requests arriving within `linger.ms` now travel together."""
        return int(self.producer.get("batch.size", 1_000_000))

    @property
    def message_max_bytes(self) -> int:
        """The producer's per-record limit (librdkafka's `message.max.bytes`)."""
        return int(self.producer.get("message.max.bytes", 1000000))

    def base_url(self, request_host: str | None = None) -> str:
        """The absolute URL of this very process, for `base_uri` and v3 `self` links.

        `advertised.listeners` first, then `host.name` with our port, then the address
        we bind (unless it is a wildcard), then the request's Host header: so behind a
        load balancer a consumer's URL still names the instance that owns it.
        """
        if self.advertised_url:
            return self.advertised_url
        if self.host_name:
            return f"http://{_bracket(self.host_name)}:{self.port}"
        if self.host and self.host not in ("0.0.0.0", "::", ""):
            return f"http://{_bracket(self.host)}:{self.port}"
        return f"http://{request_host or '127.0.0.1'}"


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def load_restproxy_settings(
    path: str | Path | None,
    *,
    host: str | None = None,
    port: int | None = None,
    bootstrap_servers: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> RestProxySettings:
    """Read a properties file (plus `KAFKA_REST_*` environment) into `RestProxySettings`.

    Raises:
        ConfigError: the file is missing, a value has the wrong type or is out of range,
            or there is no `bootstrap.servers`; the message names the file and the key.

    Usage: `load_restproxy_settings("conf/kafka-rest.properties", port=8083)`.
    """
    source = str(path) if path is not None else "(defaults)"
    raw: dict[str, str] = {}
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(file, None, "no such properties file; see conf/kafka-rest.properties for an example")
        raw.update(parse_properties(file.read_text()))
    raw.update(environment_properties(os.environ if environ is None else environ, ENV_PREFIX))
    return _build(raw, source, host=host, port=port, bootstrap_servers=bootstrap_servers)


_PROPERTIES = known(RestProxySettings)


def _build(
    raw: dict[str, str], source: str, *, host: str | None, port: int | None, bootstrap_servers: str | None
) -> RestProxySettings:
    """The properties validated by the model, then what is derived from them."""
    properties = {key: value for key, value in raw.items() if key in _PROPERTIES}
    passthrough: dict[str, dict[str, Any]] = {"client": {}, "producer": {}, "consumer": {}, "admin": {}}
    unknown: list[str] = []
    for key, value in raw.items():
        if key in _PROPERTIES or key in IGNORED:
            continue
        if key.startswith(PASS_THROUGH):
            prefix, _, name = key.partition(".")
            if str(value).strip():  # empty: not set, so an override can take a file's setting away
                passthrough[prefix][name] = value
        else:
            unknown.append(key)
    if unknown:
        log.warning("%s: unknown properties ignored: %s", source, ", ".join(sorted(unknown)))
    try:
        settings = RestProxySettings.model_validate(properties)
    except ValidationError as error:
        raise config_error(error, RestProxySettings, source) from None

    bind_host, bind_port = _listener(source, settings.listeners, settings.port)
    servers = bootstrap_servers or settings.bootstrap_servers
    if not servers:
        raise ConfigError(
            source,
            "bootstrap.servers",
            "is required (in the file, KAFKA_REST_BOOTSTRAP_SERVERS, or --bootstrap-servers)",
        )
    wait, ceiling = settings.consumer_request_timeout_ms, settings.consumer_request_timeout_max_ms
    if wait > ceiling:
        raise ConfigError(
            source,
            "consumer.request.timeout.ms",
            f"must not exceed consumer.request.timeout.max.ms ({ceiling}), got {wait}",
        )
    users = _users(source, settings.basic_users.get_secret_value()) if settings.auth_method == "BASIC" else {}
    if settings.auth_method == "BASIC" and not users:
        raise ConfigError(source, "authentication.basic.users", "BASIC authentication needs user:password pairs")

    producer = _client_conf(source, "producer", {**passthrough["client"], **passthrough["producer"]})
    buffer_ms = max(settings.producer_streams_buffer_max_time_ms, settings.streams_buffer_max_time_ms)
    if buffer_ms >= 0:
        producer["linger.ms"] = buffer_ms  # MapR's name for the producer's buffer time
    # Topics are never auto-created by a produce or a metadata request (Tansu loses
    # records written to auto-created topics); the proxy answers 404 / 40401 instead.
    producer.setdefault("allow.auto.create.topics", False)
    if "message.timeout.ms" not in producer:  # upstream's delivery.timeout.ms (librdkafka: 300 s)
        producer.setdefault("delivery.timeout.ms", 120000)
    consumer = _client_conf(source, "consumer", {**passthrough["client"], **passthrough["consumer"]})
    consumer.setdefault("allow.auto.create.topics", False)
    admin = _client_conf(source, "admin", {**passthrough["client"], **passthrough["admin"]})
    # An admin client's metadata request for a deleted topic would create it again on a
    # broker that creates topics on request (Tansu; Kafka with auto.create.topics.enable).
    admin.setdefault("allow.auto.create.topics", False)
    return settings.model_copy(
        update={
            "bootstrap_servers": servers,
            "host": host or bind_host,
            "port": bind_port if port is None else port,
            "basic_auth": users,
            "producer": producer,
            "consumer": consumer,
            "admin": admin,
            "source": source,
        }
    )


def _listener(source: str, listeners: str, port: int) -> tuple[str, int]:
    """The first `http://host:port` of `listeners` (the old `port` key when none is set)."""
    first = next((item.strip() for item in listeners.split(",") if item.strip()), "")
    if not first:
        return "127.0.0.1", port
    parts = urlsplit(first)
    if parts.scheme not in ("http", ""):
        raise ConfigError(source, "listeners", f"only http:// listeners are served here, got {first!r}")
    try:
        listen_port = parts.port
    except ValueError:
        raise ConfigError(source, "listeners", f"bad port in {first!r}") from None
    return parts.hostname or "127.0.0.1", listen_port if listen_port is not None else port


def _users(source: str, value: str) -> dict[str, SecretStr]:
    users: dict[str, SecretStr] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        name, sep, password = item.partition(":")
        if not sep or not name:
            raise ConfigError(source, "authentication.basic.users", "must be user:password[,user:password...]")
        users[name] = SecretStr(password)
    return users


def _client_conf(source: str, role: str, conf: dict[str, Any]) -> ClientConf:
    """Translate Java client names to librdkafka's; drop Java-only ones with a warning."""
    result = ClientConf()
    dropped: list[str] = []
    for key, value in conf.items():
        try:
            translated = java_names.translate(key, value)
        except ValueError:
            raise ConfigError(source, f"{role}.{key}", f"must be an integer, got {value!r}") from None
        if translated is None:
            dropped.append(key)
        else:
            result[translated[0]] = translated[1]
    if dropped:
        log.warning(
            "%s: Java-only %s settings have no librdkafka equivalent and are ignored: %s",
            source,
            role,
            ", ".join(f"{role}.{k}" for k in sorted(dropped)),
        )
    return result
