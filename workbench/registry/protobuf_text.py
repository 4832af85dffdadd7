"""A Protobuf schema's canonical text: its compiled `FileDescriptorProto` printed as `.proto`.

Confluent stores a Protobuf schema as its canonical string (the parsed file printed again),
so one schema registered with other whitespace or comments, or as a base64
`FileDescriptorProto` (what confluent-kafka's serializer sends), is one schema with one id.
This module prints a descriptor the same way every time: syntax, package, imports, file
options, then messages, enums and services in declaration order; type names fully
qualified (`.pkg.Msg`); map fields as `map<K, V>`; proto3 `optional`. With `normalize`
(`?normalize=true`), imports and options are sorted too.

What it cannot print faithfully (editions, groups, extensions, custom options: anything
an option message holds beyond its known fields) is refused with `ValueError`; the
registry then keeps the text as it was given. The printed text is compiled again and
must give the same descriptor before it is used (`schemas.py`), so a printer gap can
never change a schema.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["normalized_descriptor", "print_proto"]

_SCALARS = {
    1: "double",
    2: "float",
    3: "int64",
    4: "uint64",
    5: "int32",
    6: "fixed64",
    7: "fixed32",
    8: "bool",
    9: "string",
    12: "bytes",
    13: "uint32",
    15: "sfixed32",
    16: "sfixed64",
    17: "sint32",
    18: "sint64",
}
_MESSAGE, _ENUM, _GROUP = 11, 14, 10
_OPTIONAL, _REQUIRED, _REPEATED = 1, 2, 3


def print_proto(file: Any, *, normalize: bool = False) -> str:
    """The canonical `.proto` text of a `FileDescriptorProto`.

    Raises:
        ValueError: the file uses something this printer does not print (see the module docstring).
    """
    syntax = file.syntax or "proto2"
    if syntax not in ("proto2", "proto3"):
        raise ValueError(f"syntax {syntax!r} is not printed")
    if file.extension:
        raise ValueError("extensions are not printed")
    out = [f'syntax = "{syntax}";']
    if file.package:
        out.append(f"package {file.package};")
    imports = []
    for index, name in enumerate(file.dependency):
        kind = "public " if index in file.public_dependency else "weak " if index in file.weak_dependency else ""
        imports.append(f'import {kind}"{name}";')
    out += sorted(imports) if normalize else imports
    out += _options(file.options, "", normalize, statement=True)
    for message in file.message_type:
        out += _message(message, "", syntax, normalize)
    for enum in file.enum_type:
        out += _enum(enum, "", normalize)
    for service in file.service:
        out.append(f"service {service.name} {{")
        out += _options(service.options, "  ", normalize, statement=True)
        for method in service.method:
            client = "stream " if method.client_streaming else ""
            server = "stream " if method.server_streaming else ""
            head = f"  rpc {method.name}({client}{method.input_type}) returns ({server}{method.output_type})"
            inner = _options(method.options, "    ", normalize, statement=True)
            out += [head + " {", *inner, "  }"] if inner else [head + ";"]
        out.append("}")
    return "\n".join(out) + "\n"


def normalized_descriptor(file: Any) -> bytes:
    """The descriptor's bytes with what does not change the schema cleared (file name, source
    info, json names protoc derives): equal bytes mean the same schema."""
    copy = type(file)()
    copy.CopyFrom(file)
    copy.ClearField("name")
    copy.ClearField("source_code_info")

    def strip(messages: Any) -> None:
        for message in messages:
            for field in (*message.field, *message.extension):
                if field.json_name == _json_name(field.name):
                    field.ClearField("json_name")
            strip(message.nested_type)

    strip(copy.message_type)
    for field in copy.extension:
        if field.json_name == _json_name(field.name):
            field.ClearField("json_name")
    result: bytes = copy.SerializeToString(deterministic=True)
    return result


def _json_name(name: str) -> str:
    """protoc's default json_name: underscores dropped, the letter after each capitalised."""
    out, upper = [], False
    for char in name:
        if char == "_":
            upper = True
        elif upper:
            out.append(char.upper())
            upper = False
        else:
            out.append(char)
    return "".join(out)


def _message(message: Any, indent: str, syntax: str, normalize: bool) -> list[str]:
    if message.extension or (message.extension_range and syntax == "proto3"):
        raise ValueError("extensions are not printed")
    inner = indent + "  "
    out = [f"{indent}message {message.name} {{"]
    out += _options(message.options, inner, normalize, statement=True)
    maps = {n.name: n for n in message.nested_type if n.options.map_entry}
    real_oneofs = {f.oneof_index for f in message.field if f.HasField("oneof_index") and not f.proto3_optional}
    printed_oneofs: set[int] = set()
    for field in message.field:
        if field.HasField("oneof_index") and field.oneof_index in real_oneofs:
            if field.oneof_index in printed_oneofs:
                continue
            printed_oneofs.add(field.oneof_index)
            oneof = message.oneof_decl[field.oneof_index]
            out.append(f"{inner}oneof {oneof.name} {{")
            out += _options(oneof.options, inner + "  ", normalize, statement=True)
            for member in message.field:
                if member.HasField("oneof_index") and member.oneof_index == field.oneof_index:
                    out.append(inner + "  " + _field(member, syntax, maps, normalize, in_oneof=True))
            out.append(f"{inner}}}")
            continue
        out.append(inner + _field(field, syntax, maps, normalize, in_oneof=False))
    for nested in message.nested_type:
        if nested.name not in maps:
            out += _message(nested, inner, syntax, normalize)
    for enum in message.enum_type:
        out += _enum(enum, inner, normalize)
    for extension_range in message.extension_range:
        end = "max" if extension_range.end >= 536870912 else str(extension_range.end - 1)
        out.append(f"{inner}extensions {extension_range.start} to {end};")
    out += _reserved(message.reserved_range, message.reserved_name, inner, exclusive_end=True)
    out.append(f"{indent}}}")
    return out


def _field(field: Any, syntax: str, maps: dict[str, Any], normalize: bool, *, in_oneof: bool) -> str:
    if field.type == _GROUP:
        raise ValueError("groups are not printed")
    type_name = _SCALARS.get(field.type) or field.type_name
    entry = maps.get(field.type_name.rsplit(".", 1)[-1]) if field.type == _MESSAGE else None
    if entry is not None and field.label == _REPEATED:
        key, value = entry.field[0], entry.field[1]
        type_name = f"map<{_SCALARS.get(key.type) or key.type_name}, {_SCALARS.get(value.type) or value.type_name}>"
        label = ""
    elif in_oneof:
        label = ""
    elif field.label == _REPEATED:
        label = "repeated "
    elif field.label == _REQUIRED:
        label = "required "
    elif syntax == "proto2" or field.proto3_optional:
        label = "optional "
    else:
        label = ""
    extras = []
    if field.HasField("default_value"):
        default = field.default_value
        if field.type == 9 or field.type == 12:
            default = json.dumps(default)
        extras.append(f"default = {default}")
    if field.HasField("json_name") and field.json_name != _json_name(field.name):
        extras.append(f"json_name = {json.dumps(field.json_name)}")
    extras += _options(field.options, "", normalize, statement=False)
    suffix = f" [{', '.join(extras)}]" if extras else ""
    return f"{label}{type_name} {field.name} = {field.number}{suffix};"


def _enum(enum: Any, indent: str, normalize: bool) -> list[str]:
    inner = indent + "  "
    out = [f"{indent}enum {enum.name} {{"]
    out += _options(enum.options, inner, normalize, statement=True)
    for value in enum.value:
        extras = _options(value.options, "", normalize, statement=False)
        suffix = f" [{', '.join(extras)}]" if extras else ""
        out.append(f"{inner}{value.name} = {value.number}{suffix};")
    out += _reserved(enum.reserved_range, enum.reserved_name, inner, exclusive_end=False)
    out.append(f"{indent}}}")
    return out


def _reserved(ranges: Any, names: Any, indent: str, *, exclusive_end: bool) -> list[str]:
    out = []
    parts = []
    for reserved in ranges:
        end = reserved.end - 1 if exclusive_end else reserved.end
        parts.append(str(reserved.start) if end == reserved.start else f"{reserved.start} to {end}")
    if parts:
        out.append(f"{indent}reserved {', '.join(parts)};")
    if names:
        out.append(f"{indent}reserved {', '.join(json.dumps(n) for n in names)};")
    return out


def _options(options: Any, indent: str, normalize: bool, *, statement: bool) -> list[str]:
    """Known options as `option x = y;` statements or `x = y` items; ValueError when the
    message holds anything else (custom options arrive as unknown fields)."""
    fields = options.ListFields()
    rebuilt = type(options)()
    for descriptor, value in fields:
        if descriptor.is_extension:
            raise ValueError("custom options are not printed")
        if descriptor.is_repeated:
            raise ValueError(f"option {descriptor.name} is not printed")
        setattr(rebuilt, descriptor.name, value)
    if rebuilt.SerializeToString(deterministic=True) != options.SerializeToString(deterministic=True):
        raise ValueError("custom options are not printed")
    items = []
    for descriptor, value in fields:
        if descriptor.name == "map_entry":
            continue
        if descriptor.enum_type is not None:
            shown = descriptor.enum_type.values_by_number[value].name
        elif isinstance(value, bool):
            shown = "true" if value else "false"
        elif isinstance(value, str):
            shown = json.dumps(value)
        else:
            shown = str(value)
        items.append(f"{descriptor.name} = {shown}")
    if normalize:
        items.sort()
    return [f"{indent}option {item};" for item in items] if statement else items
