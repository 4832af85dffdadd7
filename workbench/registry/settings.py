"""The registry's settings: Confluent Schema Registry's property names, from the environment.

As in Confluent's container images, `SCHEMA_REGISTRY_<NAME>` sets property `<name>`
(`SCHEMA_REGISTRY_KAFKASTORE_TOPIC=_schemas` is `kafkastore.topic`); the command line
(`--host`, `--port`, `--bootstrap-servers`) comes last.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workbench.errors import ConfigError
from workbench.properties import Integer, Text, config_error, environment_properties, known

__all__ = ["ENV_PREFIX", "RegistrySettings", "load_registry_settings"]

ENV_PREFIX = "SCHEMA_REGISTRY_"


class RegistrySettings(BaseModel):
    """One registry process's settings: each property one field, its upstream name the alias."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    bootstrap_servers: Text = Field("", alias="kafkastore.bootstrap.servers")
    host: Text = Field("127.0.0.1", alias="host.name")
    port: Integer = Field(8081, alias="port", ge=0)
    #: The compacted topic holding every schema and config.
    topic: Text = Field("_schemas", alias="kafkastore.topic")
    #: How long a write may take to be acknowledged and read back.
    timeout_ms: Integer = Field(30000, alias="kafkastore.timeout.ms", ge=0)
    #: The largest request body (a schema with its JSON envelope).
    request_max_bytes: Integer = Field(8 * 1024 * 1024, alias="request.max.bytes", ge=0)
    #: Request line plus headers, and the time to send them (the proxy's protocol limits).
    header_max_bytes: Integer = Field(32768, alias="request.header.max.bytes", ge=0)
    header_timeout_ms: Integer = Field(10000, alias="request.header.timeout.ms", ge=0)
    shutdown_graceful_ms: Integer = Field(5000, alias="shutdown.graceful.ms", ge=0)


_PROPERTIES = known(RegistrySettings)


def load_registry_settings(
    environ: Mapping[str, str] | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    bootstrap_servers: str | None = None,
) -> RegistrySettings:
    """Settings from `SCHEMA_REGISTRY_*` variables, then the arguments.

    Raises:
        ConfigError: a number that is not one, or no bootstrap servers; it names the variable.
    """
    given = environment_properties(os.environ if environ is None else environ, ENV_PREFIX)
    properties = {key: value for key, value in given.items() if key in _PROPERTIES}
    try:
        settings = RegistrySettings.model_validate(properties)
    except ValidationError as error:
        problem = config_error(error, RegistrySettings, None)
        variable = ENV_PREFIX + str(problem.key).upper().replace(".", "_")
        raise ConfigError(variable, problem.key, problem.message) from None
    arguments = {"host": host, "port": port, "bootstrap_servers": bootstrap_servers}
    settings = settings.model_copy(update={k: v for k, v in arguments.items() if v is not None})
    if not settings.bootstrap_servers:
        raise ConfigError(None, "kafkastore.bootstrap.servers", "the registry needs Kafka: pass --bootstrap-servers")
    return settings
