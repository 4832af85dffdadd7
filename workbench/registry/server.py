"""`serve`: run one registry process in the foreground (`python -m workbench.registry`).

The server stack it shares with the REST proxy (`workbench.httpserver`): uvicorn with uvloop
and httptools, the header size and header time limits; one process per instance. Several
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
    from workbench.httpserver.run import run_server
    from workbench.registry.app import create_app

    run_server(
        create_app(settings),
        service="the Schema Registry",
        host=settings.host,
        port=settings.port,
        header_max_bytes=settings.header_max_bytes,
        header_timeout_ms=settings.header_timeout_ms,
        shutdown_graceful_ms=settings.shutdown_graceful_ms,
    )


def main(args: Sequence[str] | None = None) -> int:
    """`python -m workbench.registry --port 8081 --bootstrap-servers HOST:PORT`."""
    parser = argparse.ArgumentParser(prog="python -m workbench.registry", description="The embedded Schema Registry.")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--bootstrap-servers")
    options = parser.parse_args(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        serve(load_registry_settings(host=options.host, port=options.port, bootstrap_servers=options.bootstrap_servers))
    except WorkbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
