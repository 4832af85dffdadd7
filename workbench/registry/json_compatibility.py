"""JSON Schema compatibility as Confluent decides it: its schema diff, ported.

Confluent compares two JSON Schemas (`json-schema-provider/.../json/diff/SchemaDiff.java`
and one class per kind) and lists the *differences* between the old schema (`original`)
and the new one (`update`); the change is compatible when every difference is in its
STRICT set of compatible changes (`COMPATIBLE_CHANGES_STRICT`, the default policy).
BACKWARD compares (old, new); FORWARD (new, old); FULL both.

A schema is first classified as everit (the library Confluent loads schemas with) does:
`true`, `false`, `{}` (empty), a `$ref` (followed), `enum`, `const`, `not`,
`allOf`/`anyOf`/`oneOf`, or a type (`string`, `number`/`integer`, `object`, `array`,
`boolean`, `null`; taken from `type`, or from the keywords present when there is none).
A `type` list is an `anyOf` of one schema per type; a schema with several of these
(`type` and `enum`, say) is a synthetic `allOf` of them. Then, per kind:

Then, per kind, a narrowing is incompatible and a widening compatible:

- any: another kind is `TYPE_CHANGED`, unless the old schema is `false` or the new one
  `true` / `{}` (so `true` -> `false` is incompatible, as in Confluent; Karapace allows it).
- string: `maxLength` added or decreased, `minLength` added or increased, `pattern`
  added or changed are incompatible; the opposite and removal are compatible.
- number: `maximum` added or decreased, `minimum` added or increased (the exclusive ones
  alike), `multipleOf` added, expanded or changed, `number` -> `integer`: incompatible.
- enum / const: values added is compatible; removed or changed is not.
- object: a property added to an open content model (unless its schema is `{}`), a
  required property (or `required`) added without a default, `additionalProperties`
  removed or given a schema, a property removed from a closed model (unless it was
  `false`), `maxProperties` added or decreased, `minProperties` added or increased,
  dependencies added or extended: incompatible; the opposite is compatible.
- array: `items` added, an item added to an open tuple (unless `{}`), an item removed
  from a closed tuple (unless `false`), `additionalItems` removed or narrowed,
  `maxItems` added or decreased, `minItems` added or increased, `uniqueItems` added:
  incompatible; an item added to a closed tuple is compatible.
- allOf / anyOf / oneOf: another criterion (except towards `anyOf`), `anyOf`/`oneOf`
  narrowed, `allOf` extended, or sub-schemas that cannot be matched one to one:
  incompatible; a single schema wrapped in (or taken out of) a combination is compatible.
- not: the negated schema widened is incompatible, narrowed compatible.

Annotations (`title`, `description`, `$id`, `default`) never matter. What is not
ported: `unevaluatedProperties`/`unevaluatedItems`, `contains`, draft-04's boolean
`exclusiveMaximum`; the registry says so in `docs/schema-registry.md`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COMPATIBLE", "Resolve", "json_differences", "json_incompatibilities"]

#: Confluent's COMPATIBLE_CHANGES_STRICT, for the kinds ported here.
COMPATIBLE = frozenset(
    {
        "SCHEMA_REMOVED",
        "TYPE_EXTENDED",
        "MAX_LENGTH_INCREASED",
        "MAX_LENGTH_REMOVED",
        "MIN_LENGTH_DECREASED",
        "MIN_LENGTH_REMOVED",
        "PATTERN_REMOVED",
        "MAXIMUM_INCREASED",
        "MAXIMUM_REMOVED",
        "MINIMUM_DECREASED",
        "MINIMUM_REMOVED",
        "EXCLUSIVE_MAXIMUM_INCREASED",
        "EXCLUSIVE_MAXIMUM_REMOVED",
        "EXCLUSIVE_MINIMUM_DECREASED",
        "EXCLUSIVE_MINIMUM_REMOVED",
        "MULTIPLE_OF_REDUCED",
        "MULTIPLE_OF_REMOVED",
        "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED",
        "REQUIRED_ATTRIBUTE_REMOVED",
        "DEPENDENCY_ARRAY_NARROWED",
        "DEPENDENCY_ARRAY_REMOVED",
        "DEPENDENCY_SCHEMA_REMOVED",
        "MAX_PROPERTIES_INCREASED",
        "MAX_PROPERTIES_REMOVED",
        "MIN_PROPERTIES_DECREASED",
        "MIN_PROPERTIES_REMOVED",
        "ADDITIONAL_PROPERTIES_ADDED",
        "ADDITIONAL_PROPERTIES_EXTENDED",
        "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL",
        "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
        "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
        "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "MAX_ITEMS_INCREASED",
        "MAX_ITEMS_REMOVED",
        "MIN_ITEMS_DECREASED",
        "MIN_ITEMS_REMOVED",
        "UNIQUE_ITEMS_REMOVED",
        "ADDITIONAL_ITEMS_ADDED",
        "ADDITIONAL_ITEMS_EXTENDED",
        "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
        "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ENUM_ARRAY_EXTENDED",
        "COMBINED_TYPE_EXTENDED",
        "PRODUCT_TYPE_NARROWED",
        "SUM_TYPE_EXTENDED",
        "NOT_TYPE_NARROWED",
    }
)

#: How deep the diff follows nested schemas and `$ref`s before it stops (a bound on hostile input).
_MAX_DEPTH = 200

_OBJECT_KEYS = (
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "dependencies",
    "propertyNames",
)
_ARRAY_KEYS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains")
_STRING_KEYS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COMBINERS = ("allOf", "anyOf", "oneOf")
_TYPES = {"string", "number", "integer", "object", "array", "boolean", "null"}


@dataclass
class _Node:
    """A classified schema: `kind` as everit's class; `body` the keywords it was made of."""

    kind: str
    body: dict[str, Any] = field(default_factory=dict)
    criterion: str = ""
    subs: list[Any] = field(default_factory=list)


Resolve = Callable[[str], Any]


def json_incompatibilities(original: Any, update: Any, resolve: Resolve, resolve_update: Resolve) -> list[str]:
    """Confluent's incompatible differences from `original` to `update` (each schema's `$ref`s
    followed by its own resolver), as messages; [] if compatible."""
    found = json_differences(original, update, resolve, resolve_update)
    return [f"{kind} at {path}" for kind, path in found if kind not in COMPATIBLE]


def json_differences(original: Any, update: Any, resolve: Resolve, resolve_update: Resolve) -> list[tuple[str, str]]:
    """Every difference (type, JSON path) from `original` to `update`, compatible ones included."""
    return _Diff(resolve, resolve_update).compare(original, update, "#", 0)


def _classify(schema: Any) -> _Node:
    if schema is True:
        return _Node("true")
    if schema is False:
        return _Node("false")
    if not isinstance(schema, dict):
        return _Node("empty")
    parts: list[Any] = []
    kind = schema.get("type")
    if isinstance(kind, list) and kind:
        typed = [{**_only(schema, _typed_keys(t)), "type": t} for t in kind if t in _TYPES]
        parts.append(_Node("combined", criterion="anyOf", subs=typed) if len(typed) > 1 else typed[0] if typed else {})
    elif isinstance(kind, str) and kind in _TYPES:
        parts.append({**_only(schema, _typed_keys(kind)), "type": kind})
    else:
        inferred = [t for t, keys in _INFERRED if any(k in schema for k in keys)]
        if len(inferred) == 1:
            parts.append({**_only(schema, _typed_keys(inferred[0])), "type": inferred[0]})
        elif inferred:
            parts.append(
                _Node(
                    "combined", criterion="anyOf", subs=[{**_only(schema, _typed_keys(t)), "type": t} for t in inferred]
                )
            )
    if "enum" in schema and isinstance(schema["enum"], list):
        parts.append(_Node("enum", body={"enum": schema["enum"]}))
    if "const" in schema:
        parts.append(_Node("const", body={"const": schema["const"]}))
    if "not" in schema:
        parts.append(_Node("not", body={"not": schema["not"]}))
    for combiner in _COMBINERS:
        if isinstance(schema.get(combiner), list):
            parts.append(_Node("combined", criterion=combiner, subs=list(schema[combiner])))
    if not parts:
        return _Node("empty", body=schema)
    if len(parts) > 1:
        return _Node("combined", criterion="allOf", subs=parts)
    only = parts[0]
    if isinstance(only, _Node):
        return only
    kind_name = "number" if only["type"] == "integer" else only["type"]
    return _Node(kind_name, body=only)


_INFERRED = (("object", _OBJECT_KEYS), ("array", _ARRAY_KEYS), ("string", _STRING_KEYS), ("number", _NUMBER_KEYS))


def _typed_keys(kind: str) -> tuple[str, ...]:
    return {
        "object": _OBJECT_KEYS,
        "array": _ARRAY_KEYS,
        "string": _STRING_KEYS,
        "number": _NUMBER_KEYS,
        "integer": _NUMBER_KEYS,
    }.get(kind, ())


def _only(schema: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: schema[k] for k in keys if k in schema}


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


class _Diff:
    def __init__(self, resolve_original: Resolve, resolve_update: Resolve) -> None:
        self.resolve_original, self.resolve_update = resolve_original, resolve_update
        self.on_stack: set[tuple[int, int]] = set()

    @staticmethod
    def follow(schema: Any, resolve: Resolve) -> Any:
        """A `$ref` replaced by what it points at (a chain of them too)."""
        for _ in range(32):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema
            schema = resolve(schema["$ref"])
        return schema

    def compatible(self, original: Any, update: Any, path: str, depth: int) -> tuple[bool, list[tuple[str, str]]]:
        found = self.compare(original, update, path, depth)
        return all(kind in COMPATIBLE for kind, _ in found), found

    def compare(self, original: Any, update: Any, path: str, depth: int) -> list[tuple[str, str]]:
        if original is None and update is None:
            return []
        if original is None:
            return [("SCHEMA_ADDED", path)]
        if update is None:
            return [("SCHEMA_REMOVED", path)]
        if depth > _MAX_DEPTH:
            return []
        original, update = self.follow(original, self.resolve_original), self.follow(update, self.resolve_update)
        pair = (id(original), id(update))
        if pair in self.on_stack:
            return []  # a cycle through $ref: assumed compatible, as Confluent's memo does
        self.on_stack.add(pair)
        try:
            old = original if isinstance(original, _Node) else _classify(original)
            new = update if isinstance(update, _Node) else _classify(update)
            return self._types(old, new, path, depth)
        finally:
            self.on_stack.discard(pair)

    def _types(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        if old.kind != "combined" and new.kind == "combined":
            if len(new.subs) == 1:
                ok, found = self.compatible(old, new.subs[0], path, depth + 1)
                if ok:
                    return found
            elif new.criterion in ("anyOf", "oneOf"):
                for sub in new.subs:
                    ok, found = self.compatible(old, sub, path, depth + 1)
                    if ok:
                        return [*found, ("SUM_TYPE_EXTENDED", path)]
        elif old.kind == "combined" and new.kind != "combined":
            if len(old.subs) == 1:
                ok, found = self.compatible(old.subs[0], new, path, depth + 1)
                if ok:
                    return found
            elif old.criterion == "allOf":
                for sub in old.subs:
                    ok, found = self.compatible(sub, new, path, depth + 1)
                    if ok:
                        return [*found, ("PRODUCT_TYPE_NARROWED", path)]
        if old.kind != new.kind:
            if old.kind == "false" or new.kind in ("empty", "true"):
                return []
            return [("TYPE_CHANGED", path)]
        compare = getattr(self, f"_{old.kind}", None)
        return compare(old, new, path, depth + 1) if compare is not None else []

    # -- per kind -------------------------------------------------------------------------
    def _string(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        o, n = old.body, new.body
        found = _limit(o.get("maxLength"), n.get("maxLength"), "MAX_LENGTH", f"{path}/maxLength")
        found += _limit(o.get("minLength"), n.get("minLength"), "MIN_LENGTH", f"{path}/minLength")
        if o.get("pattern") is None and n.get("pattern") is not None:
            found.append(("PATTERN_ADDED", f"{path}/pattern"))
        elif o.get("pattern") is not None and n.get("pattern") is None:
            found.append(("PATTERN_REMOVED", f"{path}/pattern"))
        elif o.get("pattern") != n.get("pattern"):
            found.append(("PATTERN_CHANGED", f"{path}/pattern"))
        return found

    def _number(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        o, n = old.body, new.body
        found = []
        for key, name in (
            ("maximum", "MAXIMUM"),
            ("minimum", "MINIMUM"),
            ("exclusiveMaximum", "EXCLUSIVE_MAXIMUM"),
            ("exclusiveMinimum", "EXCLUSIVE_MINIMUM"),
        ):
            a, b = (_number(o.get(key)), _number(n.get(key)))
            found += _limit(a, b, name, f"{path}/{key}")
        a, b = _number(o.get("multipleOf")), _number(n.get("multipleOf"))
        if a != b:
            where = f"{path}/multipleOf"
            if a is None:
                found.append(("MULTIPLE_OF_ADDED", where))
            elif b is None:
                found.append(("MULTIPLE_OF_REMOVED", where))
            elif a and _divides(a, b):
                found.append(("MULTIPLE_OF_EXPANDED", where))
            elif b and _divides(b, a):
                found.append(("MULTIPLE_OF_REDUCED", where))
            else:
                found.append(("MULTIPLE_OF_CHANGED", where))
        old_int, new_int = o.get("type") == "integer", n.get("type") == "integer"
        if old_int != new_int:
            found.append(("TYPE_EXTENDED" if old_int else "TYPE_NARROWED", path))
        return found

    def _enum(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        a, b = {_key(v) for v in old.body["enum"]}, {_key(v) for v in new.body["enum"]}
        if a == b:
            return []
        kind = "ENUM_ARRAY_EXTENDED" if b >= a else "ENUM_ARRAY_NARROWED" if a >= b else "ENUM_ARRAY_CHANGED"
        return [(kind, f"{path}/enum")]

    def _const(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        same = _key(old.body["const"]) == _key(new.body["const"])
        return [] if same else [("ENUM_ARRAY_CHANGED", f"{path}/const")]

    def _not(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        swapped = _Diff(self.resolve_update, self.resolve_original)  # the negated schemas compare reversed
        ok, _found = swapped.compatible(new.body["not"], old.body["not"], f"{path}/not", depth)
        return [("NOT_TYPE_NARROWED" if ok else "NOT_TYPE_EXTENDED", f"{path}/not")]

    def _combined(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        if old.criterion != new.criterion:
            single_old, single_new = len(old.subs) == 1, len(new.subs) == 1
            if (
                new.criterion == "anyOf"
                or (single_old and single_new)
                or (single_old and new.criterion == "oneOf")
                or (single_new and old.criterion == "allOf")
            ):
                found.append(("COMBINED_TYPE_EXTENDED", path))
            else:
                return [("COMBINED_TYPE_CHANGED", path)]
        olds, news = _distinct(old.subs), _distinct(new.subs)
        if len(olds) < len(news):
            found.append(("PRODUCT_TYPE_EXTENDED" if new.criterion == "allOf" else "SUM_TYPE_EXTENDED", path))
        elif len(olds) > len(news):
            found.append(
                ("SUM_TYPE_NARROWED" if old.criterion in ("anyOf", "oneOf") else "PRODUCT_TYPE_NARROWED", path)
            )
        edges: dict[int, dict[int, list[tuple[str, str]]]] = {}
        for i, a in enumerate(olds):
            for j, b in enumerate(news):
                ok, diffs = self.compatible(a, b, f"{path}/{old.criterion}/{i}", depth)
                if ok:
                    edges.setdefault(i, {})[j] = diffs
        matching = _match(edges)
        for i, j in matching.items():
            found += edges[i][j]
        if len(matching) < min(len(olds), len(news)):
            found.append(("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path))
        return found

    def _object(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        o, n = old.body, new.body
        o_props, n_props = _dict(o.get("properties")), _dict(n.get("properties"))
        o_req, n_req = _names(o.get("required")), _names(n.get("required"))
        found: list[tuple[str, str]] = []
        for name in o_props:
            if name in n_props:
                where = f"{path}/required/{name}"
                if name in o_req and name not in n_req:
                    found.append(("REQUIRED_ATTRIBUTE_REMOVED", where))
                elif name not in o_req and name in n_req:
                    kind = (
                        "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"
                        if _has_default(n_props[name])
                        else "REQUIRED_ATTRIBUTE_ADDED"
                    )
                    found.append((kind, where))
        for name in sorted(set(o_props) | set(n_props)):
            where = f"{path}/properties/{name}"
            if name not in n_props:
                found += self._property_removed(o_props[name], n, name, where, depth)
            elif name not in o_props:
                found += self._property_added(o, n_props[name], name in n_req, name, where, depth)
            else:
                found += self.compare(o_props[name], n_props[name], where, depth)
        found += self._dependencies(o, n, f"{path}/dependencies", depth)
        found += self._additional(o, n, f"{path}/additionalProperties", depth)
        found += _limit(o.get("maxProperties"), n.get("maxProperties"), "MAX_PROPERTIES", f"{path}/maxProperties")
        found += _limit(o.get("minProperties"), n.get("minProperties"), "MIN_PROPERTIES", f"{path}/minProperties")
        return found

    def _property_removed(
        self, schema: Any, new: dict[str, Any], name: str, where: str, depth: int
    ) -> list[tuple[str, str]]:
        if _open(new, "additionalProperties", patterns=True):
            return [("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", where)]
        partial = _partial(new, name)
        if partial is not None:
            ok, found = self.compatible(schema, partial, where, depth)
            kind = "IS_COVERED" if ok else "NOT_COVERED"
            return [*found, (f"PROPERTY_REMOVED_{kind}_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)]
        if schema is False:
            return [("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)]
        return [("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)]

    def _property_added(
        self, old: dict[str, Any], schema: Any, required: bool, name: str, where: str, depth: int
    ) -> list[tuple[str, str]]:
        if _open(old, "additionalProperties", patterns=True):
            if _classify(schema).kind in ("empty", "true"):
                return [("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", where)]
            if required:
                kind = "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED" if _has_default(schema) else "REQUIRED_PROPERTY_ADDED"
                return [(f"{kind}_TO_OPEN_CONTENT_MODEL", where)]
            return [("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", where)]
        found: list[tuple[str, str]] = []
        partial = _partial(old, name)
        if partial is not None:
            ok, diffs = self.compatible(partial, schema, where, depth)
            kind = "IS_COVERED" if ok else "NOT_COVERED"
            found += [*diffs, (f"PROPERTY_ADDED_{kind}_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)]
        if required:
            kind = "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED" if _has_default(schema) else "REQUIRED_PROPERTY_ADDED"
            found.append((f"{kind}_TO_UNOPEN_CONTENT_MODEL", where))
        else:
            found.append(("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where))
        return found

    def _dependencies(self, o: dict[str, Any], n: dict[str, Any], path: str, depth: int) -> list[tuple[str, str]]:
        o_deps, n_deps = _dict(o.get("dependencies")), _dict(n.get("dependencies"))
        found: list[tuple[str, str]] = []
        for name in sorted(set(o_deps) | set(n_deps)):
            a, b, where = o_deps.get(name), n_deps.get(name), f"{path}/{name}"
            if isinstance(a, list) or isinstance(b, list):
                if b is None:
                    found.append(("DEPENDENCY_ARRAY_REMOVED", where))
                elif a is None:
                    found.append(("DEPENDENCY_ARRAY_ADDED", where))
                elif set(map(str, a)) != set(map(str, b)):
                    sa, sb = set(map(str, a)), set(map(str, b))
                    kind = "EXTENDED" if sb >= sa else "NARROWED" if sa >= sb else "CHANGED"
                    found.append((f"DEPENDENCY_ARRAY_{kind}", where))
            elif b is None:
                found.append(("DEPENDENCY_SCHEMA_REMOVED", where))
            elif a is None:
                found.append(("DEPENDENCY_SCHEMA_ADDED", where))
            else:
                found += self.compare(a, b, where, depth)
        return found

    def _additional(self, o: dict[str, Any], n: dict[str, Any], where: str, depth: int) -> list[tuple[str, str]]:
        a, b = o.get("additionalProperties", True), n.get("additionalProperties", True)
        if (a is not False) != (b is not False):
            return [("ADDITIONAL_PROPERTIES_ADDED" if b is not False else "ADDITIONAL_PROPERTIES_REMOVED", where)]
        a_schema, b_schema = (a if isinstance(a, dict) else None), (b if isinstance(b, dict) else None)
        if a_schema is None and b_schema is not None:
            return [("ADDITIONAL_PROPERTIES_NARROWED", where)]
        if b_schema is None and a_schema is not None:
            return [("ADDITIONAL_PROPERTIES_EXTENDED", where)]
        return self.compare(a_schema, b_schema, where, depth)

    def _array(self, old: _Node, new: _Node, path: str, depth: int) -> list[tuple[str, str]]:
        o, n = old.body, new.body
        o_all = o.get("items") if not isinstance(o.get("items"), list) else None
        n_all = n.get("items") if not isinstance(n.get("items"), list) else None
        found = self.compare(o_all, n_all, f"{path}/items", depth)
        o_tuple: list[Any] = o["items"] if isinstance(o.get("items"), list) else []
        n_tuple: list[Any] = n["items"] if isinstance(n.get("items"), list) else []
        for index in range(min(len(o_tuple), len(n_tuple))):
            found += self.compare(o_tuple[index], n_tuple[index], f"{path}/items/{index}", depth)
        for index in range(len(n_tuple), len(o_tuple)):
            where, schema = f"{path}/items/{index}", o_tuple[index]
            if _open(n, "additionalItems"):
                found.append(("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL", where))
            elif isinstance(n.get("additionalItems"), dict):
                ok, diffs = self.compatible(schema, n["additionalItems"], where, depth)
                kind = "IS_COVERED" if ok else "NOT_COVERED"
                found += [*diffs, (f"ITEM_REMOVED_{kind}_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)]
            elif schema is False:
                found.append(("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", where))
            else:
                found.append(("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", where))
        for index in range(len(o_tuple), len(n_tuple)):
            where, schema = f"{path}/items/{index}", n_tuple[index]
            if _open(o, "additionalItems"):
                empty = _classify(schema).kind in ("empty", "true")
                found.append(
                    (
                        "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
                        if empty
                        else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
                        where,
                    )
                )
            elif isinstance(o.get("additionalItems"), dict):
                ok, diffs = self.compatible(o["additionalItems"], schema, where, depth)
                kind = "IS_COVERED" if ok else "NOT_COVERED"
                found += [*diffs, (f"ITEM_ADDED_{kind}_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)]
            else:
                found.append(("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL", where))
        a, b = o.get("additionalItems", True), n.get("additionalItems", True)
        where = f"{path}/additionalItems"
        if (a is not False) != (b is not False):
            found.append(("ADDITIONAL_ITEMS_REMOVED" if a is not False else "ADDITIONAL_ITEMS_ADDED", where))
        elif not isinstance(a, dict) and isinstance(b, dict):
            found.append(("ADDITIONAL_ITEMS_NARROWED", where))
        elif isinstance(a, dict) and not isinstance(b, dict):
            found.append(("ADDITIONAL_ITEMS_EXTENDED", where))
        elif isinstance(a, dict) and isinstance(b, dict):
            found += self.compare(a, b, where, depth)
        found += _limit(o.get("maxItems"), n.get("maxItems"), "MAX_ITEMS", f"{path}/maxItems")
        found += _limit(o.get("minItems"), n.get("minItems"), "MIN_ITEMS", f"{path}/minItems")
        if bool(o.get("uniqueItems")) != bool(n.get("uniqueItems")):
            found.append(
                ("UNIQUE_ITEMS_REMOVED" if o.get("uniqueItems") else "UNIQUE_ITEMS_ADDED", f"{path}/uniqueItems")
            )
        return found


def _limit(old: Any, new: Any, name: str, where: str) -> list[tuple[str, str]]:
    """ADDED / REMOVED / INCREASED / DECREASED for one numeric keyword."""
    old, new = _number(old), _number(new)
    if old == new:
        return []
    if old is None:
        return [(f"{name}_ADDED", where)]
    if new is None:
        return [(f"{name}_REMOVED", where)]
    return [(f"{name}_INCREASED" if old < new else f"{name}_DECREASED", where)]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _divides(divisor: float, value: float) -> bool:
    from decimal import Decimal, InvalidOperation

    try:
        return Decimal(repr(value)) % Decimal(repr(divisor)) == 0
    except (InvalidOperation, ZeroDivisionError):
        return False


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(value: Any) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and "default" in schema


def _open(schema: dict[str, Any], keyword: str, patterns: bool = False) -> bool:
    """A fully open content model: `keyword` absent or true (and no patternProperties)."""
    if patterns and _dict(schema.get("patternProperties")):
        return False
    return schema.get(keyword, True) is True


def _partial(schema: dict[str, Any], name: str) -> Any:
    """The schema a partially open object gives a property `name`: a matching
    patternProperties schema, else the additionalProperties schema; None when closed."""
    import re

    for pattern, sub in _dict(schema.get("patternProperties")).items():
        try:
            if re.search(pattern, name):
                return sub
        except re.error:
            continue
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _distinct(subs: list[Any]) -> list[Any]:
    seen, out = set(), []
    for sub in subs:
        key = _key(sub) if not isinstance(sub, _Node) else f"node:{id(sub)}"
        if key not in seen:
            seen.add(key)
            out.append(sub)
    return out


def _match(edges: dict[int, dict[int, Any]]) -> dict[int, int]:
    """A maximum one-to-one matching of old to new sub-schemas (augmenting paths)."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges.get(i, {}):
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in edges:
        augment(i, set())
    return {i: j for j, i in owner.items()}
