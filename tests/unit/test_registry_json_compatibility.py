"""Confluent's JSON Schema compatibility rules, one row each: (rule, old, new, level, compatible).

Each row is one difference type of Confluent's `SchemaDiff` (STRICT policy), checked through
`compatibility.incompatibilities` as a registration checks it; the rules are written down
in `docs/schema-registry.md` with the same examples.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from workbench.registry.compatibility import incompatibilities
from workbench.registry.schemas import parse_schema

S, N, INT = {"type": "string"}, {"type": "number"}, {"type": "integer"}


def _obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


RULES: list[tuple[str, Any, Any, str, bool]] = [
    ("maxLength added", S, {**S, "maxLength": 3}, "BACKWARD", False),
    ("maxLength removed", {**S, "maxLength": 3}, S, "BACKWARD", True),
    ("maxLength increased", {**S, "maxLength": 3}, {**S, "maxLength": 5}, "BACKWARD", True),
    ("maxLength decreased", {**S, "maxLength": 5}, {**S, "maxLength": 3}, "BACKWARD", False),
    ("maxLength added, forward", S, {**S, "maxLength": 3}, "FORWARD", True),
    ("minLength added", S, {**S, "minLength": 2}, "BACKWARD", False),
    ("minLength decreased", {**S, "minLength": 2}, {**S, "minLength": 1}, "BACKWARD", True),
    ("pattern added", S, {**S, "pattern": "^a"}, "BACKWARD", False),
    ("pattern removed", {**S, "pattern": "^a"}, S, "BACKWARD", True),
    ("pattern changed", {**S, "pattern": "^a"}, {**S, "pattern": "^b"}, "BACKWARD", False),
    ("minimum added", N, {**N, "minimum": 0}, "BACKWARD", False),
    ("minimum decreased", {**N, "minimum": 1}, {**N, "minimum": 0}, "BACKWARD", True),
    ("minimum increased", {**N, "minimum": 0}, {**N, "minimum": 1}, "BACKWARD", False),
    ("maximum increased", {**N, "maximum": 1}, {**N, "maximum": 2}, "BACKWARD", True),
    ("maximum decreased", {**N, "maximum": 2}, {**N, "maximum": 1}, "BACKWARD", False),
    ("exclusiveMinimum removed", {**N, "exclusiveMinimum": 0}, N, "BACKWARD", True),
    ("multipleOf reduced", {**N, "multipleOf": 4}, {**N, "multipleOf": 2}, "BACKWARD", True),
    ("multipleOf expanded", {**N, "multipleOf": 2}, {**N, "multipleOf": 4}, "BACKWARD", False),
    ("integer to number", INT, N, "BACKWARD", True),
    ("number to integer", N, INT, "BACKWARD", False),
    ("type changed", S, N, "BACKWARD", False),
    ("type extended to a union", S, {"type": ["string", "null"]}, "BACKWARD", True),
    ("type narrowed from a union", {"type": ["string", "null"]}, S, "BACKWARD", False),
    ("enum extended", {"enum": ["a", "b"]}, {"enum": ["a", "b", "c"]}, "BACKWARD", True),
    ("enum narrowed", {"enum": ["a", "b"]}, {"enum": ["a"]}, "BACKWARD", False),
    ("enum changed", {"enum": ["a", "b"]}, {"enum": ["a", "c"]}, "BACKWARD", False),
    ("enum extended, full", {"enum": ["a"]}, {"enum": ["a", "b"]}, "FULL", False),
    ("boolean true to false", True, False, "BACKWARD", False),
    ("boolean false to true", False, True, "BACKWARD", True),
    ("anything to empty", S, {}, "BACKWARD", True),
    ("optional property added to an open model", _obj({"a": S}), _obj({"a": S, "b": S}), "BACKWARD", False),
    ("property with {} added to an open model", _obj({"a": S}), _obj({"a": S, "b": {}}), "BACKWARD", True),
    (
        "optional property added to a closed model",
        _obj({"a": S}, additionalProperties=False),
        _obj({"a": S, "b": S}, additionalProperties=False),
        "BACKWARD",
        True,
    ),
    (
        "required property added to a closed model",
        _obj({"a": S}, additionalProperties=False),
        _obj({"a": S, "b": S}, additionalProperties=False, required=["b"]),
        "BACKWARD",
        False,
    ),
    (
        "required property with a default added to a closed model",
        _obj({"a": S}, additionalProperties=False),
        _obj({"a": S, "b": {**S, "default": "x"}}, additionalProperties=False, required=["b"]),
        "BACKWARD",
        True,
    ),
    ("property removed from an open model", _obj({"a": S, "b": S}), _obj({"a": S}), "BACKWARD", True),
    (
        "property removed from a closed model",
        _obj({"a": S, "b": S}, additionalProperties=False),
        _obj({"a": S}, additionalProperties=False),
        "BACKWARD",
        False,
    ),
    (
        "property added, covered by a partially open model",
        _obj({"a": S}, additionalProperties=S),
        _obj({"a": S, "b": S}, additionalProperties=S),
        "BACKWARD",
        True,
    ),
    (
        "property added, not covered by a partially open model",
        _obj({"a": S}, additionalProperties=S),
        _obj({"a": S, "b": N}, additionalProperties=S),
        "BACKWARD",
        False,
    ),
    ("required attribute added", _obj({"a": S}), _obj({"a": S}, required=["a"]), "BACKWARD", False),
    (
        "required attribute added with a default",
        _obj({"a": {**S, "default": "x"}}),
        _obj({"a": {**S, "default": "x"}}, required=["a"]),
        "BACKWARD",
        True,
    ),
    ("required attribute removed", _obj({"a": S}, required=["a"]), _obj({"a": S}), "BACKWARD", True),
    ("additionalProperties removed", _obj({}), _obj({}, additionalProperties=False), "BACKWARD", False),
    ("additionalProperties added", _obj({}, additionalProperties=False), _obj({}), "BACKWARD", True),
    ("additionalProperties narrowed", _obj({}), _obj({}, additionalProperties=S), "BACKWARD", False),
    ("additionalProperties extended", _obj({}, additionalProperties=S), _obj({}), "BACKWARD", True),
    ("maxProperties added", _obj({}), _obj({}, maxProperties=3), "BACKWARD", False),
    ("minProperties removed", _obj({}, minProperties=1), _obj({}), "BACKWARD", True),
    (
        "tuple item added to a closed tuple",
        {"type": "array", "items": [INT], "additionalItems": False},
        {"type": "array", "items": [INT, S], "additionalItems": False},
        "BACKWARD",
        True,
    ),
    (
        "tuple item added to an open tuple",
        {"type": "array", "items": [INT]},
        {"type": "array", "items": [INT, S]},
        "BACKWARD",
        False,
    ),
    (
        "tuple item removed from an open tuple",
        {"type": "array", "items": [INT, S]},
        {"type": "array", "items": [INT]},
        "BACKWARD",
        True,
    ),
    (
        "tuple item removed from a closed tuple",
        {"type": "array", "items": [INT, S], "additionalItems": False},
        {"type": "array", "items": [INT], "additionalItems": False},
        "BACKWARD",
        False,
    ),
    ("items added", {"type": "array"}, {"type": "array", "items": S}, "BACKWARD", False),
    ("items widened", {"type": "array", "items": INT}, {"type": "array", "items": N}, "BACKWARD", True),
    ("maxItems added", {"type": "array"}, {"type": "array", "maxItems": 3}, "BACKWARD", False),
    ("minItems decreased", {"type": "array", "minItems": 2}, {"type": "array", "minItems": 1}, "BACKWARD", True),
    ("uniqueItems added", {"type": "array"}, {"type": "array", "uniqueItems": True}, "BACKWARD", False),
    ("uniqueItems removed", {"type": "array", "uniqueItems": True}, {"type": "array"}, "BACKWARD", True),
    ("oneOf extended", {"oneOf": [S, INT]}, {"oneOf": [S, INT, {"type": "null"}]}, "BACKWARD", True),
    ("oneOf narrowed", {"oneOf": [S, INT]}, {"oneOf": [S]}, "BACKWARD", False),
    ("allOf narrowed", {"allOf": [S, {"maxLength": 3}]}, {"allOf": [S]}, "BACKWARD", True),
    ("oneOf changed to allOf", {"oneOf": [S, INT]}, {"allOf": [S, INT]}, "BACKWARD", False),
    ("not narrowed", {"not": {"type": ["string", "null"]}}, {"not": S}, "BACKWARD", True),
    ("not extended", {"not": S}, {"not": {"type": ["string", "null"]}}, "BACKWARD", False),
    ("title and description changed", {**S, "title": "a"}, {**S, "title": "b", "description": "d"}, "BACKWARD", True),
    ("nested property narrowed", _obj({"a": S}), _obj({"a": {**S, "maxLength": 1}}), "BACKWARD", False),
    (
        "local $ref followed",
        {"definitions": {"x": S}, "type": "object", "properties": {"a": {"$ref": "#/definitions/x"}}},
        {
            "definitions": {"x": {**S, "maxLength": 1}},
            "type": "object",
            "properties": {"a": {"$ref": "#/definitions/x"}},
        },
        "BACKWARD",
        False,
    ),
]


@pytest.mark.parametrize(("rule", "old", "new", "level", "compatible"), RULES, ids=[r[0] for r in RULES])
def test_json_schema_rule(rule: str, old: Any, new: Any, level: str, compatible: bool) -> None:
    old_schema = parse_schema("JSON", json.dumps(old))
    new_schema = parse_schema("JSON", json.dumps(new))
    problems = incompatibilities(level, new_schema, [old_schema])
    assert (problems == []) is compatible, problems
