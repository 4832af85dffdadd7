"""`serve`: run one registry process in the foreground (`python -m workbench.registry`).

The same server stack as the REST proxy: uvicorn with uvloop and httptools and the
proxy's header size and header time limits; one process per instance. Several
instances on one `_schemas` topic agree on every id (see `store.py`). On SIGTERM
uvicorn lets requests in flight finish, then the store's reader stops.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from workbench.errors import WorkbenchError
from workbench.registry.settings import RegistrySettings, load_registry_settings

__all__ = ["main", "serve"]

log = logging.getLogger("workbench.registry")


def serve(settings: RegistrySettings) -> None:
    """Run the registry until SIGTERM/SIGINT.

    Raises:
        StackError: the server did not start (port taken, Kafka not answering).
    """
    import uvicorn

    from workbench.errors import StackError
    from workbench.registry.app import create_app
    from workbench.restproxy.protocol import limited_protocol

    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            loop="uvloop",
            http=limited_protocol(settings.header_max_bytes, settings.header_timeout_ms),
            ws="none",
            lifespan="on",
            access_log=False,
            log_level="warning",
            timeout_graceful_shutdown=max(1, settings.shutdown_graceful_ms // 1000),
            server_header=False,
        )
    )
    server.run()
    if not server.started:
        raise StackError(f"the Schema Registry did not start on {settings.host}:{settings.port}; see the log above")


def main(args: Sequence[str] | None = None) -> int:
    """`python -m workbench.registry --port 8081 --bootstrap-servers HOST:PORT`."""
    parser = argparse.ArgumentParser(prog="python -m workbench.registry", description="The embedded Schema Registry.")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--bootstrap-servers")
    options = parser.parse_args(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        serve(load_registry_settings(host=options.host, port=options.port,
                                     bootstrap_servers=options.bootstrap_servers))  # fmt: skip
    except WorkbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
