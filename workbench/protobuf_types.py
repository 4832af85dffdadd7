"""Protobuf's well-known types (`google/protobuf/*.proto`) as file descriptors.

A Protobuf schema imports them without registering them: the Schema Registry links
schemas against them, and the REST proxy builds its message classes with them. Both
import this module, so neither imports the other's internals.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["well_known_protos"]


@lru_cache(maxsize=1)
def well_known_protos() -> tuple[Any, ...]:
    """The descriptors of protobuf's well-known types (`google/protobuf/*.proto`), which a
    schema imports without registering them: the registry links schemas against them, and
    the proxy builds its message classes with them."""
    from google.protobuf import (
        any_pb2,
        api_pb2,
        descriptor_pb2,
        duration_pb2,
        empty_pb2,
        field_mask_pb2,
        source_context_pb2,
        struct_pb2,
        timestamp_pb2,
        type_pb2,
        wrappers_pb2,
    )

    files = []
    for module in (
        any_pb2,
        source_context_pb2,
        type_pb2,
        api_pb2,
        duration_pb2,
        empty_pb2,
        field_mask_pb2,
        struct_pb2,
        timestamp_pb2,
        wrappers_pb2,
        descriptor_pb2,
    ):
        file = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(file)
        files.append(file)
    return tuple(files)
