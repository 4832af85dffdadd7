"""Upstream properties on a pydantic model: one declaration per setting, read from text.

The embedded REST proxy and Schema Registry take Confluent's property names
(`consumer.request.timeout.ms`, `kafkastore.topic`), from a Java `.properties` file and
from `<PREFIX>_<NAME>` environment variables as Confluent's container images do. Each
setting is one field of its service's model: the upstream dotted name is the field's
alias, its default and bounds are the field's, and a new property is one line:

    consumer_threads: Integer = Field(50, alias="consumer.threads", ge=-1, le=10_000)

Values arrive as text, so the field types here parse text the way upstream reads it
(`Integer`, `Flag`, `Text`), and a wrong value becomes one `ConfigError` naming the
file and the property, in the sentence it has always had.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated

import annotated_types
from pydantic import BaseModel, BeforeValidator, ValidationError

from workbench.errors import ConfigError

__all__ = [
    "Flag",
    "Integer",
    "Text",
    "config_error",
    "environment_properties",
    "known",
    "parse_properties",
]


def _integer(value: object) -> object:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ValueError(f"must be an integer, got {value!r}") from None
    return value


def _flag(value: object) -> object:
    if isinstance(value, str):
        text = value.strip().lower()
        if text not in ("true", "false"):
            raise ValueError(f"must be true or false, got {value!r}")
        return text == "true"
    return value


def _text(value: object) -> object:
    return value.strip() if isinstance(value, str) else value


#: An integer property: Python's `int()` of the text (spaces around it allowed).
Integer = Annotated[int, BeforeValidator(_integer)]
#: A boolean property: `true` or `false`, in any case, as Java's `Boolean.parseBoolean`.
Flag = Annotated[bool, BeforeValidator(_flag)]
#: A text property, without the spaces around it.
Text = Annotated[str, BeforeValidator(_text)]


def config_error(error: ValidationError, model: type[BaseModel], source: str | None) -> ConfigError:
    """The first of `error`'s problems as a one-line `ConfigError` naming `source` and the property.

    A bound reads "must be between LOW and HIGH, got N" ("must not be negative, got N"
    for a lower bound of 0 alone). A field's validators raise `ValueError` with the sentence
    the user reads after the property's name ("must be an integer, got 'x'"), kept as is.
    """
    first = error.errors()[0]
    key = str(first["loc"][0]) if first["loc"] else None
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, ValueError):
        return ConfigError(source, key, str(cause))
    low, high = _bounds(model, key)
    value = first.get("input")
    if high is not None and low is not None:
        return ConfigError(source, key, f"must be between {low} and {high}, got {value}")
    if low == 0:
        return ConfigError(source, key, f"must not be negative, got {value}")
    return ConfigError(source, key, str(first["msg"]))


def _bounds(model: type[BaseModel], alias: str | None) -> tuple[int | None, int | None]:
    field = next((f for name, f in model.model_fields.items() if (f.alias or name) == alias), None)
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None) if field else None
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None) if field else None
    return low, high  # type: ignore[return-value]


def environment_properties(environ: Mapping[str, str], prefix: str) -> dict[str, str]:
    """Properties set as `<prefix><NAME>` variables, as Confluent's images read them:
    `KAFKA_REST_CONSUMER_THREADS=4` is `consumer.threads=4`."""
    return {
        name[len(prefix) :].lower().replace("_", "."): value
        for name, value in environ.items()
        if name.startswith(prefix) and len(name) > len(prefix)
    }


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


def known(model: type[BaseModel]) -> set[str]:
    """The property names a model declares (its fields' aliases)."""
    return {f.alias for f in model.model_fields.values() if f.alias}
