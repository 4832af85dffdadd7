"""The registry's settings: Confluent Schema Registry's property names, from the environment.

As in Confluent's container images, `SCHEMA_REGISTRY_<NAME>` sets property `<name>`
(`SCHEMA_REGISTRY_KAFKASTORE_TOPIC=_schemas` is `kafkastore.topic`); the command line
(`--host`, `--port`, `--bootstrap-servers`) comes last.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from workbench.errors import ConfigError

__all__ = ["ENV_PREFIX", "RegistrySettings", "load_registry_settings"]

ENV_PREFIX = "SCHEMA_REGISTRY_"


@dataclass(frozen=True)
class RegistrySettings:
    """One registry process's settings; each bound has a named default."""

    bootstrap_servers: str
    host: str = "127.0.0.1"
    port: int = 8081
    #: `kafkastore.topic`: the compacted topic holding every schema and config.
    topic: str = "_schemas"
    #: `kafkastore.timeout.ms`: how long a write may take to be acknowledged and read back.
    timeout_ms: int = 30000
    #: `request.max.bytes`: the largest request body (a schema with its JSON envelope).
    request_max_bytes: int = 8 * 1024 * 1024
    #: Request line plus headers, and the time to send them (the proxy's protocol limits).
    header_max_bytes: int = 32768
    header_timeout_ms: int = 10000
    #: `shutdown.graceful.ms`
    shutdown_graceful_ms: int = 5000


_INTS = {
    "port": "port",
    "kafkastore.timeout.ms": "timeout_ms",
    "request.max.bytes": "request_max_bytes",
    "request.header.max.bytes": "header_max_bytes",
    "request.header.timeout.ms": "header_timeout_ms",
    "shutdown.graceful.ms": "shutdown_graceful_ms",
}
_STRS = {"host.name": "host", "kafkastore.topic": "topic", "kafkastore.bootstrap.servers": "bootstrap_servers"}


def load_registry_settings(
    environ: Mapping[str, str] | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    bootstrap_servers: str | None = None,
) -> RegistrySettings:
    """Settings from `SCHEMA_REGISTRY_*` variables, then the arguments.

    Raises:
        ConfigError: a number that is not one, or no bootstrap servers.
    """
    environ = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for name, attribute in {**_INTS, **_STRS}.items():
        variable = ENV_PREFIX + name.upper().replace(".", "_")
        if variable not in environ:
            continue
        raw = environ[variable]
        if name in _INTS:
            try:
                number = int(raw)
            except ValueError:
                raise ConfigError(variable, name, f"expected a whole number, got {raw!r}") from None
            if number < 0:
                raise ConfigError(variable, name, f"must not be negative, got {number}")
            values[attribute] = number
        else:
            values[attribute] = raw
    for attribute, given in (("host", host), ("port", port), ("bootstrap_servers", bootstrap_servers)):
        if given is not None:
            values[attribute] = given
    if not values.get("bootstrap_servers"):
        raise ConfigError(None, "kafkastore.bootstrap.servers", "the registry needs Kafka: pass --bootstrap-servers")
    return RegistrySettings(**values)  # type: ignore[arg-type]
