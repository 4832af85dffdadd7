"""Confluent's Protobuf compatibility rules, one row each: (rule, old, new, level, compatible).

Each row is one difference type of Confluent's Protobuf `SchemaDiff` (or one of its scalar
groups), checked through `compatibility.incompatibilities` as a registration checks it, on
`.proto` text compiled by protoc; the rules are written down in `docs/schema-registry.md`
with the same examples.
"""

from __future__ import annotations

import pytest

from workbench.registry.compatibility import incompatibilities
from workbench.registry.protobuf_compatibility import protobuf_differences
from workbench.registry.schemas import ParsedSchema, Resolved, parse_schema

P3 = 'syntax = "proto3";\npackage rules;\n'
P2 = 'syntax = "proto2";\npackage rules;\n'


def _field(kind: str, extra: str = "") -> str:
    """A message whose field 2 is `kind`, with an enum `E` to use as a type."""
    return f"{P3}message M {{ string name = 1; {kind} x = 2; }}\nenum E {{ A = 0; B = 1; }}\n{extra}"


OTHER = "message Other { string s = 1; }\n"
NO_REFERENCE = 'syntax = "proto3";\npackage rules;\nmessage NoReference { string x = 1; }\n'

#: (rule, old, new, level, compatible)
RULES: list[tuple[str, str, str, str, bool]] = [
    # Scalar groups (`FieldSchemaDiff.scalarKind`): within one, compatible; across, FIELD_SCALAR_KIND_CHANGED.
    ("int32 -> int64", _field("int32"), _field("int64"), "BACKWARD", True),
    ("int32 -> uint32", _field("int32"), _field("uint32"), "BACKWARD", True),
    ("uint64 -> int64", _field("uint64"), _field("int64"), "BACKWARD", True),
    ("int64 -> bool", _field("int64"), _field("bool"), "BACKWARD", True),
    ("int32 -> enum", _field("int32"), _field("E"), "BACKWARD", True),
    ("enum -> uint64, full", _field("E"), _field("uint64"), "FULL", True),
    ("sint32 -> sint64", _field("sint32"), _field("sint64"), "BACKWARD", True),
    ("string -> bytes", _field("string"), _field("bytes"), "BACKWARD", True),
    ("bytes -> string, full", _field("bytes"), _field("string"), "FULL", True),
    ("fixed32 -> sfixed32", _field("fixed32"), _field("sfixed32"), "BACKWARD", True),
    ("fixed64 -> sfixed64", _field("fixed64"), _field("sfixed64"), "BACKWARD", True),
    ("int32 -> sint32 (across groups)", _field("int32"), _field("sint32"), "BACKWARD", False),
    ("int64 -> fixed64 (across groups)", _field("int64"), _field("fixed64"), "BACKWARD", False),
    ("fixed32 -> fixed64 (across groups)", _field("fixed32"), _field("fixed64"), "BACKWARD", False),
    ("float -> double (across groups)", _field("float"), _field("double"), "BACKWARD", False),
    ("int32 -> string (across groups)", _field("int32"), _field("string"), "BACKWARD", False),
    ("enum -> string (across groups)", _field("E"), _field("string"), "BACKWARD", False),
    # Kinds: scalar (enums included), message, map.
    ("scalar -> message", _field("int32", OTHER), _field("Other", OTHER), "BACKWARD", False),
    ("scalar -> map", _field("string"), _field("map<string, string>"), "BACKWARD", False),
    ("map value scalar group kept", _field("map<string, int32>"), _field("map<string, int64>"), "BACKWARD", True),
    ("map value across groups", _field("map<string, int32>"), _field("map<string, string>"), "BACKWARD", False),
    (
        "message -> another message",
        _field("Other", OTHER),
        _field("M2", "message M2 { string s = 1; }\n"),
        "BACKWARD",
        False,
    ),
    # Labels: numbers may not change theirs, strings and bytes may; proto3's plain fields have none.
    (
        "proto2 optional -> repeated int32",
        f"{P2}message M {{ optional int32 x = 1; }}",
        f"{P2}message M {{ repeated int32 x = 1; }}",
        "BACKWARD",
        False,
    ),
    (
        "proto2 optional -> repeated string",
        f"{P2}message M {{ optional string x = 1; }}",
        f"{P2}message M {{ repeated string x = 1; }}",
        "BACKWARD",
        True,
    ),
    ("proto3 int32 -> repeated int32", _field("int32"), _field("repeated int32"), "BACKWARD", True),
    ("proto3 optional -> repeated int32", _field("optional int32"), _field("repeated int32"), "BACKWARD", False),
    # Fields by number.
    ("field added", f"{P3}message M {{ string name = 1; }}", _field("int32"), "BACKWARD", True),
    (
        "field removed",
        _field("int32"),
        f"{P3}message M {{ string name = 1; }}\nenum E {{ A = 0; B = 1; }}",
        "BACKWARD",
        True,
    ),
    ("field renamed", _field("int32"), _field("int32").replace(" x = 2", " y = 2"), "BACKWARD", True),
    # A field keeping its name under another number is one removed and one added (Karapace: FIELD_TAG_ALTER).
    ("field renumbered", _field("int32"), _field("int32").replace(" x = 2", " x = 3"), "BACKWARD", True),
    (
        "required field added",
        f"{P2}message M {{ optional int32 a = 1; }}",
        f"{P2}message M {{ optional int32 a = 1; required int32 b = 2; }}",
        "BACKWARD",
        False,
    ),
    (
        "required field removed",
        f"{P2}message M {{ optional int32 a = 1; required int32 b = 2; }}",
        f"{P2}message M {{ optional int32 a = 1; }}",
        "BACKWARD",
        False,
    ),
    # Messages, packages, enums.
    ("message added", _field("int32"), _field("int32", OTHER), "BACKWARD", True),
    ("message added, forward", _field("int32"), _field("int32", OTHER), "FORWARD", False),
    ("message removed", _field("int32", OTHER), _field("int32"), "BACKWARD", False),
    (
        "messages reordered",
        f"{P3}message A {{ int32 a = 1; }}\nmessage B {{ int32 b = 1; }}",
        f"{P3}message B {{ int32 b = 1; }}\nmessage A {{ int32 a = 1; }}",
        "BACKWARD",
        True,
    ),
    (
        "package changed",
        _field("int32"),
        _field("int32").replace("package rules;", "package other;"),
        "BACKWARD",
        False,
    ),
    ("enum value added", _field("E"), _field("E").replace("B = 1;", "B = 1; C = 2;"), "BACKWARD", True),
    ("enum value removed", _field("E"), _field("E").replace(" B = 1;", ""), "BACKWARD", True),
    (
        "nested message removed",
        f"{P3}message M {{ message N {{ int32 a = 1; }} }}",
        f"{P3}message M {{}}",
        "BACKWARD",
        False,
    ),
    # Oneofs.
    (
        "field moved into a new oneof",
        f"{P3}message M {{ int32 a = 1; }}",
        f"{P3}message M {{ oneof o {{ int32 a = 1; }} }}",
        "BACKWARD",
        True,
    ),
    (
        "two fields moved into one oneof",
        f"{P3}message M {{ int32 a = 1; int32 b = 2; }}",
        f"{P3}message M {{ oneof o {{ int32 a = 1; int32 b = 2; }} }}",
        "BACKWARD",
        False,
    ),
    (
        "field moved into an existing oneof",
        f"{P3}message M {{ int32 a = 1; oneof o {{ int32 b = 2; }} }}",
        f"{P3}message M {{ oneof o {{ int32 a = 1; int32 b = 2; }} }}",
        "BACKWARD",
        False,
    ),
    (
        "oneof member removed",
        f"{P3}message M {{ oneof o {{ int32 a = 1; int32 b = 2; }} }}",
        f"{P3}message M {{ oneof o {{ int32 a = 1; }} }}",
        "BACKWARD",
        False,
    ),
    (
        "whole oneof removed",
        f"{P3}message M {{ string s = 3; oneof o {{ int32 a = 1; int32 b = 2; }} }}",
        f"{P3}message M {{ string s = 3; }}",
        "BACKWARD",
        True,
    ),
    (
        "oneof member moved to the top level",
        f"{P3}message M {{ oneof o {{ int32 a = 1; int32 b = 2; }} }}",
        f"{P3}message M {{ int32 a = 1; oneof o {{ int32 b = 2; }} }}",
        "BACKWARD",
        True,
    ),
]


@pytest.mark.parametrize(("rule", "old", "new", "level", "compatible"), RULES, ids=[r[0] for r in RULES])
def test_protobuf_rule(rule: str, old: str, new: str, level: str, compatible: bool) -> None:
    problems = incompatibilities(level, parse_schema("PROTOBUF", new), [parse_schema("PROTOBUF", old)])
    assert (problems == []) is compatible, problems


def _with_reference(text: str, referenced: str = NO_REFERENCE) -> ParsedSchema:
    reference: Resolved = ("NoReference.proto", "PROTOBUF", referenced, ())
    return parse_schema("PROTOBUF", text, [reference])


WITH_REFERENCE = f'{P3}import "NoReference.proto";\nmessage WithReference {{ string name = 1; NoReference ref = 2; }}\n'


def test_a_referenced_message_dropped_with_its_field_is_field_removed() -> None:
    """Issue 39's case: only the file's own messages are compared; NoReference is reached
    through field 2 alone, so dropping the field and the import is FIELD_REMOVED."""
    old = _with_reference(WITH_REFERENCE)
    new = parse_schema("PROTOBUF", f"{P3}message WithReference {{ string name = 1; }}\n")
    assert incompatibilities("BACKWARD", new, [old]) == []
    assert protobuf_differences(old.parsed, old.deps, new.parsed, new.deps) == [("FIELD_REMOVED", "#/WithReference/2")]


def test_a_change_inside_a_referenced_message_still_counts() -> None:
    old = _with_reference(WITH_REFERENCE)
    new = _with_reference(WITH_REFERENCE, NO_REFERENCE.replace("string x", "int64 x"))
    assert incompatibilities("BACKWARD", new, [old]) == [
        "BACKWARD: FIELD_SCALAR_KIND_CHANGED at #/NoReference/1",
        "BACKWARD: FIELD_NAMED_TYPE_CHANGED at #/WithReference/2",
    ]


def test_a_recursive_referenced_message_is_compared_once() -> None:
    tree = f"{P3}message Node {{ string v = 1; Node next = 2; }}\n"
    user = f'{P3}import "NoReference.proto";\nmessage Uses {{ Node head = 1; }}\n'
    old = _with_reference(user, tree)
    new = _with_reference(user, tree.replace("string v", "bytes v"))
    assert incompatibilities("FULL", new, [old]) == []


def _home(package: str, device: str = "int32", nested: bool = False) -> str:
    """An imported file in `package` declaring `Home` (inside `outer` when `nested`)."""
    home = f"message Home {{ {device} device = 1; bool enabled = 2; }}"
    return f'syntax = "proto3";\npackage {package};\n' + (f"message outer {{ {home} }}\n" if nested else home + "\n")


def _uses(imported: str, type_name: str) -> str:
    return f'syntax = "proto3";\nimport "{imported}";\nmessage Uses {{ {type_name} home = 1; }}\n'


LOCAL_HOME = (
    'syntax = "proto3";\nmessage Uses { Home home = 1; }\nmessage Home { int32 device = 1; bool enabled = 2; }\n'
)

#: Confluent's `diff-schema-examples.json` cases with imports, in these words: (case, old text
#: and its import, new text and its import, every difference found).
IMPORT_CASES: list[tuple[str, tuple[str, str | None], tuple[str, str | None], list[tuple[str, str]]]] = [
    (
        "a change inside the imported message",
        (_uses("a.proto", ".geo.Home"), _home("geo")),
        (_uses("b.proto", ".geo.Home"), _home("geo", "string")),
        [("FIELD_SCALAR_KIND_CHANGED", "#/Home/1"), ("FIELD_NAMED_TYPE_CHANGED", "#/Uses/1")],
    ),
    (
        "the same message from another package",
        (_uses("a.proto", ".geo.Home"), _home("geo")),
        (_uses("b.proto", ".geo2.Home"), _home("geo2")),
        [],
    ),
    (
        "a nested message changed, from another package",
        (_uses("a.proto", ".geo.outer.Home"), _home("geo", nested=True)),
        (_uses("b.proto", ".geo2.outer.Home"), _home("geo2", "string", nested=True)),
        [("FIELD_SCALAR_KIND_CHANGED", "#/outer/Home/1"), ("FIELD_NAMED_TYPE_CHANGED", "#/Uses/1")],
    ),
    (
        "a local message moved to an import",
        (LOCAL_HOME, None),
        (_uses("a.proto", ".geo.Home"), _home("geo")),
        [("MESSAGE_REMOVED", "#/Home")],
    ),
    (
        "an imported message moved into the file",
        (_uses("a.proto", ".geo.Home"), _home("geo")),
        (LOCAL_HOME, None),
        [("MESSAGE_ADDED", "#/Home")],
    ),
]


def _imports(text: str, imported: str | None) -> ParsedSchema:
    found = [line.split('"')[1] for line in text.splitlines() if line.startswith("import ")]
    references: list[Resolved] = [(found[0], "PROTOBUF", imported, ())] if imported is not None else []
    return parse_schema("PROTOBUF", text, references)


@pytest.mark.parametrize(("case", "old", "new", "found"), IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_protobuf_imports_as_confluent_compares_them(
    case: str, old: tuple[str, str | None], new: tuple[str, str | None], found: list[tuple[str, str]]
) -> None:
    """The file's own messages by name, an imported one only through the field that uses it;
    a message that moves between the file and an import is removed or added."""
    before, after = _imports(*old), _imports(*new)
    assert protobuf_differences(before.parsed, before.deps, after.parsed, after.deps) == found
