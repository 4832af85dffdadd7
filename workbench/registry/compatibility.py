"""Compatibility levels and the checks behind them.

| level | the new schema must | compared with |
|---|---|---|
| BACKWARD (default) | read data written with the old one | the latest live version |
| FORWARD | be readable by the old one | the latest live version |
| FULL | both | the latest live version |
| *_TRANSITIVE | the same | every live version |
| NONE | nothing | - |

- AVRO: Apache `avro`'s `ReaderWriterCompatibilityChecker`, the reader/writer rules of
  the Avro specification that Confluent applies (BACKWARD: reader = new, writer = old).
- JSON: a documented subset of Confluent's JSON Schema diff rules, applied to
  `properties` recursively: for a reader to accept a writer's data, every property the
  reader requires must be required by the writer (or have a `default`); a property both
  declare must keep its `type` (the reader's types must include the writer's); a reader
  that closes `additionalProperties` cannot take a writer's open content. Anything
  else (combinators, `$ref` targets, formats) is not compared.
- PROTOBUF: the wire-compatibility subset of Confluent's protobuf diff, on the
  compiled descriptors: a message the old schema has must still be there, and a field
  number both use must keep its type (and scalar/message kind) and its cardinality.
  Added and removed fields are compatible, as on the wire; the rule is symmetric, so
  FORWARD and BACKWARD check the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.registry.errors import INVALID_COMPATIBILITY, RegistryError
from workbench.registry.schemas import ParsedSchema

__all__ = ["DEFAULT_LEVEL", "LEVELS", "check_level", "incompatibilities"]

LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE")
DEFAULT_LEVEL = "BACKWARD"


def check_level(value: object) -> str:
    """The level, upper-cased, or 42203 naming the valid ones."""
    if isinstance(value, str) and value.upper() in LEVELS:
        return value.upper()
    shown = repr(value)[:100]
    raise RegistryError(INVALID_COMPATIBILITY, f"Invalid compatibility level {shown}; valid levels: {list(LEVELS)}")


def incompatibilities(level: str, new: ParsedSchema, live: Sequence[ParsedSchema]) -> list[str]:
    """Why `new` may not follow the `live` versions (oldest first) under `level`; [] if it may."""
    if level == "NONE" or not live:
        return []
    against = list(live) if level.endswith("_TRANSITIVE") else [live[-1]]
    base = level.removesuffix("_TRANSITIVE")
    messages: list[str] = []
    for old in reversed(against):
        if old.schema_type != new.schema_type:
            messages.append(f"schema type {new.schema_type} differs from the existing {old.schema_type}")
            continue
        if base in ("BACKWARD", "FULL"):
            messages += [f"BACKWARD: {m}" for m in _reader_writer(new, old)]
        if base in ("FORWARD", "FULL"):
            messages += [f"FORWARD: {m}" for m in _reader_writer(old, new)]
    return messages


def _reader_writer(reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
    if reader.schema_type == "AVRO":
        return _avro(reader.parsed, writer.parsed)
    if reader.schema_type == "JSON":
        return _json(reader.parsed, writer.parsed, "#")
    return _protobuf(reader.parsed, writer.parsed)


def _avro(reader: Any, writer: Any) -> list[str]:
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    result = ReaderWriterCompatibilityChecker().get_compatibility(reader=reader, writer=writer)
    if result.compatibility is SchemaCompatibilityType.compatible:
        return []
    where = ", ".join(sorted(str(location) for location in result.locations))
    return [f"{m} (at {where})" if where else str(m) for m in sorted(str(m) for m in result.messages)] or [
        "the Avro schemas are not compatible"
    ]


def _types(schema: Any) -> set[str] | None:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return set(kind)
    return None


def _json(reader: Any, writer: Any, path: str) -> list[str]:
    if not isinstance(reader, dict) or not isinstance(writer, dict):
        return [] if reader is True or reader == writer else [f"{path}: the schemas differ"]
    messages = []
    reader_types, writer_types = _types(reader), _types(writer)
    if reader_types is not None and writer_types is not None:
        widened = writer_types - reader_types - ({"integer"} if "number" in reader_types else set())
        if widened:
            messages.append(f"{path}: type {sorted(writer_types)} cannot be read as {sorted(reader_types)}")
    reader_props, writer_props = _dict(reader.get("properties")), _dict(writer.get("properties"))
    reader_required, writer_required = _names(reader.get("required")), _names(writer.get("required"))
    for name in sorted(reader_required - writer_required, key=str):
        prop = reader_props.get(name)
        if not (isinstance(prop, dict) and "default" in prop):
            messages.append(f"{path}/properties/{name}: required by the reader, optional or absent for the writer")
    if reader.get("additionalProperties") is False and writer.get("additionalProperties") is not False:
        extra = sorted(set(writer_props) - set(reader_props), key=str)
        messages.append(
            f"{path}: the reader closes additionalProperties; the writer's data may hold {extra or 'any property'}"
        )
    for name in sorted(set(reader_props) & set(writer_props), key=str):
        messages += _json(reader_props[name], writer_props[name], f"{path}/properties/{name}")
    return messages


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(value: Any) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _protobuf(reader: Any, writer: Any) -> list[str]:
    old = dict(_messages(writer.message_type, writer.package))
    new = dict(_messages(reader.message_type, reader.package))
    messages = []
    for name, fields in old.items():
        if name not in new:
            messages.append(f"message {name} was removed")
            continue
        for number, (field_name, kind, label) in fields.items():
            other = new[name].get(number)
            if other is None:
                continue
            if other[1] != kind:
                messages.append(f"{name}: field {number} ({field_name}) changed type {kind} -> {other[1]}")
            elif other[2] != label:
                messages.append(f"{name}: field {number} ({field_name}) changed cardinality")
    return messages


def _messages(types: Any, prefix: str) -> list[tuple[str, dict[int, tuple[str, str, int]]]]:
    found = []
    for message in types:
        name = f"{prefix}.{message.name}" if prefix else message.name
        fields = {f.number: (f.name, f.type_name.lstrip(".") or str(f.type), f.label) for f in message.field}
        found.append((name, fields))
        found += _messages(message.nested_type, name)
    return found
