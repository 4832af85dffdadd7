"""Schema Registry lookups: what a schema id costs a consumer, cached and uncached.

Every record in a schema format names its schema by id; a deserializer looks the id up
once and then keeps it. `cached=True` measures confluent-kafka's `SchemaRegistryClient`
answering from its cache (what every record after the first costs); `cached=False`
sends every lookup to the registry (`GET /schemas/ids/{id}` on one kept-alive HTTP
session), the cost of a first record, of a new schema, or of a client without a cache.

    workbench bench registry_lookups --param cached=false --param lookups=5000
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import numpy as np
import requests

from workbench.bench._run import result_row
from workbench.errors import BenchError
from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack

__all__ = ["registry_lookups"]


def registry_lookups(
    stack: Stack,
    *,
    lookups: int = 5000,
    schemas: int = 10,
    cached: bool = False,
    max_seconds: float = 30.0,
    topic_prefix: str = "",
) -> dict[str, Any]:
    """Look up `schemas` registered ids round-robin, `lookups` times; one result row.

    Args:
        lookups: lookups to make at most.
        schemas: distinct Avro schemas registered first (each under its own subject).
        cached: through confluent-kafka's client cache, or every lookup over HTTP.
        max_seconds: stop after this long.
        topic_prefix: unused (no topic is made); taken so `sweep` calls every experiment alike.

    Raises:
        BenchError: bad parameters, or a profile without a Schema Registry.
    """
    if lookups < 1 or schemas < 1 or max_seconds <= 0:
        raise BenchError(
            f"lookups and schemas must be at least 1 and max_seconds positive, got {lookups}, {schemas}, {max_seconds}"
        )
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    from workbench.errors import StackError

    try:
        conf = stack.registry_config()
    except StackError as exc:
        raise BenchError(str(exc)) from None
    run = uuid.uuid4().hex[:8]
    client = SchemaRegistryClient(conf)
    session = requests.Session()
    if "basic.auth.user.info" in conf:
        session.auth = tuple(conf["basic.auth.user.info"].split(":", 1))  # type: ignore[assignment]
    try:
        ids = []
        for i in range(schemas):
            text = json.dumps({"type": "record", "name": f"Bench{run}{i}", "fields": [{"name": "a", "type": "long"}]})
            ids.append(client.register_schema(f"bench-{run}-{i}-value", Schema(text, "AVRO")))
        latencies = np.empty(lookups)
        done = 0
        url = conf["url"].rstrip("/")
        with ResourceMonitor(stack.services) as monitor:
            started = time.perf_counter()
            deadline = started + max_seconds
            while done < lookups and time.perf_counter() < deadline:
                schema_id = ids[done % len(ids)]
                before = time.perf_counter()
                if cached:
                    client.get_schema(schema_id)
                else:
                    answer = session.get(f"{url}/schemas/ids/{schema_id}", timeout=10)
                    answer.raise_for_status()
                latencies[done] = time.perf_counter() - before
                done += 1
            seconds = time.perf_counter() - started
    finally:
        session.close()
        client.close()
    params = {"cached": cached, "schemas": schemas}
    rate = done / seconds if seconds else float("nan")
    return result_row(
        stack,
        experiment="registry_lookups",
        params=params,
        records=done,
        payload_bytes=float("nan"),
        seconds=seconds,
        latencies=latencies[:done],
        latency_of="lookup",
        resources=monitor.columns(),
        extra={"lookups_s": rate},
    )
