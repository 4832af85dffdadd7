"""`ProxyClient`: the Confluent REST Proxy API (v2 and v3) from Python.

It works against the workbench's own proxy, Confluent's and MapR's, because it only
uses what the three share and follows the reference's advice where they differ (the
exact `Accept` on record fetches, explicit commit offsets, percent-encoded names).

What it does about the network, and why:

- **Session reuse** (`session_reuse=True`): one `requests.Session` with a connection
  pool of `pool_size` per base URL, so calls reuse TCP connections. With `False` every
  call opens and closes its own connection, which is what the MapR article's
  "isolated POST calls" did and what the session-reuse experiment measures.
- **Several base URLs**: stateless calls (produce, metadata, admin, consumer
  creation) rotate over them round-robin and fail over to the next one when a proxy
  cannot be reached, as the production-deployment article advises without a balancer.
  Consumer calls go to the instance's absolute `base_uri`, never rotated.
- **Retries** with backoff for idempotent calls only (see `Retries`).
- **Errors**: a proxy's error body becomes `ProxyError(status, error_code, message)`;
  no proxy answering becomes `ProxyUnavailableError`.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter

from workbench.errors import ProxyError
from workbench.proxy.consumer import ProxyConsumer
from workbench.proxy.errors import ProxyUnavailableError
from workbench.proxy.records import (
    TRACE_HEADER,
    EncodedRecords,
    Format,
    ProduceResult,
    ProduceTrace,
    RecordOffset,
    encode_records,
)
from workbench.proxy.settings import Retries, Timeout
from workbench.proxy.share import ProxyShareConsumer, share_fetch
from workbench.proxy.wire import V2, V2_ACCEPT, checked, embedded_type, encode_topic, json_of, never_sent, short_cause

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "IDEMPOTENT",
    "ProxyClient",
    "Trace",
    "proxy_urls",
    "trace_header_value",
]

#: What a traced produce asks for: True (stamps in the answer and in every record's headers),
#: "answer" (in the answer only, the records untouched) or False.
Trace = bool | Literal["answer"]


log = logging.getLogger("workbench.proxy")

DEFAULT_TIMEOUT = Timeout()
DEFAULT_RETRIES = Retries()
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


def proxy_urls(stack: Stack, *, balanced: bool = True) -> list[str]:
    """The base URLs a client of this stack should use.

    The balancer when there is one and `balanced` (nginx on the embedded stack, a
    cluster profile's `balancer.url`), else every proxy: the embedded processes or a
    cluster profile's `proxy.urls`.

    Raises:
        ProxyUnavailableError: the stack runs no REST proxy.
    """
    profile = stack.profile
    if profile.proxy.urls and not profile.embedded:
        return [profile.balancer.url] if balanced and profile.balancer.url else list(profile.proxy.urls)
    balancer = getattr(stack, "balancer_url", None)
    if balanced and balancer:
        return [balancer]
    urls = list(getattr(stack, "proxy_urls", None) or profile.proxy.urls or [])
    if not urls:
        raise ProxyUnavailableError(
            [], f"profile {profile.name!r} runs no REST proxy; start the stack with `workbench up`"
        )
    return urls


class ProxyClient:
    """A REST proxy client over one or several base URLs.

    Args:
        urls: one base URL or several (`http://host:8082`); rotated round-robin.
        session_reuse: keep connections open between calls (see the module doc).
        pool_size: connections kept per base URL; set it to the threads sharing the client.
        timeout: a `Timeout`, or seconds for both connect and read.
        retries: a `Retries` for idempotent calls; `Retries(attempts=1)` disables them.
        auth: HTTP basic credentials `(user, password)`, e.g. `profile.proxy.auth.credentials()`.
        headers: extra headers sent with every call.
        verify: TLS verification, as in requests (a CA bundle path or False).
        session: a `requests.Session` of the caller's to send every call through (its own
            adapters, proxies, certificates, hooks), in the manner of httpx's `transport=`:
            the client uses it as it is, and `close` leaves it open for its owner. `auth`
            and `verify` then belong on the session; giving them too is an error.

    Usage:
        with ProxyClient(["http://127.0.0.1:8082"]) as proxy:
            proxy.produce("orders", [b"one", b"two"])
    """

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        session_reuse: bool = True,
        pool_size: int = 10,
        timeout: Timeout | float = DEFAULT_TIMEOUT,
        retries: Retries | int = DEFAULT_RETRIES,
        auth: tuple[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        verify: bool | str = True,
        session: requests.Session | None = None,
    ) -> None:
        self.urls = [urls.rstrip("/")] if isinstance(urls, str) else [u.rstrip("/") for u in urls]
        if not self.urls:
            raise ValueError("ProxyClient needs at least one base URL")
        self.session_reuse = session_reuse
        self.pool_size = pool_size
        self.timeout = timeout if isinstance(timeout, Timeout) else Timeout(timeout, timeout)
        self.retries = retries if isinstance(retries, Retries) else Retries(attempts=max(1, retries))
        self.auth = auth
        self.headers = dict(headers or {})
        self.verify = verify
        self._rotation = itertools.count()
        self._lock = threading.Lock()
        if session is not None and (not session_reuse or auth is not None or verify is not True):
            raise ValueError("with session=, configure auth and verify on the session, and keep session_reuse")
        #: A session the caller gave is theirs to close.
        self._owns_session = session is None
        self._session = session if session is not None else (self._new_session() if session_reuse else None)
        self._cluster_id: str | None = None

    @classmethod
    def for_stack(cls, stack: Stack, *, balanced: bool = True, **kwargs: Any) -> ProxyClient:
        """A client for a stack's proxies (see `proxy_urls`), with the profile's credentials."""
        auth = stack.profile.proxy.auth
        if auth is not None and "auth" not in kwargs:
            kwargs["auth"] = auth.credentials()
        return cls(proxy_urls(stack, balanced=balanced), **kwargs)

    # lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Close pooled connections (not those of a session the caller gave)."""
        if self._session is not None and self._owns_session:
            self._session.close()

    def __enter__(self) -> ProxyClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # v2 metadata ---------------------------------------------------------------------

    def brokers(self) -> list[int]:
        """Broker ids (`GET /brokers`); MapR answers 422/80001 (`ProxyError`)."""
        return list(self.request_json("GET", "/brokers")["brokers"])

    def topics(self) -> list[str]:
        """Topic names the proxy lists (`GET /topics`), sorted."""
        return sorted(self.request_json("GET", "/topics"))

    def topic(self, name: str) -> dict[str, Any]:
        """A topic's metadata: `name`, `configs`, `partitions` (`GET /topics/{name}`)."""
        return dict(self.request_json("GET", f"/topics/{encode_topic(name)}"))

    def partitions(self, topic: str) -> list[dict[str, Any]]:
        """A topic's partitions with leader and replicas."""
        return list(self.request_json("GET", f"/topics/{encode_topic(topic)}/partitions"))

    def partition_offsets(self, topic: str, partition: int) -> tuple[int, int]:
        """`(beginning_offset, end_offset)` of one partition as the proxy reports them."""
        body = self.request_json("GET", f"/topics/{encode_topic(topic)}/partitions/{int(partition)}/offsets")
        return int(body["beginning_offset"]), int(body["end_offset"])

    # v2 produce ----------------------------------------------------------------------

    def produce(
        self,
        topic: str,
        records: Iterable[Any] | EncodedRecords,
        *,
        format: Format = "binary",
        partition: int | None = None,
        key_schema: str | None = None,
        key_schema_id: int | None = None,
        value_schema: str | None = None,
        value_schema_id: int | None = None,
        trace: Trace = False,
    ) -> ProduceResult:
        """Produce a records array in one call (`POST /topics/{topic}[/partitions/{p}]`).

        Args:
            topic: the topic (MapR stream topics `/stream:topic` are fine).
            records: values, `(key, value)` pairs or dicts (see `encode_records`), or
                an `EncodedRecords` built once and sent many times.
            format: "binary" (bytes, base64 on the wire), "json", or a schema format
                ("avro", "jsonschema", "protobuf") with its schema or schema id.
            partition: produce to this partition (the per-partition URL).
            key_schema, key_schema_id, value_schema, value_schema_id: the schema formats'
                schema text or registry id; the result carries the ids the proxy used.
            trace: ask the proxy to trace every record (the workbench's proxy only):
                True (`Workbench-Trace: true`) adds two record headers and a `trace` per
                record in the answer; "answer" only the `trace`s, the records going the
                proxy's untraced way. The result's `traces`, `client_sent_ns` and
                `client_received_ns` say where the call's time went. A proxy that does not
                trace (Confluent's) leaves `traces` empty, with a warning in the log.

        Returns:
            The offsets in request order; check `.failed` (a count) and `.errors` for per-record errors.

        Raises:
            ProxyError: the proxy refused the whole call (e.g. 404/40401 unknown topic).
            ProxyUnavailableError: no proxy answered.
        """
        encoded = (
            records
            if isinstance(records, EncodedRecords)
            else encode_records(
                records,
                format,
                key_schema=key_schema,
                key_schema_id=key_schema_id,
                value_schema=value_schema,
                value_schema_id=value_schema_id,
            )
        )
        path = f"/topics/{encode_topic(topic)}"
        if partition is not None:
            path += f"/partitions/{int(partition)}"
        headers = {"Content-Type": embedded_type(encoded.format), "Accept": V2_ACCEPT}
        if trace:
            return self._produce_traced(path, encoded.body, {**headers, TRACE_HEADER: trace_header_value(trace)})
        body = self.request_json("POST", path, data=encoded.body, headers=headers)
        offsets = tuple(
            RecordOffset(o.get("partition"), o.get("offset"), o.get("error_code"), o.get("error"))
            for o in body.get("offsets", [])
        )
        return ProduceResult(offsets, body.get("key_schema_id"), body.get("value_schema_id"))

    def _produce_traced(self, path: str, data: bytes, headers: dict[str, str]) -> ProduceResult:
        """`produce` with tracing asked for, stamped on the client's wall clock around the call."""
        sent_ns = time.time_ns()
        response = self.request("POST", path, data=data, headers=headers)
        received_ns = time.time_ns()  # requests has read the whole body (no stream)
        body = json_of(response, "POST", path)
        items = body.get("offsets", [])
        offsets = tuple(
            RecordOffset(o.get("partition"), o.get("offset"), o.get("error_code"), o.get("error")) for o in items
        )
        traces = tuple(ProduceTrace.from_json(o["trace"]) for o in items if o.get("trace") is not None)
        if len(traces) != len(offsets):  # the records are written: an error here would invite a duplicate retry
            log.warning(
                "POST %s: %d records answered with %d traces; only the workbench's own proxy traces records",
                path,
                len(offsets),
                len(traces),
            )
            traces = ()
        return ProduceResult(
            offsets, body.get("key_schema_id"), body.get("value_schema_id"), traces, sent_ns, received_ns
        )

    # v3 admin and records ------------------------------------------------------------

    def cluster_id(self) -> str:
        """The cluster id v3 paths need (`GET /v3/clusters`), asked once and cached."""
        if self._cluster_id is None:
            data = self.request_json("GET", "/v3/clusters")["data"]
            if not data:
                raise ProxyError(404, 404, "GET /v3/clusters listed no cluster; is the v3 API enabled (api.v3.enable)?")
            self._cluster_id = str(data[0]["cluster_id"])
        return self._cluster_id

    def list_topics(self) -> list[str]:
        """Topic names through v3 (`GET /v3/clusters/{c}/topics`), sorted."""
        data = self.request_json("GET", f"{self._v3()}/topics")["data"]
        return sorted(str(t["topic_name"]) for t in data)

    def describe_topic(self, name: str) -> dict[str, Any]:
        """A v3 `KafkaTopic`: `topic_name`, `partitions_count`, `replication_factor`, ..."""
        return dict(self.request_json("GET", f"{self._v3()}/topics/{encode_topic(name)}"))

    def create_topic(
        self,
        name: str,
        *,
        partitions: int = 1,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
        validate_only: bool = False,
    ) -> dict[str, Any]:
        """Create a topic through v3 (`POST /v3/clusters/{c}/topics`); returns the `KafkaTopic`.

        Raises:
            ProxyError: 400/40002 when it exists or the broker refuses it.
        """
        body = {
            "topic_name": name,
            "partitions_count": partitions,
            "replication_factor": replication_factor,
            "configs": [{"name": k, "value": str(v)} for k, v in (configs or {}).items()],
            "validate_only": validate_only,
        }
        return dict(self.request_json("POST", f"{self._v3()}/topics", json_body=body))

    def alter_topic_configs(self, name: str, configs: Mapping[str, str | None]) -> None:
        """Set (a value) or reset to the default (None) some of a topic's configs in one
        call (`POST /v3/clusters/{c}/topics/{t}/configs:alter`); the others keep theirs.

        Raises:
            ProxyError: 400/40002 with the broker's reason when it refuses one (then none
                is changed); 404 for an unknown topic.
        """
        body = {
            "data": [
                {"name": k, "operation": "DELETE"} if v is None else {"name": k, "value": str(v)}
                for k, v in configs.items()
            ]
        }
        self.request("POST", f"{self._v3()}/topics/{encode_topic(name)}/configs:alter", json_body=body)

    def topic_configs(self, name: str) -> dict[str, str | None]:
        """Every config of a topic with its value now (`GET /v3/clusters/{c}/topics/{t}/configs`)."""
        data = self.request_json("GET", f"{self._v3()}/topics/{encode_topic(name)}/configs")["data"]
        return {str(c["name"]): c.get("value") for c in data}

    def delete_topic(self, name: str) -> None:
        """Delete a topic through v3 (`DELETE /v3/clusters/{c}/topics/{t}`)."""
        self.request("DELETE", f"{self._v3()}/topics/{encode_topic(name)}")

    def produce_stream(
        self, topic: str, records: Iterable[Any], *, partition: int | None = None, trace: Trace = False
    ) -> Iterator[dict[str, Any]]:
        """v3 streaming produce: many records in one chunked request, one result each.

        Records are bytes (sent as BINARY), str (STRING), or dicts already in v3 shape
        (`{"key": {...}, "value": {"type": "JSON", "data": ...}}`). Results come back in
        order; read `error_code` on each (200 is success), as the stream's HTTP status
        is 200 once it is established. requests sends the whole upload before reading
        the answers, so keep one stream to tens of thousands of records.

        `trace=True` asks the proxy to trace every record (`Workbench-Trace: true`, the
        workbench's proxy only; "answer": in the answer only, no record header): each
        record's result then holds the proxy's `trace`
        (`ProduceTrace.from_json(result["trace"])`) and the client's wall-clock stamps
        `client_sent_ns` (just before its record went to the connection) and
        `client_received_ns` (when its result was read).

        Raises:
            ProxyError: the stream was refused before it started (e.g. 404 unknown topic).
        """
        path = f"{self._v3()}/topics/{encode_topic(topic)}/records"
        sent: list[int] = []

        def body() -> Iterator[bytes]:
            for record in records:
                shaped = _v3_record(record)
                if partition is not None:
                    shaped.setdefault("partition_id", partition)
                line = json.dumps(shaped, separators=(",", ":")).encode() + b"\n"
                if trace:
                    sent.append(time.time_ns())
                yield line

        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if trace:
            headers[TRACE_HEADER] = trace_header_value(trace)
        response = self.request("POST", path, data=body(), headers=headers, stream=True)
        try:
            decoder = json.JSONDecoder()
            buffer = ""
            index = 0
            for chunk in response.iter_content(chunk_size=None, decode_unicode=True):
                received_ns = time.time_ns() if trace else 0
                buffer += chunk
                while True:
                    buffer = buffer.lstrip()
                    if not buffer:
                        break
                    try:
                        item, end = decoder.raw_decode(buffer)
                    except json.JSONDecodeError:
                        break  # an object cut by the chunk boundary: wait for the rest
                    buffer = buffer[end:]
                    if trace and "trace" in item:  # a record's result (a stream's own error has none)
                        item["client_sent_ns"] = sent[index] if index < len(sent) else None
                        item["client_received_ns"] = received_ns
                        index += 1
                    yield item
        finally:
            response.close()

    # consumers -----------------------------------------------------------------------

    def consumer(self, group: str, **kwargs: Any) -> ProxyConsumer:
        """A `ProxyConsumer` in `group`; use it in a `with` block (see `ProxyConsumer`)."""
        return ProxyConsumer(self, group, **kwargs)

    def share_consumer(self, group: str, **kwargs: Any) -> ProxyShareConsumer:
        """A share-consumer instance (explicit acknowledgement) in share group `group`; use it
        in a `with` block (see `ProxyShareConsumer` for the settings). The workbench's proxy only."""
        return ProxyShareConsumer(self, group, **kwargs)

    #: One affinity-free share-group fetch through any proxy: `share.share_fetch` with this
    #: client as its transport (the proxy accepts the records once its answer was written in full).
    share_fetch = share_fetch

    # transport -----------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        data: bytes | Iterator[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        stream: bool = False,
        retry: bool | None = None,
    ) -> requests.Response:
        """Send one call and return the 2xx response; errors become our exceptions.

        `path` is relative to a base URL (rotated, with failover) or an absolute URL (a
        consumer's `base_uri`: sent there and nowhere else). `retry` defaults to True
        for idempotent methods.
        """
        method = method.upper()
        retry = method in IDEMPOTENT if retry is None else retry
        attempts = self.retries.attempts if retry else 1
        absolute = path.startswith(("http://", "https://"))
        v3 = path.startswith("/v3/")  # API v3 speaks application/json only (upstream answers others 415)
        if json_body is not None:
            data = json.dumps(json_body, separators=(",", ":")).encode()
            headers = {"Content-Type": "application/json" if v3 else V2, **(headers or {})}
        merged = {"Accept": "application/json" if v3 else V2_ACCEPT, **self.headers, **(headers or {})}
        last_error = "no attempt made"
        for attempt in range(1, attempts + 1):
            targets = [path] if absolute else [url + path for url in self._rotation_order()]
            for url in targets:
                try:
                    response = self._send(method, url, data=data, headers=merged, params=params, stream=stream)
                except requests.RequestException as exc:
                    last_error = f"{type(exc).__name__} on {method} {url}: {short_cause(exc)}"
                    if never_sent(exc) or retry:
                        log.debug("failing over: %s", last_error)
                        continue  # the request never reached a proxy (or may be repeated)
                    raise ProxyUnavailableError(self.urls, last_error) from None
                if response.status_code in self.retries.statuses and retry and attempt < attempts:
                    last_error = f"HTTP {response.status_code} from {url}"
                    response.close()
                    break
                return checked(response, method, url)
            if attempt < attempts:
                time.sleep(self.retries.delay(attempt))
        raise ProxyUnavailableError([path] if absolute else self.urls, last_error)

    def request_json(self, method: str, path: str, **kwargs: Any) -> Any:
        """`request`, then the answer's JSON body (`{}` for an empty one).

        Raises:
            ProxyError: as `request`, or the answer is not JSON.
        """
        return json_of(self.request(method, path, **kwargs), method, path)

    def _v3(self) -> str:
        return f"/v3/clusters/{quote(self.cluster_id(), safe='')}"

    def _rotation_order(self) -> list[str]:
        with self._lock:
            start = next(self._rotation) % len(self.urls)
        return self.urls[start:] + self.urls[:start]

    def _new_session(self) -> requests.Session:
        session = requests.Session()
        adapter = HTTPAdapter(pool_connections=max(1, len(self.urls)), pool_maxsize=self.pool_size, max_retries=0)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        session.auth = self.auth
        session.verify = self.verify
        return session

    def _send(
        self,
        method: str,
        url: str,
        *,
        data: bytes | Iterator[bytes] | None,
        headers: Mapping[str, str],
        params: Mapping[str, Any] | None,
        stream: bool,
    ) -> requests.Response:
        kwargs: dict[str, Any] = {
            "data": data,
            "headers": dict(headers),
            "params": params,
            "timeout": self.timeout.as_requests(),
            "stream": stream,
        }
        if self._session is not None:
            return self._session.request(method, url, **kwargs)
        # No reuse: a session per call, closed after it, so each call opens its own connection.
        session = self._new_session()
        try:
            response = session.request(method, url, **kwargs)
            if not stream:
                _ = response.content
            return response
        finally:
            if not stream:
                session.close()


def _v3_record(record: Any) -> dict[str, Any]:
    if isinstance(record, Mapping):
        return dict(record)
    if isinstance(record, bytes | bytearray):
        return {"value": {"type": "BINARY", "data": base64.b64encode(record).decode("ascii")}}
    if isinstance(record, str):
        return {"value": {"type": "STRING", "data": record}}
    return {"value": {"type": "JSON", "data": record}}


def trace_header_value(trace: Trace) -> str:
    """The `Workbench-Trace` header value for `trace`."""
    if trace not in (True, "answer"):
        raise ValueError(f"trace must be True, False or 'answer', got {trace!r}")
    return "answer" if trace == "answer" else "true"
