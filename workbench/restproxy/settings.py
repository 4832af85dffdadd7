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
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from workbench.errors import ConfigError
from workbench.kafka import java_names
from workbench.secrets import ClientConf, SecretStr

__all__ = [
    "ENV_PREFIX",
    "IGNORED",
    "KNOWN",
    "PASS_THROUGH",
    "RestProxySettings",
    "load_restproxy_settings",
    "parse_properties",
]

log = logging.getLogger("workbench.restproxy")

ENV_PREFIX = "KAFKA_REST_"

#: Proxy properties: name -> (type, default). Types: int, bool, str.
KNOWN: dict[str, tuple[type, Any]] = {
    "id": (str, ""),
    "listeners": (str, "http://127.0.0.1:8082"),
    "port": (int, 8082),
    "advertised.listeners": (str, ""),
    "host.name": (str, ""),
    "bootstrap.servers": (str, ""),
    "schema.registry.url": (str, ""),
    "consumer.request.timeout.ms": (int, 1000),
    "consumer.request.max.bytes": (int, 67108864),
    "consumer.instance.timeout.ms": (int, 300000),
    "consumer.threads": (int, 50),
    "consumer.iterator.backoff.ms": (int, 50),
    "consumer.iterator.timeout.ms": (int, 1),
    "consumer.max.poll.records": (int, 500),
    "fetch.min.bytes": (int, -1),
    "producer.threads": (int, 5),
    "streams.buffer.max.time.ms": (int, -1),
    "producer.streams.buffer.max.time.ms": (int, -1),
    "request.max.bytes": (int, 67108864),
    "metadata.max.age.ms": (int, 5000),
    "api.v2.enable": (bool, True),
    "api.v3.enable": (bool, True),
    "authentication.method": (str, "NONE"),
    "authentication.realm": (str, "workbench"),
    "authentication.basic.users": (str, ""),
    "debug": (bool, False),
    "shutdown.graceful.ms": (int, 5000),
    # Bounds on what one client can hold or send (see `Limits`).
    "server.connection.limit": (int, 1000),
    "idle.timeout.ms": (int, 30000),
    "request.header.max.bytes": (int, 32768),
    "request.header.timeout.ms": (int, 10000),
    "request.body.timeout.ms": (int, 30000),
    "producer.max.records.per.request": (int, 100000),
    "producer.max.block.ms": (int, 60000),
    "consumer.instances.max": (int, 500),
    "share.consumer.instances.max": (int, 100),
    "consumer.request.timeout.max.ms": (int, 60000),
    "api.v3.produce.request.size.limit.max.bytes": (int, 0),
    "api.v3.produce.streaming.max.inflight": (int, 10000),
}

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


@dataclass(frozen=True)
class RestProxySettings:
    """Everything one REST proxy server process needs, typed; built by `load_restproxy_settings`.

    The server's own side: not the profile's `proxy` section (`config.ProxySettings`),
    which says where the proxies are and how clients reach them."""

    bootstrap_servers: str
    host: str = "127.0.0.1"
    port: int = 8082
    id: str = ""
    advertised_url: str | None = None
    host_name: str = ""
    consumer_request_timeout_ms: int = 1000
    consumer_request_max_bytes: int = 67108864
    consumer_instance_timeout_ms: int = 300000
    consumer_threads: int = 50
    consumer_iterator_backoff_ms: int = 50
    consumer_max_poll_records: int = 500
    fetch_min_bytes: int = -1
    request_max_bytes: int = 67108864
    metadata_max_age_ms: int = 5000
    api_v2_enable: bool = True
    api_v3_enable: bool = True
    basic_auth: Mapping[str, SecretStr] = field(default_factory=dict)
    auth_realm: str = "workbench"
    debug: bool = False
    shutdown_graceful_ms: int = 5000
    connection_limit: int = 1000
    idle_timeout_ms: int = 30000
    header_max_bytes: int = 32768
    header_timeout_ms: int = 10000
    body_timeout_ms: int = 30000
    max_records_per_request: int = 100000
    max_block_ms: int = 60000
    consumer_instances_max: int = 500
    #: Share-consumer instances and affinity-free group members in one process.
    share_instances_max: int = 100
    consumer_request_timeout_max_ms: int = 60000
    #: `schema.registry.url`: "" means none, and the schema formats answer 42205.
    schema_registry_url: str = ""
    v3_request_max_bytes: int = 0
    v3_max_inflight: int = 10000
    producer: Mapping[str, Any] = field(default_factory=ClientConf)
    consumer: Mapping[str, Any] = field(default_factory=ClientConf)
    admin: Mapping[str, Any] = field(default_factory=ClientConf)
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


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java `.properties` text: `k=v`, `k: v`, `k v`, `#`/`!` comments, `\\` continuations."""
    result: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        match = re.match(r"((?:\\.|[^=:\s])+)\s*[=:\s]\s*(.*)$", logical)
        if match:
            key, value = match.group(1), match.group(2)
        else:
            key, value = logical, ""
        result[key.replace("\\", "")] = value.strip()
        logical = ""
    return result


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
    env = os.environ if environ is None else environ
    for name, value in env.items():
        if name.startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX):
            raw[name[len(ENV_PREFIX) :].lower().replace("_", ".")] = value
    return _build(raw, source, host=host, port=port, bootstrap_servers=bootstrap_servers)


def _build(
    raw: dict[str, str], source: str, *, host: str | None, port: int | None, bootstrap_servers: str | None
) -> RestProxySettings:
    typed: dict[str, Any] = {name: default for name, (_kind, default) in KNOWN.items()}
    passthrough: dict[str, dict[str, Any]] = {"client": {}, "producer": {}, "consumer": {}, "admin": {}}
    unknown: list[str] = []
    for key, value in raw.items():
        if key in KNOWN:
            typed[key] = _convert(source, key, value, KNOWN[key][0])
        elif key in IGNORED:
            continue
        elif key.startswith(PASS_THROUGH):
            prefix, _, name = key.partition(".")
            passthrough[prefix][name] = value
        else:
            unknown.append(key)
    if unknown:
        log.warning("%s: unknown properties ignored: %s", source, ", ".join(sorted(unknown)))

    bind_host, bind_port = _listener(source, typed["listeners"], typed["port"], "listeners" in raw)
    bind_host = host or bind_host
    bind_port = bind_port if port is None else port
    servers = bootstrap_servers or typed["bootstrap.servers"]
    if not servers:
        raise ConfigError(
            source,
            "bootstrap.servers",
            "is required (in the file, KAFKA_REST_BOOTSTRAP_SERVERS, or --bootstrap-servers)",
        )
    for key, low, high in (
        ("fetch.min.bytes", -1, 10_000_000),
        ("consumer.request.timeout.ms", 0, 3_600_000),
        ("consumer.instance.timeout.ms", 1, 2**31),
        ("consumer.threads", -1, 10_000),
        ("consumer.max.poll.records", 1, 1_000_000),
        ("request.max.bytes", 1, 2**31),
        ("server.connection.limit", 0, 1_000_000),
        ("idle.timeout.ms", 1, 3_600_000),
        ("request.header.max.bytes", 1024, 16 * 2**20),
        ("request.header.timeout.ms", 1, 3_600_000),
        ("request.body.timeout.ms", 1, 3_600_000),
        ("producer.max.records.per.request", 1, 10_000_000),
        ("producer.max.block.ms", 0, 3_600_000),
        ("consumer.instances.max", 1, 100_000),
        ("share.consumer.instances.max", 1, 100_000),
        ("consumer.request.timeout.max.ms", 0, 3_600_000),
        ("api.v3.produce.request.size.limit.max.bytes", 0, 2**62),
        ("api.v3.produce.streaming.max.inflight", 1, 10_000_000),
    ):
        if not low <= typed[key] <= high:
            raise ConfigError(source, key, f"must be between {low} and {high}, got {typed[key]}")
    wait, ceiling = typed["consumer.request.timeout.ms"], typed["consumer.request.timeout.max.ms"]
    if wait > ceiling:
        raise ConfigError(
            source,
            "consumer.request.timeout.ms",
            f"must not exceed consumer.request.timeout.max.ms ({ceiling}), got {wait}",
        )
    method = str(typed["authentication.method"]).upper()
    if method not in ("NONE", "BASIC"):
        raise ConfigError(source, "authentication.method", f"must be NONE or BASIC, got {method!r}")
    users = _users(source, typed["authentication.basic.users"]) if method == "BASIC" else {}
    if method == "BASIC" and not users:
        raise ConfigError(source, "authentication.basic.users", "BASIC authentication needs user:password pairs")

    producer = _client_conf(source, "producer", {**passthrough["client"], **passthrough["producer"]})
    buffer_ms = max(typed["producer.streams.buffer.max.time.ms"], typed["streams.buffer.max.time.ms"])
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

    return RestProxySettings(
        bootstrap_servers=servers,
        host=bind_host,
        port=bind_port,
        id=typed["id"],
        advertised_url=_advertised(source, typed["advertised.listeners"]),
        host_name=typed["host.name"],
        consumer_request_timeout_ms=typed["consumer.request.timeout.ms"],
        consumer_request_max_bytes=typed["consumer.request.max.bytes"],
        consumer_instance_timeout_ms=typed["consumer.instance.timeout.ms"],
        consumer_threads=typed["consumer.threads"],
        consumer_iterator_backoff_ms=typed["consumer.iterator.backoff.ms"],
        consumer_max_poll_records=typed["consumer.max.poll.records"],
        fetch_min_bytes=typed["fetch.min.bytes"],
        request_max_bytes=typed["request.max.bytes"],
        metadata_max_age_ms=typed["metadata.max.age.ms"],
        api_v2_enable=typed["api.v2.enable"],
        api_v3_enable=typed["api.v3.enable"],
        basic_auth=users,
        auth_realm=typed["authentication.realm"],
        debug=typed["debug"],
        shutdown_graceful_ms=typed["shutdown.graceful.ms"],
        connection_limit=typed["server.connection.limit"],
        idle_timeout_ms=typed["idle.timeout.ms"],
        header_max_bytes=typed["request.header.max.bytes"],
        header_timeout_ms=typed["request.header.timeout.ms"],
        body_timeout_ms=typed["request.body.timeout.ms"],
        max_records_per_request=typed["producer.max.records.per.request"],
        max_block_ms=typed["producer.max.block.ms"],
        consumer_instances_max=typed["consumer.instances.max"],
        share_instances_max=typed["share.consumer.instances.max"],
        consumer_request_timeout_max_ms=typed["consumer.request.timeout.max.ms"],
        schema_registry_url=str(typed["schema.registry.url"]).strip().rstrip("/"),
        v3_request_max_bytes=typed["api.v3.produce.request.size.limit.max.bytes"],
        v3_max_inflight=typed["api.v3.produce.streaming.max.inflight"],
        producer=producer,
        consumer=consumer,
        admin=admin,
        source=source,
    )


def _convert(source: str, key: str, value: str, kind: type) -> Any:
    text = value.strip()
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ConfigError(source, key, f"must be an integer, got {value!r}") from None
    if kind is bool:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ConfigError(source, key, f"must be true or false, got {value!r}")
    return text


def _listener(source: str, listeners: str, port: int, explicit: bool) -> tuple[str, int]:
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


def _advertised(source: str, value: str) -> str | None:
    first = next((item.strip() for item in value.split(",") if item.strip()), "")
    if not first:
        return None
    parts = urlsplit(first)
    if not parts.scheme or not parts.netloc:
        raise ConfigError(source, "advertised.listeners", f"must be scheme://host:port, got {first!r}")
    return f"{parts.scheme}://{parts.netloc}"


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
