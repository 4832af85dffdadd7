"""The Protobuf files a schema may import without registering them, as file descriptors.

Confluent Schema Registry bundles Protobuf's well-known types (`google/protobuf/*.proto`),
Google's common types (`google/type/*.proto`: `Money`, `Date`, `PostalAddress`, ...) and
its own `confluent/meta.proto` and `confluent/type/decimal.proto`; a schema imports any of
them with no reference. The registry links schemas against the same set, and the REST
proxy builds its message classes with it. The descriptors come from the `protobuf`,
`googleapis-common-protos` and `confluent-kafka` packages, so no `.proto` file is shipped
here. Both the registry and the proxy import this module, so neither imports the other's
internals.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

__all__ = ["bundled_closure", "bundled_protos", "well_known_protos"]

#: Protobuf's own well-known types, dependencies first.
_WELL_KNOWN = (
    "google.protobuf.any_pb2",
    "google.protobuf.source_context_pb2",
    "google.protobuf.type_pb2",
    "google.protobuf.api_pb2",
    "google.protobuf.duration_pb2",
    "google.protobuf.empty_pb2",
    "google.protobuf.field_mask_pb2",
    "google.protobuf.struct_pb2",
    "google.protobuf.timestamp_pb2",
    "google.protobuf.wrappers_pb2",
    "google.protobuf.descriptor_pb2",
)
#: The common types Confluent bundles (its `ProtobufSchema.*_LOCATION` list), dependencies after
#: the well-known types they import.
_COMMON = (
    "google.type.calendar_period_pb2",
    "google.type.color_pb2",
    "google.type.date_pb2",
    "google.type.datetime_pb2",
    "google.type.dayofweek_pb2",
    "google.type.decimal_pb2",
    "google.type.expr_pb2",
    "google.type.fraction_pb2",
    "google.type.interval_pb2",
    "google.type.latlng_pb2",
    "google.type.money_pb2",
    "google.type.month_pb2",
    "google.type.phone_number_pb2",
    "google.type.postal_address_pb2",
    "google.type.quaternion_pb2",
    "google.type.timeofday_pb2",
    "confluent_kafka.schema_registry.confluent.meta_pb2",
    "confluent_kafka.schema_registry.confluent.type.decimal_pb2",  # confluent/type/decimal.proto, Confluent's
    "confluent_kafka.schema_registry.confluent.types.decimal_pb2",  # confluent/types/..., which imports it publicly
)


def _files(modules: Iterable[str]) -> tuple[Any, ...]:
    from google.protobuf import descriptor_pb2

    files = []
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError:  # an older package without this file: schemas importing it are refused
            continue
        file = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(file)
        files.append(file)
    return tuple(files)


@lru_cache(maxsize=1)
def well_known_protos() -> tuple[Any, ...]:
    """The descriptors of protobuf's well-known types (`google/protobuf/*.proto`), dependencies first."""
    return _files(_WELL_KNOWN)


@lru_cache(maxsize=1)
def bundled_protos() -> dict[str, Any]:
    """Every file a schema may import unregistered, by import name, dependencies first."""
    return {f.name: f for f in (*well_known_protos(), *_files(_COMMON))}


def bundled_closure(imports: Iterable[str], skip: Iterable[str] = ()) -> list[Any]:
    """The bundled files these imports need, their own imports included, dependencies
    first; names in `skip` (a registered reference of the same name wins) are left out."""
    bundled, skipped = bundled_protos(), set(skip)
    needed: list[Any] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name in skipped or name not in bundled:
            return
        seen.add(name)
        for dep in bundled[name].dependency:
            visit(dep)
        needed.append(bundled[name])

    for name in imports:
        visit(name)
    return needed
