"""The Schema Registry as a stack service: started by `up`, supervised, listed by `status`,
handed to the REST proxies as `schema.registry.url`, reachable with the stack's client settings."""

from __future__ import annotations

import json
import time
import uuid

import psutil
import pytest
import requests

from workbench.stack import Stack, status


def test_the_stack_runs_a_registry_and_tells_the_proxies(stack: Stack) -> None:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    rows = status(stack.profile)
    row = rows["services"]["registry"]
    assert row["kind"] == "registry" and row["healthy"] is True
    assert rows["schema_registry"] == row["url"] == stack.registry_url
    for name, proxy in rows["services"].items():
        if proxy["kind"] == "proxy":
            serving = psutil.Process(proxy["serving_pid"])
            assert serving.environ().get("KAFKA_REST_SCHEMA_REGISTRY_URL") == stack.registry_url, name
    client = SchemaRegistryClient(stack.registry_config())
    try:
        subject = f"stack-{uuid.uuid4().hex[:8]}-value"
        schema_id = client.register_schema(subject, Schema(json.dumps({"type": "string"}), "AVRO"))
        assert client.get_latest_version(subject).schema_id == schema_id
    finally:
        client.close()


def test_a_killed_registry_is_restarted_and_keeps_its_ids(stack: Stack) -> None:
    """SIGKILL the serving child (ours: the session's stack started it): the supervisor
    restarts it, it reads `_schemas` again, and the ids are the same."""
    url = stack.registry_url
    subject = f"restart-{uuid.uuid4().hex[:8]}-value"
    # Compact: the canonical form the registry stores and answers with.
    schema = json.dumps(
        {"type": "record", "name": "Kept", "fields": [{"name": "a", "type": "int"}]}, separators=(",", ":")
    )
    schema_id = requests.post(f"{url}/subjects/{subject}/versions", json={"schema": schema}, timeout=30).json()["id"]
    row = status(stack.profile)["services"]["registry"]
    serving = psutil.Process(row["serving_pid"])
    serving.kill()
    serving.wait(10)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        row = status(stack.profile)["services"]["registry"]
        if row["healthy"] and row.get("restarts") == 1:
            break
        time.sleep(0.5)
    assert row["healthy"] and row.get("restarts") == 1, row
    assert row["serving_pid"] != serving.pid
    assert requests.get(f"{url}/schemas/ids/{schema_id}", timeout=30).json()["schema"] == schema
    found = requests.post(f"{url}/subjects/{subject}", json={"schema": schema}, timeout=30).json()
    assert (found["id"], found["version"]) == (schema_id, 1)


def test_registry_lookups_benchmark_counts_every_lookup(stack: Stack) -> None:
    from workbench.bench import registry_lookups

    for cached in (False, True):
        row = registry_lookups(stack, lookups=40, schemas=3, cached=cached)
        assert (row["experiment"], row["records"], row["cached"]) == ("registry_lookups", 40, cached)
        assert row["lookups_s"] > 0


@pytest.mark.parametrize(("path", "fmt"), [("native", "avro"), ("proxy", "protobuf"), ("proxy", "binary")])
def test_format_produce_lands_every_record(stack: Stack, path: str, fmt: str) -> None:
    from workbench.bench import format_produce

    row = format_produce(stack, format=fmt, path=path, records=600, record_bytes=150, records_per_call=200)
    assert (row["records"], row["landed"], row["format"], row["path"]) == (600, 600, fmt, path)
    framing = 0 if fmt == "binary" else 5
    assert row["wire_bytes_per_record"] > framing
    assert row["first_call_ms"] > 0 and row["later_call_ms"] > 0
