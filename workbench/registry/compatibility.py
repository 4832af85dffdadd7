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
- PROTOBUF: Confluent's Protobuf schema diff, ported in `protobuf_compatibility` (the rules
  are in its docstring), on the compiled descriptors of the schema and of the files it
  imports: the file's own messages are compared, an imported one through the fields that
  use it; scalar types compare by Confluent's groups. BACKWARD compares (old, new),
  FORWARD (new, old).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.registry.errors import INVALID_COMPATIBILITY, RegistryError
from workbench.registry.json_compatibility import json_incompatibilities
from workbench.registry.protobuf_compatibility import protobuf_incompatibilities
from workbench.registry.schemas import ParsedSchema

__all__ = ["DEFAULT_LEVEL", "INVALID_LEVEL_MESSAGE", "LEVELS", "check_level", "incompatibilities"]

LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE")
DEFAULT_LEVEL = "BACKWARD"


#: Confluent's `RestInvalidCompatibilityException` message, word for word.
INVALID_LEVEL_MESSAGE = (
    "Invalid compatibility level. Valid values are none, backward, forward, full, "
    "backward_transitive, forward_transitive, and full_transitive"
)


def check_level(value: object) -> str:
    """The level, upper-cased, or 42203 in Confluent's words."""
    if isinstance(value, str) and value.upper() in LEVELS:
        return value.upper()
    raise RegistryError(INVALID_COMPATIBILITY, INVALID_LEVEL_MESSAGE)


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
    return protobuf_incompatibilities(writer.parsed, writer.deps, reader.parsed, reader.deps)
