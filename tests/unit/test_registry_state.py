"""The rules every registry instance applies to the `_schemas` log, and the compatibility
checks, without Kafka: what makes instances agree is that these are deterministic."""

from __future__ import annotations

import json

import orjson
import pytest

from workbench.registry.compatibility import check_level, incompatibilities
from workbench.registry.errors import RegistryError
from workbench.registry.log import LogState, SchemaVersion
from workbench.registry.schemas import parse_schema


def _schema(name: str) -> str:
    return json.dumps({"type": "record", "name": name, "fields": []})


def _apply(state: LogState, version: SchemaVersion | None, key: bytes | None = None) -> None:
    if version is not None:
        raw_key, raw_value = version.record()
        state.apply(orjson.loads(raw_key), orjson.loads(raw_value))
    else:
        assert key is not None
        state.apply(orjson.loads(key), None)


def test_first_record_wins_an_id_and_a_subject_version() -> None:
    state = LogState()
    _apply(state, SchemaVersion("a", 1, 1, _schema("A")))
    _apply(state, SchemaVersion("b", 1, 1, _schema("B")))  # id 1 is A's: ignored
    _apply(state, SchemaVersion("a", 1, 2, _schema("C")))  # a@1 holds A: ignored
    _apply(state, SchemaVersion("c", 1, 3, _schema("A")))  # A already has id 1: ignored
    assert {s: {v: sv.id for v, sv in vs.items()} for s, vs in state.subjects.items()} == {"a": {1: 1}}
    assert state.max_id == 3  # ids seen are never handed out again
    _apply(state, SchemaVersion("c", 1, 1, _schema("A")))  # the same schema elsewhere keeps its id
    assert state.subjects["c"][1].id == 1


def test_soft_delete_hard_delete_config_and_unknown_records() -> None:
    state = LogState()
    _apply(state, SchemaVersion("a", 1, 1, _schema("A")))
    _apply(state, SchemaVersion("a", 1, 1, _schema("A"), deleted=True))
    assert state.subjects["a"][1].deleted
    _apply(state, None, key=SchemaVersion("a", 1, 1, "").record()[0])
    assert "a" not in state.subjects and 1 in state.ids
    state.apply({"keytype": "CONFIG", "subject": "a", "magic": 0}, {"compatibilityLevel": "FULL"})
    state.apply({"keytype": "CONFIG", "magic": 0}, {"compatibilityLevel": "NONE"})
    assert state.configs == {"a": "FULL", None: "NONE"}
    state.apply({"keytype": "CONFIG", "subject": "a", "magic": 0}, None)
    assert state.configs == {None: "NONE"}
    _apply(state, SchemaVersion("b", 1, 2, _schema("B")))
    _apply(state, SchemaVersion("b", 2, 3, _schema("B2")))
    state.apply({"keytype": "DELETE_SUBJECT", "subject": "b", "magic": 0}, {"subject": "b", "version": 1})
    assert [v.deleted for v in state.subjects["b"].values()] == [True, False]
    state.apply({"keytype": "CLEAR_SUBJECT", "subject": "b", "magic": 0}, {"anything": 1})  # newer types: skipped
    state.apply({"keytype": "SCHEMA", "subject": "b", "version": 9, "magic": 1}, {"id": "x"})  # malformed: skipped
    assert sorted(state.subjects["b"]) == [1, 2]


AVRO_OLD = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
AVRO_ADD_REQUIRED = json.dumps(
    {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}]}
)
AVRO_ADD_DEFAULT = json.dumps(
    {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""}],
    }
)


@pytest.mark.parametrize(
    ("level", "new", "compatible"),
    [
        ("BACKWARD", AVRO_ADD_REQUIRED, False),
        ("BACKWARD", AVRO_ADD_DEFAULT, True),
        ("FORWARD", AVRO_ADD_REQUIRED, True),
        ("FULL", AVRO_ADD_REQUIRED, False),
        ("FULL", AVRO_ADD_DEFAULT, True),
        ("NONE", AVRO_ADD_REQUIRED, True),
    ],
)
def test_avro_levels(level: str, new: str, compatible: bool) -> None:
    problems = incompatibilities(level, parse_schema("AVRO", new), [parse_schema("AVRO", AVRO_OLD)])
    assert (problems == []) is compatible, problems


def test_json_schema_rules() -> None:
    old = parse_schema("JSON", json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}}))
    requires_b = parse_schema(
        "JSON",
        json.dumps(
            {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["b"]}
        ),
    )
    retyped = parse_schema("JSON", json.dumps({"type": "object", "properties": {"a": {"type": "string"}}}))
    widened = parse_schema("JSON", json.dumps({"type": "object", "properties": {"a": {"type": "number"}}}))
    assert incompatibilities("BACKWARD", requires_b, [old])
    assert incompatibilities("FORWARD", requires_b, [old]) == []
    assert incompatibilities("BACKWARD", retyped, [old])
    assert incompatibilities("BACKWARD", widened, [old]) == []
    assert incompatibilities("FORWARD", widened, [old])


def test_levels_and_invalid_schemas_are_refused_with_upstream_codes() -> None:
    assert check_level("full_transitive") == "FULL_TRANSITIVE"
    for bad in ("SOMETIMES", 3, None):
        with pytest.raises(RegistryError) as caught:
            check_level(bad)
        assert (caught.value.status, caught.value.error_code) == (422, 42203)
    for schema_type, text in (("AVRO", '{"type": "nope"}'), ("JSON", '{"type": 5}'), ("XML", "<a/>")):
        with pytest.raises(RegistryError) as caught:
            parse_schema(schema_type, text)
        assert (caught.value.status, caught.value.error_code) == (422, 42201)
