"""Parsing, references and canonical identity of the three schema types, each by its own library.

- AVRO: Apache `avro` (`avro.schema.make_avsc_object`), the named types of referenced
  schemas (and of theirs, transitively) registered first in the same `Names`, as
  Confluent's AvroSchema does.
- JSON: `jsonschema`, with the draft its `$schema` names and draft-07 when it names none
  (Confluent's default); referenced schemas are resources under their reference name
  (and their `$id`), so a `$ref` to `address.json` resolves, transitively.
- PROTOBUF: `.proto` text compiled by protoc (PyPI `grpcio-tools`) in a child process,
  so a hostile file can at worst end that child; or a base64 `FileDescriptorProto`,
  which is what confluent-kafka's `ProtobufSerializer` registers, checked by building
  it in a `DescriptorPool`. References become protoc imports / pool dependencies,
  transitively; Google's well-known and common types and Confluent's own files are
  bundled (`workbench.protobuf_types`).

**Canonical form.** As Confluent stores a schema's canonical string, a parsed schema
carries `canonical`, the text the registry stores and compares, the same text Confluent
stores: AVRO as Avro Java's `Schema.toString()` writes it (`avro_text`: Java's key
order, `{"type": "int"}` as `"int"`, names relative to the enclosing namespace), JSON as
compact JSON in the given key order, PROTOBUF as Confluent's printer lays it out
(`protobuf_text`: types as written in the text, fully qualified for a descriptor). With
`normalize` (`?normalize=true`), JSON keys are sorted, and Protobuf is Confluent's
normalized text (types fully qualified; imports, options, fields sorted). `identity` of a
canonical text plus references is what decides that two registrations are one schema
with one id. A printed text is used only when it parses back to the same schema; else the
text as given is kept.
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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from workbench.json_schemas import json_validator, json_validator_class
from workbench.protobuf_types import bundled_closure
from workbench.registry.avro_text import avro_canonical_text, java_json
from workbench.registry.errors import INVALID_SCHEMA, RegistryError

__all__ = [
    "PROTOC_TIMEOUT_S",
    "ParsedSchema",
    "Reference",
    "Resolved",
    "SCHEMA_TYPES",
    "identity",
    "loose_identity",
    "parse_schema",
    "warm_up",
]

SCHEMA_TYPES = ("AVRO", "JSON", "PROTOBUF")


@dataclass(frozen=True, order=True)
class Reference:
    """A schema reference: the import `name`, and the subject and version it points at."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class ParsedSchema:
    """A schema that parsed.

    `parsed` is the library's object (avro Schema, JSON document, or the protobuf
    `FileDescriptorProto`); `canonical` the text stored for it; `deps` what it needs to be
    used on its own: for PROTOBUF every imported file, dependencies first (registered
    references and bundled files alike), for JSON the referenced documents by URI.
    """

    schema_type: str
    text: str
    parsed: Any
    canonical: str = ""
    deps: Any = field(default=(), compare=False)


#: What a parser gets for each reference: (name, schema type, schema text, its own references).
Resolved = tuple[str, str, str, tuple[Any, ...]]


def identity(schema_type: str, text: str, references: Sequence[Reference]) -> str:
    """A key equal for equal stored schemas: the basis of "one schema, one id" across subjects.

    Stored texts are canonical (see the module docstring); whitespace is still ignored for
    AVRO and JSON so that records written before the canonical form keep matching."""
    canonical = text.strip()
    if schema_type in ("AVRO", "JSON"):
        with contextlib.suppress(ValueError, RecursionError):
            canonical = json.dumps(json.loads(text), separators=(",", ":"))
    return _key(schema_type, canonical, references)


def loose_identity(schema_type: str, text: str, references: Sequence[Reference]) -> str:
    """`identity` blind to JSON key order and to Protobuf whitespace: two records for one id
    must agree on this, or the later one lost a race (`log.LogState`)."""
    canonical = " ".join(_PROTO_TOKEN.findall(_PROTO_COMMENT.sub(" ", text)))
    if schema_type in ("AVRO", "JSON"):
        with contextlib.suppress(ValueError, RecursionError):
            canonical = json.dumps(json.loads(text), separators=(",", ":"), sort_keys=True)
    return _key(schema_type, canonical, references)


def _key(schema_type: str, canonical: str, references: Sequence[Reference]) -> str:
    refs = ",".join(f"{r.name}={r.subject}@{r.version}" for r in references)
    digest = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{schema_type}:{digest}:{refs}"


_PROTO_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PROTO_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[A-Za-z0-9_.+-]+|\S')


def parse_schema(
    schema_type: str, text: str, references: Sequence[Resolved] = (), *, normalize: bool = False
) -> ParsedSchema:
    """Parse and validate a schema; `references` are the resolved referenced schemas.

    Raises:
        RegistryError: 42201 with the library's reason when the schema does not parse.
    """
    parser = _PARSERS.get(schema_type)
    if parser is None:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema type {schema_type!r}; use one of {list(SCHEMA_TYPES)}")
    parsed, canonical, deps = parser(text, tuple(references), normalize)
    return ParsedSchema(schema_type, text, parsed, canonical, deps)


def warm_up() -> None:
    """Import and prime the parsers before serving: jsonschema's first use loads every
    metaschema (about 2 s), which would otherwise be the first client's wait."""
    parse_schema("AVRO", '{"type": "record", "name": "WarmUp", "fields": [{"name": "a", "type": "int"}]}')
    parse_schema("JSON", '{"type": "object", "properties": {"a": {"type": "integer"}}}')
    bundled_closure(())


def _flatten(references: tuple[Resolved, ...]) -> list[tuple[str, str, str]]:
    """Every referenced schema, transitively, dependencies first, each once by name."""
    seen: set[str] = set()
    out: list[tuple[str, str, str]] = []

    def visit(refs: tuple[Any, ...]) -> None:
        for name, ref_type, ref_text, nested in refs:
            if name in seen:
                continue
            seen.add(name)
            visit(nested)
            out.append((name, ref_type, ref_text))

    visit(references)
    return out


# -- AVRO ---------------------------------------------------------------------------------
def _avro(text: str, references: tuple[Resolved, ...], normalize: bool) -> tuple[Any, str, Any]:
    import avro.errors
    import avro.name
    import avro.schema

    errors = (ValueError, TypeError, AttributeError, KeyError, RecursionError, avro.errors.AvroException)
    flat = [(n, t) for n, ref_type, t in _flatten(references) if ref_type == "AVRO"]

    def names_of_references() -> Any:
        names = avro.name.Names()
        defined: set[str] = set()
        for name, ref_text in flat:
            try:
                document = json.loads(ref_text)
                if isinstance(document, dict) and _avro_fullname(document) in defined:
                    continue  # two references naming one type: the first wins
                made = avro.schema.make_avsc_object(document, names)
                defined.add(getattr(made, "fullname", name))
            except errors as exc:
                raise RegistryError(INVALID_SCHEMA, f"Invalid schema: reference {name!r}: {_first_line(exc)}") from None
        return names

    try:
        document = json.loads(text)
        parsed = avro.schema.make_avsc_object(document, names_of_references())
    except RegistryError:
        raise
    except errors as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {_first_line(exc)}") from None
    canonical = java_json(document)
    with contextlib.suppress(*errors):
        printed = avro_canonical_text(document, [json.loads(t) for _, t in flat])
        again = avro.schema.make_avsc_object(json.loads(printed), names_of_references())
        # The printer keeps every name (the parsing canonical form has them all, fully
        # qualified) and copies the rest; what differs is only what Java's parser drops.
        if again.to_canonical_json(names_of_references()) == parsed.to_canonical_json(names_of_references()):
            canonical = printed
    return parsed, canonical, ()


def _avro_fullname(document: dict[str, Any]) -> str:
    name, namespace = str(document.get("name", "")), document.get("namespace")
    return f"{namespace}.{name}" if namespace and "." not in name else name


# -- JSON ---------------------------------------------------------------------------------
def _json(text: str, references: tuple[Resolved, ...], normalize: bool) -> tuple[Any, str, Any]:
    import jsonschema.exceptions

    document = _json_document(text, "")
    resources: dict[str, Any] = {}
    for name, ref_type, ref_text in _flatten(references):
        if ref_type == "JSON":
            referenced = _json_document(ref_text, f"reference {name!r}: ")
            resources[name] = referenced
            if isinstance(referenced, dict) and isinstance(referenced.get("$id"), str):
                resources.setdefault(referenced["$id"], referenced)
    try:
        validator_class = json_validator_class(document)
        validator_class.check_schema(document)
        for referenced in resources.values():
            json_validator_class(referenced).check_schema(referenced)
        validator = json_validator(document, resources)
        for ref in sorted(_external_refs(document, set())):
            try:
                validator._resolver.lookup(ref)  # the only way to resolve a $ref before data comes
            except Exception:  # referencing's Unresolvable and friends
                raise RegistryError(
                    INVALID_SCHEMA, f"Invalid schema: $ref {ref[:200]!r} names no reference of this schema"
                ) from None
    except RegistryError:
        raise
    except (jsonschema.exceptions.SchemaError, RecursionError) as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {_first_line(exc)}") from None
    except Exception as exc:  # referencing's Unresolvable and friends
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {_first_line(exc)}") from None
    canonical = json.dumps(document, separators=(",", ":"), sort_keys=normalize)
    return document, canonical, resources


def _json_document(text: str, what: str) -> Any:
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {what}not JSON: {_first_line(exc)}") from None
    if not isinstance(document, dict | bool):
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {what}a JSON Schema is an object or a boolean")
    return document


def _external_refs(node: Any, found: set[str], depth: int = 0) -> set[str]:
    """`$ref`s that leave the document (not `#...`), to resolve before accepting it."""
    if depth > 64:
        return found
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            found.add(ref)
        for value in node.values():
            _external_refs(value, found, depth + 1)
    elif isinstance(node, list):
        for value in node:
            _external_refs(value, found, depth + 1)
    return found


# -- PROTOBUF -----------------------------------------------------------------------------
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}\s*$")


def _protobuf(text: str, references: tuple[Resolved, ...], normalize: bool) -> tuple[Any, str, Any]:
    from workbench.registry.protobuf_text import normalized_descriptor, print_proto, served_descriptor

    registered = _protobuf_references(references)
    file, source = _protobuf_file(text, registered)
    deps = _linked(file, registered)
    canonical = text
    with contextlib.suppress(ValueError, AttributeError, RegistryError):  # the printer's gaps keep the text
        printed = print_proto(file, normalize=normalize, text=source)
        again = _compile(printed, tuple(d.SerializeToString() for d in registered.values()))
        if normalized_descriptor(again) == normalized_descriptor(file):
            canonical = printed
    return served_descriptor(file), canonical, deps


def _protobuf_references(references: tuple[Resolved, ...]) -> dict[str, Any]:
    """The referenced files by import name, transitively, dependencies first."""
    from workbench.registry.protobuf_text import served_descriptor

    registered: dict[str, Any] = {}
    for name, ref_type, ref_text in _flatten(references):
        if ref_type != "PROTOBUF":
            continue
        try:
            file, _source = _protobuf_file(ref_text, dict(registered))
        except RegistryError as exc:
            raise RegistryError(INVALID_SCHEMA, f"Invalid schema: reference {name!r}: {exc.message}") from None
        copy = served_descriptor(file)
        copy.name = name
        registered[name] = copy
    return registered


def _protobuf_file(text: str, registered: dict[str, Any]) -> tuple[Any, str | None]:
    """The schema's descriptor, and the `.proto` text it was compiled from (None when it came
    as a descriptor): the printer takes types and layout as written from that text."""
    from google.protobuf import descriptor_pb2

    if _BASE64.match(text):
        file = descriptor_pb2.FileDescriptorProto()
        try:
            file.ParseFromString(base64.b64decode(text))
        except (binascii.Error, ValueError, Exception) as exc:  # protobuf's DecodeError is an Exception
            raise RegistryError(
                INVALID_SCHEMA, f"Invalid schema: not a serialized FileDescriptorProto: {exc}"
            ) from None
        if file.name:
            _linked(file, registered)
            return file, None
    return _compile(text, tuple(d.SerializeToString() for d in registered.values())), text


def _linked(file: Any, registered: dict[str, Any]) -> tuple[Any, ...]:
    """Check that a descriptor links (every type it uses is defined or imported); returns
    the files it needs, dependencies first."""
    from google.protobuf import descriptor_pool

    needed = _needed(file, registered)
    pool = descriptor_pool.DescriptorPool()
    try:
        for dep in needed:
            pool.Add(dep)
        pool.Add(file)
        pool.FindFileByName(file.name)
    except (TypeError, KeyError, ValueError, Exception) as exc:
        raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {_first_line(exc)}") from None
    return tuple(needed)


def _needed(file: Any, registered: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    seen: set[str] = set()

    def visit(names: Sequence[str]) -> None:
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            if name in registered:
                visit(list(registered[name].dependency))
                out.append(registered[name])
            else:
                for bundled in bundled_closure([name], skip=registered):
                    if bundled.name not in {f.name for f in out}:
                        out.append(bundled)

    visit(list(file.dependency))
    return out


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
        names = {f.name for f in known.file}
        for bundled in bundled_closure(_imports(text), skip=names):
            known.file.add().CopyFrom(bundled)
        main = "schema.proto" if "schema.proto" not in names else "main-schema.proto"
        with open(os.path.join(folder, main), "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write(text)
        argv = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{folder}",
            f"-I{include}",
            f"--descriptor_set_out={folder}/out.pb",
            "--include_source_info",
        ]
        if known.file:
            with open(os.path.join(folder, "deps.pb"), "wb") as out:
                out.write(known.SerializeToString())
            argv.append(f"--descriptor_set_in={folder}/deps.pb")
        argv.append(main)
        try:
            done = subprocess.run(argv, capture_output=True, timeout=PROTOC_TIMEOUT_S, cwd=folder, check=False)
        except subprocess.TimeoutExpired:
            raise RegistryError(INVALID_SCHEMA, "Invalid schema: protoc did not finish parsing it") from None
        if done.returncode != 0:
            lines = done.stderr.decode(errors="replace").replace(f"{folder}/", "").strip().splitlines()
            # protoc's own log lines (a file without `syntax` is warned about) and warnings are no reason.
            reason = [line for line in lines if not _PROTOC_NOISE.match(line)] or lines
            raise RegistryError(INVALID_SCHEMA, f"Invalid schema: {reason[0] if reason else 'protoc refused it'}")
        files = descriptor_pb2.FileDescriptorSet()
        with open(os.path.join(folder, "out.pb"), "rb") as result:
            files.ParseFromString(result.read())
    return files.file[-1]


_PROTOC_NOISE = re.compile(r"^(WARNING: All log messages|[WI]\d{4} |\S+:\d+:\d+: warning:)")
_IMPORT = re.compile(r'\bimport\s+(?:public\s+|weak\s+)?"([^"]+)"')


def _imports(text: str) -> list[str]:
    return _IMPORT.findall(_PROTO_COMMENT.sub(" ", text))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:500]


_PARSERS: dict[str, Callable[[str, tuple[Resolved, ...], bool], tuple[Any, str, Any]]] = {
    "AVRO": _avro,
    "JSON": _json,
    "PROTOBUF": _protobuf,
}
