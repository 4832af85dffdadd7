"""Errors in Confluent Schema Registry's shape: `{"error_code": <int>, "message": "<text>"}`.

Clients key on these codes (confluent-kafka's `SchemaRegistryError.error_code`), so
they are upstream's (`Errors.java`), with upstream's HTTP statuses:

    40401 subject not found      40402 version not found      40403 schema not found
    40404 subject soft-deleted   40405 subject not soft-deleted (hard delete)
    40406 version soft-deleted   40407 version not soft-deleted (hard delete)
    40408 subject has no compatibility level of its own
    40409 subject has no mode of its own
    409   incompatible schema (HTTP 409)
    42201 invalid schema or type 42202 invalid version        42203 invalid compatibility level
    42206 still referenced       42208 invalid subject
    50001 store error            50002 store timeout
    400 bad JSON, 404 unknown path, 405 wrong method, 406 Accept, 413 body, 415 Content-Type

`RegistryError` is a `RestError`, so the registry renders it, and the router's 404/405,
the way the REST proxy does.
"""

from __future__ import annotations

from workbench.httpserver.errors import RestError

__all__ = [
    "INCOMPATIBLE",
    "INVALID_COMPATIBILITY",
    "INVALID_SCHEMA",
    "INVALID_SUBJECT",
    "INVALID_VERSION",
    "REFERENCE_EXISTS",
    "RegistryError",
    "SCHEMA_NOT_FOUND",
    "STORE_ERROR",
    "STORE_TIMEOUT",
    "SUBJECT_COMPATIBILITY_NOT_FOUND",
    "SUBJECT_MODE_NOT_FOUND",
    "SUBJECT_NOT_FOUND",
    "SUBJECT_NOT_SOFT_DELETED",
    "SUBJECT_SOFT_DELETED",
    "VERSION_NOT_FOUND",
    "VERSION_NOT_SOFT_DELETED",
    "VERSION_SOFT_DELETED",
]

SUBJECT_NOT_FOUND = 40401
VERSION_NOT_FOUND = 40402
SCHEMA_NOT_FOUND = 40403
SUBJECT_SOFT_DELETED = 40404
SUBJECT_NOT_SOFT_DELETED = 40405
VERSION_SOFT_DELETED = 40406
VERSION_NOT_SOFT_DELETED = 40407
SUBJECT_COMPATIBILITY_NOT_FOUND = 40408
SUBJECT_MODE_NOT_FOUND = 40409
INCOMPATIBLE = 409
INVALID_SCHEMA = 42201
INVALID_VERSION = 42202
INVALID_COMPATIBILITY = 42203
REFERENCE_EXISTS = 42206
INVALID_SUBJECT = 42208
STORE_ERROR = 50001
STORE_TIMEOUT = 50002

_STATUS = {4: 404, 5: 500}


class RegistryError(RestError):
    """A registry error: the HTTP status follows from the code as upstream's does."""

    def __init__(self, error_code: int, message: str) -> None:
        if error_code < 1000:
            status = error_code
        elif error_code // 100 == 422:
            status = 422
        else:
            status = _STATUS.get(error_code // 10000, 500)
        super().__init__(status, error_code, message)
