"""The registry's ASGI app: Confluent Schema Registry's REST API over a `SchemaStore`.

`create_app(settings)` builds one process's app; the lifespan reads the `_schemas`
topic to its end before the first request is served. Requests are routed on the raw
path (a subject may hold `/`, percent-encoded), every name and number is checked
before use, bodies are bounded, and every error is Confluent's JSON body with its
status and code; an unexpected exception is logged and answered 500 / 50001 in one line.

Media types: requests may be `application/vnd.schemaregistry.v1+json`,
`application/vnd.schemaregistry+json`, `application/json` or `application/octet-stream`
(else 415); answers are v1 unless `Accept` prefers plain JSON (an Accept that allows
none of them is 406).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route, Router, split_path
from workbench.registry.compatibility import check_level
from workbench.registry.errors import (
    INVALID_SCHEMA,
    INVALID_SUBJECT,
    INVALID_VERSION,
    SCHEMA_NOT_FOUND,
    SUBJECT_COMPATIBILITY_NOT_FOUND,
    SUBJECT_MODE_NOT_FOUND,
    SUBJECT_NOT_FOUND,
    VERSION_NOT_FOUND,
    RegistryError,
)
from workbench.registry.log import SchemaVersion
from workbench.registry.schemas import SCHEMA_TYPES, Reference
from workbench.registry.settings import RegistrySettings
from workbench.registry.store import SchemaStore

__all__ = ["INT32_MAX", "RegistryApp", "SUBJECT_MAX_CHARS", "V1_JSON", "create_app"]

log = logging.getLogger("workbench.registry")

V1_JSON = "application/vnd.schemaregistry.v1+json"
_REQUEST_TYPES = {V1_JSON, "application/vnd.schemaregistry+json", "application/json", "application/octet-stream"}
_ANSWER_TYPES = (V1_JSON, "application/vnd.schemaregistry+json", "application/json")
#: Subject names: Confluent refuses control characters; the length bound is ours.
SUBJECT_MAX_CHARS = 1000
INT32_MAX = 2**31 - 1


def _answer(body: Any, media_type: str, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type=media_type)


def _subject(name: str, *, writing: bool = False) -> str:
    """A subject name as given; on writes an invalid one is 42208, on reads it is simply not found."""
    bad = (
        not name
        or len(name) > SUBJECT_MAX_CHARS
        or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name)
        or name in ("__GLOBAL", "__EMPTY")
    )
    if bad:
        shown = repr(name[:80]) + ("…" if len(name) > 80 else "")
        if writing:
            raise RegistryError(
                INVALID_SUBJECT,
                f"Invalid subject {shown}: it must be 1 to {SUBJECT_MAX_CHARS} characters without control characters",
            )
        raise RegistryError(SUBJECT_NOT_FOUND, f"Subject {shown} not found.")
    return name


def _version(text: str) -> int | None:
    """`latest` / `-1` (None) or a version 1..2^31-1; anything else 42202."""
    if text in ("latest", "-1"):
        return None
    if text.isascii() and text.isdigit() and len(text) <= 10 and 1 <= int(text) <= INT32_MAX:
        return int(text)
    shown = repr(text[:40])
    raise RegistryError(
        INVALID_VERSION,
        f"The specified version {shown} is not a valid version id. Allowed values "
        'are between [1, 2^31-1] and the string "latest"',
    )


def _schema_id(text: str) -> int:
    """An id 1..2^31-1; a number out of range is 40403, and a path segment that is no
    integer at all 404 / 404, as JAX-RS answers an `int` path parameter it cannot convert."""
    if text.isascii() and text.isdigit() and len(text) <= 10 and 1 <= int(text) <= INT32_MAX:
        return int(text)
    if not re.fullmatch(r"-?[0-9]+", text):
        raise RestError(404, 404, "HTTP 404 Not Found")
    raise RegistryError(SCHEMA_NOT_FOUND, f"Schema {text[:40]} not found")


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").lower() == "true"


async def _body(request: Request, limit: int) -> dict[str, Any]:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and content_type not in _REQUEST_TYPES:
        raise RestError(415, 415, "HTTP 415 Unsupported Media Type")  # Jersey's NotSupportedException
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RestError(413, 413, f"Request body larger than request.max.bytes ({limit} bytes)")
        chunks.append(chunk)
    try:
        body = orjson.loads(b"".join(chunks))
    except orjson.JSONDecodeError as exc:
        raise RestError(400, 400, f"Unrecognized JSON: {str(exc)[:200]}") from None
    if not isinstance(body, dict):
        # Well-formed JSON of the wrong shape: Jackson's mapping error, which rest-utils answers 422 / 422.
        raise RestError(422, 422, f"Unrecognized request body: expected a JSON object, got {type(body).__name__}")
    return body


def _schema_request(body: dict[str, Any]) -> tuple[str, str, tuple[Reference, ...]]:
    """(type, text, references) of a register / lookup / check body; 42201 when malformed."""
    text = body.get("schema")
    if text is None or (isinstance(text, str) and not text.strip()):
        raise RegistryError(INVALID_SCHEMA, "Empty schema")  # Confluent's InvalidSchemaException
    if not isinstance(text, str):
        raise RegistryError(INVALID_SCHEMA, 'Invalid schema: "schema" must be a string')
    schema_type = body.get("schemaType") or "AVRO"
    if not isinstance(schema_type, str) or schema_type.upper() not in SCHEMA_TYPES:
        raise RegistryError(
            INVALID_SCHEMA, f"Invalid schema type {str(schema_type)[:40]!r}; use one of {list(SCHEMA_TYPES)}"
        )
    raw_refs = body.get("references") or []
    if not isinstance(raw_refs, list) or len(raw_refs) > 1000:
        raise RegistryError(INVALID_SCHEMA, 'Invalid schema: "references" must be a list (at most 1000)')
    refs = []
    for ref in raw_refs:
        if not (
            isinstance(ref, dict)
            and isinstance(ref.get("name"), str)
            and isinstance(ref.get("subject"), str)
            and isinstance(ref.get("version"), int)
            and not isinstance(ref.get("version"), bool)
        ):
            raise RegistryError(INVALID_SCHEMA, "Invalid schema: each reference needs name, subject and version")
        version = ref["version"]
        if not 1 <= version <= INT32_MAX and version != -1:
            raise RegistryError(INVALID_SCHEMA, f"Invalid schema: reference version {version} is out of range")
        refs.append(Reference(ref["name"], ref["subject"], version))
    return schema_type.upper(), text, tuple(refs)


class _Api:
    """The handlers; `store` is created in the lifespan."""

    def __init__(self, settings: RegistrySettings) -> None:
        self.settings = settings
        self.store: SchemaStore | None = None

    @property
    def db(self) -> SchemaStore:
        assert self.store is not None
        return self.store

    async def root(self, request: Request) -> Any:
        return {}

    async def types(self, request: Request) -> Any:
        return ["JSON", "PROTOBUF", "AVRO"]

    async def contexts(self, request: Request) -> Any:
        return ["."]

    async def mode(self, request: Request, subject: str | None = None) -> Any:
        """READWRITE, the only mode; a subject has no mode of its own, so without
        `defaultToGlobal=true` Confluent's 40409 (Karapace answers 40401 for an unknown subject)."""
        if subject is not None and not _flag(request, "defaultToGlobal"):
            raise RegistryError(
                SUBJECT_MODE_NOT_FOUND, f"Subject '{subject[:200]}' does not have subject-level mode configured"
            )
        return {"mode": "READWRITE"}

    async def subjects(self, request: Request) -> Any:
        return self.db.subjects(_flag(request, "deleted"), request.query_params.get("subjectPrefix", ""))

    async def list_versions(self, request: Request, subject: str) -> Any:
        return [v.version for v in self.db.versions(_subject(subject), deleted=_flag(request, "deleted"))]

    async def get_version(self, request: Request, subject: str, version: str) -> Any:
        number = _version(version)
        stored = self.db.version(_subject(subject), number, deleted=_flag(request, "deleted"))
        body = stored.to_json()
        serialized = await self._serialized(request, stored)
        if serialized is not None:
            body["schema"] = serialized
        return body

    async def _serialized(self, request: Request, stored: SchemaVersion) -> str | None:
        """A Protobuf schema as a base64 `FileDescriptorProto` when `format=serialized` asks
        (what confluent-kafka's deserializer asks for, for the schema and each reference)."""
        if stored.schema_type != "PROTOBUF" or request.query_params.get("format") != "serialized":
            return None
        parsed = await asyncio.to_thread(self.db.parsed, stored)
        return base64.b64encode(parsed.parsed.SerializeToString()).decode()

    async def get_version_schema(self, request: Request, subject: str, version: str) -> Any:
        number = _version(version)
        return Response(
            self.db.version(_subject(subject), number, deleted=_flag(request, "deleted")).schema, media_type=V1_JSON
        )

    async def register(self, request: Request, subject: str) -> Any:
        body = await _body(request, self.settings.request_max_bytes)
        schema_type, text, refs = _schema_request(body)
        schema_id = await asyncio.to_thread(
            self.db.register, _subject(subject, writing=True), schema_type, text, refs, _flag(request, "normalize")
        )
        return {"id": schema_id}

    async def lookup(self, request: Request, subject: str) -> Any:
        body = await _body(request, self.settings.request_max_bytes)
        schema_type, text, refs = _schema_request(body)
        found = await asyncio.to_thread(
            self.db.lookup,
            _subject(subject),
            schema_type,
            text,
            refs,
            _flag(request, "deleted"),
            _flag(request, "normalize"),
        )
        return found.to_json()

    async def delete_subject(self, request: Request, subject: str) -> Any:
        return await asyncio.to_thread(self.db.delete_subject, _subject(subject), _flag(request, "permanent"))

    async def delete_version(self, request: Request, subject: str, version: str) -> Any:
        number = _version(version)
        return await asyncio.to_thread(self.db.delete_version, _subject(subject), number, _flag(request, "permanent"))

    async def _by_id(self, schema_id: int) -> SchemaVersion:
        """The schema with this id; an id this instance has not seen yet is looked for again
        once it has read `_schemas` to its end (see `Store.catch_up`)."""
        try:
            return self.db.by_id(schema_id)
        except RegistryError as exc:
            if exc.error_code != SCHEMA_NOT_FOUND:
                raise
        await asyncio.to_thread(self.db.catch_up)
        return self.db.by_id(schema_id)

    async def schema_by_id(self, request: Request, schema_id: str) -> Any:
        stored = await self._by_id(_schema_id(schema_id))
        body: dict[str, Any] = {}
        if stored.schema_type != "AVRO":
            body["schemaType"] = stored.schema_type
        if stored.references:
            body["references"] = [r.to_json() for r in stored.references]
        body["schema"] = (await self._serialized(request, stored)) or stored.schema
        return body

    async def schema_text_by_id(self, request: Request, schema_id: str) -> Any:
        return Response((await self._by_id(_schema_id(schema_id))).schema, media_type=V1_JSON)

    async def id_subjects(self, request: Request, schema_id: str) -> Any:
        await self._by_id(_schema_id(schema_id))
        uses = self.db.uses_of(_schema_id(schema_id), _flag(request, "deleted"))
        return sorted({v.subject for v in uses})

    async def id_versions(self, request: Request, schema_id: str) -> Any:
        await self._by_id(_schema_id(schema_id))
        uses = self.db.uses_of(_schema_id(schema_id), _flag(request, "deleted"))
        return [{"subject": v.subject, "version": v.version} for v in uses]

    async def get_config(self, request: Request, subject: str | None = None) -> Any:
        if subject is None:
            return {"compatibilityLevel": self.db.level(None) or "BACKWARD"}
        _subject(subject)
        level = self.db.level(subject)
        if level is None:
            if _flag(request, "defaultToGlobal"):
                return {"compatibilityLevel": self.db.effective_level(subject)}
            raise RegistryError(
                SUBJECT_COMPATIBILITY_NOT_FOUND,
                f"Subject '{subject}' does not have subject-level compatibility configured",
            )
        return {"compatibilityLevel": level}

    async def put_config(self, request: Request, subject: str | None = None) -> Any:
        body = await _body(request, self.settings.request_max_bytes)
        level = check_level(body.get("compatibility", body.get("compatibilityLevel")))
        name = _subject(subject, writing=True) if subject is not None else None
        await asyncio.to_thread(self.db.set_level, name, level)
        return {"compatibility": level}

    async def delete_config(self, request: Request, subject: str | None = None) -> Any:
        name = _subject(subject) if subject is not None else None
        old = self.db.level(name)
        if name is not None and old is None:
            raise RegistryError(SUBJECT_NOT_FOUND, f"Subject '{name}' not found.")
        await asyncio.to_thread(self.db.set_level, name, None)
        return {"compatibilityLevel": old or "BACKWARD"}

    async def check(self, request: Request, subject: str, version: str | None = None) -> Any:
        number = _version(version) if version is not None else None
        body = await _body(request, self.settings.request_max_bytes)
        schema_type, text, refs = _schema_request(body)
        name = _subject(subject)
        if number is not None:
            try:
                self.db.version(name, number)
            except RegistryError as exc:  # Confluent: 40402 whether the subject or only the version is missing
                if exc.error_code == SUBJECT_NOT_FOUND:
                    raise RegistryError(VERSION_NOT_FOUND, f"Version {number} not found.") from None
                raise
        new = await asyncio.to_thread(
            self.db.parsed, schema_type=schema_type, text=text, references=refs, normalize=_flag(request, "normalize")
        )
        problems = await asyncio.to_thread(self.db.check, name, new, number)
        answer: dict[str, Any] = {"is_compatible": not problems}
        if _flag(request, "verbose"):
            answer["messages"] = problems
        return answer


def _routes(api: _Api) -> list[Route]:
    get, post, put, delete = "GET", "POST", "PUT", "DELETE"
    return [
        Route(get, "/", api.root),
        Route(get, "/schemas/types", api.types),
        Route(get, "/contexts", api.contexts),
        Route(get, "/mode", api.mode),
        Route(get, "/mode/{subject}", api.mode),
        Route(get, "/subjects", api.subjects),
        Route(get, "/subjects/{subject}/versions", api.list_versions),
        Route(post, "/subjects/{subject}/versions", api.register),
        Route(get, "/subjects/{subject}/versions/{version}", api.get_version),
        Route(get, "/subjects/{subject}/versions/{version}/schema", api.get_version_schema),
        Route(delete, "/subjects/{subject}/versions/{version}", api.delete_version),
        Route(post, "/subjects/{subject}", api.lookup),
        Route(delete, "/subjects/{subject}", api.delete_subject),
        Route(get, "/schemas/ids/{schema_id}", api.schema_by_id),
        Route(get, "/schemas/ids/{schema_id}/schema", api.schema_text_by_id),
        Route(get, "/schemas/ids/{schema_id}/subjects", api.id_subjects),
        Route(get, "/schemas/ids/{schema_id}/versions", api.id_versions),
        Route(get, "/config", api.get_config),
        Route(put, "/config", api.put_config),
        Route(delete, "/config", api.delete_config),
        Route(get, "/config/{subject}", api.get_config),
        Route(put, "/config/{subject}", api.put_config),
        Route(delete, "/config/{subject}", api.delete_config),
        Route(post, "/compatibility/subjects/{subject}/versions", api.check),
        Route(post, "/compatibility/subjects/{subject}/versions/{version}", api.check),
    ]


def _answer_type(accept: str) -> str:
    """The response media type for an Accept header; 406 when it allows none of ours."""
    if not accept:
        return V1_JSON
    offered = [part.split(";")[0].strip().lower() for part in accept.split(",")]
    for media in offered:
        if media in _ANSWER_TYPES:
            return media
        if media in ("*/*", "application/*"):
            return V1_JSON
    raise RestError(406, 406, "HTTP 406 Not Acceptable")


class RegistryApp(Starlette):
    """Starlette for the lifespan; HTTP goes to one dispatcher that renders every error."""

    def __init__(self, api: _Api, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api = api
        self.router_ = Router(_routes(api))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        media = V1_JSON
        try:
            headers = dict(scope["headers"])
            media = _answer_type(headers.get(b"accept", b"").decode("latin-1"))
            segments = split_path(scope.get("raw_path") or scope["path"].encode())
            route, params = self.router_.match(scope["method"], segments)
            result = await route.handler(Request(scope, receive), **params)
            response = result if isinstance(result, Response) else _answer(result, media)
        except RestError as exc:
            response = Response(orjson.dumps(exc.body()), status_code=exc.status, media_type=media, headers=exc.headers)
        except Exception:
            log.exception("%s %s failed", scope["method"], scope["path"])
            response = Response(
                orjson.dumps({"error_code": 50001, "message": "Error in the backend data store"}),
                status_code=500,
                media_type=media,
            )
        await response(scope, receive, send)


def create_app(settings: RegistrySettings, store: SchemaStore | None = None) -> Starlette:
    """The registry's ASGI app; the store starts (reads `_schemas` to its end) in the lifespan.

    Usage: `uvicorn.run(create_app(load_registry_settings(bootstrap_servers="127.0.0.1:9092")))`.
    """
    api = _Api(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        active = store or SchemaStore(
            {"bootstrap.servers": settings.bootstrap_servers, "allow.auto.create.topics": False},
            topic=settings.topic,
            timeout_s=settings.timeout_ms / 1000,
        )
        await asyncio.to_thread(active.start)
        api.store = active
        log.info("Schema Registry serving on %s:%d (topic %s)", settings.host, settings.port, settings.topic)
        try:
            yield
        finally:
            await asyncio.to_thread(active.close)

    return RegistryApp(api, lifespan=lifespan)
