"""`run_server`: one embedded HTTP service in the foreground, on the shared server stack.

The REST proxy and the Schema Registry run the same way: uvicorn with uvloop and
httptools, header size and header time bounded by `limited_protocol`, no websockets,
the app's lifespan on (it opens and closes the Kafka clients), no access log and no
`server` header, and on SIGTERM requests in flight get `shutdown.graceful.ms` to finish.
SIGUSR2 writes every thread's stack to stderr (the service's log), without the event loop
or the GIL: what the stack's supervisor asks of a process that stopped answering, before it
kills it. A service adds only what is its own (the proxy's keep-alive and connection limits).
"""

from __future__ import annotations

import faulthandler
import signal
import sys
from typing import Any

from workbench.errors import StackError

__all__ = ["run_server"]


def run_server(
    app: Any,
    *,
    service: str,
    host: str,
    port: int,
    header_max_bytes: int,
    header_timeout_ms: int,
    shutdown_graceful_ms: int,
    **uvicorn_options: Any,
) -> None:
    """Serve `app` until SIGTERM/SIGINT.

    Args:
        app: the ASGI application (`create_app(settings)`).
        service: what it is, for the error ("the REST proxy").
        host, port: where to listen.
        header_max_bytes, header_timeout_ms: the bounds of `limited_protocol`.
        shutdown_graceful_ms: how long requests in flight may take after SIGTERM (whole
            seconds, at least 1, as uvicorn counts).
        **uvicorn_options: further `uvicorn.Config` settings of this service alone.

    Raises:
        StackError: the server did not start (port taken, the lifespan failed).

    Usage: `run_server(create_app(settings), service="the Schema Registry", host=..., ...)`.
    """
    import uvicorn

    from workbench.httpserver.protocol import limited_protocol

    faulthandler.register(signal.SIGUSR2, file=sys.stderr, all_threads=True)

    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            loop="uvloop",
            http=limited_protocol(header_max_bytes, header_timeout_ms),
            ws="none",
            lifespan="on",
            access_log=False,
            log_level="warning",
            timeout_graceful_shutdown=max(1, shutdown_graceful_ms // 1000),
            server_header=False,
            **uvicorn_options,
        )
    )
    server.run()
    if not server.started:
        raise StackError(f"{service} did not start on {host}:{port}; see the log above")
