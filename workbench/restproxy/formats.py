"""Media types and embedded formats: which format a request speaks, and its encoding.

v2 media types are `application/vnd.kafka[.<format>][.v1|.v2]+json`. Following the
reference's recommendation (Karapace's behaviour, friendlier to clients in the wild),
v1 types are accepted as aliases, and `application/json`, `application/octet-stream`
and a type without an embedded format all mean binary on produce. A missing or foreign
Content-Type on a produce is a 415, as upstream answers it.

avro, jsonschema and protobuf need a Schema Registry (`schema.registry.url`; the stack
sets it to its embedded registry, see `schemas.py`); a proxy without one answers them
422 / 42205 with a message that says so (upstream's "invalid schema" family), never a 500.
"""

from __future__ import annotations

import json
import re

from workbench.httpserver.errors import RestError

__all__ = [
    "FORMATS",
    "SCHEMA_FORMATS",
    "V2_JSON",
    "check_accept",
    "check_exact_numbers",
    "embedded_format",
    "media_type",
    "no_registry",
    "produce_format",
    "require_json_body_type",
]

V2_JSON = "application/vnd.kafka.v2+json"
FORMATS = ("binary", "json")
SCHEMA_FORMATS = ("avro", "jsonschema", "protobuf")

_VND = re.compile(r"^application/vnd\.kafka(?:\.(binary|json|avro|jsonschema|protobuf))?(?:\.(v1|v2))?\+json$")
_ACCEPT = re.compile(r"^(?:application|\*)/(?:vnd\.kafka(?:\.[a-z]+)?(?:\.v[12])?\+json|json|\*)$")


def _essence(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def media_type(fmt: str | None) -> str:
    """The response type for an embedded format (`None`: no embedded data)."""
    return f"application/vnd.kafka.{fmt}.v2+json" if fmt else V2_JSON


def embedded_format(content_type: str | None) -> tuple[bool, str | None]:
    """(is it one of ours, the embedded format or None) for a Content-Type or Accept item."""
    essence = _essence(content_type)
    match = _VND.match(essence)
    if match:
        return True, match.group(1)
    return essence in ("application/json", "application/octet-stream"), None


def no_registry(fmt: str) -> RestError:
    return RestError(
        422,
        42205,
        f"The {fmt} format needs a Schema Registry and this proxy has none (schema.registry.url is not "
        "configured); use the json or binary format",
    )


def produce_format(content_type: str | None) -> str:
    """The embedded format of a produce request, or a RestError (415 / 422)."""
    if not content_type:
        raise RestError(
            415,
            415,
            "HTTP 415 Unsupported Media Type: a Content-Type is required, e.g. application/vnd.kafka.json.v2+json",
        )
    ours, fmt = embedded_format(content_type)
    if not ours:
        raise RestError(415, 415, f"HTTP 415 Unsupported Media Type: {_essence(content_type)!r}")
    return fmt or "binary"  # a schema format is answered after the topic and schema checks


#: Digits become "0", everything else a space: then a 19-digit run, the least it takes to
#: write an integer past 64 bits, is one substring search (0.3 ms for 500 KB, where a
#: regular expression took 10 ms).
_DIGITS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))


def check_exact_numbers(body: bytes) -> None:
    """422 when a json-format produce body holds an integer past 64 bits.

    orjson reads such an integer as a float, so `18446744073709551616` would be stored as
    `1.8446744073709552e+19`; upstream (Jackson) keeps it exact. Such a body is refused
    before anything is written. Only a body with a 19-digit run is parsed a second time,
    with Python's exact `json`. (Floats are read as doubles, as Jackson reads them.)
    """
    if b"0" * 19 not in body.translate(_DIGITS):
        return
    try:
        json.loads(body, parse_int=_exact_int)
    except _Inexact as exc:
        raise RestError(
            422,
            422,
            f"The number {exc.args[0][:40]} cannot be written exactly by this proxy (integers "
            "must fit in 64 bits); send it as a string, or use the binary format",
        ) from None
    except (ValueError, RecursionError):
        return  # orjson read it already; what Python's parser cannot read is left to it


class _Inexact(ValueError):
    pass


def _exact_int(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value <= 2**64 - 1:
        raise _Inexact(text)
    return value


def require_json_body_type(content_type: str | None) -> None:
    """Bodies without embedded data: any vnd.kafka type or JSON; missing is tolerated."""
    if content_type and not embedded_format(content_type)[0]:
        raise RestError(415, 415, f"HTTP 415 Unsupported Media Type: {_essence(content_type)!r}")


def check_accept(accept: str | None) -> list[str]:
    """The acceptable media types (empty: anything); 406 when none is one we can send."""
    if not accept:
        return []
    items = [_essence(item) for item in accept.split(",") if item.strip()]
    if not items or any(_ACCEPT.match(item) for item in items):
        return items
    raise RestError(406, 406, f"HTTP 406 Not Acceptable: {accept!r}")
