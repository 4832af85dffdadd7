"""The cost of HTTP alone: what any Python REST proxy pays before it touches a record.

A bare app on the proxy's own server stack (uvicorn with httptools and uvloop, starlette)
reads each produce body whole and answers a Confluent-shaped response with one offset per
record of a call, without parsing the body or talking to Kafka. Driven by the same
`ProxyClient` threads as `proxy_produce`, it shows the CPU per MB that the client and the
server spend on HTTP, which no proxy can avoid: add the broker's share and it bounds the
proxy's MB/s on the machine, whatever the proxy does with the records.

    workbench bench http_floor --param record_bytes=1000 --param records_per_call=500
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.bench.proxy_calls import (
    ProduceJob,
    calls_row,
    check_client,
    request_bodies,
    run_calls,
    run_wrk_calls,
)
from workbench.errors import BenchError
from workbench.measure.resources import ResourceMonitor
from workbench.proxy.wire import V2
from workbench.stack import ServiceRecord, Stack
from workbench.stack.process import free_port, is_ours, port_in_use, spawn, stop

__all__ = ["http_floor"]

_HOST = "127.0.0.1"
_START_TIMEOUT_S = 30.0


def http_floor(
    stack: Stack,
    *,
    records: int = 200_000,
    record_bytes: int = 1000,
    records_per_call: int = 500,
    concurrency: int = 4,
    format: str = "json",
    max_seconds: float = 30.0,
    topic_prefix: str = "",
    client: str = "python",
) -> dict[str, Any]:
    """Send produce calls to the bare HTTP app and measure MB/s and CPU (`proxy_cpu_s` is the app).

    Args:
        records: records to send at most (rounded up to whole calls).
        record_bytes: size of each value, as in `proxy_produce`.
        records_per_call: records in each call's array.
        concurrency: client threads, each with its own `ProxyClient`.
        format: "binary" or "json" bodies (the app reads but does not decode them).
        max_seconds: stop issuing calls after this long.
        topic_prefix: unused (no topic is made); taken so that `sweep` calls every
            experiment alike.
        client: "python" or "wrk", as in `proxy_produce` (wrk runs for `max_seconds`).

    Returns:
        One row shaped like `proxy_produce`'s; nothing is written to Kafka.

    Usage: `http_floor(stack, record_bytes=1000, records_per_call=500, concurrency=4)`.
    """
    if records_per_call < 1 or concurrency < 1 or records < 1:
        raise BenchError("records, records_per_call and concurrency must each be at least 1")
    if format not in ("binary", "json"):
        raise BenchError(f"format must be 'binary' or 'json', got {format!r}")
    check_client(client)
    calls = math.ceil(records / records_per_call)
    with _floor_app(records_per_call) as app:
        job = ProduceJob(
            urls=[app.address],
            topic="floor",
            records_per_call=records_per_call,
            last_size=records_per_call,
            record_bytes=record_bytes,
            format=format,
            session_reuse=True,
            concurrency=concurrency,
            max_seconds=max_seconds,
        )
        bodies = request_bodies(job, last_is_short=False) if client != "wrk" else None
        with ResourceMonitor({app.name: app}) as monitor:
            if bodies is None:
                outcome, seconds = run_wrk_calls(job, 1)
            else:
                started = time.perf_counter()
                outcome = run_calls(job, calls, bodies)
                seconds = time.perf_counter() - started
    return calls_row(
        stack,
        experiment="http_floor",
        params={
            "records": records,
            "record_bytes": record_bytes,
            "records_per_call": records_per_call,
            "concurrency": concurrency,
            "format": format,
            "client": client,
        },
        outcome=outcome,
        record_bytes=record_bytes,
        seconds=seconds,
        monitor=monitor,
        client=client,
    )


@contextmanager
def _floor_app(records_per_call: int) -> Iterator[ServiceRecord]:
    """Run the bare app in its own process (its CPU is measured apart); yield its service
    record, of kind "proxy" so that `ResourceMonitor` counts it as one, its URL the address."""
    port = free_port(_HOST)
    command = [sys.executable, "-m", "workbench.bench.http_floor", str(port), str(records_per_call)]
    with tempfile.TemporaryDirectory(prefix="wb-http-floor-") as folder:
        log = Path(folder) / "app.log"
        app = spawn(command, log)
        created = app.create_time()
        try:
            deadline = time.monotonic() + _START_TIMEOUT_S
            while not port_in_use(_HOST, port):
                if not is_ours(app.pid, created) or time.monotonic() > deadline:
                    last = log.read_text(errors="replace").strip().splitlines()[-1:]
                    raise BenchError(f"the bare HTTP app did not start on port {port}: {last}")
                time.sleep(0.05)
            url = f"http://{_HOST}:{port}"
            yield ServiceRecord("http-floor", "proxy", app.pid, created, url, str(log), url=url)
        finally:
            stop(app.pid, created)


def _serve(port: int, records_per_call: int) -> None:
    """The bare app: read the body, answer `records_per_call` offsets, nothing else."""
    import orjson
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    answer = orjson.dumps(
        {
            "key_schema_id": None,
            "value_schema_id": None,
            "offsets": [
                {"partition": 0, "offset": i, "error_code": None, "error": None} for i in range(records_per_call)
            ],
        }
    )

    async def produce(request: Request) -> Response:
        await request.body()
        return Response(answer, media_type=V2)

    app = Starlette(routes=[Route("/topics/{topic}", produce, methods=["POST"])])
    uvicorn.run(
        app,
        host=_HOST,
        port=port,
        loop="uvloop",
        http="httptools",
        ws="none",
        log_level="warning",
        access_log=False,
        server_header=False,
    )


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
