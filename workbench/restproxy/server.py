"""`serve`: run one proxy process in the foreground (what `workbench proxy` calls).

One process is one proxy instance: uvicorn with uvloop and httptools, one event loop.
Scaling out means more processes (the stack starts `proxy.instances` of them behind
nginx), never threads in one process: the producer, the consumers and the metrics are
per process, as in upstream.

On SIGTERM or Ctrl-C uvicorn stops accepting connections, lets requests in flight
finish (up to `shutdown.graceful.ms`), then the app's lifespan flushes the producer
and closes the consumers.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from workbench.errors import ConfigError, StackError
from workbench.restproxy.settings import RestProxySettings, load_restproxy_settings

__all__ = ["serve", "validate_clients"]

log = logging.getLogger("workbench.restproxy")


def validate_clients(settings: RestProxySettings) -> None:
    """Let librdkafka check the pass-through settings now, so a typo stops the start.

    Raises:
        ConfigError: librdkafka refused a producer, consumer or admin setting.
    """
    from confluent_kafka import Consumer, KafkaException, Producer
    from confluent_kafka.admin import AdminClient

    base: dict[str, Any] = {"bootstrap.servers": settings.bootstrap_servers, "logger": log}
    for role, build in (
        ("producer", lambda: Producer({**base, **settings.producer})),
        ("consumer", lambda: Consumer({**base, **settings.consumer, "group.id": "workbench-config-check"}).close()),
        ("admin", lambda: AdminClient({**base, **settings.admin})),
    ):
        try:
            build()
        except (KafkaException, ValueError, TypeError) as exc:
            error = exc.args[0] if exc.args else exc
            text = error.str() if hasattr(error, "str") else str(error)
            raise ConfigError(settings.source, f"{role}.*", f"librdkafka refused a {role} setting: {text}") from None


#: How long every bootstrap broker may refuse connections before the start gives up: a
#: broker that is starting too gets this long; a wrong port is no longer 10 s of waiting.
_REFUSED_GRACE_S = 2.0


def _require_kafka(settings: RestProxySettings, timeout: float = 10.0) -> None:
    """Fail in one line when Kafka does not answer, before the server starts.

    librdkafka retries a refused connection for as long as it is asked to, so the
    answer is asked for in short steps, and the start ends once every bootstrap broker
    has been down (librdkafka's `_ALL_BROKERS_DOWN`) for `_REFUSED_GRACE_S`; a broker
    that does not answer at all still gets the whole `timeout`.
    """
    import time

    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    seen: dict[str, KafkaError] = {}  # "down": every broker down; "cause": the last other error

    def on_error(error: KafkaError) -> None:
        seen["down" if error.code() == KafkaError._ALL_BROKERS_DOWN else "cause"] = error

    # Quiet (log_level 0): each refused attempt would log a line, and the cause is in the error.
    conf: dict[str, Any] = {
        "bootstrap.servers": settings.bootstrap_servers,
        **settings.admin,
        "log_level": 0,
        "error_cb": on_error,
    }
    client = AdminClient(conf)
    started = time.monotonic()
    all_down: float | None = None
    while True:
        try:
            client.list_topics(timeout=0.25)
            return
        except KafkaException as exc:
            seen.setdefault("cause", exc.args[0])
        client.poll(0)  # serves on_error
        now = time.monotonic()
        if all_down is None and "down" in seen:
            all_down = now
        if now - started >= timeout or (all_down is not None and now - all_down >= _REFUSED_GRACE_S):
            break
    cause = seen["cause"]
    raise StackError(
        f"Kafka at {settings.bootstrap_servers} does not answer ({cause.str()}); start it "
        "(`workbench up`) or fix bootstrap.servers"
    )


def _tune_gc() -> None:
    """Collect less often: a 500-record request allocates ~2,000 containers, which with
    CPython's default threshold (700) ran several collections per request (~7 % of the
    proxy's CPU in a profile). Start-up objects are frozen out of every collection."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


def serve(
    config: Path | str | None, host: str | None = None, port: int | None = None, bootstrap_servers: str | None = None
) -> None:
    """Run the REST proxy until SIGTERM/SIGINT.

    Args:
        config: a `kafka-rest.properties` file (None: defaults and environment only).
        host, port: override `listeners`.
        bootstrap_servers: overrides `bootstrap.servers`.

    Raises:
        ConfigError: the properties are wrong (one line, naming the file and the key).
        StackError: the server did not start (port taken, Kafka not answering).

    Usage: `serve(Path("conf/kafka-rest.properties"), port=8083)`.
    """
    from workbench.httpserver.run import run_server
    from workbench.restproxy.app import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _tune_gc()
    settings = load_restproxy_settings(config, host=host, port=port, bootstrap_servers=bootstrap_servers)
    validate_clients(settings)
    _require_kafka(settings)
    run_server(
        create_app(settings),
        service="the REST proxy",
        host=settings.host,
        port=settings.port,
        header_max_bytes=settings.header_max_bytes,
        header_timeout_ms=settings.header_timeout_ms,
        shutdown_graceful_ms=settings.shutdown_graceful_ms,
        timeout_keep_alive=max(1, settings.idle_timeout_ms // 1000),
        limit_concurrency=settings.connection_limit or None,
        proxy_headers=False,
    )
