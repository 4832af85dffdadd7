"""The ASGI application: `create_app(settings)` builds one proxy process's app.

The lifespan opens the resources (the shared producer, the metadata client, the
consumer and share-consumer managers and their expiry tasks) and closes them on shutdown: the producer is
flushed, so every record acknowledged to an HTTP client is in the log, and every
consumer instance is closed, leaving its group.

Requests go through one dispatcher: basic auth (when configured), routing on the raw
path (`workbench.httpserver.routing`), the handler, and error rendering. A handler's
`RestError` becomes upstream's JSON error body; anything unexpected is logged with its traceback and
answered 500 / 50002 in one line, never as a stack trace.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from workbench.httpserver.errors import RestError, error_response
from workbench.httpserver.routing import Route, Router, split_path
from workbench.restproxy import consumers, metadata_v2, openapi, produce, produce_v3, share_consumers, share_groups, v3
from workbench.restproxy.consumer_instances import ConsumerManager
from workbench.restproxy.context import Context
from workbench.restproxy.formats import V2_JSON
from workbench.restproxy.metadata import Metadata
from workbench.restproxy.metrics import CONTENT_TYPE_LATEST, Metrics
from workbench.restproxy.producer import AsyncProducer
from workbench.restproxy.schemas import SchemaFormats
from workbench.restproxy.settings import RestProxySettings
from workbench.restproxy.share_instances import ShareManager
from workbench.restproxy.v3 import check_v3_accept
from workbench.restproxy.validation import check_path

__all__ = [
    "Dispatcher",
    "MetadataFactory",
    "ProducerFactory",
    "ProxyApp",
    "create_app",
    "kafka_metadata",
    "kafka_producer",
]

log = logging.getLogger("workbench.restproxy")


def _routes(settings: RestProxySettings) -> list[Route]:
    routes: list[Route] = [Route("GET", "/metrics", _metrics), *openapi.ROUTES]
    if settings.api_v2_enable:
        routes += metadata_v2.ROUTES + produce.ROUTES + consumers.ROUTES + share_consumers.ROUTES
    else:
        routes += [r for r in metadata_v2.ROUTES if r.template == "/"]
    if settings.api_v3_enable:
        routes += v3.ROUTES + produce_v3.ROUTES + share_groups.ROUTES
    return routes


async def _metrics(ctx: Context, request: Request) -> Response:
    return Response(ctx.metrics.render(), media_type=CONTENT_TYPE_LATEST)


class Dispatcher:
    """Auth, routing, the handler, errors and metrics for every HTTP request."""

    def __init__(self, settings: RestProxySettings) -> None:
        self.settings = settings
        self.router = Router(_routes(settings))
        self.credentials = {
            base64.b64encode(f"{user}:{password.get_secret_value()}".encode()).decode(): user
            for user, password in settings.basic_auth.items()
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        ctx: Context = scope["app"].state.ctx
        started = time.perf_counter()
        method = scope["method"]
        segments = split_path(scope.get("raw_path") or scope["path"].encode())
        template = "unmatched"
        response: Any
        try:
            if self.credentials:
                self._authenticate(scope)
            route, params = self.router.match(method, segments)
            template = route.template
            if template.startswith("/v3"):
                check_path(params, v3=True)
                check_v3_accept(dict(scope["headers"]).get(b"accept", b"").decode("latin-1"))
            else:
                check_path(params, v3=False)
            request = Request(scope, receive)
            response = await route.handler(ctx, request, **params)
        except RestError as exc:
            response = error_response(exc, V2_JSON if not segments or segments[0] != "v3" else "application/json")
        except Exception as exc:
            log.exception("%s %s failed", method, scope["path"])
            detail = f": {type(exc).__name__}: {exc}" if self.settings.debug else ""
            response = error_response(RestError(500, 50002, f"Internal Server Error{detail}"))
        await response(scope, receive, send)
        ctx.metrics.observe(method, template, response.status_code, time.perf_counter() - started)

    def _authenticate(self, scope: Scope) -> None:
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "basic":
            try:
                base64.b64decode(token, validate=True)
            except (binascii.Error, ValueError):
                token = ""
            if any(hmac.compare_digest(token, known) for known in self.credentials):
                return
        raise RestError(
            401,
            401,
            "Unauthorized: HTTP basic authentication is required",
            headers={"WWW-Authenticate": f'Basic realm="{self.settings.auth_realm}"'},
        )


class ProxyApp(Starlette):
    """Starlette for the lifespan and `app.state`; HTTP requests go straight to the
    dispatcher, which renders every error itself, so Starlette's error, exception and
    routing layers would only add work on the hot path."""

    def __init__(self, dispatcher: Dispatcher, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dispatcher = dispatcher

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope["app"] = self
            await self.dispatcher(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


ProducerFactory = Callable[[RestProxySettings], AsyncProducer]
MetadataFactory = Callable[[RestProxySettings], Metadata]


def kafka_producer(settings: RestProxySettings) -> AsyncProducer:
    """The real producer: librdkafka with the properties' `producer.*` settings."""
    return AsyncProducer(
        {"bootstrap.servers": settings.bootstrap_servers, **settings.producer}, max_block_ms=settings.max_block_ms
    )


def kafka_metadata(settings: RestProxySettings) -> Metadata:
    """The real metadata client: an AdminClient with the properties' `admin.*` settings."""
    return Metadata({"bootstrap.servers": settings.bootstrap_servers, **settings.admin}, settings.metadata_max_age_ms)


def create_app(
    settings: RestProxySettings,
    *,
    producer_factory: ProducerFactory = kafka_producer,
    metadata_factory: MetadataFactory = kafka_metadata,
) -> Starlette:
    """The proxy's ASGI app; resources open in its lifespan and close on shutdown.

    The factories are the seam for in-process tests (Starlette's TestClient): handler
    logic, validation and error bodies run without sockets or a broker when a test
    passes stand-ins; production always uses the defaults.

    Usage: `uvicorn.run(create_app(load_restproxy_settings("conf/kafka-rest.properties")))`.
    """

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        producer = producer_factory(settings)
        metadata = metadata_factory(settings)
        schemas = SchemaFormats(settings.schema_registry_url) if settings.schema_registry_url else None
        manager = ConsumerManager(settings, schemas)
        shares = ShareManager(settings, schemas, lambda group, configs: metadata.alter_group_configs(group, configs))
        metrics = Metrics(lambda: float(len(producer)), lambda: float(len(manager)))
        producer.start()
        if schemas is not None:
            await asyncio.to_thread(schemas.warm_up)
        ctx = Context(
            settings=settings,
            producer=producer,
            metadata=metadata,
            consumers=manager,
            metrics=metrics,
            schemas=schemas,
            shares=shares,
        )
        try:
            ctx.cluster_id = (await metadata.call(metadata.cluster)).cluster_id or "workbench"
        except RestError as exc:
            await producer.close(timeout=1)
            raise RuntimeError(f"Kafka at {settings.bootstrap_servers} does not answer: {exc.message}") from None
        app.state.ctx = ctx
        expiry = asyncio.create_task(manager.expire_forever())
        share_expiry = asyncio.create_task(shares.expire_forever())
        log.info(
            "REST proxy %s serving on %s:%d (cluster %s)",
            settings.id or "",
            settings.host,
            settings.port,
            ctx.cluster_id,
        )
        try:
            yield
        finally:
            expiry.cancel()
            share_expiry.cancel()
            await shares.close_all()  # their records released first, for the group's other members
            await manager.close_all()
            left = await producer.close(30.0)
            if schemas is not None:
                schemas.close()
            log.info("REST proxy stopped; producer flushed (%d records unacknowledged)", left)

    return ProxyApp(Dispatcher(settings), lifespan=lifespan)
