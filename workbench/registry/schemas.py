"""Parsing and identity of the three schema types, each by its own library.

- AVRO: Apache `avro` (`avro.schema.make_avsc_object`), named types of referenced
  schemas registered first in the same `Names`, as Confluent's AvroSchema does.
- JSON: `jsonschema`: the document must be valid against its own metaschema.
- PROTOBUF: `.proto` text compiled by protoc (PyPI `grpcio-tools`) in a child process,
  so a hostile file can at worst end that child; or a base64 `FileDescriptorProto`,
  which is what confluent-kafka's `ProtobufSerializer` registers, checked by building
  it in a `DescriptorPool`. References become protoc imports / pool dependencies;
  Google's well-known types are always available.

A schema's *identity* (what decides that two registrations are the same schema and so
get the same id) is its type, its text with insignificant JSON whitespace and key
order removed (AVRO, JSON) or stripped (PROTOBUF), and its references.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import importlib.resources
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from workbench.protobuf_types import well_known_protos
from workbench.registry.errors import INVALID_SCHEMA, RegistryError

__all__ = [
    "PROTOC_TIMEOUT_S",
    "ParsedSchema",
    "Reference",
    "Resolved",
    "SCHEMA_TYPES",
    "identity",
    "parse_schema",
    "warm_up",
]

SCHEMA_TYPES = ("AVRO", "JSON", "PROTOBUF")


@dataclass(frozen=True)
class Reference:
    """A schema reference: the import `name`, and the subject and version it points at."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class ParsedSchema:
    """A schema that parsed: `parsed` is the library's object (avro Schema, JSON document,
    or the protobuf `FileDescriptorProto`)."""

    schema_type: str
    text: str
    parsed: Any


#: What a parser gets for each reference: (name, schema type, schema text, its own references).
Resolved = tuple[str, str, str, tuple[Any, ...]]


def identity(schema_type: str, text: str, references: Sequence[Reference]) -> str:
    """A key equal for equal schemas: the basis of "one schema, one id" across subjects."""
    canonical = text.strip()
    if schema_type in ("AVRO", "JSON"):
        with contextlib.suppress(ValueError, RecursionError):
            canonical = json.dumps(json.loads(text), separators=(",", ":"), sort_keys=True)
    refs = ",".join(f"{r.name}={r.subject}@{r.version}" for r in references)
    digest = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{schema_type}:{digest}:{refs}"


def parse_schema(schema_type: str, text: str, references: Sequence[Resolved] = ()) -> ParsedSchema:
    """Parse and validate a schema; `references` are the resolved referenced schemas.

    Raises:
        RegistryError: 42201 with the library's reason when the schema does not parse.
    """
    parser = _PARSERS.get(schema_type)
    if parser is None:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema type {schema_type!r}; use one of {list(SCHEMA_TYPES)}")
    return ParsedSchema(schema_type, text, parser(text, tuple(references)))


def warm_up() -> None:
    """Import and prime the parsers before serving: jsonschema's first use loads every
    metaschema (about 2 s), which would otherwise be the first client's wait."""
    parse_schema("AVRO", '{"type": "record", "name": "WarmUp", "fields": [{"name": "a", "type": "int"}]}')
    parse_schema("JSON", '{"type": "object", "properties": {"a": {"type": "integer"}}}')
    well_known_protos()


def _avro(text: str, references: tuple[Resolved, ...]) -> Any:
    import avro.errors
    import avro.name
    import avro.schema

    names = avro.name.Names()
    try:
        for _name, ref_type, ref_text, _refs in references:
            if ref_type == "AVRO":
                avro.schema.make_avsc_object(json.loads(ref_text), names)
        return avro.schema.make_avsc_object(json.loads(text), names)
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError, avro.errors.AvroException) as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {_first_line(exc)}") from None


def _json(text: str, references: tuple[Resolved, ...]) -> Any:
    import jsonschema
    import jsonschema.exceptions

    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: not JSON: {_first_line(exc)}") from None
    if not isinstance(document, dict | bool):
        raise RegistryError(INVALID_SCHEMA, "Invalid schema: a JSON Schema is an object or a boolean")
    try:
        jsonschema.validators.validator_for(document).check_schema(document)
    except (jsonschema.exceptions.SchemaError, RecursionError) as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {_first_line(exc)}") from None
    return document


_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}\s*$")


def _protobuf(text: str, references: tuple[Resolved, ...]) -> Any:
    from google.protobuf import descriptor_pb2

    deps = [_dependency(name, ref_type, ref_text, refs) for name, ref_type, ref_text, refs in references]
    if _BASE64.match(text):
        file = descriptor_pb2.FileDescriptorProto()
        try:
            file.ParseFromString(base64.b64decode(text))
        except (binascii.Error, ValueError, Exception) as exc:  # protobuf's DecodeError is an Exception
            raise RegistryError(
                INVALID_SCHEMA, f"Invalid schema: not a serialized FileDescriptorProto: {exc}"
            ) from None
        if file.name:
            _build(file, deps)
            return file
    return _compile(text, tuple(d.SerializeToString() for d in deps))


def _dependency(name: str, ref_type: str, text: str, refs: tuple[Any, ...]) -> Any:
    """The FileDescriptorProto of a referenced protobuf schema, under its import name."""
    parsed = _protobuf(text, refs)
    file = type(parsed)()
    file.CopyFrom(parsed)
    file.name = name
    return file


def _build(file: Any, deps: Sequence[Any]) -> None:
    """Check that a descriptor links: every type it uses is defined or imported."""
    from google.protobuf import descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    try:
        for known in well_known_protos():
            if known.name in file.dependency and known.name not in {d.name for d in deps}:
                pool.Add(known)
        for dep in deps:
            pool.Add(dep)
        pool.Add(file)
        pool.FindFileByName(file.name)
    except (TypeError, KeyError, ValueError, Exception) as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {_first_line(exc)}") from None


#: protoc gets this long per schema; a file that takes longer is refused.
PROTOC_TIMEOUT_S = 20.0


@lru_cache(maxsize=256)
def _compile(text: str, deps: tuple[bytes, ...]) -> Any:
    from google.protobuf import descriptor_pb2

    include = str(importlib.resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory(prefix="workbench-registry-") as folder:
        known = descriptor_pb2.FileDescriptorSet()
        for dep in deps:
            known.file.add().ParseFromString(dep)
        main = "schema.proto" if "schema.proto" not in {f.name for f in known.file} else "main-schema.proto"
        with open(os.path.join(folder, main), "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write(text)
        argv = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{folder}",
            f"-I{include}",
            f"--descriptor_set_out={folder}/out.pb",
        ]
        if deps:
            with open(os.path.join(folder, "deps.pb"), "wb") as out:
                out.write(known.SerializeToString())
            argv.append(f"--descriptor_set_in={folder}/deps.pb")
        argv.append(main)
        try:
            done = subprocess.run(argv, capture_output=True, timeout=PROTOC_TIMEOUT_S, cwd=folder, check=False)
        except subprocess.TimeoutExpired:
            raise RegistryError(INVALID_SCHEMA, "Invalid schema: protoc did not finish parsing it") from None
        if done.returncode != 0:
            reason = done.stderr.decode(errors="replace").replace(f"{folder}/", "").strip().splitlines()
            raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {reason[0] if reason else 'protoc refused it'}")
        files = descriptor_pb2.FileDescriptorSet()
        with open(os.path.join(folder, "out.pb"), "rb") as result:
            files.ParseFromString(result.read())
    return files.file[-1]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:500]


_PARSERS: dict[str, Callable[[str, tuple[Resolved, ...]], Any]] = {
    "AVRO": _avro,
    "JSON": _json,
    "PROTOBUF": _protobuf,
}
