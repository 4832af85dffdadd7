"""Proxy processes over their life: settings at start, auth, idle consumer expiry,
graceful stop without losing an acknowledged record, and two instances behind nginx.

Each test here starts the proxy processes it needs (on free ports, against the
session's broker) and stops exactly those, by PID.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import psutil
import pytest
import requests
from proxy_http import JSON_V2, V2
from proxy_processes import PROPERTIES, proxy_command

from workbench import kafka
from workbench.stack import Stack, process


@pytest.fixture
def start_proxy(stack: Stack, tmp_path: Path) -> Iterator[Callable[..., tuple[str, subprocess.Popen[bytes]]]]:
    """Start a proxy process with extra environment; returns (url, process)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(**env: str) -> tuple[str, subprocess.Popen[bytes]]:
        port = process.free_port("127.0.0.1")
        log = (tmp_path / f"proxy-{port}.log").open("wb")
        proc = subprocess.Popen(
            proxy_command(stack.bootstrap_servers, port),
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
        )
        log.close()
        started.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / f"proxy-{port}.log").read_text()
            try:
                if requests.get(f"{url}/", timeout=1, auth=_auth(env)).status_code == 200:
                    return url, proc
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"proxy on {port} did not answer")

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=30)


def _auth(env: dict[str, str]) -> tuple[str, str] | None:
    users = env.get("KAFKA_REST_AUTHENTICATION_BASIC_USERS")
    if not users:
        return None
    user, _, password = users.split(",")[0].partition(":")
    return user, password


def test_wrong_typed_property_refuses_to_start_in_one_line(stack: Stack, tmp_path: Path) -> None:
    bad = tmp_path / "bad.properties"
    bad.write_text("consumer.request.timeout.ms=soon\n")
    command = proxy_command(stack.bootstrap_servers, process.free_port("127.0.0.1"), bad)
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "consumer.request.timeout.ms" in result.stderr and "must be an integer" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_unknown_properties_are_named_in_a_warning(stack: Stack, tmp_path: Path) -> None:
    odd = tmp_path / "odd.properties"
    odd.write_text("listeners=http://127.0.0.1:1\nfrobnicate.level=3\n")
    bad_rdkafka = subprocess.run(
        [*proxy_command(stack.bootstrap_servers, process.free_port("127.0.0.1"), odd)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KAFKA_REST_PRODUCER_LINGER_MS": "often"},
    )
    assert "frobnicate.level" in bad_rdkafka.stderr
    assert bad_rdkafka.returncode == 1 and "producer" in bad_rdkafka.stderr, "librdkafka's refusal is one line too"
    assert "Traceback" not in bad_rdkafka.stderr


def test_basic_auth(start_proxy: Callable[..., tuple[str, subprocess.Popen[bytes]]]) -> None:
    url, _ = start_proxy(KAFKA_REST_AUTHENTICATION_METHOD="BASIC", KAFKA_REST_AUTHENTICATION_BASIC_USERS="alice:s3cret")
    refused = requests.get(f"{url}/topics")
    assert refused.status_code == 401 and refused.json()["error_code"] == 401
    assert refused.headers["www-authenticate"].startswith("Basic")
    assert requests.get(f"{url}/topics", auth=("alice", "wrong")).status_code == 401
    assert requests.get(f"{url}/topics", auth=("alice", "s3cret")).status_code == 200


def test_idle_consumer_instances_expire(
    start_proxy: Callable[..., tuple[str, subprocess.Popen[bytes]]], topic: Callable[..., str]
) -> None:
    url, _ = start_proxy(KAFKA_REST_CONSUMER_INSTANCE_TIMEOUT_MS="2000")
    http = requests.Session()
    group = f"g-{uuid.uuid4().hex[:8]}"

    def create(name: str) -> str:
        response = http.post(
            f"{url}/consumers/{group}", data=orjson.dumps({"name": name}), headers={"Content-Type": V2}
        )
        return str(response.json()["base_uri"])

    idle, busy = create("idle"), create("busy")
    deadline = time.monotonic() + 15
    # `busy` is used every 200 ms, `idle` never; the metric is read without touching either
    while "kafka_rest_consumer_instances 2.0" in http.get(f"{url}/metrics").text:
        assert time.monotonic() < deadline, "the idle instance was not closed"
        assert http.get(f"{busy}/assignments").status_code == 200
        time.sleep(0.2)
    assert "kafka_rest_consumer_instances 1.0" in http.get(f"{url}/metrics").text
    gone = http.get(f"{idle}/assignments")
    assert gone.status_code == 404 and gone.json()["error_code"] == 40403
    assert http.get(f"{busy}/assignments").status_code == 200, "an instance in use does not expire"
    assert http.delete(busy).status_code == 204


def test_sigterm_while_producing_loses_no_acknowledged_record(
    stack: Stack,
    start_proxy: Callable[..., tuple[str, subprocess.Popen[bytes]]],
    topic: Callable[..., str],
    tmp_path: Path,
) -> None:
    # a long buffer time keeps records waiting in the producer when SIGTERM comes
    url, proc = start_proxy(KAFKA_REST_STREAMS_BUFFER_MAX_TIME_MS="300")
    name = topic(partitions=2)
    acknowledged: list[tuple[int, int, bytes]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def client(number: int) -> None:
        http = requests.Session()
        sequence = 0
        while not stop.is_set():
            values = [{"client": number, "seq": sequence + i} for i in range(50)]
            sequence += 50
            try:
                body = orjson.dumps({"records": [{"value": v} for v in values]})
                response = http.post(f"{url}/topics/{name}", data=body, headers={"Content-Type": JSON_V2}, timeout=30)
            except requests.RequestException:
                return  # the proxy is gone: nothing more is acknowledged
            if response.status_code != 200:
                return
            with lock:
                for value, offset in zip(values, response.json()["offsets"], strict=True):
                    if offset["error_code"] is None:
                        acknowledged.append((offset["partition"], offset["offset"], orjson.dumps(value)))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 500 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    # uvicorn shuts down gracefully, then re-raises the signal so the parent sees it
    assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
    log = (tmp_path / f"proxy-{url.rsplit(':', 1)[1]}.log").read_text()
    assert "producer flushed (0 records unacknowledged)" in log
    stop.set()
    for thread in threads:
        thread.join(timeout=30)

    assert len(acknowledged) >= 500
    stored = {(r.partition, r.offset): r.value for r in kafka.read_records(stack.kafka_config("consumer"), name)}
    missing = [(p, o) for p, o, value in acknowledged if stored.get((p, o)) != value]
    assert missing == [], f"{len(missing)} acknowledged records are not in the log"


def test_sigterm_with_a_fetch_in_flight_answers_it_commits_what_was_delivered_and_exits_in_time(
    stack: Stack,
    start_proxy: Callable[..., tuple[str, subprocess.Popen[bytes]]],
    topic: Callable[..., str],
) -> None:
    """The shutdown contract (docs/rest-proxy.md): stop taking requests, answer the ones in
    flight, commit what auto-committing instances delivered, leave the groups, exit within
    `shutdown.graceful.ms` (here 3 s) plus the consumers' close."""
    # auto-commit's timer far away: the only commit is the one the shutdown makes
    url, proc = start_proxy(
        KAFKA_REST_SHUTDOWN_GRACEFUL_MS="3000", KAFKA_REST_CONSUMER_AUTO_COMMIT_INTERVAL_MS="600000"
    )
    name, group = topic(), f"g-{uuid.uuid4().hex[:10]}"
    kafka.produce(stack.kafka_config("producer"), name, [(None, b"%d" % i) for i in range(100)], partition=0)
    http = requests.Session()
    body = {"format": "binary", "auto.offset.reset": "earliest", "auto.commit.enable": "true"}
    base = http.post(f"{url}/consumers/{group}", json=body, headers={"Content-Type": V2}).json()["base_uri"]
    assign = {"partitions": [{"topic": name, "partition": 0}]}
    assert http.post(f"{base}/assignments", json=assign, headers={"Content-Type": V2}).status_code == 204
    delivered: list[int] = []
    while len(delivered) < 100:
        answer = http.get(f"{base}/records", headers={"Accept": "application/vnd.kafka.binary.v2+json"})
        delivered += [r["offset"] for r in answer.json()]
    assert delivered == list(range(100))

    in_flight: dict[str, requests.Response | Exception] = {}

    def fetch() -> None:  # nothing more to read: the proxy holds it up to its timeout
        try:
            in_flight["answer"] = requests.get(
                f"{base}/records",
                params={"timeout": 20_000},
                headers={"Accept": "application/vnd.kafka.binary.v2+json"},
                timeout=30,
            )
        except requests.RequestException as exc:
            in_flight["answer"] = exc

    fetching = threading.Thread(target=fetch)
    fetching.start()
    time.sleep(0.5)  # the request is in flight
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
    took = time.monotonic() - started
    fetching.join(timeout=30)
    reply = in_flight["answer"]
    assert isinstance(reply, requests.Response), f"the fetch in flight got no answer: {reply}"
    assert reply.status_code == 200 or "error_code" in reply.json(), reply.text
    assert took < 3 + 10, f"the proxy took {took:.1f} s to stop"
    with kafka.admin_client(stack.kafka_config()) as admin:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        request = [ConsumerGroupTopicPartitions(group, [TopicPartition(name, 0)])]
        committed = admin.list_consumer_group_offsets(request)[group].result().topic_partitions[0].offset
    assert committed == 100, "what the instance delivered was committed as it closed"


def test_two_instances_behind_nginx(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from workbench.stack import running
    from workbench.stack.health import status_of
    from workbench.stack.nginx import find_nginx

    if find_nginx() is None:
        pytest.skip("nginx is not installed (apt-get install nginx): the stack runs without a balancer")
    monkeypatch.setenv("WORKBENCH_RUN_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("WORKBENCH_PROXY__INSTANCES", "2")
    with running() as stack:
        status = status_of(stack)
        assert len(status["proxy"]) == 2 and status["balancer"] == stack.balancer_url is not None
        assert all(row["healthy"] for row in status["services"].values())
        balancer = stack.balancer_url
        assert balancer is not None
        pids = [record.pid for record in stack.services.values()]
        config = (tmp_path / "run" / "nginx" / "nginx.conf").read_text()
        assert "127.0.0.1" in config and "/etc/nginx" not in config and "/var/" not in config

        name = kafka.create_topic(stack.kafka_config("admin"), f"lb-{uuid.uuid4().hex[:8]}", 2)
        http = requests.Session()
        for i in range(10):
            response = http.post(
                f"{balancer}/topics/{name}",
                data=orjson.dumps({"records": [{"value": i}] * 10}),
                headers={"Content-Type": JSON_V2},
            )
            assert response.status_code == 200
        assert kafka.total_records(stack.kafka_config("admin"), name) == 100
        served = [
            _count(http.get(f"{u}/metrics").text, 'route="/topics/{topic}",status="200"') for u in stack.proxy_urls
        ]
        assert sum(served) == 10 and all(n > 0 for n in served), "round-robin reaches both instances"

        owners = set()
        for _ in range(4):
            created = http.post(f"{balancer}/consumers/lb-group", data=b"{}", headers={"Content-Type": V2}).json()
            base = created["base_uri"]
            owner = base.split("/consumers/")[0]
            assert owner in stack.proxy_urls, "base_uri names the instance that owns the consumer"
            owners.add(owner)
            assign = {"partitions": [{"topic": name, "partition": 0}]}
            assert http.post(f"{base}/assignments", data=orjson.dumps(assign), headers={"Content-Type": V2}).ok
            assert http.get(f"{base}/assignments").json() == assign
            assert http.delete(base).status_code == 204
        assert len(owners) == 2
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids)


def _count(metrics: str, needle: str) -> int:
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in metrics.splitlines()
        if needle in line and line.startswith("kafka_rest_requests_total")
    )


def test_body_over_request_max_bytes_is_413(
    start_proxy: Callable[..., tuple[str, subprocess.Popen[bytes]]], topic: Callable[..., str]
) -> None:
    url, _ = start_proxy(KAFKA_REST_REQUEST_MAX_BYTES="2000")
    name = topic()
    headers = {"Content-Type": JSON_V2}
    small = requests.post(f"{url}/topics/{name}", data=orjson.dumps({"records": [{"value": 1}]}), headers=headers)
    assert small.status_code == 200
    big = orjson.dumps({"records": [{"value": "x" * 500}] * 10})
    refused = requests.post(f"{url}/topics/{name}", data=big, headers=headers)
    assert refused.status_code == 413 and refused.json()["error_code"] == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is counted while reading
        yield big[:1500]
        yield big[1500:]

    streamed = requests.post(f"{url}/topics/{name}", data=chunks(), headers=headers)
    assert streamed.status_code == 413 and streamed.json()["error_code"] == 413


def test_kafka_not_answering_is_a_one_line_error(tmp_path: Path) -> None:
    port = process.free_port("127.0.0.1")
    dead = process.free_port("127.0.0.1")  # nothing listens there
    command = [
        sys.executable,
        "-m",
        "workbench.cli",
        "proxy",
        "--config",
        str(PROPERTIES),
        "--port",
        str(port),
        "--bootstrap-servers",
        f"127.0.0.1:{dead}",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"error: Kafka at 127.0.0.1:{dead} does not answer" in result.stderr
    assert "Connection refused" in result.stderr  # the cause, from librdkafka's own report
    assert "Traceback" not in result.stderr


def test_java_compatible_partitioner_for_keyed_records(
    stack: Stack, start_proxy: Callable[..., tuple[str, subprocess.Popen[bytes]]], topic: Callable[..., str]
) -> None:
    from confluent_kafka import Producer

    url, _ = start_proxy(KAFKA_REST_PRODUCER_PARTITIONER="murmur2_random")  # librdkafka leaves keys to it
    name = topic(partitions=5)
    keys = [f"sensor-{i}" for i in range(30)]
    body = orjson.dumps({"records": [{"key": k, "value": i} for i, k in enumerate(keys)] + [{"value": "no key"}]})
    offsets = requests.post(f"{url}/topics/{name}", data=body, headers={"Content-Type": JSON_V2}).json()["offsets"]
    assert all(o["error_code"] is None for o in offsets) and len(offsets) == 31
    native: dict[bytes | None, int | None] = {}
    producer = Producer({**stack.kafka_config("producer"), "partitioner": "murmur2_random"})
    for key in keys:
        producer.produce(
            name, b"v", orjson.dumps(key), on_delivery=lambda _e, m: native.__setitem__(m.key(), m.partition())
        )
    producer.flush(30)
    assert [o["partition"] for o in offsets[:30]] == [native[orjson.dumps(k)] for k in keys]
