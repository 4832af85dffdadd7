"""A schema's canonical Avro text, as Avro Java's `Schema.toString(referencedSchemas, false)`
writes it: Confluent's `AvroSchema.canonicalString()`, the text it stores and compares.

Written from the schema's JSON document, so the Python `avro` library's own printer
(which qualifies every name) is not involved; `schemas` keeps the printed text only when
it parses back to the same schema.
"""

from __future__ import annotations

import contextlib
import decimal
import json
import math
from typing import Any

__all__ = ["avro_canonical_text", "java_json"]


def avro_canonical_text(document: Any, references: list[Any]) -> str:
    """The canonical text of a schema document whose references' documents are `references`.

    Raises whatever a malformed document raises (`ValueError`, `TypeError`, `KeyError`,
    `AttributeError`): the caller has parsed it already and keeps the text as given then.
    """
    return java_json(_AvroPrinter(references).schema(document, None))


_AVRO_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
#: `Schema.Type` names: a named type called so is always written with its namespace.
_AVRO_TYPE_NAMES = _AVRO_PRIMITIVES | {"record", "enum", "array", "map", "union", "fixed"}
_AVRO_RESERVED = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
)
_AVRO_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})
_AVRO_NAMED = ("record", "error", "enum", "fixed")


class _AvroPrinter:
    """Avro Java's `Schema.toString(referencedSchemas, false)`, which is Confluent's
    `AvroSchema.canonicalString()`, on the schema's JSON document.

    Keys in Java's order (a record: type, name, namespace, doc, fields, other properties,
    aliases; a field: name, type, doc, default, order, aliases, other properties); a named
    type written once, then referred to by name; every name relative to the namespace it
    is written in (`Address`, not `com.netapp.Address`, inside `com.netapp`), a nested
    type in its enclosing namespace carrying no `namespace`; `{"type": "int"}` as `"int"`;
    `order` only when not ascending. The top-level types of the references (and of theirs)
    are known names from the start, so they are referred to, not written out; a type
    nested in a reference is written out where it is first used, as Java does."""

    def __init__(self, references: list[Any]) -> None:
        self.defined: dict[str, tuple[dict[str, Any], str | None]] = {}
        self.known: set[str] = set()
        for document in references:
            self._collect(document, None)
            if isinstance(document, dict) and document.get("type") in _AVRO_NAMED:
                self.known.add(_avro_full(*_avro_name(document, None)))

    def _collect(self, node: Any, space: str | None) -> None:
        """Where each named type of a reference is defined (with the namespace around it)."""
        if isinstance(node, list):
            for item in node:
                self._collect(item, space)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in _AVRO_NAMED:
                name, own = _avro_name(node, space)
                self.defined.setdefault(_avro_full(name, own), (node, space))
                for field in node.get("fields") or () if kind in ("record", "error") else ():
                    if isinstance(field, dict):
                        self._collect(field.get("type"), own)
            elif kind == "array":
                self._collect(node.get("items"), space)
            elif kind == "map":
                self._collect(node.get("values"), space)

    def schema(self, node: Any, space: str | None) -> Any:
        """One schema as Java writes it inside namespace `space`."""
        if isinstance(node, str):
            if node in _AVRO_PRIMITIVES:
                return node
            full = node if "." in node else _avro_full(node, space)
            if full not in self.defined and full not in self.known:
                full = node  # Java's fallback: the name in the null namespace
            if full in self.known or full not in self.defined:
                return _avro_qualified(full, space)
            definition, defined_in = self.defined[full]
            return self._named(definition, defined_in, space)
        if isinstance(node, list):
            return [self.schema(item, space) for item in node]
        kind = node["type"]
        if kind in _AVRO_NAMED:
            return self._named(node, space, space)
        props = _avro_props(node, _AVRO_RESERVED)
        if kind == "array":
            return {"type": "array", "items": self.schema(node["items"], space), **props}
        if kind == "map":
            return {"type": "map", "values": self.schema(node["values"], space), **props}
        return {"type": kind, **props} if props else kind

    def _named(self, node: dict[str, Any], defined_in: str | None, space: str | None) -> Any:
        name, own = _avro_name(node, defined_in)
        full = _avro_full(name, own)
        if full in self.known:
            return _avro_qualified(full, space)
        self.known.add(full)
        self.defined.setdefault(full, (node, defined_in))
        kind = node["type"]
        out: dict[str, Any] = {"type": kind, "name": name}
        if own is not None and own != space:
            out["namespace"] = own
        elif own is None and space is not None:
            out["namespace"] = ""  # the null namespace inside another one
        if isinstance(node.get("doc"), str):
            out["doc"] = node["doc"]
        reserved = _AVRO_RESERVED
        if kind in ("record", "error"):
            out["fields"] = [self._field(field, own) for field in node["fields"]]
        elif kind == "enum":
            out["symbols"] = node["symbols"]
            if isinstance(node.get("default"), str):
                out["default"] = node["default"]
            reserved = _AVRO_RESERVED | {"default"}
        else:
            out["size"] = node["size"]
        out.update(_avro_props(node, reserved))
        aliases = [_avro_full(*_avro_name({"name": a}, own)) for a in node.get("aliases") or () if isinstance(a, str)]
        if aliases:
            out["aliases"] = [_avro_qualified(alias, own) for alias in dict.fromkeys(aliases)]
        return out

    def _field(self, field: dict[str, Any], space: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": field["name"], "type": self.schema(field["type"], space)}
        if isinstance(field.get("doc"), str):
            out["doc"] = field["doc"]
        if "default" in field:
            default = field["default"]
            kind = field["type"].get("type") if isinstance(field["type"], dict) else field["type"]
            if isinstance(default, str) and kind in ("float", "double"):
                with contextlib.suppress(ValueError):
                    default = float(default)  # Java's parser makes a textual float default a number
            out["default"] = default
        order = field.get("order")
        if isinstance(order, str) and order.lower() != "ascending":
            out["order"] = order.lower()
        aliases = [a for a in field.get("aliases") or () if isinstance(a, str)]
        if aliases:
            out["aliases"] = list(dict.fromkeys(aliases))
        out.update(_avro_props(field, _AVRO_FIELD_RESERVED))
        return out


def _avro_name(node: dict[str, Any], space: str | None) -> tuple[str, str | None]:
    """Java's `parseName`: (name, namespace); a dotted name carries its own namespace, and
    an empty namespace is the null one."""
    name = str(node["name"])
    given = node.get("namespace")
    own = given if isinstance(given, str) else space
    if "." in name:
        own, name = name.rsplit(".", 1)
    return name, own or None


def _avro_full(name: str, space: str | None) -> str:
    return f"{space}.{name}" if space else name


def _avro_qualified(full: str, space: str | None) -> str:
    """Java's `Name.getQualified`: the short name inside its own namespace, unless that name
    is also a type's (`record`, `int`, ...)."""
    own, _, name = full.rpartition(".")
    return name if own and own == space and name not in _AVRO_TYPE_NAMES else full


def _avro_props(node: dict[str, Any], reserved: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key not in reserved}


def java_json(value: Any) -> str:
    """Compact JSON as Jackson writes it: non-ASCII as is, a float as Java's `Double.toString`."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{java_json(str(k))}:{java_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(java_json(item) for item in value) + "]"
    if isinstance(value, float):
        return _java_double(value)
    return json.dumps(value, ensure_ascii=False)


def _java_double(value: float) -> str:
    """Java's `Double.toString`: the shortest digits, plain from 10^-3 up to 10^7, else
    `d.dddEn` (Jackson quotes what is no number)."""
    if not math.isfinite(value):
        return '"NaN"' if math.isnan(value) else ('"Infinity"' if value > 0 else '"-Infinity"')
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    exact = decimal.Decimal(repr(value))
    if 1e-3 <= abs(value) < 1e7:
        shown = format(exact, "f")
        return shown if "." in shown else shown + ".0"
    sign, digits, exponent = exact.as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) + int(exponent) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"
