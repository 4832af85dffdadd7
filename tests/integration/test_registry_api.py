"""The registry's REST API against a real process: compatibility, durability, several
instances, and a hostile battery that must get upstream's status and code, never a 500.

All processes here run on this module's own `_schemas` topic and are stopped (by PID)
before the topic is deleted.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from proxy_http import REGISTRY_V1
from registry_processes import RegistryProcess, start_registry

from workbench import kafka
from workbench.stack import Stack


def _compact(schema: Any) -> str:
    """An Avro schema in the canonical form the registry stores (Confluent stores Avro's
    own compact JSON), so what is registered is what comes back."""
    return json.dumps(schema, separators=(",", ":"))


V1 = _compact({"type": "record", "name": "Reading", "fields": [{"name": "device", "type": "string"}]})
#: Adds a field without a default: old data cannot be read with it (not BACKWARD).
V2_BREAKING = _compact(
    {
        "type": "record",
        "name": "Reading",
        "fields": [{"name": "device", "type": "string"}, {"name": "t", "type": "double"}],
    }
)
#: Adds a field with a default: BACKWARD compatible.
V2_DEFAULT = _compact(
    {
        "type": "record",
        "name": "Reading",
        "fields": [{"name": "device", "type": "string"}, {"name": "unit", "type": "string", "default": "C"}],
    }
)


@pytest.fixture(scope="module")
def schemas_topic(stack: Stack) -> Iterator[str]:
    name = f"_schemas-{uuid.uuid4().hex[:10]}"
    yield name
    kafka.delete_topics(stack.kafka_config("admin"), [name])


@pytest.fixture(scope="module")
def registry(stack: Stack, sandbox: Path, schemas_topic: str) -> Iterator[RegistryProcess]:
    started = start_registry(stack.bootstrap_servers, schemas_topic, sandbox / "registry-logs")
    yield started
    started.stop()


def _subject() -> str:
    return f"s-{uuid.uuid4().hex[:10]}-value"


def _post(url: str, body: Any, **params: str) -> requests.Response:
    return requests.post(url, data=json.dumps(body), params=params, headers={"Content-Type": REGISTRY_V1}, timeout=30)


def _code(response: requests.Response) -> tuple[int, int]:
    assert response.headers["content-type"].startswith("application/"), response.headers
    return response.status_code, response.json()["error_code"]


def test_backward_incompatible_change_is_refused_and_accepted_under_none(registry: RegistryProcess) -> None:
    url, subject = registry.url, _subject()
    assert _post(f"{url}/subjects/{subject}/versions", {"schema": V1}).status_code == 200
    check = _post(f"{url}/compatibility/subjects/{subject}/versions/latest", {"schema": V2_BREAKING}, verbose="true")
    assert check.status_code == 200 and check.json()["is_compatible"] is False and check.json()["messages"]
    assert _code(_post(f"{url}/subjects/{subject}/versions", {"schema": V2_BREAKING})) == (409, 409)
    ok = _post(f"{url}/compatibility/subjects/{subject}/versions/1", {"schema": V2_DEFAULT})
    assert ok.json() == {"is_compatible": True}
    assert _post(f"{url}/subjects/{subject}/versions", {"schema": V2_DEFAULT}).status_code == 200

    assert requests.put(f"{url}/config/{subject}", json={"compatibility": "NONE"}, timeout=30).json() == {
        "compatibility": "NONE"
    }
    assert requests.get(f"{url}/config/{subject}", timeout=30).json() == {"compatibilityLevel": "NONE"}
    assert _post(f"{url}/compatibility/subjects/{subject}/versions/latest", {"schema": V2_BREAKING}).json() == {
        "is_compatible": True
    }
    registered = _post(f"{url}/subjects/{subject}/versions", {"schema": V2_BREAKING})
    assert registered.status_code == 200, registered.text
    assert requests.get(f"{url}/subjects/{subject}/versions", timeout=30).json() == [1, 2, 3]
    assert requests.get(f"{url}/config", timeout=30).json() == {"compatibilityLevel": "BACKWARD"}


def test_transitive_levels_compare_with_every_version(registry: RegistryProcess) -> None:
    url, subject = registry.url, _subject()
    first = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    # v2 drops `a` (BACKWARD ok: a reader ignores it); v3 adds `a` back as a string without default.
    second = {"type": "record", "name": "R", "fields": []}
    third = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "string", "default": "x"}]}
    for schema in (first, second):
        assert _post(f"{url}/subjects/{subject}/versions", {"schema": json.dumps(schema)}).status_code == 200
    body = {"schema": json.dumps(third)}
    assert _post(f"{url}/compatibility/subjects/{subject}/versions/latest", body).json()["is_compatible"] is True
    requests.put(f"{url}/config/{subject}", json={"compatibility": "BACKWARD_TRANSITIVE"}, timeout=30)
    assert _post(f"{url}/compatibility/subjects/{subject}/versions/latest", body).json()["is_compatible"] is False
    assert _code(_post(f"{url}/subjects/{subject}/versions", body)) == (409, 409)


def test_soft_and_hard_delete(registry: RegistryProcess) -> None:
    url, subject = registry.url, _subject()
    schema_id = _post(f"{url}/subjects/{subject}/versions", {"schema": V1}).json()["id"]
    assert _code(requests.delete(f"{url}/subjects/{subject}/versions/1", params={"permanent": "true"})) == (404, 40407)
    assert requests.delete(f"{url}/subjects/{subject}", timeout=30).json() == [1]
    assert _code(requests.get(f"{url}/subjects/{subject}/versions", timeout=30)) == (404, 40401)
    assert subject not in requests.get(f"{url}/subjects", timeout=30).json()
    assert subject in requests.get(f"{url}/subjects", params={"deleted": "true"}, timeout=30).json()
    assert requests.get(f"{url}/schemas/ids/{schema_id}", timeout=30).json()["schema"] == V1  # still resolves
    # Registering it again: a new version, the same id.
    again = _post(f"{url}/subjects/{subject}/versions", {"schema": V1}).json()
    assert again == {"id": schema_id}
    assert requests.get(f"{url}/subjects/{subject}/versions", timeout=30).json() == [2]
    assert requests.delete(f"{url}/subjects/{subject}/versions/2", timeout=30).json() == 2
    assert _code(requests.delete(f"{url}/subjects/{subject}/versions/2", timeout=30)) == (404, 40406)
    assert _code(requests.delete(f"{url}/subjects/{subject}", timeout=30)) == (404, 40404)
    assert requests.delete(f"{url}/subjects/{subject}", params={"permanent": "true"}, timeout=30).json() == [1, 2]
    assert _code(requests.get(f"{url}/subjects/{subject}/versions", params={"deleted": "true"})) == (404, 40401)


def test_a_restarted_registry_and_a_second_instance_agree_on_ids(
    stack: Stack, sandbox: Path, schemas_topic: str, registry: RegistryProcess
) -> None:
    subject = _subject()
    schemas = [
        _compact({"type": "record", "name": f"R{i}", "fields": [{"name": "a", "type": "int"}]}) for i in range(3)
    ]
    ids = [
        _post(f"{registry.url}/subjects/{subject}-{i}/versions", {"schema": s}).json()["id"]
        for i, s in enumerate(schemas)
    ]
    requests.put(f"{registry.url}/config/{subject}-0", json={"compatibility": "FULL"}, timeout=30)

    restarted = start_registry(stack.bootstrap_servers, schemas_topic, sandbox / "registry-logs")
    second = start_registry(stack.bootstrap_servers, schemas_topic, sandbox / "registry-logs")
    try:
        for instance in (restarted, second):
            for i, (schema, schema_id) in enumerate(zip(schemas, ids, strict=True)):
                assert requests.get(f"{instance.url}/schemas/ids/{schema_id}", timeout=30).json()["schema"] == schema
                found = _post(f"{instance.url}/subjects/{subject}-{i}", {"schema": schema}).json()
                assert (found["id"], found["version"]) == (schema_id, 1)
            assert requests.get(f"{instance.url}/config/{subject}-0", timeout=30).json() == {
                "compatibilityLevel": "FULL"
            }
        # The same new schema through two instances, one after the other and under two subjects: one id.
        new = _compact({"type": "record", "name": "Fresh", "fields": [{"name": "b", "type": "long"}]})
        via_second = _post(f"{second.url}/subjects/{subject}-x/versions", {"schema": new}).json()["id"]
        via_restarted = _post(f"{restarted.url}/subjects/{subject}-y/versions", {"schema": new}).json()["id"]
        via_first = _post(f"{registry.url}/subjects/{subject}-x/versions", {"schema": new}).json()["id"]
        assert via_second == via_restarted == via_first
        assert via_second > max(ids)
        # A different schema through the other instance gets the next id, not a taken one.
        other = _compact({"type": "record", "name": "Other", "fields": [{"name": "c", "type": "long"}]})
        assert _post(f"{registry.url}/subjects/{subject}-z/versions", {"schema": other}).json()["id"] == via_second + 1
    finally:
        restarted.stop()
        second.stop()


def test_two_instances_racing_agree(stack: Stack, sandbox: Path, schemas_topic: str, registry: RegistryProcess) -> None:
    """Different schemas registered at the same moment through two instances: every
    instance ends with the same id for each schema, and no id serves two schemas."""
    from concurrent.futures import ThreadPoolExecutor

    second = start_registry(stack.bootstrap_servers, schemas_topic, sandbox / "registry-logs")
    try:
        subject = _subject()
        schemas = [
            _compact({"type": "record", "name": f"Race{i}", "fields": [{"name": "a", "type": "int"}]}) for i in range(8)
        ]
        targets = [(registry if i % 2 else second, f"{subject}-{i % 3}", s) for i, s in enumerate(schemas)]
        for name in {t[1] for t in targets}:
            requests.put(f"{registry.url}/config/{name}", json={"compatibility": "NONE"}, timeout=30)
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda t: _post(f"{t[0].url}/subjects/{t[1]}/versions", {"schema": t[2]}), targets))
        assert [a.status_code for a in answers] == [200] * len(schemas), [a.text for a in answers]
        ids = [a.json()["id"] for a in answers]
        assert len(set(ids)) == len(schemas)
        for instance in (registry, second):
            for schema_id, schema in zip(ids, schemas, strict=True):
                assert requests.get(f"{instance.url}/schemas/ids/{schema_id}", timeout=30).json()["schema"] == schema
    finally:
        second.stop()


HOSTILE: list[tuple[str, str, Any, tuple[int, int]]] = [
    ("POST", "/subjects/{s}/versions", b"{not json", (400, 400)),
    ("POST", "/subjects/{s}/versions", [], (422, 422)),
    ("POST", "/subjects/{s}/versions", {"schema": '{"type": "recordx"}'}, (422, 42201)),
    ("POST", "/subjects/{s}/versions", {"schema": "not json at all"}, (422, 42201)),
    ("POST", "/subjects/{s}/versions", {"schema": 5}, (422, 42201)),
    ("POST", "/subjects/{s}/versions", {"schema": "{}", "schemaType": "XML"}, (422, 42201)),
    ("POST", "/subjects/{s}/versions", {"schema": "[1]", "schemaType": "JSON"}, (422, 42201)),
    ("POST", "/subjects/{s}/versions", {"schema": '{"type": 12}', "schemaType": "JSON"}, (422, 42201)),
    ("POST", "/subjects/{s}/versions", {"schema": "message {", "schemaType": "PROTOBUF"}, (422, 42201)),
    ("POST", "/subjects/{s}/versions", {"schema": '{"type":"string"}', "references": "x"}, (422, 42201)),
    (
        "POST",
        "/subjects/{s}/versions",
        {"schema": '{"type":"string"}', "references": [{"name": "a", "subject": "nope", "version": 1}]},
        (422, 42201),
    ),
    ("POST", "/subjects/{s}/versions", {"schema": "[" * 100_000 + "]" * 100_000}, (422, 42201)),
    ("POST", "/subjects/a%00b/versions", {"schema": '"string"'}, (422, 42208)),
    ("POST", "/subjects/a%0Ab/versions", {"schema": '"string"'}, (422, 42208)),
    ("POST", "/subjects/" + "x" * 10_000 + "/versions", {"schema": '"string"'}, (422, 42208)),
    ("GET", "/subjects/unknown-{s}/versions", None, (404, 40401)),
    ("GET", "/subjects/a%00b/versions/1", None, (404, 40401)),
    ("GET", "/subjects/{s}/versions/2", None, (404, 40402)),
    ("GET", "/subjects/{s}/versions/0", None, (422, 42202)),
    ("GET", "/subjects/{s}/versions/-2", None, (422, 42202)),
    ("GET", "/subjects/{s}/versions/99999999999999999999", None, (422, 42202)),
    ("GET", "/subjects/{s}/versions/2147483648", None, (422, 42202)),
    ("GET", "/subjects/{s}/versions/one", None, (422, 42202)),
    ("DELETE", "/subjects/{s}/versions/-5", None, (422, 42202)),
    ("GET", "/schemas/ids/999999", None, (404, 40403)),
    ("GET", "/schemas/ids/-1", None, (404, 40403)),
    ("GET", "/schemas/ids/abc", None, (404, 404)),
    ("GET", "/schemas/ids/99999999999999999999/versions", None, (404, 40403)),
    ("GET", "/schemas/ids/999999/subjects", None, (404, 40403)),
    ("PUT", "/config", {"compatibility": "SOMETIMES"}, (422, 42203)),
    ("PUT", "/config/{s}", {"compatibility": 7}, (422, 42203)),
    ("PUT", "/config/{s}", {}, (422, 42203)),
    ("GET", "/config/unknown-{s}", None, (404, 40408)),
    ("DELETE", "/config/unknown-{s}", None, (404, 40401)),
    ("POST", "/compatibility/subjects/{s}/versions/7", {"schema": '"string"'}, (404, 40402)),
    ("POST", "/compatibility/subjects/unknown-{s}/versions/1", {"schema": '"string"'}, (404, 40402)),
    ("POST", "/compatibility/subjects/{s}/versions/zero", {"schema": '"string"'}, (422, 42202)),
    ("POST", "/compatibility/subjects/{s}/versions/latest", {"schema": "{"}, (422, 42201)),
    ("POST", "/subjects/{s}", {"schema": '"int"'}, (404, 40403)),
    ("POST", "/subjects/unknown-{s}", {"schema": '"int"'}, (404, 40401)),
    ("DELETE", "/subjects/unknown-{s}", None, (404, 40401)),
    ("GET", "/nothing/here", None, (404, 404)),
    ("PATCH", "/subjects", None, (405, 405)),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"), HOSTILE, ids=[f"{m} {p[:40]} {str(b)[:30]}" for m, p, b, _ in HOSTILE]
)
def test_hostile_requests_get_upstream_errors(
    registry: RegistryProcess, method: str, path: str, body: Any, expected: tuple[int, int]
) -> None:
    subject = "hostile-value"
    _post(f"{registry.url}/subjects/{subject}/versions", {"schema": '"string"'})
    data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
    answer = requests.request(
        method,
        registry.url + path.replace("{s}", subject),
        data=data,
        timeout=60,
        headers={"Content-Type": REGISTRY_V1},
    )
    assert _code(answer) == expected, answer.text[:300]
    assert registry.alive()


def test_media_types_and_limits(registry: RegistryProcess) -> None:
    url = registry.url
    assert requests.get(f"{url}/", timeout=30).headers["content-type"] == REGISTRY_V1
    plain = requests.get(f"{url}/schemas/types", headers={"Accept": "application/json"}, timeout=30)
    assert plain.headers["content-type"] == "application/json" and sorted(plain.json()) == ["AVRO", "JSON", "PROTOBUF"]
    assert _code(requests.get(f"{url}/", headers={"Accept": "text/html"}, timeout=30)) == (406, 406)
    assert _code(requests.post(f"{url}/subjects/x/versions", data=b"{}", headers={"Content-Type": "text/xml"})) == (
        415,
        415,
    )
    huge = {"schema": json.dumps({"type": "string", "doc": "x" * (9 * 1024 * 1024)})}
    assert _code(_post(f"{url}/subjects/x/versions", huge)) == (413, 413)
    assert registry.alive()


def test_a_registration_that_loses_a_race_adopts_the_winners_outcome(
    stack: Stack, schemas_topic: str, registry: RegistryProcess
) -> None:
    """Force the race two instances can run: a rival record lands just before ours, with
    the id we picked (another schema) and on our subject version. Ours is ignored by
    every reader, the winner's record is written again over our key, and the
    registration retries and gets the next id; the process registry agrees."""
    from workbench.registry.log import SchemaVersion
    from workbench.registry.store import SchemaStore

    store = SchemaStore(
        {"bootstrap.servers": stack.bootstrap_servers, "allow.auto.create.topics": False},
        topic=schemas_topic,
        timeout_s=30,
    )
    store.start()
    try:
        subject = _subject()
        requests.put(f"{registry.url}/config/{subject}", json={"compatibility": "NONE"}, timeout=30)
        rival_schema = _compact({"type": "record", "name": "Rival", "fields": []})
        mine = _compact({"type": "record", "name": "Mine", "fields": []})
        real_write = store._write
        injected: list[int] = []

        def write_with_a_rival(key: bytes, value: bytes | None) -> None:
            if b'"SCHEMA"' in key and not injected:
                planned = json.loads(value or b"{}")
                rival = SchemaVersion(subject, planned["version"], planned["id"], rival_schema)
                injected.append(planned["id"])
                real_write(*rival.record())
            real_write(key, value)

        store._write = write_with_a_rival  # type: ignore[method-assign]
        got = store.register(subject, "AVRO", mine, ())
        assert injected and got == injected[0] + 1
        assert [v.schema for v in store.versions(subject)] == [rival_schema, mine]
        expected = [(injected[0], rival_schema), (got, mine)]
        deadline = time.monotonic() + 10  # the process reads the topic in the background
        while True:
            versions = [
                requests.get(f"{registry.url}/subjects/{subject}/versions/{n}", timeout=30).json() for n in (1, 2)
            ]
            if [(v.get("id"), v.get("schema")) for v in versions] == expected or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert [(v.get("id"), v.get("schema")) for v in versions] == expected
    finally:
        store.close()


def test_a_version_stored_in_an_older_canonical_form_is_found_again(
    stack: Stack, schemas_topic: str, registry: RegistryProcess
) -> None:
    """A `_schemas` record written before the registry printed Avro as Avro Java does (names
    fully qualified, a nested record with its own namespace): the same schema registered or
    looked up again under its subject is that version, as Confluent's lookup parses each
    version of the subject; no new version, no new id."""
    from workbench.registry.log import SchemaVersion
    from workbench.registry.store import SchemaStore

    subject, namespace = _subject(), f"old.n{uuid.uuid4().hex[:8]}"
    inner = {"type": "record", "name": "Inner", "namespace": namespace, "fields": []}
    old_form = {
        "type": "record",
        "name": "Outer",
        "namespace": namespace,
        "fields": [{"name": "inner", "type": inner}, {"name": "again", "type": f"{namespace}.Inner"}],
    }
    store = SchemaStore(
        {"bootstrap.servers": stack.bootstrap_servers, "allow.auto.create.topics": False},
        topic=schemas_topic,
        timeout_s=30,
    )
    store.start()
    try:
        schema_id = store.state.max_id + 1
        store._write(*SchemaVersion(subject, 1, schema_id, _compact(old_form)).record())
    finally:
        store.close()
    given = json.dumps({**old_form, "fields": [{"name": "inner", "type": inner}, {"name": "again", "type": "Inner"}]})
    assert _post(f"{registry.url}/subjects/{subject}/versions", {"schema": given}).json() == {"id": schema_id}
    found = _post(f"{registry.url}/subjects/{subject}", {"schema": given}).json()
    assert (found["id"], found["version"]) == (schema_id, 1)
    assert requests.get(f"{registry.url}/subjects/{subject}/versions", timeout=30).json() == [1]
