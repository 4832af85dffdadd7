"""A battery of hostile requests against one proxy process: each is refused with the
upstream error, and the process is still there to answer the next one.

Trust rule (design.md): nothing a client sends ends or stalls a process. librdkafka
asserts on some inputs (a group id holding NUL aborted the proxy), Python raises on
others (integers beyond int32/int64, recursion); every such input must be refused at
the edge with `{"error_code": <int>, "message": <str>}` and a 4xx status.

The battery shares one proxy process (module fixture) started for this file with small
limits (1 MB bodies, 2 s to finish headers or a body), so a crash shows up as a dead
process (and its log) instead of breaking other tests. A case that kills the proxy fails
by itself; the next case starts a fresh process, and `test_the_battery_never_killed_the_proxy`
lists every case that did.

Produce cases all target one "quarantine" topic, which must still be empty at the end:
a refused request writes nothing.
"""

from __future__ import annotations

import contextlib
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
from proxy_http import BINARY_V2, JSON_V2, V2
from proxy_processes import ProxyProcess, start_proxy

from workbench import kafka
from workbench.stack import Stack

V3 = "application/json"
TIMEOUT = 20.0  # client timeout of every request
BODY_TIMEOUT_MS = 2000
HEADER_TIMEOUT_MS = 2000
MAX_BODY = 1024 * 1024
RUN = uuid.uuid4().hex[:8]  # names topics this module may create, for cleanup

PROXY_ENV = {
    "KAFKA_REST_REQUEST_MAX_BYTES": str(MAX_BODY),
    "KAFKA_REST_REQUEST_BODY_TIMEOUT_MS": str(BODY_TIMEOUT_MS),
    "KAFKA_REST_REQUEST_HEADER_TIMEOUT_MS": str(HEADER_TIMEOUT_MS),
}


# --- the proxy under attack ---------------------------------------------------------------


@dataclass
class Battery:
    """The proxy process under test, the names its cases refer to, and its crash record."""

    stack: Stack
    log_dir: Path
    quarantine: str  # a 1-partition topic no case may write to
    group: str = field(default_factory=lambda: f"hostile-{RUN}")
    proxy: ProxyProcess | None = None
    cluster: str = ""
    deaths: list[str] = field(default_factory=list)  # case ids after which the proxy was dead
    http: requests.Session = field(default_factory=requests.Session)

    @property
    def current(self) -> ProxyProcess:
        assert self.proxy is not None
        return self.proxy

    @property
    def port(self) -> int:
        return int(self.current.url.rsplit(":", 1)[1])

    def start(self) -> None:
        """A fresh proxy process, its consumer instances created and `inst` assigned."""
        self.proxy = start_proxy(self.stack.bootstrap_servers, self.log_dir, **PROXY_ENV)
        self.cluster = self.http.get(f"{self.current.url}/v3/clusters", timeout=TIMEOUT).json()["data"][0]["cluster_id"]
        for name in ("inst", "spare", "spare-sub"):
            body = orjson.dumps({"name": name, "format": "json", "auto.offset.reset": "earliest"})
            created = self.http.post(
                f"{self.current.url}/consumers/{self.group}", data=body, headers={"Content-Type": V2}, timeout=TIMEOUT
            )
            assert created.status_code == 200, created.text
        assign = orjson.dumps({"partitions": [{"topic": self.quarantine, "partition": 0}]})
        assigned = self.http.post(
            f"{self.current.url}{self.instance}/assignments", data=assign, headers={"Content-Type": V2}, timeout=TIMEOUT
        )
        assert assigned.status_code == 204, assigned.text

    @property
    def instance(self) -> str:
        return f"/consumers/{self.group}/instances/inst"

    def ensure(self) -> None:
        """Restart the proxy if an earlier case killed it (that case has failed already)."""
        if self.proxy is None or not self.proxy.alive():
            if self.proxy is not None:
                self.proxy.stop()
            self.start()

    def expand(self, text: str) -> str:
        return (
            text.replace("{t}", self.quarantine)
            .replace("{c}", self.cluster)
            .replace("{g}", self.group)
            .replace("{i}", self.instance)
        )

    def assert_alive(self, case_id: str) -> None:
        """Same PID still running, and `GET /topics` answers 200."""
        proxy = self.current
        try:
            listed = self.http.get(f"{proxy.url}/topics", timeout=TIMEOUT).status_code
        except requests.RequestException as exc:
            listed = repr(exc)  # type: ignore[assignment]
        if not proxy.alive() or listed != 200:
            self.deaths.append(f"{case_id}: exit {proxy.proc.poll()}, GET /topics {listed}")
            raise AssertionError(
                f"the proxy (pid {proxy.pid}) did not survive: exit status {proxy.proc.poll()}, "
                f"GET /topics -> {listed}\n{proxy.log_tail()}"
            )

    def quarantine_records(self) -> int:
        return sum(kafka.end_offsets(self.stack.kafka_config("admin"), self.quarantine).values())


@pytest.fixture(scope="module")
def battery(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Battery]:
    admin = stack.kafka_config("admin")
    quarantine = kafka.create_topic(admin, f"hostile-{RUN}-quarantine", 1)
    battery = Battery(stack, tmp_path_factory.mktemp("hostile-proxy"), quarantine)
    battery.start()
    try:
        yield battery
    finally:
        if battery.proxy is not None:
            battery.proxy.stop()
        battery.http.close()
        leftovers = [t for t in kafka.list_topics(admin) if t.startswith(f"hostile-{RUN}") or t in ILLEGAL_CREATED]
        with contextlib.suppress(Exception):  # a name the proxy should never have created may not delete either
            kafka.delete_topics(admin, leftovers)


# --- the cases ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One hostile request and what must come back.

    `status` None: any 4xx. `codes` empty: any integer error_code. `stream`: a v3 produce,
    which may also answer 200 with a 4xx error_code on every result line.
    """

    id: str
    method: str
    path: str  # {t} quarantine topic, {c} cluster id, {g} group, {i} the assigned instance's path
    body: bytes | None = None
    content_type: str | None = JSON_V2
    accept: str | None = None
    status: int | None = None
    codes: tuple[int, ...] = ()
    stream: bool = False
    check_empty: bool = False  # also read the quarantine topic's end offset after the request


def deep_array(depth: int) -> bytes:
    return b"[" * depth + b"1" + b"]" * depth


def deep_object(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def produce_body(*records: bytes) -> bytes:
    return b'{"records":[' + b",".join(records) + b"]}"


def seek_body(offset: bytes, partition: bytes = b"0") -> bytes:
    return b'{"offsets":[{"topic":"@T@","partition":' + partition + b',"offset":' + offset + b"}]}"


def partitions_body(topic: bytes, partition: bytes) -> bytes:
    return b'{"partitions":[{"topic":' + topic + b',"partition":' + partition + b"}]}"


INT64_MAX = 2**63 - 1
BEYOND_64_BITS = (b"18446744073709551616", b"1000000000000000000000000000000")
VALID_RECORD = b'{"value":{"ok":1}}'

# Names a v2 path may not carry (Kafka's rule: 1..249 of [A-Za-z0-9._-], not "." or "..").
ILLEGAL_PATH_NAMES = {
    "nul": "%00",
    "nul-inside": "a%00b",
    "ctrl-01": "%01",
    "ctrl-esc": "a%1Bb",
    "del": "a%7F",
    "newline": "a%0Ab",
    "tab": "a%09b",
    "dot": ".",
    "dotdot": "..",
    "enc-dot": "%2E",
    "enc-dotdot": "%2e%2e",
    "len-250": "x" * 250,
    "len-10000": "x" * 10_000,
    "unicode": "%C3%A9t%C3%A9",
    "space": "a%20b",
    "star": "a*b",
    "zero-width": "a%E2%80%8Bb",
    "quote": "a%22b",
    "backslash": "a%5Cb",
    "invalid-utf8": "%FF%FE",
}
# Names for v3 create (JSON strings); if the proxy wrongly creates one, cleanup deletes it.
ILLEGAL_TOPIC_NAMES = {
    "empty": "",
    "dot": ".",
    "dotdot": "..",
    "nul": "a\x00b",
    "ctrl": "\x01",
    "space": "a b",
    "slash": "a/b",
    "len-250": "x" * 250,
    "len-10000": "x" * 10_000,
    "unicode": "été",
    "star": "a*b",
}
ILLEGAL_CREATED = set(ILLEGAL_TOPIC_NAMES.values())
ILLEGAL_GROUPS = {
    "nul": "%00",
    "nul-inside": "a%00b",
    "ctrl-01": "%01",
    "newline": "a%0Ab",
    "esc": "a%1Bb",
    "len-256": "g" * 256,
    "len-10000": "g" * 10_000,
}
ILLEGAL_INSTANCE_NAMES = {
    "dot": ".",
    "dotdot": "..",
    "slash": "a/b",
    "root": "/",
    "nul": "a\x00b",
    "ctrl": "\x01",
    "newline": "a\nb",
    "len-256": "i" * 256,
    "len-10000": "i" * 10_000,
}


def topic_name_cases() -> list[Case]:
    """Illegal topic names in v2 paths: 404 / 40401, never a librdkafka call on them."""
    cases = []
    for key, name in ILLEGAL_PATH_NAMES.items():
        cases.append(
            Case(f"v2-get-topic-{key}", "GET", f"/topics/{name}", content_type=None, status=404, codes=(40401,))
        )
        cases.append(
            Case(
                f"v2-produce-topic-{key}",
                "POST",
                f"/topics/{name}",
                produce_body(VALID_RECORD),
                status=404,
                codes=(40401,),
            )
        )
    for key in ("nul", "dotdot", "len-10000", "ctrl-esc", "unicode"):
        name = ILLEGAL_PATH_NAMES[key]
        cases.append(
            Case(
                f"v2-topic-partition-{key}",
                "GET",
                f"/topics/{name}/partitions/0",
                content_type=None,
                status=404,
                codes=(40401,),
            )
        )
    return cases


def v3_create_cases() -> list[Case]:
    """v3 topic creation: illegal names 400 / 40002; other bad bodies any 4xx."""
    cases = [
        Case(
            f"v3-create-name-{key}",
            "POST",
            "/v3/clusters/{c}/topics",
            orjson.dumps({"topic_name": name}),
            content_type=V3,
            status=400 if name else 422,  # an empty name is a missing one: 422 / 42206, as upstream's payload check
            codes=(40002,) if name else (42206,),
        )
        for key, name in ILLEGAL_TOPIC_NAMES.items()
    ]
    name = f"hostile-{RUN}"
    bad_bodies = {
        "empty-object": b"{}",
        "array": b"[]",
        "name-int": b'{"topic_name":5}',
        "name-null": b'{"topic_name":null}',
        "partitions-negative": orjson.dumps({"topic_name": f"{name}-a", "partitions_count": -1}),
        "partitions-int32-overflow": orjson.dumps({"topic_name": f"{name}-b", "partitions_count": 2**31}),
        "replication-negative": orjson.dumps({"topic_name": f"{name}-c", "replication_factor": -5}),
        # Past librdkafka's bounds its create_topics raises: each was a 500 before.
        "partitions-past-librdkafka": orjson.dumps({"topic_name": f"{name}-h", "partitions_count": 100_001}),
        "replication-past-librdkafka": orjson.dumps({"topic_name": f"{name}-i", "replication_factor": 17_059}),
        "configs-not-list": orjson.dumps({"topic_name": f"{name}-d", "configs": "x"}),
        "config-name-nul": orjson.dumps({"topic_name": f"{name}-e", "configs": [{"name": "a\x00", "value": "1"}]}),
        "deep-2000": b'{"topic_name":"' + name.encode() + b'-f","configs":' + deep_array(2000) + b"}",
    }
    cases += [
        Case(f"v3-create-{key}", "POST", "/v3/clusters/{c}/topics", body, content_type=V3)
        for key, body in bad_bodies.items()
    ]
    for i, number in enumerate(BEYOND_64_BITS):
        body = b'{"topic_name":"' + f"{name}-g{i}".encode() + b'","partitions_count":' + number + b"}"
        cases.append(
            Case(
                f"v3-create-partitions-beyond-64-bits-{i}",
                "POST",
                "/v3/clusters/{c}/topics",
                body,
                content_type=V3,
                status=None,  # 400 (malformed) or 422 (a float where an integer belongs)
                codes=(400, 422, 42206),
            )
        )
    cases.append(
        Case(
            "v3-create-malformed",
            "POST",
            "/v3/clusters/{c}/topics",
            b'{"topic_name":',
            content_type=V3,
            status=400,
            codes=(400,),
        )
    )
    return cases


def consumer_name_cases() -> list[Case]:
    """Groups and instance names librdkafka or a URL cannot carry: 422 / 42204; unknown instances 404 / 40403."""
    cases = [
        Case(f"group-{key}", "POST", f"/consumers/{group}", b"{}", content_type=V2, status=422, codes=(42204,))
        for key, group in ILLEGAL_GROUPS.items()
    ]
    cases += [
        Case(
            f"instance-name-{key}",
            "POST",
            "/consumers/{g}",
            orjson.dumps({"name": name, "format": "json"}),
            content_type=V2,
            status=422,
            codes=(42204,),
        )
        for key, name in ILLEGAL_INSTANCE_NAMES.items()
    ]
    odd_bodies = {
        "name-int": b'{"name":5}',
        "name-list": b'{"name":[]}',
        "name-object": b'{"name":{}}',
        "format-xml": b'{"format":"xml"}',
        "reset-sideways": b'{"auto.offset.reset":"sideways"}',
        "fetch-min-bytes-negative": b'{"fetch.min.bytes":-5}',
        "fetch-min-bytes-huge": b'{"fetch.min.bytes":9223372036854775807}',
        "request-timeout-negative": b'{"consumer.request.timeout.ms":-1}',
        "body-string": b'"x"',
        "body-array": b"[]",
    }
    cases += [
        Case(f"create-{key}", "POST", "/consumers/{g}", body, content_type=V2) for key, body in odd_bodies.items()
    ]
    cases += [
        Case(
            "create-deep-2000",
            "POST",
            "/consumers/{g}",
            b'{"name":' + deep_array(2000) + b"}",
            content_type=V2,
            status=400,
            codes=(400,),
        )
    ]
    cases += [
        Case(
            f"create-fetch-min-bytes-beyond-64-bits-{i}",
            "POST",
            "/consumers/{g}",
            b'{"fetch.min.bytes":' + number + b"}",
            content_type=V2,
            status=None,  # 400 (malformed) or 422 (a float where an integer belongs)
            codes=(400, 422, 40001),
        )
        for i, number in enumerate(BEYOND_64_BITS)
    ]
    unknown = "/consumers/{g}/instances/nope"
    for method, suffix, body in (
        ("GET", "/assignments", None),
        ("GET", "/subscription", None),
        ("POST", "/positions", seek_body(b"0")),
        ("DELETE", "", None),
        ("POST", "/offsets", b"{}"),
        ("GET", "/records", None),
    ):
        cases.append(
            Case(
                f"unknown-instance-{method}{suffix.replace('/', '-')}",
                method,
                unknown + suffix,
                body,
                content_type=V2 if body else None,
                accept=JSON_V2,
                status=404,
                codes=(40403,),
            )
        )
    for key, name in {
        "nul": "%00",
        "dotdot": "..",
        "enc-dotdot": "%2e%2e",
        "dot": ".",
        "len-10000": "i" * 10_000,
        "slash": "a%2Fb",
        "ctrl": "%01",
    }.items():
        cases.append(
            Case(
                f"illegal-instance-path-{key}",
                "GET",
                f"/consumers/{{g}}/instances/{name}/assignments",
                content_type=None,
                status=404,
                codes=(40403,),
            )
        )
    cases.append(
        Case(
            "nul-group-path",
            "GET",
            "/consumers/%00/instances/inst/assignments",
            content_type=None,
            status=404,
            codes=(40403,),
        )
    )
    return cases


def partition_cases() -> list[Case]:
    """Partitions in paths: out of range 404 / 40402, not an integer (or past 64 bits) 404 / 404; in bodies any 4xx."""
    cases = []
    for key, value, code in (
        ("negative", "-1", 40402),
        ("int32-overflow", "2147483648", 40402),
        ("int32-max", "2147483647", 40402),
        ("beyond-64-bits", "99999999999999999999999", 404),  # not convertible to a number: JAX-RS's 404
        ("word", "abc", 404),
        ("fraction", "1.5", 404),
        ("nul", "%00", 404),
        ("hex", "0x1", 404),
    ):
        cases.append(
            Case(
                f"v2-partition-{key}",
                "GET",
                f"/topics/{{t}}/partitions/{value}",
                content_type=None,
                status=404,
                codes=(code,),
            )
        )
        cases.append(
            Case(
                f"v2-produce-partition-{key}",
                "POST",
                f"/topics/{{t}}/partitions/{value}",
                produce_body(VALID_RECORD),
                status=404,
                codes=(code,),
            )
        )
    cases.append(
        Case(
            "v2-partition-offsets-negative",
            "GET",
            "/topics/{t}/partitions/-1/offsets",
            content_type=None,
            status=404,
            codes=(40402,),
        )
    )
    for key, number in (
        ("negative", b"-1"),
        ("int32-overflow", b"2147483648"),
        ("word", b'"abc"'),
        ("fraction", b"1.5"),
        ("bool", b"true"),
    ):
        cases.append(
            Case(
                f"record-partition-{key}",
                "POST",
                "/topics/{t}",
                produce_body(b'{"value":1,"partition":' + number + b"}"),
            )
        )
    cases += [
        Case(
            f"record-partition-beyond-64-bits-{i}",
            "POST",
            "/topics/{t}",
            produce_body(b'{"value":1,"partition":' + number + b"}"),
            status=None,  # 400 (malformed) or 422 (a float where an integer belongs)
            codes=(400, 422),
        )
        for i, number in enumerate(BEYOND_64_BITS)
    ]
    return cases


def offset_cases() -> list[Case]:
    """Seek and commit offsets: negative or beyond int64 422 / 422, beyond 64 bits 400 / 400."""
    cases = []
    for where in ("positions", "offsets"):
        for key, offset in (
            ("negative", b"-1"),
            ("very-negative", str(-(2**63)).encode()),
            ("int64-overflow", str(INT64_MAX + 1).encode()),
            ("u64-max", str(2**64 - 1).encode()),
        ):
            cases.append(
                Case(
                    f"{where}-offset-{key}",
                    "POST",
                    f"{{i}}/{where}",
                    seek_body(offset),
                    content_type=V2,
                    status=422,
                    codes=(422,),
                )
            )
        for i, number in enumerate(BEYOND_64_BITS):
            cases.append(
                Case(
                    f"{where}-offset-beyond-64-bits-{i}",
                    "POST",
                    f"{{i}}/{where}",
                    seek_body(number),
                    content_type=V2,
                    status=None,  # 400 (malformed) or 422 (a float where an integer belongs)
                    codes=(400, 422),
                )
            )
        for key, body in (
            ("word", seek_body(b'"abc"')),
            ("fraction", seek_body(b"1.5")),
            ("null", seek_body(b"null")),
            ("partition-negative", seek_body(b"0", b"-1")),
            ("partition-int32-overflow", seek_body(b"0", b"2147483648")),
            ("offsets-not-list", b'{"offsets":"x"}'),
            ("offsets-ints", b'{"offsets":[5]}'),
            ("topic-nul", b'{"offsets":[{"topic":"a\\u0000b","partition":0,"offset":0}]}'),
        ):
            cases.append(Case(f"{where}-{key}", "POST", f"{{i}}/{where}", body, content_type=V2))
    cases.append(
        Case(
            "positions-beginning-partition-huge",
            "POST",
            "{i}/positions/beginning",
            partitions_body(b'"@T@"', b"1099511627776"),
            content_type=V2,
        )
    )
    cases.append(
        Case(
            "positions-end-topic-nul",
            "POST",
            "{i}/positions/end",
            partitions_body(b'"a\\u0000b"', b"0"),
            content_type=V2,
        )
    )
    return cases


def assignment_cases() -> list[Case]:
    """Assign and subscribe with names or numbers librdkafka cannot take: any 4xx."""
    spare, sub = "/consumers/{g}/instances/spare", "/consumers/{g}/instances/spare-sub"
    assigns = {
        "topic-nul": partitions_body(b'"a\\u0000b"', b"0"),
        "topic-long": partitions_body(b'"' + b"x" * 10_000 + b'"', b"0"),
        "topic-int": partitions_body(b"5", b"0"),
        "partition-negative": partitions_body(b'"@T@"', b"-1"),
        "partition-int32-overflow": partitions_body(b'"@T@"', b"2147483648"),
        "partitions-not-list": b'{"partitions":"x"}',
        "partitions-ints": b'{"partitions":[5]}',
    }
    cases = [
        Case(f"assign-{key}", "POST", f"{spare}/assignments", body, content_type=V2) for key, body in assigns.items()
    ]
    cases.append(
        Case(
            "assign-partition-beyond-64-bits",
            "POST",
            f"{spare}/assignments",
            partitions_body(b'"@T@"', BEYOND_64_BITS[0]),
            content_type=V2,
            status=None,  # 400 (malformed) or 422 (a float where an integer belongs)
            codes=(400, 422),
        )
    )
    subscriptions = {
        "topic-nul": b'{"topics":["a\\u0000b"]}',
        "topic-ctrl": b'{"topics":["a\\u0001b"]}',
        "topic-long": b'{"topics":["' + b"x" * 10_000 + b'"]}',
        "topics-not-list": b'{"topics":"x"}',
        "topics-ints": b'{"topics":[5]}',
        "pattern-invalid-regex": b'{"topic_pattern":"("}',
        "pattern-nul": b'{"topic_pattern":"a\\u0000"}',
    }
    cases += [
        Case(f"subscribe-{key}", "POST", f"{sub}/subscription", body, content_type=V2)
        for key, body in subscriptions.items()
    ]
    return cases


def records_query_cases() -> list[Case]:
    """Records request parameters that are not integers, and Accepts that do not match."""
    cases = [
        Case(f"records-{key}", "GET", f"{{i}}/records?{query}", content_type=None, accept=JSON_V2)
        for key, query in (
            ("timeout-word", "timeout=abc"),
            ("timeout-beyond-64-bits", "timeout=99999999999999999999999"),
            ("timeout-exponent", "timeout=1e3"),
            ("max-bytes-word", "max_bytes=abc"),
            ("max-bytes-beyond-64-bits", "max_bytes=99999999999999999999999"),
            ("timeout-nul", "timeout=%00"),
        )
    ]
    cases.append(
        Case(
            "records-accept-html",
            "GET",
            "{i}/records",
            content_type=None,
            accept="text/html",
            status=406,
            codes=(406, 40601),
        )
    )
    cases.append(
        Case(
            "records-accept-binary-on-json-consumer",
            "GET",
            "{i}/records",
            content_type=None,
            accept=BINARY_V2,
            status=406,
            codes=(40601,),
        )
    )
    return cases


MALFORMED = {
    "open-brace": b"{",
    "unterminated-records": b'{"records": [',
    "missing-close": b'{"records": [{"value": 1}]',
    "close-only": b"}",
    "single-quotes": b"{'records': [{'value': 1}]}",
    "nan": b'{"records": [{"value": NaN}]}',
    "infinity": b'{"records": [{"value": Infinity}]}',
    "trailing-comma": b'{"records": [{"value": 1,}]}',
    "leading-zero": b'{"records": [{"value": 01}]}',
    "invalid-utf8": b'{"records": [{"value": "\xff\xfe"}]}',
    "lone-surrogate": b'{"records": [{"value": "\\ud800"}]}',
    "raw-nul-in-string": b'{"records": [{"value": "a\x00b"}]}',
    "trailing-garbage": b'{"records": [{"value": 1}]} garbage',
    "two-documents": b'{"records": [{"value": 1}]}{"records": [{"value": 2}]}',
    "unterminated-string": b'{"records": [{"value": "abc}]}',
    "bare-word": b"records",
    "comment": b'{"records": [{"value": 1}]} // hi',
}


def malformed_cases() -> list[Case]:
    """Malformed JSON in every kind of body: 400 / 400."""
    cases = [
        Case(f"malformed-produce-{key}", "POST", "/topics/{t}", body, status=400, codes=(400,))
        for key, body in MALFORMED.items()
    ]
    cases += [
        Case(
            f"produce-value-beyond-64-bits-{i}",
            "POST",
            "/topics/{t}",
            produce_body(b'{"value":' + number + b"}"),
            status=None,  # 400 (malformed) or 422 (a float where an integer belongs)
            codes=(400, 422),
        )
        for i, number in enumerate(BEYOND_64_BITS)
    ]
    for key in ("open-brace", "single-quotes", "trailing-garbage"):
        body = MALFORMED[key]
        cases.append(
            Case(
                f"malformed-create-consumer-{key}",
                "POST",
                "/consumers/{g}",
                body,
                content_type=V2,
                status=400,
                codes=(400,),
            )
        )
        cases.append(
            Case(f"malformed-seek-{key}", "POST", "{i}/positions", body, content_type=V2, status=400, codes=(400,))
        )
        cases.append(
            Case(
                f"malformed-assign-{key}",
                "POST",
                "/consumers/{g}/instances/spare/assignments",
                body,
                content_type=V2,
                status=400,
                codes=(400,),
            )
        )
    return cases


def deep_cases() -> list[Case]:
    """json-format produce nesting 300 deep 422 / 422 (orjson writes at most 255 levels), 2,000 deep 400 / 400."""
    cases = []
    for depth, status in ((300, 422), (2000, 400), (100_000, 400)):
        for part in ("value", "key"):
            for shape, build in (("array", deep_array), ("object", deep_object)):
                if depth == 100_000 and (part, shape) != ("value", "array"):
                    continue
                body = produce_body(b'{"' + part.encode() + b'":' + build(depth) + b"}")
                cases.append(
                    Case(
                        f"deep-{part}-{shape}-{depth}",
                        "POST",
                        "/topics/{t}",
                        body,
                        status=status,
                        codes=(status,),
                        check_empty=True,
                    )
                )
    cases.append(
        Case(
            "deep-after-valid-record-300",
            "POST",
            "/topics/{t}",
            produce_body(VALID_RECORD, b'{"value":' + deep_array(300) + b"}"),
            status=422,
            codes=(422,),
            check_empty=True,
        )
    )
    return cases


def shape_cases() -> list[Case]:
    """`records` not an array, or an element not an object: 400 / 400; other wrong shapes any 4xx."""
    cases = [
        Case(f"records-{key}", "POST", "/topics/{t}", b'{"records":' + value + b"}", status=400, codes=(400,))
        for key, value in (("object", b"{}"), ("string", b'"x"'), ("number", b"5"), ("bool", b"true"))
    ]
    cases += [
        Case(f"record-element-{key}", "POST", "/topics/{t}", produce_body(value), status=400, codes=(400,))
        for key, value in (
            ("number", b"1"),
            ("string", b'"x"'),
            ("null", b"null"),
            ("array", b"[]"),
            ("bool", b"true"),
            ("second-of-two", VALID_RECORD + b',"x"'),
        )
    ]
    cases += [
        Case(f"produce-{key}", "POST", "/topics/{t}", body)
        for key, body in (
            ("records-null", b'{"records":null}'),
            ("records-empty", b'{"records":[]}'),
            ("body-array", b"[]"),
            ("body-null", b"null"),
            ("body-string", b'"x"'),
            ("body-empty", b""),
            ("body-whitespace", b"   \n\t  "),
            ("unknown-field", b'{"records":[{"value":1}],"nope":1}'),
        )
    ]
    cases.append(
        Case(
            "produce-binary-not-base64",
            "POST",
            "/topics/{t}",
            b'{"records":[{"value":"!!!"}]}',
            content_type=BINARY_V2,
            status=400,
            codes=(400,),
        )
    )
    return cases


def media_type_cases() -> list[Case]:
    """Wrong or missing Content-Type: 415 / 415; an Accept nobody can serve: 406 / 406."""
    body = produce_body(VALID_RECORD)
    cases = [
        Case(f"produce-content-type-{key}", "POST", "/topics/{t}", body, content_type=ctype, status=415, codes=(415,))
        for key, ctype in (
            ("text-plain", "text/plain"),
            ("xml", "application/xml"),
            ("missing", None),
            ("v99", "application/vnd.kafka.v99+json"),
            ("unknown-format", "application/vnd.kafka.nope.v2+json"),
            ("multipart", "multipart/form-data; boundary=x"),
            ("garbage", "x" * 10_000),
        )
    ]
    cases.append(
        Case(
            "v3-produce-content-type-text-plain",
            "POST",
            "/v3/clusters/{c}/topics/{t}/records",
            b'{"value":{"type":"JSON","data":1}}',
            content_type="text/plain",
            status=415,
            codes=(415,),
        )
    )
    cases.append(
        Case(
            "create-consumer-content-type-text-plain",
            "POST",
            "/consumers/{g}",
            b"{}",
            content_type="text/plain",
            status=415,
            codes=(415,),
        )
    )
    cases.append(
        Case(
            "v3-create-topic-content-type-text-plain",
            "POST",
            "/v3/clusters/{c}/topics",
            orjson.dumps({"topic_name": f"hostile-{RUN}-ct"}),
            content_type="text/plain",
            status=415,
            codes=(415,),
        )
    )
    cases += [
        Case(f"produce-accept-{key}", "POST", "/topics/{t}", body, accept=accept, status=406, codes=(406,))
        for key, accept in (("html", "text/html"), ("xml", "application/xml"), ("png", "image/png;q=1"))
    ]
    cases.append(
        Case("topics-accept-html", "GET", "/topics", content_type=None, accept="text/html", status=406, codes=(406,))
    )
    cases.append(
        Case(
            "v3-clusters-accept-html",
            "GET",
            "/v3/clusters",
            content_type=None,
            accept="text/html",
            status=406,
            codes=(406,),
        )
    )
    return cases


def size_cases() -> list[Case]:
    """Bodies over request.max.bytes (1 MB here) and more records than producer.max.records.per.request: 413 / 413."""
    two_mb = produce_body(b'{"value":"' + b"x" * (2 * 1024 * 1024) + b'"}')
    return [
        Case("produce-body-2mb", "POST", "/topics/{t}", two_mb, status=413, codes=(413,), check_empty=True),
        Case(
            "produce-million-empty-records",
            "POST",
            "/topics/{t}",
            b'{"records":[' + b",".join([b"{}"] * 1_000_000) + b"]}",
            status=413,
            codes=(413,),
            check_empty=True,
        ),
        Case(
            "produce-100001-empty-records",
            "POST",
            "/topics/{t}",
            b'{"records":[' + b",".join([b"{}"] * 100_001) + b"]}",
            status=413,
            codes=(413,),
            check_empty=True,
        ),
        Case(
            "create-consumer-body-2mb",
            "POST",
            "/consumers/{g}",
            b'{"name":"' + b"n" * (2 * 1024 * 1024) + b'"}',
            content_type=V2,
            status=413,
            codes=(413,),
        ),
        Case(
            "v3-produce-body-2mb",
            "POST",
            "/v3/clusters/{c}/topics/{t}/records",
            b'{"value":{"type":"STRING","data":"' + b"x" * (2 * 1024 * 1024) + b'"}}',
            content_type=V3,
            status=413,
            codes=(413,),
            stream=True,
        ),
    ]


def v3_path_cases() -> list[Case]:
    """v3 paths naming clusters, topics, partitions, groups and configs that cannot exist: 404."""
    paths = {
        "cluster-unknown": "/v3/clusters/nope",
        "cluster-nul": "/v3/clusters/%00",
        "cluster-long": "/v3/clusters/" + "c" * 10_000,
        "cluster-unknown-topics": "/v3/clusters/nope/topics",
        "cluster-unknown-partition": "/v3/clusters/nope/topics/{t}/partitions/0",
        "topic-nul": "/v3/clusters/{c}/topics/%00",
        "topic-dotdot": "/v3/clusters/{c}/topics/..",
        "topic-unknown": f"/v3/clusters/{{c}}/topics/hostile-{RUN}-absent",
        "topic-long": "/v3/clusters/{c}/topics/" + "x" * 10_000,
        "partition-negative": "/v3/clusters/{c}/topics/{t}/partitions/-1",
        "partition-int32-overflow": "/v3/clusters/{c}/topics/{t}/partitions/2147483648",
        "partition-beyond-64-bits": "/v3/clusters/{c}/topics/{t}/partitions/99999999999999999999999",
        "partition-word": "/v3/clusters/{c}/topics/{t}/partitions/abc",
        "config-nul": "/v3/clusters/{c}/topics/{t}/configs/%00",
        "group-nul": "/v3/clusters/{c}/consumer-groups/%00",
        "group-long": "/v3/clusters/{c}/consumer-groups/" + "g" * 10_000,
        "group-lags-ctrl": "/v3/clusters/{c}/consumer-groups/%01/lags",
    }
    cases = [Case(f"v3-get-{key}", "GET", path, content_type=None, status=404) for key, path in paths.items()]
    cases.append(Case("v3-delete-topic-nul", "DELETE", "/v3/clusters/{c}/topics/%00", content_type=None, status=404))
    cases.append(
        Case("v3-delete-topic-enc-dotdot", "DELETE", "/v3/clusters/{c}/topics/%2e%2e", content_type=None, status=404)
    )
    cases.append(
        Case(
            "v3-produce-cluster-unknown",
            "POST",
            "/v3/clusters/nope/topics/{t}/records",
            b'{"value":{"type":"JSON","data":1}}',
            content_type=V3,
            status=404,
        )
    )
    cases.append(
        Case(
            "v3-produce-topic-unknown",
            "POST",
            f"/v3/clusters/{{c}}/topics/hostile-{RUN}-absent/records",
            b'{"value":{"type":"JSON","data":1}}',
            content_type=V3,
            status=404,
            codes=(40401,),
        )
    )
    cases.append(
        Case(
            "v3-produce-topic-nul",
            "POST",
            "/v3/clusters/{c}/topics/%00/records",
            b'{"value":{"type":"JSON","data":1}}',
            content_type=V3,
            status=404,
        )
    )
    return cases


def v3_produce_cases() -> list[Case]:
    """v3 produce with bad objects: an HTTP 4xx, or 200 with a 4xx error_code on every result."""
    path = "/v3/clusters/{c}/topics/{t}/records"
    bodies = {
        "empty": b"",
        "number": b"42",
        "string": b'"x"',
        "array": b"[1,2]",
        "value-not-object": b'{"value":5}',
        "binary-not-base64": b'{"value":{"type":"BINARY","data":"!!"}}',
        "type-unknown": b'{"value":{"type":"NOPE","data":1}}',
        "partition-negative": b'{"partition_id":-1,"value":{"type":"JSON","data":1}}',
        "partition-int32-overflow": b'{"partition_id":2147483648,"value":{"type":"JSON","data":1}}',
        "partition-beyond-64-bits": b'{"partition_id":18446744073709551616,"value":{"type":"JSON","data":1}}',
        "headers-not-list": b'{"headers":"x","value":{"type":"JSON","data":1}}',
        "header-name-int": b'{"headers":[{"name":5,"value":null}],"value":{"type":"JSON","data":1}}',
        "timestamp-word": b'{"timestamp":"not a date","value":{"type":"JSON","data":1}}',
        "timestamp-beyond-64-bits": b'{"timestamp":18446744073709551616,"value":{"type":"JSON","data":1}}',
        "json-deep-300": b'{"value":{"type":"JSON","data":' + deep_array(300) + b"}}",
        "json-deep-2000": b'{"value":{"type":"JSON","data":' + deep_array(2000) + b"}}",
        "malformed": b'{"value":',
        "schema-without-registry": b'{"value":{"type":"AVRO","data":1}}',
    }
    return [
        Case(f"v3-produce-{key}", "POST", path, body, content_type=V3, stream=True, check_empty=key.startswith("json"))
        for key, body in bodies.items()
    ]


def method_cases() -> list[Case]:
    return [
        Case(f"method-{m}-topics", m, "/topics", content_type=None, status=405, codes=(405,)) for m in ("PUT", "DELETE")
    ]


CASES = [
    *topic_name_cases(),
    *v3_create_cases(),
    *consumer_name_cases(),
    *partition_cases(),
    *offset_cases(),
    *assignment_cases(),
    *records_query_cases(),
    *malformed_cases(),
    *deep_cases(),
    *shape_cases(),
    *media_type_cases(),
    *size_cases(),
    *v3_path_cases(),
    *v3_produce_cases(),
    *method_cases(),
]


# --- checks -----------------------------------------------------------------------------------


def send(battery: Battery, case: Case) -> requests.Response:
    """Send the request with the path exactly as written (requests would drop `.`/`..` segments)."""
    headers = {"Content-Type": case.content_type} if case.content_type else {}
    if case.accept:
        headers["Accept"] = case.accept
    body = case.body.replace(b"@T@", battery.quarantine.encode()) if case.body is not None else None
    prepared = requests.Request(case.method, f"{battery.current.url}/", headers=headers, data=body).prepare()
    prepared.url = battery.current.url + battery.expand(case.path)
    if case.content_type is None:
        prepared.headers.pop("Content-Type", None)
    return battery.http.send(prepared, timeout=TIMEOUT)


def assert_error_body(text: bytes, codes: tuple[int, ...] = ()) -> dict[str, Any]:
    """`{"error_code": <int>, "message": <str>}`, with one of `codes` when given."""
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise AssertionError(f"error body is not JSON: {text[:300]!r}") from None
    assert isinstance(body, dict), body
    code = body.get("error_code")
    assert isinstance(code, int) and not isinstance(code, bool), f"error_code is not an int: {text[:300]!r}"
    assert isinstance(body.get("message"), str), f"message is not a string: {text[:300]!r}"
    if codes:
        assert code in codes, f"error_code {code}, expected {codes}: {text[:300]!r}"
    return body


def client_error(code: int) -> bool:
    """A 4xx, as HTTP status or as upstream's 5-digit code (40402 is 404 + sub-code 02)."""
    return 400 <= code < 500 or 40_000 <= code < 50_000


def assert_refused(case: Case, response: requests.Response) -> None:
    """A 4xx with the error body (or, for v3 produce, a 200 stream of 4xx results only)."""
    shown = f"{response.status_code} {response.content[:300]!r}"
    if case.stream and response.status_code == 200:
        results = [orjson.loads(line) for line in response.content.splitlines() if line.strip()]
        assert results, f"200 with no result: {shown}"
        for result in results:
            code = int(result.get("error_code", 200))
            assert client_error(code), f"a record was accepted, or failed with a server error: {shown}"
            assert not case.codes or code in case.codes, f"error_code {code}, expected {case.codes}: {shown}"
        return
    if case.status is not None:
        assert response.status_code == case.status, f"expected {case.status} {case.codes or ''}, got {shown}"
    else:
        assert 400 <= response.status_code < 500, f"expected a 4xx, got {shown}"
    assert_error_body(response.content, case.codes)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hostile_request_is_refused_and_survived(battery: Battery, case: Case) -> None:
    """Refused at the edge with upstream's status and error body; the same process answers GET /topics after."""
    battery.ensure()
    try:
        response = send(battery, case)
    except requests.RequestException as exc:
        battery.assert_alive(case.id)
        raise AssertionError(f"no answer: {exc!r}") from None
    try:
        assert_refused(case, response)
        if case.check_empty:
            assert battery.quarantine_records() == 0, "a refused request wrote records"
    finally:
        battery.assert_alive(case.id)


TOLERATED = {
    "records-timeout-negative": "timeout=-1",
    "records-timeout-zero": "timeout=0",
    "records-max-bytes-negative": "max_bytes=-1",
    "records-max-bytes-int64-max": f"max_bytes={INT64_MAX}",
    "records-timeout-int64-max": f"timeout={INT64_MAX}",
}


@pytest.mark.parametrize("query", TOLERATED.values(), ids=TOLERATED.keys())
def test_odd_but_legal_numbers_are_answered_without_a_5xx(battery: Battery, query: str) -> None:
    """Upstream reads timeout <= 0 as "the default" and max_bytes <= 0 as "no limit": 200 or a 4xx, never a
    5xx, and the wait stays capped by consumer.request.timeout.ms (the client timeout would fire otherwise)."""
    battery.ensure()
    response = battery.http.get(
        f"{battery.current.url}{battery.instance}/records?{query}", headers={"Accept": JSON_V2}, timeout=TIMEOUT
    )
    try:
        assert response.status_code == 200 or 400 <= response.status_code < 500, response.text
        if response.status_code != 200:
            assert_error_body(response.content)
    finally:
        battery.assert_alive(query)


# --- raw sockets: truncated, slow and oversized requests ----------------------------------------


@dataclass
class RawAnswer:
    status: int | None
    body: bytes
    closed: bool  # the server closed the connection
    seconds: float


def raw_exchange(
    port: int, data: bytes, *, half_close: bool = False, until_close: bool = False, timeout: float = TIMEOUT
) -> RawAnswer:
    """Send `data` on a fresh connection, then read one response (or, `until_close`, up to the close) until
    `timeout`."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading: its answer may still be waiting
        received = b""
        closed = False
        deadline = started + timeout
        while until_close or not _complete(received):
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.") else None
    return RawAnswer(status, body, closed, time.monotonic() - started)


def _complete(received: bytes) -> bool:
    head, sep, body = received.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return b"transfer-encoding: chunked" not in head.lower() or body.endswith(b"0\r\n\r\n")


def request_head(battery: Battery, path: str, headers: Mapping[str, object], method: str = "POST") -> bytes:
    lines = [f"{method} {battery.expand(path)} HTTP/1.1", f"Host: 127.0.0.1:{battery.port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_truncated_body_then_eof_is_refused_or_dropped(battery: Battery) -> None:
    """Content-Length promises 200 bytes, 60 arrive, then the client half-closes: a 4xx or a closed connection,
    nothing produced, the process alive."""
    battery.ensure()
    body = produce_body(VALID_RECORD * 20)[:60]
    head = request_head(battery, "/topics/{t}", {"Content-Type": JSON_V2, "Content-Length": 200})
    answer = raw_exchange(battery.port, head + body, half_close=True)
    try:
        assert answer.status is None or 400 <= answer.status < 500, answer
        assert answer.status is not None or answer.closed, f"neither an answer nor a close within {TIMEOUT} s"
        assert battery.quarantine_records() == 0
    finally:
        battery.assert_alive("truncated-body")


def test_body_that_never_finishes_gets_408(battery: Battery) -> None:
    """Half a body, then silence: 408 / 408 after request.body.timeout.ms, not a connection held forever."""
    battery.ensure()
    body = produce_body(*[VALID_RECORD] * 50)
    head = request_head(battery, "/topics/{t}", {"Content-Type": JSON_V2, "Content-Length": len(body)})
    answer = raw_exchange(battery.port, head + body[: len(body) // 2])
    print(f"\nslow body answered {answer.status} after {answer.seconds:.2f} s (timeout {BODY_TIMEOUT_MS} ms)")
    try:
        assert answer.status == 408, f"expected 408 within {TIMEOUT} s, got {answer}"
        assert_error_body(answer.body, (408,))
        assert battery.quarantine_records() == 0
    finally:
        battery.assert_alive("slow-body")


def test_headers_that_never_finish_are_cut_off(battery: Battery) -> None:
    """Half a header block, then silence: the server closes the connection after request.header.timeout.ms."""
    battery.ensure()
    partial = f"POST /topics/{battery.quarantine} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ".encode()
    answer = raw_exchange(battery.port, partial, until_close=True, timeout=10.0)
    print(f"\nslow headers: closed={answer.closed} status={answer.status} after {answer.seconds:.2f} s")
    try:
        assert answer.closed, f"the connection was still open after 10 s ({HEADER_TIMEOUT_MS} ms expected)"
        assert answer.status is None or answer.status == 408, answer
    finally:
        battery.assert_alive("slow-headers")


HUGE_HEADERS = {
    "one-8mb-header": {"X-Big": "a" * (8 * 1024 * 1024)},
    "ten-thousand-headers": {f"X-H{i}": "v" * 90 for i in range(10_000)},
    "64kb-cookie": {"Cookie": "c=" + "z" * 65_536},
}


@pytest.mark.parametrize("headers", HUGE_HEADERS.values(), ids=HUGE_HEADERS.keys())
def test_headers_over_the_limit_get_431(battery: Battery, headers: dict[str, str]) -> None:
    """Request headers over request.header.max.bytes (32768 by default): HTTP 431, and the process survives."""
    battery.ensure()
    answer = raw_exchange(battery.port, request_head(battery, "/topics", headers, method="GET"))
    try:
        assert answer.status == 431, f"expected 431, got {answer.status} (closed={answer.closed}) {answer.body[:200]!r}"
        if answer.body.strip():
            assert_error_body(answer.body)
    finally:
        battery.assert_alive("huge-headers")


def test_url_over_the_header_limit_is_refused(battery: Battery) -> None:
    """A 100 KB request target counts against the header limit: 414 or 431."""
    battery.ensure()
    answer = raw_exchange(battery.port, request_head(battery, "/topics/" + "x" * 100_000, {}, method="GET"))
    try:
        assert answer.status in (414, 431), f"got {answer.status} (closed={answer.closed}) {answer.body[:200]!r}"
    finally:
        battery.assert_alive("huge-url")


BAD_FRAMING = {
    "content-length-1e12": {"Content-Type": JSON_V2, "Content-Length": "1000000000000"},
    "content-length-negative": {"Content-Type": JSON_V2, "Content-Length": "-1"},
    "content-length-word": {"Content-Type": JSON_V2, "Content-Length": "abc"},
    "chunked-garbage": {"Content-Type": JSON_V2, "Transfer-Encoding": "chunked"},
}


@pytest.mark.parametrize("name", BAD_FRAMING.keys())
def test_bad_framing_is_refused_promptly(battery: Battery, name: str) -> None:
    """Lying or malformed framing: a 4xx (413 for a Content-Length over request.max.bytes, sent before reading
    a byte of body) or a closed connection; an HTTP-level 400 before the app may be plain text."""
    battery.ensure()
    tail = b"zz-not-hex\r\nabc\r\n" if name == "chunked-garbage" else b"{"
    answer = raw_exchange(battery.port, request_head(battery, "/topics/{t}", BAD_FRAMING[name]) + tail)
    try:
        if name == "content-length-1e12":
            assert answer.status == 413, answer
            assert_error_body(answer.body, (413,))
        else:
            assert (answer.status is not None and 400 <= answer.status < 500) or answer.closed, answer
    finally:
        battery.assert_alive(name)


def test_chunked_body_over_the_limit_is_413(battery: Battery) -> None:
    """No Content-Length: the limit is counted while reading."""
    battery.ensure()
    big = produce_body(b'{"value":"' + b"y" * (2 * 1024 * 1024) + b'"}')

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 256 * 1024):
            yield big[start : start + 256 * 1024]

    try:
        response = battery.http.post(
            f"{battery.current.url}/topics/{battery.quarantine}",
            data=chunks(),
            headers={"Content-Type": JSON_V2},
            timeout=TIMEOUT,
        )
        assert response.status_code == 413, response.text[:300]
        assert_error_body(response.content, (413,))
    except requests.ConnectionError:
        pass  # the server may close once it has answered; the answer is then lost to requests
    finally:
        battery.assert_alive("chunked-over-limit")


# --- after the battery ----------------------------------------------------------------------------


def test_valid_requests_still_work_after_the_battery(battery: Battery, topic: Any) -> None:
    """Produce 10 records and read them back on the battered process."""
    battery.ensure()
    name = topic()
    url = battery.current.url
    values = [{"n": i, "text": f"record {i}"} for i in range(10)]
    produced = battery.http.post(
        f"{url}/topics/{name}",
        data=orjson.dumps({"records": [{"value": v} for v in values]}),
        headers={"Content-Type": JSON_V2},
        timeout=TIMEOUT,
    )
    assert produced.status_code == 200, produced.text
    assert [o["offset"] for o in produced.json()["offsets"]] == list(range(10))
    created = battery.http.post(
        f"{url}/consumers/sanity-{RUN}",
        data=b'{"format":"json","auto.offset.reset":"earliest"}',
        headers={"Content-Type": V2},
        timeout=TIMEOUT,
    ).json()
    base = created["base_uri"]
    try:
        assign = orjson.dumps({"partitions": [{"topic": name, "partition": 0}]})
        assert battery.http.post(f"{base}/assignments", data=assign, headers={"Content-Type": V2}).status_code == 204
        records: list[dict[str, Any]] = []
        deadline = time.monotonic() + 30
        while len(records) < 10 and time.monotonic() < deadline:
            response = battery.http.get(f"{base}/records", headers={"Accept": JSON_V2}, timeout=TIMEOUT)
            assert response.status_code == 200, response.text
            records += response.json()
        assert [(r["offset"], r["value"]) for r in records] == list(enumerate(values))
        assert battery.http.delete(base, timeout=TIMEOUT).status_code == 204
    finally:
        with contextlib.suppress(requests.RequestException):  # before the topic fixture deletes the topic
            battery.http.delete(base, timeout=TIMEOUT)


def test_no_refused_request_wrote_a_record(battery: Battery) -> None:
    assert battery.quarantine_records() == 0


def test_no_illegal_topic_was_created(battery: Battery) -> None:
    """Refused creations reached no broker: none of the illegal names exists."""
    existing = set(kafka.list_topics(battery.stack.kafka_config("admin")))
    assert sorted(repr(name[:40]) for name in existing & ILLEGAL_CREATED) == []


def test_the_battery_never_killed_the_proxy(battery: Battery) -> None:
    """Every case that left the proxy dead or deaf, in one list (each also failed by itself)."""
    assert battery.deaths == []
