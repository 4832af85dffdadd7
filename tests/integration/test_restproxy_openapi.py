"""The proxy's OpenAPI document, and schemathesis fuzzing a real proxy process with it.

The document must be valid OpenAPI 3.0 and list exactly the routes the app serves. Then
schemathesis generates requests for every operation (valid and invalid ones) and sends
them to a proxy process of its own, started on a free port against the session's broker,
so a crash is a dead process here and never breaks the session's stack. A request whose
path names real things (the cluster id, a topic with records, a consumer instance with an
assignment and a committed offset) reaches the handlers past their 404s, so path
parameters are swapped for those names in a share of the cases.

The pass mark is robustness, not conformance: no 5xx answer, no request without an answer
within `REQUEST_TIMEOUT_S`, and the same process still alive and answering `GET /` at the
end. Each operation is one test; its distinct failures (status and message) are collected
with a curl line each and reported together, rather than only the first, as a failing
hypothesis test would (shrinking and replaying it would also cost the time budget).

Checks relaxed on purpose are marked "Relaxed" below. Not checked here: that answers
conform to the document (status codes, content types, response schemas); schemathesis'
conformance checks passed on it when it was written, but this tier asserts robustness.
Relaxed: schemathesis' coverage phase (hundreds of boundary cases per operation) is not
run, only its generated valid and invalid cases, to stay within ~60 s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import Unsatisfiable
from proxy_http import V2
from proxy_processes import PROPERTIES, proxy_command
from schemathesis.core.result import Ok

from workbench import kafka
from workbench.restproxy import consumers, metadata_v2, openapi, produce, produce_v3, share_consumers, share_groups, v3
from workbench.restproxy.app import _routes
from workbench.restproxy.settings import load_restproxy_settings
from workbench.stack import Stack, process

#: Every fuzzed request has an answer within this, or it counts as a hang.
REQUEST_TIMEOUT_S = 15.0
#: Examples per operation and generation mode (valid, invalid): ~50 s on 2 cores. Derandomized,
#: so every run sends the same cases; set WB_TESTS_FUZZ_EXAMPLES higher for a deeper local run.
MAX_EXAMPLES = int(os.environ.get("WB_TESTS_FUZZ_EXAMPLES", "25"))
#: Relaxed: v3 topic creation is fuzzed for real, but never with more partitions than this:
#: the session's broker is shared with every other test.
MAX_FUZZED_PARTITIONS = 4
DELETE_TOPIC = "DELETE /v3/clusters/{cluster}/topics/{topic}"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


# ---------------------------------------------------------------- the document


def test_document_is_valid_openapi_3() -> None:
    from schemathesis.specs.openapi.definitions import OPENAPI_30_VALIDATOR

    document = openapi.document("http://127.0.0.1:8082")
    OPENAPI_30_VALIDATOR.validate(document)  # raises with the failing location
    loaded = schemathesis.openapi.from_dict(document)
    loaded.validate()
    operations = list(loaded.get_all_operations())
    assert all(isinstance(result, Ok) for result in operations), [r for r in operations if not isinstance(r, Ok)]
    assert len(operations) == len(_documented(document))


def test_document_lists_exactly_the_routes_served() -> None:
    settings = load_restproxy_settings(PROPERTIES, bootstrap_servers="127.0.0.1:9092", environ={})  # v2 and v3 both on
    served = {(r.method.lower(), r.template) for r in _routes(settings)}
    every_module = (
        metadata_v2.ROUTES
        + produce.ROUTES
        + consumers.ROUTES
        + share_consumers.ROUTES
        + v3.ROUTES
        + produce_v3.ROUTES
        + share_groups.ROUTES
        + openapi.ROUTES
    )
    assert {(r.method.lower(), r.template) for r in every_module} <= served, "the app serves every module's routes"
    documented = _documented(openapi.document("http://127.0.0.1:8082"))
    assert sorted(served - documented) == [], "served but not documented"
    assert sorted(documented - served) == [], "documented but not served"


def test_every_operation_names_its_path_parameters_and_the_error_body() -> None:
    document = openapi.document("http://127.0.0.1:8082")
    parameters = document["components"]["parameters"]
    for path, item in document["paths"].items():
        wanted = {part[1:-1] for part in path.split("/") if part.startswith("{")}
        for method, operation in item.items():
            refs = [parameters[p["$ref"].rsplit("/", 1)[1]] for p in operation.get("parameters", [])]
            assert {p["name"] for p in refs if p["in"] == "path"} == wanted, f"{method} {path}"
            error = operation["responses"]["default"]["content"]
            assert all(c["schema"] == {"$ref": "#/components/schemas/Error"} for c in error.values()), path
            media = "application/json" if path.startswith("/v3") else V2
            assert list(error) == [media], f"{method} {path}: errors are sent as {media}"


def _documented(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(m, path) for path, item in document["paths"].items() for m in item if m in HTTP_METHODS}


def test_served_document_names_the_process_as_server(fuzz_target: Target) -> None:
    served = requests.get(f"{fuzz_target.url}/openapi.json", timeout=REQUEST_TIMEOUT_S)
    assert served.status_code == 200 and served.headers["content-type"].startswith("application/json")
    assert served.json()["servers"] == [{"url": fuzz_target.url}]


# ---------------------------------------------------------------- the proxy under fuzzing


@dataclass
class Target:
    """The proxy process being fuzzed, the real names it knows, and what went wrong."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    admin: dict[str, Any]
    topic: str
    cluster: str
    group: str
    instance: str
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)  # (operation, status): how many

    @property
    def real(self) -> dict[str, Any]:
        """Path parameter values that name existing things."""
        return {
            "cluster": self.cluster,
            "topic": self.topic,
            "partition": 0,
            "group": self.group,
            "instance": self.instance,
            "name": "cleanup.policy",
        }

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _start_proxy(stack: Stack, log: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """`workbench proxy` on a free port (as `test_restproxy_lifecycle.py` does); ready when `GET /` is 200."""
    port = process.free_port("127.0.0.1")
    command = proxy_command(stack.bootstrap_servers, port)
    # Relaxed for run time, not for robustness: a records GET waits at most 250 ms instead of 1 s.
    # PYTHONFAULTHANDLER: a crash in librdkafka's C code leaves the Python stacks in the log.
    env = {**os.environ, "KAFKA_REST_CONSUMER_REQUEST_TIMEOUT_MS": "250", "PYTHONFAULTHANDLER": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")
        try:
            if requests.get(f"{url}/", timeout=1).status_code == 200:
                return url, proc
        except requests.RequestException:
            pass
        time.sleep(0.1)
    proc.kill()
    proc.wait(timeout=30)
    raise AssertionError(f"the proxy on {port} did not answer:\n{log.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait(timeout=30)


def _ok(response: requests.Response, *statuses: int) -> Any:
    assert response.status_code in statuses, f"{response.request.method} {response.url}: {response.text}"
    return response.json() if response.content else None


def _make_instance(target: Target) -> None:
    """The consumer instance fuzzed requests reach: json format, partition 0 assigned, offset 0 committed."""
    body = {"name": target.instance, "format": "json", "auto.offset.reset": "earliest"}
    created = requests.post(
        f"{target.url}/consumers/{target.group}",
        data=orjson.dumps(body),
        headers={"Content-Type": V2},
        timeout=REQUEST_TIMEOUT_S,
    )
    _ok(created, 200)
    _assign(target)


def _make_share_instance(target: Target) -> None:
    """The share-consumer instance fuzzed share paths reach: the same names, in a share group of
    the same id (Kafka refuses the group to it, which the instance survives), subscribed to the topic."""
    body = {"name": target.instance, "format": "json"}
    headers = {"Content-Type": V2}
    created = requests.post(
        f"{target.url}/share-consumers/{target.group}",
        data=orjson.dumps(body),
        headers=headers,
        timeout=REQUEST_TIMEOUT_S,
    )
    _ok(created, 200)
    subscription = orjson.dumps({"topics": [target.topic]})
    base = f"{target.url}/share-consumers/{target.group}/instances/{target.instance}"
    _ok(requests.post(f"{base}/subscription", data=subscription, headers=headers, timeout=REQUEST_TIMEOUT_S), 204)


def _assign(target: Target) -> None:
    """Partition 0 of the topic assigned to the instance, offset 0 committed (a group with a lag)."""
    http = requests.Session()
    http.headers["Content-Type"] = V2
    base = f"{target.url}/consumers/{target.group}/instances/{target.instance}"
    http.delete(f"{base}/subscription", timeout=REQUEST_TIMEOUT_S)  # a fuzzed subscribe excludes assignments
    assignment = {"partitions": [{"topic": target.topic, "partition": 0}]}
    _ok(http.post(f"{base}/assignments", data=orjson.dumps(assignment), timeout=REQUEST_TIMEOUT_S), 204)
    offsets = {"offsets": [{"topic": target.topic, "partition": 0, "offset": 0}]}
    _ok(http.post(f"{base}/offsets", data=orjson.dumps(offsets), timeout=REQUEST_TIMEOUT_S), 200)


def _make_topic(target: Target) -> None:
    """The topic fuzzed requests reach: two partitions, a few JSON records in each."""
    kafka.create_topic(target.admin, target.topic, 2)
    for partition in (0, 1):
        kafka.produce(target.admin, target.topic, [(b'"k"', b'{"n": 1}'), (None, b"[1, 2]")], partition=partition)


@pytest.fixture(scope="module")
def fuzz_target(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A proxy process of this module's own, and the topic and consumer instance it serves."""
    admin = stack.kafka_config("admin")
    before = set(kafka.list_topics(admin))
    log = tmp_path_factory.mktemp("openapi") / "proxy.log"
    url, proc = _start_proxy(stack, log)
    try:
        cluster = requests.get(f"{url}/v3/clusters", timeout=REQUEST_TIMEOUT_S).json()["data"][0]["cluster_id"]
        suffix = uuid.uuid4().hex[:8]
        target = Target(
            url=url,
            proc=proc,
            log=log,
            admin=admin,
            topic=f"fuzz-{suffix}",
            cluster=cluster,
            group=f"fuzz-group-{suffix}",
            instance="fuzz-instance",
        )
        _make_topic(target)
        _make_instance(target)
        _make_share_instance(target)
        yield target
    finally:
        _stop(proc)
        # the fixture's topic, and whatever the fuzzed v3 topic creations made
        kafka.delete_topics(admin, set(kafka.list_topics(admin)) - before)


@pytest.fixture(scope="module")
def proxy_schema(fuzz_target: Target) -> schemathesis.BaseSchema:
    """The document as the process serves it, with hooks steering cases to real names."""
    schema = schemathesis.openapi.from_url(f"{fuzz_target.url}/openapi.json", timeout=REQUEST_TIMEOUT_S)

    @schema.hook
    def flatmap_path_parameters(context: schemathesis.HookContext, path_parameters: dict[str, Any] | None) -> Any:
        real = fuzz_target.real
        known = {name: real[name] for name in path_parameters or () if name in real}
        if not path_parameters or not known:
            return st.just(path_parameters)
        return st.sampled_from([{**path_parameters, **known}, path_parameters])

    @schema.hook
    def map_body(context: schemathesis.HookContext, body: Any) -> Any:
        operation = context.operation
        if operation is not None and operation.label == "POST /v3/clusters/{cluster}/topics" and isinstance(body, dict):
            count = body.get("partitions_count")
            if type(count) is int and count > MAX_FUZZED_PARTITIONS:
                body = {**body, "partitions_count": MAX_FUZZED_PARTITIONS}  # Relaxed: see MAX_FUZZED_PARTITIONS
        return body

    return schema


@pytest.fixture(scope="module", autouse=True)
def hypothesis_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hypothesis' caches (constants, unicode data) in a temporary folder, not `.hypothesis/` in the repository."""
    set_hypothesis_home_dir(tmp_path_factory.mktemp("hypothesis"))
    yield
    set_hypothesis_home_dir(None)


# schemathesis.pytest.from_fixture would load the schema lazily from the fixture, but its
# 4.32 plugin sets `Function._nodeid`, which pytest 9.2 no longer has (AttributeError), so
# each operation is a parametrized test driving schemathesis' own case strategies.
OPERATIONS = sorted((method.upper(), path) for method, path in _documented(openapi.document("http://127.0.0.1")))


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_fuzz(
    method: str, path: str, proxy_schema: schemathesis.BaseSchema, fuzz_target: Target, http: requests.Session
) -> None:
    """Valid and invalid cases of one operation: each distinct 5xx or unanswered request is
    collected (not raised, so hypothesis goes on and all of them are found), then reported."""
    assert fuzz_target.proc.poll() is None, f"the proxy died before this operation:\n{fuzz_target.log_tail()}"
    operation = proxy_schema[path][method]
    failures: dict[tuple[str, ...], str] = {}
    for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):

        @settings(
            max_examples=MAX_EXAMPLES,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(mode))
        def send(case: schemathesis.Case[Any]) -> None:
            _send(case, fuzz_target, http, failures)

        try:
            send()
        except Unsatisfiable:  # nothing to make invalid: only strings in the path, which can always be sent
            if mode is not schemathesis.GenerationMode.NEGATIVE:
                raise
    report = "\n".join(f"{' | '.join(key)}\n    {text}" for key, text in sorted(failures.items()))
    assert not failures, f"{len(failures)} distinct failures:\n{report}"


def _send(
    case: schemathesis.Case[Any], target: Target, http: requests.Session, failures: dict[tuple[str, ...], str]
) -> None:
    label = case.operation.label
    curl = case.as_curl_command()
    try:
        response = case.call(session=http, timeout=REQUEST_TIMEOUT_S)
    except requests.RequestException as exc:
        failures.setdefault((label, "no answer", type(exc).__name__), f"{type(exc).__name__}: {exc}\n    {curl}")
        return
    target.statuses[(label, response.status_code)] += 1
    for status, message in _server_errors(response.status_code, response.content):
        failures.setdefault((label, str(status), message[:80]), f"{status} {message[:300]}\n    {curl}")
    _restore(case, response.status_code, target)


def _server_errors(status: int, body: bytes) -> list[tuple[int, str]]:
    """A 5xx answer; or, in a v3 produce stream (200 once started), a result the app wrote
    for an exception it did not expect (50002 "Internal Server Error: ...")."""
    if status >= 500:
        try:
            return [(status, str(orjson.loads(body)["message"]))]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return [(status, body.decode(errors="replace"))]
    found = []
    for line in body.splitlines():
        if b"Internal Server Error" in line:
            found.append((status, line.decode(errors="replace")))
    return found


def _restore(case: schemathesis.Case[Any], status: int, target: Target) -> None:
    """A fuzzed DELETE of the real topic or consumer instance: make it again for the cases after it."""
    if case.method.upper() != "DELETE" or status != 204:
        return
    params = case.path_parameters or {}
    if case.operation.label == DELETE_TOPIC and params.get("topic") == target.topic:
        _make_topic(target)
        _assign(target)
    real_instance = (params.get("group"), params.get("instance")) == (target.group, target.instance)
    if case.operation.path.endswith("/instances/{instance}") and real_instance:
        if case.operation.path.startswith("/share-consumers/"):
            _make_share_instance(target)
        else:
            _make_instance(target)


def test_proxy_survived_the_fuzzing(fuzz_target: Target) -> None:
    """The process started for the fuzzing (same PID) still runs, and still answers on its port."""
    assert fuzz_target.statuses, "test_fuzz sent nothing"
    assert fuzz_target.proc.poll() is None, f"the proxy died:\n{fuzz_target.log_tail()}"
    root = requests.get(f"{fuzz_target.url}/", timeout=REQUEST_TIMEOUT_S)
    assert root.status_code == 200 and root.json() == {}


def test_proxy_logged_no_traceback(fuzz_target: Target) -> None:
    """Stricter than the 5xx check: an exception the app did not expect, even one it answered
    within a stream already started (v3 produce), leaves a traceback in the log."""
    assert fuzz_target.statuses, "test_fuzz sent nothing"
    log = fuzz_target.log.read_text(errors="replace")
    assert "Traceback" not in log, "\n".join(line for line in log.splitlines() if not line.startswith("  "))
