"""Canonical texts as Confluent stores them: the expected strings are Confluent's own, from its
tests (`AvroSchemaTest`, `ProtobufSchemaTest`), or follow its printers line by line
(`Schema.toString` of Avro Java, `ProtobufSchemaUtils.toString`)."""

from __future__ import annotations

import base64
import json

from workbench.registry.schemas import Resolved, parse_schema

# -- Avro: Avro Java's Schema.toString ------------------------------------------------------


def test_avro_names_relative_to_the_enclosing_namespace() -> None:
    """Confluent's `testNormalizationPreservesMetadataForPrimitiveTypes`: the nested record
    has no namespace of its own, the later reference is `Value`, properties come last."""
    given = {
        "connect.name": "some.scope.Envelope",
        "fields": [
            {
                "default": None,
                "name": "before",
                "type": [
                    "null",
                    {
                        "connect.name": "some.scope.Value",
                        "fields": [
                            {
                                "name": "created_at",
                                "type": {
                                    "connect.name": "io.debezium.time.Timestamp",
                                    "connect.version": 1,
                                    "type": "long",
                                },
                            },
                            {"name": "normal_long", "type": "long"},
                        ],
                        "name": "Value",
                        "type": "record",
                    },
                ],
            },
            {"default": None, "name": "after", "type": ["null", "Value"]},
        ],
        "name": "Envelope",
        "namespace": "some.scope",
        "type": "record",
    }
    expected = (
        '{"type":"record","name":"Envelope","namespace":"some.scope","fields":[{"name":"before","type":'
        '["null",{"type":"record","name":"Value","fields":[{"name":"created_at","type":{"type":"long",'
        '"connect.name":"io.debezium.time.Timestamp","connect.version":1}},{"name":"normal_long","type":"long"}],'
        '"connect.name":"some.scope.Value"}],"default":null},{"name":"after","type":["null","Value"],'
        '"default":null}],"connect.name":"some.scope.Envelope"}'
    )
    assert parse_schema("AVRO", json.dumps(given)).canonical == expected


def test_avro_field_keys_in_javas_order() -> None:
    """Confluent's `testNormalization`."""
    given = (
        '{"type":"record","name":"myrecord","doc":"hi\\"there",'
        '"fields":[{"type":"string","name":"f1","doc":"bye\\"now"}]}'
    )
    expected = (
        '{"type":"record","name":"myrecord","doc":"hi\\"there",'
        '"fields":[{"name":"f1","type":"string","doc":"bye\\"now"}]}'
    )
    assert parse_schema("AVRO", given).canonical == expected


def test_avro_a_referenced_type_by_its_short_name() -> None:
    """Issue 39's case: `Person` in `com.netapp` refers to the referenced `Address` as `Address`."""
    address = {
        "type": "record",
        "name": "Address",
        "namespace": "com.netapp",
        "fields": [{"name": "street", "type": "string"}],
    }
    person = {
        "type": "record",
        "name": "Person",
        "namespace": "com.netapp",
        "aliases": ["com.netapp.Human", "other.Being"],
        "fields": [
            {"name": "home", "type": "com.netapp.Address", "order": "ascending"},
            {"name": "work", "type": ["null", "com.netapp.Address"], "default": None, "order": "descending"},
            {"name": "score", "type": "double", "default": 1e10},
            {"name": "note", "type": "string", "doc": "é"},
        ],
    }
    reference: Resolved = ("com.netapp.Address", "AVRO", json.dumps(address), ())
    expected = (
        '{"type":"record","name":"Person","namespace":"com.netapp","fields":[{"name":"home","type":"Address"},'
        '{"name":"work","type":["null","Address"],"default":null,"order":"descending"},'
        '{"name":"score","type":"double","default":1.0E10},{"name":"note","type":"string","doc":"é"}],'
        '"aliases":["Human","other.Being"]}'
    )
    assert parse_schema("AVRO", json.dumps(person), [reference]).canonical == expected


def test_avro_another_namespace_is_written_and_the_null_one_is_empty() -> None:
    given = {
        "type": "record",
        "name": "Top",
        "namespace": "a",
        "fields": [
            {"name": "b", "type": {"type": "enum", "name": "B", "namespace": "b", "symbols": ["X"]}},
            {"name": "c", "type": {"type": "fixed", "name": "C", "namespace": "", "size": 2}},
            {"name": "again", "type": "b.B"},
        ],
    }
    expected = (
        '{"type":"record","name":"Top","namespace":"a","fields":['
        '{"name":"b","type":{"type":"enum","name":"B","namespace":"b","symbols":["X"]}},'
        '{"name":"c","type":{"type":"fixed","name":"C","namespace":"","size":2}},'
        '{"name":"again","type":"b.B"}]}'
    )
    assert parse_schema("AVRO", json.dumps(given)).canonical == expected


# -- Protobuf: ProtobufSchemaUtils.toString ----------------------------------------------------

#: Confluent's `testRanges` (a proto2 file without a syntax line), and its normalized form.
RANGES = (
    "\nmessage Money {\n  reserved 5000 to 6000;\n  reserved 10000 to 10001;\n  reserved 20000 to 20000;\n\n"
    "  optional int64 cents = 1;\n\n  extensions 100 to 200;\n  extensions 1000 to 1001;\n"
    "  extensions 2000 to 2000;\n\n"
    "  enum MoneyEnum {\n    reserved 100 to 200;\n    reserved 1000 to 1001;\n    reserved 2000 to 2000;\n"
    "    NONE = 0;\n    CENTS = 1;\n    DOLLARS = 2;\n  }\n}\n"
)
RANGES_NORMALIZED = (
    "\nmessage Money {\n  reserved 5000 to 6000;\n  reserved 10000 to 10001;\n  reserved 20000;\n\n"
    "  optional int64 cents = 1;\n\n  extensions 100 to 200;\n  extensions 1000 to 1001;\n  extensions 2000;\n\n"
    "  enum MoneyEnum {\n    reserved 100 to 200;\n    reserved 1000 to 1001;\n    reserved 2000;\n"
    "    NONE = 0;\n    CENTS = 1;\n    DOLLARS = 2;\n  }\n}\n"
)


def test_protobuf_confluents_ranges_case() -> None:
    assert parse_schema("PROTOBUF", RANGES).canonical == RANGES
    assert parse_schema("PROTOBUF", RANGES, normalize=True).canonical == RANGES_NORMALIZED


#: Confluent's `testEnumReserved` (its constants renumbered: protoc, unlike Wire, refuses a
#: reserved number in use), and its normalized form: types fully qualified, reserved sorted.
ENUM_RESERVED = (
    '\nimport "google/protobuf/descriptor.proto";\n\nmessage FooOptions {\n  optional string name = 1;\n'
    "  optional FooParameterType type = 2;\n}\nenum FooParameterType {\n  reserved 20, 100 to max;\n  reserved 10;\n"
    '  reserved 1 to 3;\n  reserved "BAD", "OLD";\n  NUMBER = 4;\n  STRING = 5;\n}\n'
)
ENUM_RESERVED_NORMALIZED = (
    '\nimport "google/protobuf/descriptor.proto";\n\nmessage FooOptions {\n  optional string name = 1;\n'
    "  optional .FooParameterType type = 2;\n}\nenum FooParameterType {\n  reserved 1 to 3;\n  reserved 10;\n"
    '  reserved 20;\n  reserved 100 to max;\n  reserved "BAD";\n  reserved "OLD";\n  NUMBER = 4;\n  STRING = 5;\n}\n'
)


def test_protobuf_confluents_enum_reserved_case() -> None:
    assert parse_schema("PROTOBUF", ENUM_RESERVED).canonical == ENUM_RESERVED
    assert parse_schema("PROTOBUF", ENUM_RESERVED, normalize=True).canonical == ENUM_RESERVED_NORMALIZED


#: Confluent's `testNormalization` (`ProtobufSchemaTest`): a file using most of what the printer
#: prints, as written and normalized. Adapted where protoc, unlike Wire, refuses the original:
#: reserved numbers in use (1 and 9 to 11 became 8 and 16 to 18), proto3 enums not starting at
#: zero (reordered), `jstype` on an int32 (now int64), and the custom `confluent.field_meta`
#: option (dropped; custom options are kept as given, not printed).
CONFLUENT_NORMALIZATION = (
    'syntax = "proto3";\n'
    "package my.package;\n"
    "\n"
    'import "google/protobuf/timestamp.proto";\n'
    'import "confluent/type/decimal.proto";\n'
    "\n"
    'option java_package = "my.package";\n'
    'option java_outer_classname = "Outer";\n'
    "option java_multiple_files = true;\n"
    "option java_string_check_utf8 = true;\n"
    "option optimize_for = CODE_SIZE;\n"
    'option go_package = "go.package";\n'
    "option cc_generic_services = false;\n"
    "option java_generic_services = true;\n"
    "option py_generic_services = false;\n"
    "option cc_enable_arenas = true;\n"
    'option objc_class_prefix = "objc";\n'
    'option csharp_namespace = "csharp";\n'
    'option swift_prefix = "swift";\n'
    'option php_class_prefix = "php";\n'
    'option php_namespace = "php_ns";\n'
    'option php_metadata_namespace = "php_md_ns";\n'
    'option ruby_package = "ruby";\n'
    "\n"
    "message Nested {\n"
    "  confluent.type.Decimal test_cflt_decimal = 1;\n"
    "  google.protobuf.Timestamp test_timestamp = 2;\n"
    "  map<string, InnerMessage> test_map = 3;\n"
    "\n"
    "  message InnerMessage {\n"
    '    reserved "foo", "bar";\n'
    "    reserved 14, 15, 16 to 18;\n"
    "    reserved 8, 20, 29 to 31;\n"
    "  \n"
    "    option no_standard_descriptor_accessor = true;\n"
    "    option deprecated = true;\n"
    "  \n"
    "    InnerMessage.DeepMessage deep2 = 4;\n"
    "    Nested.InnerMessage.DeepMessage deep3 = 5;\n"
    "    my.package.Nested.InnerMessage.DeepMessage deep4 = 6;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep5 = 7;\n"
    '    string id = 1 [json_name = "id"];\n'
    "    repeated int32 ids = 2 [packed = true];\n"
    "    DeepMessage deep1 = 3;\n"
    "  \n"
    "    oneof some_val {\n"
    "      string one_id = 12;\n"
    "      int32 other_id = 11;\n"
    "    }\n"
    "    oneof some_val2 {\n"
    "      string one_id2 = 13;\n"
    "      int64 other_id2 = 10 [\n"
    "        deprecated = true,\n"
    "        ctype = CORD,\n"
    "        jstype = JS_STRING,\n"
    '        json_name = "otherId2"\n'
    "      ];\n"
    "    }\n"
    "  \n"
    "    message DeepMessage {\n"
    "      string id = 1;\n"
    "    }\n"
    "    enum InnerEnum {\n"
    "      reserved 100 to 110;\n"
    "      option allow_alias = true;\n"
    "      ZERO = 0 [deprecated = true];\n"
    "      TWO = 2;\n"
    "      ONE = 1;\n"
    "      ALSO_ZERO = 0;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "enum Status {\n"
    "  ACTIVE = 0;\n"
    "  INACTIVE = 1;\n"
    "}\n"
    "\n"
    "service MyService {\n"
    "  option deprecated = true;\n"
    "\n"
    "  rpc MyMethod2 (stream Nested) returns (Nested.InnerMessage);\n"
    "  rpc MyMethod1 (Nested.InnerMessage) returns (stream Nested) {\n"
    "    option idempotency_level = NO_SIDE_EFFECTS;\n"
    "    option deprecated = true;\n"
    "  };\n"
    "}\n"
)
CONFLUENT_NORMALIZATION_NORMALIZED = (
    'syntax = "proto3";\n'
    "package my.package;\n"
    "\n"
    'import "confluent/type/decimal.proto";\n'
    'import "google/protobuf/timestamp.proto";\n'
    "\n"
    "option cc_enable_arenas = true;\n"
    "option cc_generic_services = false;\n"
    'option csharp_namespace = "csharp";\n'
    'option go_package = "go.package";\n'
    "option java_generic_services = true;\n"
    "option java_multiple_files = true;\n"
    'option java_outer_classname = "Outer";\n'
    'option java_package = "my.package";\n'
    "option java_string_check_utf8 = true;\n"
    'option objc_class_prefix = "objc";\n'
    "option optimize_for = CODE_SIZE;\n"
    'option php_class_prefix = "php";\n'
    'option php_metadata_namespace = "php_md_ns";\n'
    'option php_namespace = "php_ns";\n'
    "option py_generic_services = false;\n"
    'option ruby_package = "ruby";\n'
    'option swift_prefix = "swift";\n'
    "\n"
    "message Nested {\n"
    "  .confluent.type.Decimal test_cflt_decimal = 1;\n"
    "  .google.protobuf.Timestamp test_timestamp = 2;\n"
    "  map<string, .my.package.Nested.InnerMessage> test_map = 3;\n"
    "\n"
    "  message InnerMessage {\n"
    "    reserved 8;\n"
    "    reserved 14;\n"
    "    reserved 15;\n"
    "    reserved 16 to 18;\n"
    "    reserved 20;\n"
    "    reserved 29 to 31;\n"
    '    reserved "bar";\n'
    '    reserved "foo";\n'
    "  \n"
    "    option deprecated = true;\n"
    "    option no_standard_descriptor_accessor = true;\n"
    "  \n"
    '    string id = 1 [json_name = "id"];\n'
    "    repeated int32 ids = 2 [packed = true];\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep1 = 3;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep2 = 4;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep3 = 5;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep4 = 6;\n"
    "    .my.package.Nested.InnerMessage.DeepMessage deep5 = 7;\n"
    "  \n"
    "    oneof some_val2 {\n"
    "      int64 other_id2 = 10 [\n"
    "        ctype = CORD,\n"
    "        deprecated = true,\n"
    '        json_name = "otherId2",\n'
    "        jstype = JS_STRING\n"
    "      ];\n"
    "      string one_id2 = 13;\n"
    "    }\n"
    "    oneof some_val {\n"
    "      int32 other_id = 11;\n"
    "      string one_id = 12;\n"
    "    }\n"
    "  \n"
    "    message DeepMessage {\n"
    "      string id = 1;\n"
    "    }\n"
    "    enum InnerEnum {\n"
    "      reserved 100 to 110;\n"
    "      option allow_alias = true;\n"
    "      ALSO_ZERO = 0;\n"
    "      ZERO = 0 [deprecated = true];\n"
    "      ONE = 1;\n"
    "      TWO = 2;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "enum Status {\n"
    "  ACTIVE = 0;\n"
    "  INACTIVE = 1;\n"
    "}\n"
    "\n"
    "service MyService {\n"
    "  option deprecated = true;\n"
    "\n"
    "  rpc MyMethod2 (stream .my.package.Nested) returns (.my.package.Nested.InnerMessage);\n"
    "  rpc MyMethod1 (.my.package.Nested.InnerMessage) returns (stream .my.package.Nested) {\n"
    "    option deprecated = true;\n"
    "    option idempotency_level = NO_SIDE_EFFECTS;\n"
    "  };\n"
    "}\n"
)


def test_protobuf_confluents_normalization_case() -> None:
    assert parse_schema("PROTOBUF", CONFLUENT_NORMALIZATION).canonical == CONFLUENT_NORMALIZATION
    normalized = parse_schema("PROTOBUF", CONFLUENT_NORMALIZATION, normalize=True).canonical
    assert normalized == CONFLUENT_NORMALIZATION_NORMALIZED


LAYOUT = """syntax = "proto3"; package geo.v1;  import "google/protobuf/timestamp.proto";
option java_package = "com.geo"; option java_multiple_files = true;
message Site { string name = 1;   // comments go
  map<string,Reading> last = 2; google.protobuf.Timestamp at = 3 [deprecated = true, json_name = "when"];
  oneof where { Point point = 4; string address = 5; }
  message Point { double lat = 1; double lon = 2; } enum Kind { KIND_UNSET = 0; } }
message Reading { geo.v1.Site.Point at = 1; }
service Sites { rpc Get (Site) returns (stream Reading); }
"""
#: Confluent's layout: a blank line before imports, options, types and services; fields,
#: then oneofs, then nested types, each after a blank line (indented, inside a message).
LAYOUT_CANONICAL = """syntax = "proto3";
package geo.v1;

import "google/protobuf/timestamp.proto";

option java_package = "com.geo";
option java_multiple_files = true;

message Site {
  string name = 1;
  map<string, Reading> last = 2;
  google.protobuf.Timestamp at = 3 [
    deprecated = true,
    json_name = "when"
  ];

  oneof where {
    Point point = 4;
    string address = 5;
  }

  message Point {
    double lat = 1;
    double lon = 2;
  }
  enum Kind {
    KIND_UNSET = 0;
  }
}
message Reading {
  geo.v1.Site.Point at = 1;
}

service Sites {
  rpc Get (Site) returns (stream Reading);
}
"""


def test_protobuf_layout_and_types_as_written() -> None:
    assert parse_schema("PROTOBUF", LAYOUT).canonical == LAYOUT_CANONICAL


def test_protobuf_normalize_qualifies_types_and_sorts() -> None:
    normalized = parse_schema("PROTOBUF", LAYOUT, normalize=True).canonical
    assert "option java_multiple_files = true;\noption java_package" in normalized
    assert "  map<string, .geo.v1.Reading> last = 2;\n  .google.protobuf.Timestamp at = 3 [" in normalized
    assert "    .geo.v1.Site.Point point = 4;\n" in normalized
    assert "  .geo.v1.Site.Point at = 1;\n" in normalized
    assert "  rpc Get (.geo.v1.Site) returns (stream .geo.v1.Reading);\n" in normalized
    # A normalized text is its own normal form.
    assert parse_schema("PROTOBUF", normalized, normalize=True).canonical == normalized


def test_protobuf_nested_blank_lines_are_indented_as_confluents_indenter_leaves_them() -> None:
    text = 'syntax = "proto3";\nmessage A { message B { int32 x = 1; message C { int32 y = 1; } } }\n'
    assert parse_schema("PROTOBUF", text).canonical == (
        'syntax = "proto3";\n\nmessage A {\n  message B {\n    int32 x = 1;\n  \n'
        "    message C {\n      int32 y = 1;\n    }\n  }\n}\n"
    )


def test_protobuf_a_descriptor_prints_fully_qualified_types() -> None:
    """A schema sent as a `FileDescriptorProto` (what confluent-kafka's serializer sends) is
    printed as Confluent converts a descriptor: its type names are fully qualified."""
    text = 'syntax = "proto3";\npackage shop;\nmessage Order { Item item = 1; }\nmessage Item { string sku = 1; }\n'
    served = parse_schema("PROTOBUF", text).parsed
    assert not served.HasField("source_code_info") and not served.message_type[0].field[0].HasField("json_name")
    from_descriptor = parse_schema("PROTOBUF", base64.b64encode(served.SerializeToString()).decode()).canonical
    assert from_descriptor == (
        'syntax = "proto3";\npackage shop;\n\nmessage Order {\n  .shop.Item item = 1;\n}\nmessage Item {\n'
        "  string sku = 1;\n}\n"
    )
