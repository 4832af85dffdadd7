"""Protobuf compatibility as Confluent decides it: its schema diff, ported.

Confluent compares two Protobuf schemas (`protobuf-provider/.../protobuf/diff/SchemaDiff.java`,
`MessageSchemaDiff.java`, `FieldSchemaDiff.java`, `EnumSchemaDiff.java`, `Context.java`) and
lists the *differences* from the old schema (`original`) to the new one (`update`); the
change is compatible when every difference is in `SchemaDiff.COMPATIBLE_CHANGES`.
BACKWARD compares (old, new); FORWARD (new, old); FULL both. Here the schemas are the
compiled descriptors (`FileDescriptorProto`) of the file and of every file it imports.

- Only the file's *own* messages and enums are compared, by name (nested ones within
  their message). A message of an imported file is reached only through a field that
  uses it: dropping that field (and the import) is `FIELD_REMOVED`, compatible; a change
  inside it, while a field still uses it, is found.
- Package changed: `PACKAGE_CHANGED`. Message removed: `MESSAGE_REMOVED` (map entries do
  not count); added or moved: compatible. Enums added, removed or changed: compatible.
- Fields by number, oneof members included: removed or added is compatible unless the
  field is proto2 `required`; a name change is compatible. A member of a oneof removed
  is `ONEOF_FIELD_REMOVED` unless the whole oneof went; fields that were not one oneof
  moved into one: `MULTIPLE_FIELDS_MOVED_TO_ONEOF` / `FIELD_MOVED_TO_EXISTING_ONEOF`.
- A field's type: scalar (enums count as scalars), map or message must stay the same kind
  (`FIELD_KIND_CHANGED`). Scalars compare by Confluent's groups (`FIELD_SCALAR_KIND_CHANGED`
  across them): int32, int64, uint32, uint64, bool and enums; sint32 and sint64; string and
  bytes; fixed32 and sfixed32; fixed64 and sfixed64; float; double. A label that changes
  (`optional` <-> `repeated`, as written; proto3's plain fields have none) is incompatible
  for numbers and compatible for string/bytes. A message field must keep its message's
  name relative to its package (`FIELD_NAMED_TYPE_CHANGED`); when either side's message
  comes from an imported file (and they are not the same file), the two messages are
  compared too, and any incompatible difference inside makes the field's type changed as
  well. Map keys and values compare as fields.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from workbench.registry.protobuf_text import SCALAR_NAMES

__all__ = ["COMPATIBLE", "protobuf_differences", "protobuf_incompatibilities"]

#: Confluent's `SchemaDiff.COMPATIBLE_CHANGES`.
COMPATIBLE = frozenset(
    {
        "MESSAGE_ADDED",
        "MESSAGE_MOVED",
        "ENUM_ADDED",
        "ENUM_REMOVED",
        "ENUM_CONST_ADDED",
        "ENUM_CONST_CHANGED",
        "ENUM_CONST_REMOVED",
        "FIELD_ADDED",
        "FIELD_REMOVED",
        "FIELD_NAME_CHANGED",
        "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
        "ONEOF_ADDED",
        "ONEOF_REMOVED",
        "ONEOF_FIELD_ADDED",
        "ONEOF_FIELD_MOVED_TO_TOP_LEVEL",
    }
)

#: `FieldSchemaDiff.scalarKind`: the scalar types that may replace each other.
_SCALAR_KIND = {
    "int32": "GENERAL_NUMBER",
    "int64": "GENERAL_NUMBER",
    "uint32": "GENERAL_NUMBER",
    "uint64": "GENERAL_NUMBER",
    "bool": "GENERAL_NUMBER",
    "sint32": "SIGNED_NUMBER",
    "sint64": "SIGNED_NUMBER",
    "string": "STRING_OR_BYTES",
    "bytes": "STRING_OR_BYTES",
    "fixed32": "FIXED32",
    "sfixed32": "FIXED32",
    "fixed64": "FIXED64",
    "sfixed64": "FIXED64",
    "float": "FLOAT",
    "double": "DOUBLE",
}
_NUMERIC_KINDS = frozenset({"GENERAL_NUMBER", "SIGNED_NUMBER", "FIXED32", "FIXED64", "FLOAT", "DOUBLE"})
_TYPE_MESSAGE, _TYPE_ENUM = 11, 14
_LABEL_OPTIONAL, _LABEL_REQUIRED, _LABEL_REPEATED = 1, 2, 3


@dataclass(frozen=True)
class _Type:
    """A message or enum by full name, and where it is declared: `origin` is "" for the
    schema's own file, else the imported file's name; `file` is the declaring file."""

    package: str
    origin: str
    file: Any
    proto: Any
    is_enum: bool

    def map_type(self) -> str | None:
        """`map<K, V>` when this is a map entry message, else None."""
        if self.is_enum or not self.proto.options.map_entry:
            return None
        fields = {f.name: f for f in self.proto.field}
        return f"map<{_type_name(fields['key'])}, {_type_name(fields['value'])}>"


@dataclass
class _Side:
    """One schema: its types by full name (no leading dot) and its own file's syntax."""

    types: dict[str, _Type]
    syntax: str


@dataclass
class _Context:
    """Confluent's `Context`: the differences found, the path they are reported at, and the
    original messages being compared (so a recursive message is compared once)."""

    original: _Side
    update: _Side
    path: list[str] = field(default_factory=list)
    in_scope: frozenset[str] = frozenset()
    found: list[tuple[str, str]] = field(default_factory=list)

    def add(self, kind: str) -> None:
        self.found.append((kind, "#/" + "/".join(self.path)))

    @contextmanager
    def at(self, *parts: str) -> Iterator[None]:
        self.path.extend(parts)
        try:
            yield
        finally:
            del self.path[-len(parts) :]

    def compatible(self) -> bool:
        return all(kind in COMPATIBLE for kind, _ in self.found)


def protobuf_incompatibilities(
    original: Any, original_deps: Sequence[Any], update: Any, update_deps: Sequence[Any]
) -> list[str]:
    """Confluent's incompatible differences from `original` to `update` (each a
    `FileDescriptorProto` with the files it imports), as messages; [] if compatible."""
    found = protobuf_differences(original, original_deps, update, update_deps)
    return [f"{kind} at {path}" for kind, path in found if kind not in COMPATIBLE]


def protobuf_differences(
    original: Any, original_deps: Sequence[Any], update: Any, update_deps: Sequence[Any]
) -> list[tuple[str, str]]:
    """Every difference (type, path) from `original` to `update`, compatible ones included."""
    ctx = _Context(_side(original, original_deps), _side(update, update_deps))
    if original.package != update.package:
        ctx.add("PACKAGE_CHANGED")
    _compare_types(ctx, original, update, original.package, update.package)
    return ctx.found


def _side(file: Any, deps: Sequence[Any]) -> _Side:
    """The types of a schema and of its imports; the schema's own win a clash, as in
    `Context.collectTypeInfo`, which reads the dependencies first."""
    types: dict[str, _Type] = {}
    for declared in (*deps, file):
        origin = "" if declared is file else declared.name
        _collect(types, declared.message_type, declared.enum_type, declared.package, declared.package, origin, declared)
    return _Side(types, file.syntax or "proto2")


def _collect(
    types: dict[str, _Type], messages: Any, enums: Any, prefix: str, package: str, origin: str, file: Any
) -> None:
    for message in messages:
        name = f"{prefix}.{message.name}" if prefix else message.name
        types[name] = _Type(package, origin, file, message, False)
        _collect(types, message.nested_type, message.enum_type, name, package, origin, file)
    for enum in enums:
        name = f"{prefix}.{enum.name}" if prefix else enum.name
        types[name] = _Type(package, origin, file, enum, True)


def _compare_types(ctx: _Context, original: Any, update: Any, original_prefix: str, update_prefix: str) -> None:
    """`SchemaDiff.compareTypeElements`: the messages and enums declared here, by name. Map
    entry messages are left out, as Wire has none for a `map<K, V>` in a `.proto` text (their
    fields are compared through the map field)."""
    old_messages = {m.name: (i, m) for i, m in enumerate(m for m in original.message_type if not m.options.map_entry)}
    new_messages = {m.name: (i, m) for i, m in enumerate(m for m in update.message_type if not m.options.map_entry)}
    for name in [*old_messages, *(n for n in new_messages if n not in old_messages)]:
        with ctx.at(name):
            old_name, new_name = _join(original_prefix, name), _join(update_prefix, name)
            if name not in new_messages:
                ctx.add("MESSAGE_REMOVED")
            elif name not in old_messages:
                ctx.add("MESSAGE_ADDED")
            else:
                (old_index, old), (new_index, new) = old_messages[name], new_messages[name]
                _compare_messages(ctx, old, new, old_name, new_name)
                if old_index != new_index:
                    ctx.add("MESSAGE_MOVED")
    old_enums = {e.name: e for e in original.enum_type}
    new_enums = {e.name: e for e in update.enum_type}
    for name in [*old_enums, *(n for n in new_enums if n not in old_enums)]:
        with ctx.at(name):
            if name not in new_enums:
                ctx.add("ENUM_REMOVED")
            elif name not in old_enums:
                ctx.add("ENUM_ADDED")
            else:
                _compare_enums(ctx, old_enums[name], new_enums[name])


def _compare_enums(ctx: _Context, original: Any, update: Any) -> None:
    old = {v.number: v.name for v in original.value}
    new = {v.number: v.name for v in update.value}
    for number in sorted(old.keys() | new.keys()):
        with ctx.at(str(number)):
            if number not in new:
                ctx.add("ENUM_CONST_REMOVED")
            elif number not in old:
                ctx.add("ENUM_CONST_ADDED")
            elif old[number] != new[number]:
                ctx.add("ENUM_CONST_CHANGED")


@dataclass
class _Fields:
    """A message's fields by number, the real oneof each belongs to, and the oneofs' members."""

    by_number: dict[int, Any]
    oneof_of: dict[int, str]
    oneofs: dict[str, list[int]]


def _fields(message: Any) -> _Fields:
    """As Wire sees the message: proto3 `optional` fields are plain fields, not members of
    the synthetic oneof protoc makes for them, and a oneof without members is none."""
    by_number: dict[int, Any] = {}
    oneof_of: dict[int, str] = {}
    oneofs: dict[str, list[int]] = {}
    for f in message.field:
        by_number[f.number] = f
        if f.HasField("oneof_index") and not f.proto3_optional:
            name = message.oneof_decl[f.oneof_index].name
            oneof_of[f.number] = name
            oneofs.setdefault(name, []).append(f.number)
    return _Fields(by_number, oneof_of, oneofs)


def _compare_messages(ctx: _Context, original: Any, update: Any, original_name: str, update_name: str) -> None:
    """`MessageSchemaDiff.compare`."""
    key = f"{ctx.original.types[original_name].origin}:{original_name}"
    if key not in ctx.in_scope:
        outer = ctx.in_scope
        ctx.in_scope = outer | {key}
        try:
            _compare_fields(ctx, _fields(original), _fields(update))
        finally:
            ctx.in_scope = outer
    _compare_types(ctx, _Nested(original), _Nested(update), original_name, update_name)


@dataclass
class _Nested:
    """A message's nested types in the shape `_compare_types` reads (a file's)."""

    message: Any

    @property
    def message_type(self) -> Any:
        return self.message.nested_type

    @property
    def enum_type(self) -> Any:
        return self.message.enum_type


def _compare_fields(ctx: _Context, old: _Fields, new: _Fields) -> None:
    deleted_oneofs = {
        name
        for name, members in old.oneofs.items()
        if name not in new.oneofs and not set(members) & new.by_number.keys()
    }
    for name, members in new.oneofs.items():
        with ctx.at(name):
            groups, moved_in = set(), 0
            for number in members:
                if number in old.oneof_of:
                    groups.add("oneof:" + old.oneof_of[number])
                elif number in old.by_number:
                    groups.add(f"field:{number}")
                    moved_in += 1
            if len(groups) > 1:
                ctx.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF" if moved_in > 1 else "FIELD_MOVED_TO_EXISTING_ONEOF")
    for name in sorted(old.oneofs.keys() | new.oneofs.keys()):
        with ctx.at(name):
            if name not in new.oneofs:
                ctx.add("ONEOF_REMOVED")
            elif name not in old.oneofs:
                ctx.add("ONEOF_ADDED")
    for number in sorted(old.by_number.keys() | new.by_number.keys()):
        before, after = old.by_number.get(number), new.by_number.get(number)
        old_oneof, new_oneof = old.oneof_of.get(number), new.oneof_of.get(number)
        if after is None:
            if old_oneof is not None:
                if old_oneof not in deleted_oneofs:
                    with ctx.at(old_oneof, str(number)):
                        ctx.add("ONEOF_FIELD_REMOVED")
            else:
                required = _label(ctx.original.syntax, before, None) == _LABEL_REQUIRED
                with ctx.at(str(number)):
                    ctx.add("REQUIRED_FIELD_REMOVED" if required else "FIELD_REMOVED")
        elif before is None:
            if new_oneof is not None:
                with ctx.at(new_oneof, str(number)):
                    ctx.add("ONEOF_FIELD_ADDED")
            else:
                required = _label(ctx.update.syntax, after, None) == _LABEL_REQUIRED
                with ctx.at(str(number)):
                    ctx.add("REQUIRED_FIELD_ADDED" if required else "FIELD_ADDED")
        else:
            if old_oneof is not None and new_oneof is None:
                with ctx.at(str(number)):
                    ctx.add("ONEOF_FIELD_MOVED_TO_TOP_LEVEL")
            with ctx.at(*((new_oneof, str(number)) if new_oneof is not None else (str(number),))):
                _compare_field(ctx, before, after, old_oneof, new_oneof)


def _label(syntax: str, f: Any, oneof: str | None) -> int | None:
    """The label as Wire reads it from the text (`ProtobufSchema.label` for a descriptor):
    none inside a oneof and for proto3's plain fields."""
    if oneof is not None:
        return None
    if f.proto3_optional:
        return _LABEL_OPTIONAL
    if f.label == _LABEL_REPEATED:
        return _LABEL_REPEATED
    return None if syntax == "proto3" else int(f.label)


def _type_name(f: Any) -> str:
    """The field's type as Confluent's `ProtoType` string: a scalar's name or `.full.Name`."""
    return SCALAR_NAMES.get(f.type) or f.type_name


def _compare_field(ctx: _Context, original: Any, update: Any, old_oneof: str | None, new_oneof: str | None) -> None:
    """`FieldSchemaDiff.compare`."""
    if original.name != update.name:
        ctx.add("FIELD_NAME_CHANGED")
    _compare_labels_and_types(
        ctx,
        _label(ctx.original.syntax, original, old_oneof),
        _label(ctx.update.syntax, update, new_oneof),
        _type_name(original),
        _type_name(update),
    )


def _resolve(side: _Side, name: str) -> _Type | None:
    return side.types.get(name.removeprefix("."))


def _kind(side: _Side, name: str) -> str:
    if name in _SCALAR_KIND:
        return "SCALAR"
    if name.startswith("map<"):
        return "MAP"
    found = _resolve(side, name)
    return "SCALAR" if found is not None and found.is_enum else "MESSAGE"


def _compare_labels_and_types(
    ctx: _Context, old_label: int | None, new_label: int | None, old_type: str, new_type: str
) -> None:
    old_info, new_info = _resolve(ctx.original, old_type), _resolve(ctx.update, new_type)
    old_type = (old_info.map_type() if old_info is not None else None) or old_type
    new_type = (new_info.map_type() if new_info is not None else None) or new_type
    kind = _kind(ctx.original, old_type)
    if kind != _kind(ctx.update, new_type):
        ctx.add("FIELD_KIND_CHANGED")
    elif kind == "SCALAR":
        old_kind, new_kind = _scalar_kind(old_type), _scalar_kind(new_type)
        if old_kind != new_kind:
            ctx.add("FIELD_SCALAR_KIND_CHANGED")
        elif old_label is not None and new_label is not None and old_label != new_label:
            if old_kind in _NUMERIC_KINDS:
                ctx.add("FIELD_NUMERIC_LABEL_CHANGED")
            elif old_kind == "STRING_OR_BYTES":
                ctx.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED")
    elif kind == "MESSAGE":
        _compare_message_types(ctx, old_type, new_type)
    else:
        old_key, old_value = _map_parts(old_type)
        new_key, new_value = _map_parts(new_type)
        _compare_labels_and_types(ctx, None, None, old_key, new_key)
        _compare_labels_and_types(ctx, None, None, old_value, new_value)


def _scalar_kind(name: str) -> str:
    return _SCALAR_KIND.get(name, "GENERAL_NUMBER")  # not a scalar name: an enum


def _map_parts(map_type: str) -> tuple[str, str]:
    key, value = map_type.removeprefix("map<").removesuffix(">").split(", ", 1)
    return key, value


def _compare_message_types(ctx: _Context, old_type: str, new_type: str) -> None:
    """`FieldSchemaDiff.compareMessageTypes`: the names relative to their packages, then the
    messages themselves when either is imported (and not both from the same file)."""
    old, new = _resolve(ctx.original, old_type), _resolve(ctx.update, new_type)
    if old is None or new is None:
        if old_type != new_type:
            ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    old_full, new_full = old_type.removeprefix("."), new_type.removeprefix(".")
    old_local = old_full.removeprefix(old.package + ".") if old.package else old_full
    new_local = new_full.removeprefix(new.package + ".") if new.package else new_full
    if old_local != new_local:
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    both_local = old.origin == "" and new.origin == ""
    same_file = old.origin == new.origin and old.file == new.file
    if both_local or same_file:
        return
    inner = _Context(ctx.original, ctx.update, old_local.split("."), ctx.in_scope)
    _compare_messages(inner, old.proto, new.proto, old_full, new_full)
    ctx.found += inner.found
    if not inner.compatible():
        ctx.add("FIELD_NAMED_TYPE_CHANGED")


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name
