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
- JSON: Confluent's JSON Schema diff, ported in `json_compatibility` (the rules, one by
  one, are in its docstring): BACKWARD compares (old, new), FORWARD (new, old); `$ref`s
  are followed into referenced schemas.
- PROTOBUF: the wire-compatibility subset of Confluent's protobuf diff, on the
  compiled descriptors of the schema *and the files it imports* (so a change to a
  referenced message counts): a message the old schema has must still be there, and a
  field number both use must keep its type (and scalar/message kind) and its cardinality.
  Added and removed fields are compatible, as on the wire; the rule is symmetric, so
  FORWARD and BACKWARD check the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.registry.errors import INVALID_COMPATIBILITY, RegistryError
from workbench.registry.json_compatibility import json_incompatibilities
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
        return json_incompatibilities(writer.parsed, reader.parsed, _json_resolver(writer), _json_resolver(reader))
    return _protobuf(reader, writer)


def _avro(reader: Any, writer: Any) -> list[str]:
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    result = ReaderWriterCompatibilityChecker().get_compatibility(reader=reader, writer=writer)
    if result.compatibility is SchemaCompatibilityType.compatible:
        return []
    where = ", ".join(sorted(str(location) for location in result.locations))
    return [f"{m} (at {where})" if where else str(m) for m in sorted(str(m) for m in result.messages)] or [
        "the Avro schemas are not compatible"
    ]


def _json_resolver(schema: ParsedSchema) -> Callable[[str], Any]:
    """A `$ref` resolver over a schema's own document and its referenced ones: a local
    `#/...` pointer into the document, else `name#/pointer` into the referenced document of
    that name (or `$id`). Unresolvable refs become `{}` (anything)."""
    from urllib.parse import unquote, urldefrag

    def pointer(document: Any, fragment: str) -> Any:
        node = document
        for part in [p for p in fragment.lstrip("/").split("/") if p] if fragment else []:
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def resolve(ref: str) -> Any:
        target, fragment = urldefrag(ref)
        documents = {"": schema.parsed, **dict(schema.deps or {})}
        document = documents.get(target)
        if document is None and target:
            document = next((d for name, d in documents.items() if name and name.endswith("/" + target)), None)
        found = pointer(document, fragment) if document is not None else None
        return {} if found is None else found

    return resolve


def _protobuf(reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
    old, new = _all_messages(writer), _all_messages(reader)
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


def _all_messages(schema: ParsedSchema) -> dict[str, dict[int, tuple[str, str, int]]]:
    """The messages of the schema and of every file it imports, by full name."""
    found: dict[str, dict[int, tuple[str, str, int]]] = {}
    for file in (*schema.deps, schema.parsed):
        found.update(_messages(file.message_type, file.package))
    return found


def _messages(types: Any, prefix: str) -> list[tuple[str, dict[int, tuple[str, str, int]]]]:
    found = []
    for message in types:
        name = f"{prefix}.{message.name}" if prefix else message.name
        fields = {f.number: (f.name, f.type_name.lstrip(".") or str(f.type), f.label) for f in message.field}
        found.append((name, fields))
        found += _messages(message.nested_type, name)
    return found
