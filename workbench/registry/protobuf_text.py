"""A Protobuf schema's canonical text, printed as Confluent's `ProtobufSchemaUtils.toString` prints it.

Confluent stores a Protobuf schema as its canonical string: the parsed file printed again,
so one schema registered with other whitespace or comments is one schema with one id, and
a `_schemas` topic written by Confluent and by this registry agree. The layout is
Confluent's: `syntax` and `package` lines, then a blank line before the imports, before
the file options, before the types (all messages, then all enums) and before the
services; inside a message, its reserved ranges, options, fields, oneofs, extension
ranges and nested types, each group after a blank line (indented blank lines, as
Confluent's indenter leaves them); several options of one field on lines of their own.

What is printed is what Confluent's parser would hold. For `.proto` text (compiled here
by protoc with `--include_source_info`, passed as `text`), that is the text as written:
the syntax line only when written, field and rpc types as written (`Address`,
`geo.Address`, `map<string, Foo>`), options and reserved statements in their written
order and grouping, `json_name` only when written. For a `FileDescriptorProto` sent as
is (what confluent-kafka's serializer registers), it is the descriptor as Confluent's
`ProtobufSchema.toProtoFile` converts it: fully qualified types (`.geo.Address`), options
in Confluent's order, one reserved range per statement, `json_name` when the descriptor
has one. With `normalize` (`?normalize=true`, `toNormalizedString`), types are fully
qualified and maps written `map<K, V>`, imports, options, fields, oneofs, reserved
ranges and enum values are sorted, and a proto2 file has no syntax line.

Not printed as Confluent does (refused with `ValueError`, so the registry keeps the text
as given): editions, groups, extensions, weak imports, custom options and repeated
options. A descriptor's map fields are printed `map<K, V>`: Confluent prints the map
entry messages, which protoc cannot read back. The printed text is compiled again and
must give the same descriptor before it is used (`schemas.py`), so a printer gap can
never change a schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

__all__ = ["SCALAR_NAMES", "normalized_descriptor", "print_proto", "served_descriptor"]

#: `FieldDescriptorProto.Type` numbers of the scalar types, and their names.
SCALAR_NAMES = {
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
#: Confluent's `MAX_TAG_VALUE`: a range ending here or later prints as `max`.
_MAX_TAG = 536_870_911
#: The order `ProtobufSchema.toProtoFile` gives a descriptor's options where it is not the
#: options' field-number order; options it does not know follow, by number.
_CONFLUENT_OPTION_ORDER = {
    "FileOptions": (
        "java_package",
        "java_outer_classname",
        "java_multiple_files",
        "java_generate_equals_and_hash",
        "java_string_check_utf8",
        "optimize_for",
        "go_package",
        "cc_generic_services",
        "java_generic_services",
        "py_generic_services",
        "deprecated",
        "cc_enable_arenas",
        "objc_class_prefix",
        "csharp_namespace",
        "swift_prefix",
        "php_class_prefix",
        "php_namespace",
        "php_metadata_namespace",
        "ruby_package",
    ),
    "FieldOptions": ("ctype", "packed", "jstype", "deprecated", "debug_redact", "retention"),
}
# Paths into a FileDescriptorProto's source info (field numbers of descriptor.proto).
_FILE_MESSAGES, _FILE_ENUMS, _FILE_SERVICES, _FILE_OPTIONS, _FILE_SYNTAX = 4, 5, 6, 8, 12
_MSG_FIELDS, _MSG_NESTED, _MSG_ENUMS, _MSG_EXTENSION_RANGES, _MSG_OPTIONS, _MSG_ONEOFS = 2, 3, 4, 5, 7, 8
_MSG_RESERVED_RANGES, _MSG_RESERVED_NAMES = 9, 10
_FIELD_TYPE_NAME, _FIELD_OPTIONS, _FIELD_JSON_NAME = 6, 8, 10
_ENUM_VALUES, _ENUM_OPTIONS, _ENUM_RESERVED_RANGES, _ENUM_RESERVED_NAMES = 2, 3, 4, 5
_VALUE_OPTIONS, _ONEOF_OPTIONS = 3, 2
_SERVICE_METHODS, _SERVICE_OPTIONS = 2, 3
_METHOD_INPUT, _METHOD_OUTPUT, _METHOD_OPTIONS = 2, 3, 4

_Path = tuple[int, ...]


def print_proto(file: Any, *, normalize: bool = False, text: str | None = None) -> str:
    """The canonical `.proto` text of a `FileDescriptorProto`: of the `.proto` `text` it was
    compiled from (with protoc's source info), or of the descriptor itself when `text` is None.

    Raises:
        ValueError: the file uses something this printer does not print (see the module docstring).
    """
    written = _Written(file, text) if text is not None and file.HasField("source_code_info") else None
    return _Printer(file, normalize, written).file()


def served_descriptor(file: Any) -> Any:
    """The descriptor as the registry keeps and serves it (`format=serialized`): without
    protoc's source info, and with a `json_name` only where the text wrote one (protoc adds
    one to every field; Confluent's descriptors carry only the written ones)."""
    copy = type(file)()
    copy.CopyFrom(file)
    if not file.HasField("source_code_info"):
        return copy
    json_names = {
        tuple(location.path)
        for location in file.source_code_info.location
        if len(location.path) >= 3 and location.path[-1] == _FIELD_JSON_NAME and location.path[-3] == _MSG_FIELDS
    }
    copy.ClearField("source_code_info")

    def strip(messages: Any, path: _Path) -> None:
        for index, message in enumerate(messages):
            here = (*path, index)
            for number, field in enumerate(message.field):
                if (*here, _MSG_FIELDS, number, _FIELD_JSON_NAME) not in json_names:
                    field.ClearField("json_name")
            strip(message.nested_type, (*here, _MSG_NESTED))

    strip(copy.message_type, (_FILE_MESSAGES,))
    return copy


def normalized_descriptor(file: Any) -> bytes:
    """The descriptor's bytes with what does not change the schema cleared (file name, source
    info, json names protoc derives) and what the printer reorders sorted (fields after
    oneofs, and under normalize imports, oneofs, enum values, reserved ranges): equal bytes
    mean the same schema."""
    copy = type(file)()
    copy.CopyFrom(file)
    copy.ClearField("name")
    copy.ClearField("source_code_info")
    public = {copy.dependency[i] for i in copy.public_dependency}
    weak = {copy.dependency[i] for i in copy.weak_dependency}
    imports = sorted(set(copy.dependency))
    copy.ClearField("dependency")
    copy.ClearField("public_dependency")
    copy.ClearField("weak_dependency")
    copy.dependency.extend(imports)
    copy.public_dependency.extend(i for i, name in enumerate(imports) if name in public)
    copy.weak_dependency.extend(i for i, name in enumerate(imports) if name in weak)

    def strip_json_names(fields: Any) -> None:
        for field in fields:
            if field.json_name == _json_name(field.name):
                field.ClearField("json_name")

    def sort_enums(enums: Any) -> None:
        for enum in enums:
            _sort(enum.value, lambda v: (v.number, v.name))
            _sort(enum.reserved_range, lambda r: (r.start, r.end))
            _sort(enum.reserved_name, lambda n: n)

    def sort_messages(messages: Any) -> None:
        for message in messages:
            strip_json_names((*message.field, *message.extension))
            names = [o.name for o in message.oneof_decl]
            order = sorted(range(len(names)), key=lambda i: names[i])
            _sort(message.oneof_decl, lambda o: o.name)
            for field in message.field:
                if field.HasField("oneof_index"):
                    field.oneof_index = order.index(field.oneof_index)
            _sort(message.field, lambda f: f.number)
            _sort(message.reserved_range, lambda r: (r.start, r.end))
            _sort(message.reserved_name, lambda n: n)
            _sort(message.extension_range, lambda r: (r.start, r.end))
            sort_enums(message.enum_type)
            sort_messages(message.nested_type)

    sort_messages(copy.message_type)
    sort_enums(copy.enum_type)
    strip_json_names(copy.extension)
    result: bytes = copy.SerializeToString(deterministic=True)
    return result


def _sort(repeated: Any, key: Callable[[Any], Any]) -> None:
    """Sort a repeated field of a protobuf message in place (of strings, or of messages)."""
    items = sorted(repeated, key=key)
    if items and isinstance(items[0], str):
        del repeated[:]
        repeated.extend(items)
        return
    copies = []
    for item in items:
        copy = type(item)()
        copy.CopyFrom(item)
        copies.append(copy)
    del repeated[:]
    for copy in copies:
        repeated.add().CopyFrom(copy)


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


class _Written:
    """Where protoc found each element in the text (its source info), and that text."""

    def __init__(self, file: Any, text: str) -> None:
        self.lines = text.split("\n")
        self.spans: dict[_Path, list[tuple[int, ...]]] = {}
        for location in file.source_code_info.location:
            self.spans.setdefault(tuple(location.path), []).append(tuple(location.span))

    def has(self, path: _Path) -> bool:
        return path in self.spans

    def start(self, path: _Path) -> tuple[int, int] | None:
        spans = self.spans.get(path)
        return (spans[0][0], spans[0][1]) if spans else None

    def text(self, span: tuple[int, ...]) -> str:
        """The text of a span; protoc counts columns in UTF-8 bytes, a tab to the next multiple of 8."""
        first, start = span[0], span[1]
        last, end = (span[2], span[3]) if len(span) == 4 else (span[0], span[2])
        if not 0 <= first <= last < len(self.lines):
            return ""
        begin = _index(self.lines[first], start)
        if first == last:
            return self.lines[first][begin : _index(self.lines[first], end)]
        middle = self.lines[first + 1 : last]
        return "\n".join([self.lines[first][begin:], *middle, self.lines[last][: _index(self.lines[last], end)]])

    def first(self, path: _Path) -> str | None:
        spans = self.spans.get(path)
        return self.text(spans[0]) if spans else None


def _index(line: str, column: int) -> int:
    at = 0
    for index, char in enumerate(line):
        if at >= column:
            return index
        at += 8 - at % 8 if char == "\t" else len(char.encode("utf-8", "surrogatepass"))
    return len(line)


def _indented(value: str) -> str:
    """Confluent's `appendIndented`: every line two spaces in (Java's `split` drops the
    trailing empty lines, and keeps the inner ones, which get the two spaces too)."""
    lines = value.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    return "".join(f"  {line}\n" for line in lines)


def _escape(value: str) -> str:
    """Confluent's `escapeChars`."""
    table = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    table.update({"\\": "\\\\", "'": "\\'", '"': '\\"'})
    return "".join(table.get(char, char) for char in value)


def _format_number(value: str) -> str:
    """`formatNumber` under normalize: Java's `DecimalFormat` (no grouping, at most three
    decimals, half-even); what is no number (`inf`, `nan`, a bytes default) stays as it is."""
    try:
        number = Decimal(value)
    except InvalidOperation:
        return value
    if not number.is_finite():
        return value
    rounded = number.quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN).normalize()
    shown = format(rounded, "f")
    return "0" if shown in ("-0", "0") else shown


@dataclass
class _Option:
    name: str
    shown: str  # the value as printed


class _Printer:
    """One file's canonical text (see the module docstring); `written` is None for a descriptor."""

    def __init__(self, file: Any, normalize: bool, written: _Written | None) -> None:
        self.file_proto = file
        self.normalize = normalize
        self.written = written
        self.syntax = file.syntax or "proto2"
        if self.syntax not in ("proto2", "proto3"):
            raise ValueError(f"syntax {self.syntax!r} is not printed")
        self.maps = _map_entries(file)

    # -- file ----------------------------------------------------------------------------
    def file(self) -> str:
        file = self.file_proto
        if file.extension:
            raise ValueError("extensions are not printed")
        if file.weak_dependency:
            raise ValueError("weak imports are not printed")
        out = []
        if self._syntax_written() and (not self.normalize or self.syntax == "proto3"):
            out.append(f'syntax = "{self.syntax}";\n')
        if file.package:
            out.append(f"package {file.package};\n")
        public = set(file.public_dependency)
        imports = [name for i, name in enumerate(file.dependency) if i not in public]
        publics = [name for i, name in enumerate(file.dependency) if i in public]
        if self.normalize:
            imports, publics = sorted(set(imports)), sorted(set(publics))
        if imports or publics:
            out.append("\n")
            out += [f'import "{name}";\n' for name in imports]
            out += [f'import public "{name}";\n' for name in publics]
        options = self._options(file.options, (_FILE_OPTIONS,))
        if options:
            out.append("\n")
            out += [f"option {o.name} = {o.shown};\n" for o in options]
        messages = self._messages(file.message_type, (_FILE_MESSAGES,), f".{file.package}" if file.package else "")
        enums = [self._enum(e, (_FILE_ENUMS, i)) for i, e in enumerate(file.enum_type)]
        if messages or enums:
            out.append("\n")
            out += messages + enums
        if file.service:
            out.append("\n")
            out += [self._service(s, (_FILE_SERVICES, i)) for i, s in enumerate(file.service)]
        return "".join(out)

    def _syntax_written(self) -> bool:
        if self.written is not None:
            return self.written.has((_FILE_SYNTAX,))
        return bool(self.file_proto.syntax)

    def _messages(self, messages: Any, path: _Path, scope: str) -> list[str]:
        """The messages, map entries left out (their fields print as `map<K, V>`)."""
        return [
            self._message(m, (*path, i), f"{scope}.{m.name}") for i, m in enumerate(messages) if not m.options.map_entry
        ]

    # -- messages ------------------------------------------------------------------------
    def _message(self, message: Any, path: _Path, full: str) -> str:
        if message.extension:
            raise ValueError("extensions are not printed")
        if message.extension_range and self.syntax == "proto3":
            raise ValueError("extensions are not printed")
        out = [f"message {message.name} {{"]
        reserved = self._reserved(
            message.reserved_range, message.reserved_name, path, (_MSG_RESERVED_RANGES, _MSG_RESERVED_NAMES), True
        )
        if reserved:
            out.append("\n" + "".join(_indented(r) for r in reserved))
        options = self._options(message.options, (*path, _MSG_OPTIONS))
        if options:
            out.append("\n" + "".join(_indented(f"option {o.name} = {o.shown};\n") for o in options))
        real_oneofs = {f.oneof_index for f in message.field if f.HasField("oneof_index") and not f.proto3_optional}
        plain = [
            (i, f)
            for i, f in enumerate(message.field)
            if not (f.HasField("oneof_index") and f.oneof_index in real_oneofs)
        ]
        if self.normalize:
            plain.sort(key=lambda item: item[1].number)
        if plain:
            out.append("\n" + "".join(_indented(self._field(f, (*path, _MSG_FIELDS, i), False)) for i, f in plain))
        oneofs = []
        for index, oneof in enumerate(message.oneof_decl):
            members = [
                (i, f) for i, f in enumerate(message.field) if f.HasField("oneof_index") and f.oneof_index == index
            ]
            if index in real_oneofs and members:
                oneofs.append((index, oneof, members))
        if self.normalize:
            oneofs = [(i, o, sorted(m, key=lambda item: item[1].number)) for i, o, m in oneofs]
            oneofs.sort(key=lambda item: item[2][0][1].number)
        if oneofs:
            out.append(
                "\n" + "".join(_indented(self._oneof(o, m, (*path, _MSG_ONEOFS, i), path)) for i, o, m in oneofs)
            )
        extensions = self._extensions(message, path)
        if extensions:
            out.append("\n" + "".join(_indented(e) for e in extensions))
        nested = self._messages(message.nested_type, (*path, _MSG_NESTED), full)
        nested += [self._enum(e, (*path, _MSG_ENUMS, i)) for i, e in enumerate(message.enum_type)]
        if nested:
            out.append("\n" + "".join(_indented(n) for n in nested))
        out.append("}\n")
        return "".join(out)

    def _oneof(self, oneof: Any, members: list[tuple[int, Any]], path: _Path, message_path: _Path) -> str:
        out = [f"oneof {oneof.name} {{"]
        options = self._options(oneof.options, (*path, _ONEOF_OPTIONS))
        if options:
            out.append("\n" + "".join(_indented(f"option {o.name} = {o.shown};\n") for o in options))
        out.append("\n" + "".join(_indented(self._field(f, (*message_path, _MSG_FIELDS, i), True)) for i, f in members))
        out.append("}\n")
        return "".join(out)

    def _field(self, field: Any, path: _Path, in_oneof: bool) -> str:
        if field.type == _GROUP:
            raise ValueError("groups are not printed")
        entry = self.maps.get(field.type_name) if field.type == _MESSAGE else None
        label = None if in_oneof else self._label(field)
        if entry is not None:
            type_name, label = self._map_type(entry, path), None
        elif field.type in SCALAR_NAMES:
            type_name = SCALAR_NAMES[field.type]
        else:
            type_name = self._type_name(field.type_name, (*path, _FIELD_TYPE_NAME))
        options = self._options(field.options, (*path, _FIELD_OPTIONS), sort=False)
        if field.HasField("default_value") and self.syntax != "proto3":
            options.append(_Option("default", self._default(field, type_name)))
        if self._json_name_written(field, path):
            options.append(_Option("json_name", f'"{_escape(field.json_name)}"'))
        if self.normalize:
            options.sort(key=lambda o: o.name)
        head = f"{_LABELS[label]} " if label is not None else ""
        return f"{head}{type_name} {field.name} = {field.number}{_option_list(options)};\n"

    def _label(self, field: Any) -> int | None:
        """`ProtobufSchema.label`: proto3's plain fields have none."""
        if field.proto3_optional:
            return _OPTIONAL
        if field.label == _REPEATED:
            return _REPEATED
        return None if self.syntax == "proto3" else int(field.label)

    def _map_type(self, entry: Any, path: _Path) -> str:
        key, value = entry.field[0], entry.field[1]
        value_type = SCALAR_NAMES.get(value.type) or value.type_name
        if self.written is not None and not self.normalize:
            written = self.written.first((*path, _FIELD_TYPE_NAME))
            found = re.fullmatch(r"map\s*<\s*([\w.]+)\s*,\s*([\w.]+)\s*>", written or "")
            if found:
                return f"map<{found[1]}, {found[2]}>"
        return f"map<{SCALAR_NAMES.get(key.type) or key.type_name}, {value_type}>"

    def _type_name(self, full: str, path: _Path) -> str:
        """A message or enum type: as written in text, else (and under normalize) `.full.Name`."""
        if self.written is not None and not self.normalize:
            written = self.written.first(path)
            if written and re.fullmatch(r"[\w.\s]+", written):
                return "".join(written.split())
        return full

    def _default(self, field: Any, type_name: str) -> str:
        """The default as an option of Confluent's kind for the type (`toKind`): a string is
        quoted, a number (and bytes, as Confluent has it) or enum printed as it is."""
        value = field.default_value
        simple = type_name.rsplit(".", 1)[-1]
        if simple == "string":
            return f'"{_escape(value)}"'
        if simple in SCALAR_NAMES.values() and simple != "bool" and self.normalize:
            return _format_number(value)
        return str(value)

    def _json_name_written(self, field: Any, path: _Path) -> bool:
        if not field.HasField("json_name"):
            return False
        if self.written is not None:
            return self.written.has((*path, _FIELD_JSON_NAME))
        return True

    # -- reserved and extension ranges ---------------------------------------------------
    def _reserved(self, ranges: Any, names: Any, path: _Path, where: tuple[int, int], exclusive: bool) -> list[str]:
        """Confluent's reserved statements: as written (one per `reserved` statement), else one
        per range or name; under normalize one per value, sorted."""
        values: list[list[Any]] = self._grouped(ranges, names, path, where, exclusive)
        if self.normalize:
            single = [value for group in values for value in group]
            single.sort(key=_reserved_order)
            values = [[value] for value in single]
        return [f"reserved {', '.join(self._range(v) for v in group)};\n" for group in values]

    def _grouped(
        self, ranges: Any, names: Any, path: _Path, where: tuple[int, int], exclusive: bool
    ) -> list[list[Any]]:
        """Each statement's values (an int, a (start, last) range, or a name): as written when
        the text is known (a range protoc cannot place keeps a statement of its own)."""
        ends = [r.end - 1 if exclusive else r.end for r in ranges]
        plain = [[r.start if r.start == last else (r.start, last)] for r, last in zip(ranges, ends, strict=True)]
        plain += [[name] for name in names]
        if self.written is None:
            return plain
        statements: list[tuple[tuple[int, ...], list[Any]]] = []
        for kind in where:
            statements += [(span, []) for span in self.written.spans.get((*path, kind), [])]
        statements.sort(key=lambda item: item[0][:2])
        for kind, items in ((where[0], list(zip(ranges, ends, strict=True))), (where[1], list(names))):
            for index, item in enumerate(items):
                span = (self.written.spans.get((*path, kind, index)) or [()])[0]
                home = next((s for s in statements if span and s[0][:2] <= span[:2] and _inside(span, s[0])), None)
                if home is None:
                    return plain
                if kind == where[1]:
                    home[1].append(item)
                else:
                    r, last = item
                    ranged = r.start != last or " to " in self.written.text(span)
                    home[1].append((r.start, last) if ranged else r.start)
        return [values for _, values in statements if values]

    def _range(self, value: Any) -> str:
        if isinstance(value, str):
            return f'"{value}"'
        if isinstance(value, int):
            return str(value)
        start, last = value
        if self.normalize and start == last:
            return str(start)
        return f"{start} to {last if last < _MAX_TAG else 'max'}"

    def _extensions(self, message: Any, path: _Path) -> list[str]:
        if any(r.HasField("options") for r in message.extension_range):
            raise ValueError("extension range options are not printed")
        values = self._grouped(message.extension_range, [], path, (_MSG_EXTENSION_RANGES, -1), True)
        if self.normalize:
            single = sorted((v for group in values for v in group), key=_reserved_order)
            values = [[v] for v in single]
        return [f"extensions {', '.join(self._range(v) for v in group)};\n" for group in values]

    # -- enums and services --------------------------------------------------------------
    def _enum(self, enum: Any, path: _Path) -> str:
        out = [f"enum {enum.name} {{"]
        reserved = self._reserved(
            enum.reserved_range, enum.reserved_name, path, (_ENUM_RESERVED_RANGES, _ENUM_RESERVED_NAMES), False
        )
        if reserved:
            out.append("\n" + "".join(_indented(r) for r in reserved))
        options = self._options(enum.options, (*path, _ENUM_OPTIONS))
        if not reserved and (options or enum.value):
            out.append("\n")
        out += [_indented(f"option {o.name} = {o.shown};\n") for o in options]
        values = list(enumerate(enum.value))
        if self.normalize:
            values.sort(key=lambda item: (item[1].number, item[1].name))
        for index, value in values:
            extras = self._options(value.options, (*path, _ENUM_VALUES, index, _VALUE_OPTIONS))
            out.append(_indented(f"{value.name} = {value.number}{_option_list(extras)};\n"))
        out.append("}\n")
        return "".join(out)

    def _service(self, service: Any, path: _Path) -> str:
        out = [f"service {service.name} {{"]
        options = self._options(service.options, (*path, _SERVICE_OPTIONS))
        if options:
            out.append("\n" + "".join(_indented(f"option {o.name} = {o.shown};\n") for o in options))
        if service.method:
            out.append("\n")
            for index, method in enumerate(service.method):
                here = (*path, _SERVICE_METHODS, index)
                client = "stream " if method.client_streaming else ""
                server = "stream " if method.server_streaming else ""
                request = self._type_name(method.input_type, (*here, _METHOD_INPUT))
                response = self._type_name(method.output_type, (*here, _METHOD_OUTPUT))
                rpc = f"rpc {method.name} ({client}{request}) returns ({server}{response})"
                inner = self._options(method.options, (*here, _METHOD_OPTIONS))
                if inner:
                    rpc += " {\n" + "".join(_indented(f"option {o.name} = {o.shown};\n") for o in inner) + "}"
                out.append(_indented(rpc + ";\n"))
        out.append("}\n")
        return "".join(out)

    # -- options -------------------------------------------------------------------------
    def _options(self, options: Any, path: _Path, *, sort: bool = True) -> list[_Option]:
        """Known options in Confluent's order (as written, or `toProtoFile`'s), sorted by name
        under normalize; ValueError for what this printer does not print (custom options
        arrive as unknown fields, repeated ones as lists)."""
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
        fields = [(d, v) for d, v in fields if d.name != "map_entry"]
        fields.sort(key=self._option_order(type(options).__name__, path))
        found = [_Option(d.name, _option_value(d, v)) for d, v in fields]
        if self.normalize and sort:
            found.sort(key=lambda o: o.name)
        return found

    def _option_order(self, kind: str, path: _Path) -> Callable[[tuple[Any, Any]], tuple[int, ...]]:
        if self.written is not None:
            written = self.written

            def as_written(item: tuple[Any, Any]) -> tuple[int, ...]:
                start = written.start((*path, item[0].number))
                return (0, *start) if start is not None else (1, item[0].number)

            return as_written
        known = _CONFLUENT_OPTION_ORDER.get(kind, ())

        def confluents(item: tuple[Any, Any]) -> tuple[int, ...]:
            name = item[0].name
            return (0, known.index(name)) if name in known else (1, item[0].number)

        return confluents


_LABELS = {_OPTIONAL: "optional", _REQUIRED: "required", _REPEATED: "repeated"}


def _option_value(descriptor: Any, value: Any) -> str:
    if descriptor.enum_type is not None:
        return str(descriptor.enum_type.values_by_number[value].name)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{_escape(value)}"'
    return str(value)


def _option_list(options: Sequence[_Option]) -> str:
    """Confluent's `appendOptions` after a space: `[a = b]`, or several on lines of their own."""
    if not options:
        return ""
    if len(options) == 1:
        return f" [{options[0].name} = {options[0].shown}]"
    lines = [f"{o.name} = {o.shown}" + ("," if i < len(options) - 1 else "") for i, o in enumerate(options)]
    return " [\n" + "".join(_indented(line) for line in lines) + "]"


def _reserved_order(value: Any) -> tuple[int, str]:
    """Normalize's order of reserved values: by number (a range by its start), names last by name."""
    if isinstance(value, tuple):
        return value[0], f"{value[0]}..{value[1]}"
    if isinstance(value, int):
        return value, str(value)
    return 2**31 - 1, value


def _inside(span: tuple[int, ...], outer: tuple[int, ...]) -> bool:
    """Whether `span` ends no later than `outer` (both protoc spans: 3 or 4 numbers)."""
    span_end = (span[2], span[3]) if len(span) == 4 else (span[0], span[2])
    outer_end = (outer[2], outer[3]) if len(outer) == 4 else (outer[0], outer[2])
    return span_end <= outer_end


def _map_entries(file: Any) -> dict[str, Any]:
    """The map entry messages of the file by full name (`.pkg.Msg.FooEntry`)."""
    found: dict[str, Any] = {}

    def visit(messages: Any, scope: str) -> None:
        for message in messages:
            full = f"{scope}.{message.name}"
            if message.options.map_entry:
                found[full] = message
            visit(message.nested_type, full)

    visit(file.message_type, f".{file.package}" if file.package else "")
    return found
