"""What the proxy client puts on the wire and reads off it: the v2 media types, topic names
in paths, and answers turned into JSON or `ProxyError`.

`ProxyClient` and `ProxyConsumer` both speak it, and neither imports the other for it:
the client creates consumers, and a consumer sends through whatever `Transport` it is
given (a `ProxyClient`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self
from urllib.parse import quote

import orjson
import requests

from workbench.errors import ProxyError
from workbench.proxy.errors import InstanceNotOpen

if TYPE_CHECKING:
    from workbench.proxy.settings import Retries

__all__ = [
    "Instance",
    "Transport",
    "V2",
    "V2_ACCEPT",
    "checked",
    "delete_instance",
    "embedded_type",
    "encode_topic",
    "json_of",
    "never_sent",
    "short_cause",
]

log = logging.getLogger("workbench.proxy")

#: The v2 API's own media type: request bodies without records, and every v2 answer.
V2 = "application/vnd.kafka.v2+json"
#: The `Accept` of a v2 call: the v2 type, or plain JSON from a proxy that answers so.
V2_ACCEPT = f"{V2}, application/json"


def embedded_type(format: str) -> str:
    """The v2 media type of records in an embedded format: `application/vnd.kafka.json.v2+json`.

    A produce call sends it as `Content-Type`; a records fetch must ask for exactly it in
    `Accept`, or the proxy answers 406.
    """
    return f"application/vnd.kafka.{format}.v2+json"


def encode_topic(name: str) -> str:
    """A topic name as one URL path segment: MapR's `/stream:topic` → `%2Fstream%3Atopic`."""
    return quote(name, safe="")


class Transport(Protocol):
    """What a consumer instance needs of its client: calls sent, and the retry policy."""

    retries: Retries

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
        """Send one call and return the 2xx response (see `ProxyClient.request`)."""
        ...

    def request_json(self, method: str, path: str, **kwargs: Any) -> Any:
        """`request`, then the answer's JSON body (see `ProxyClient.request_json`)."""
        ...


def delete_instance(client: Transport, base_uri: str) -> None:
    """DELETE a consumer or share-consumer instance at its `base_uri`; one already gone
    (404: expired, or its process restarted) is fine."""
    from workbench.errors import ProxyError

    try:
        client.request("DELETE", base_uri, headers={"Content-Type": V2})
    except ProxyError as exc:
        if exc.status != 404:
            raise


class Instance:
    """A consumer or share-consumer instance on a proxy, as a context manager: `open` creates
    it (each kind its own way), and the block's end deletes it, even when the block raised,
    because an abandoned instance holds what it read until the proxy's idle timeout. A
    failed delete after a failed block is logged, not raised over the block's own error."""

    client: Transport
    base_uri: str | None
    #: What the warning of a failed delete calls it.
    kind = "consumer instance"

    def open(self) -> None:
        raise NotImplementedError

    def _call(self, method: str, suffix: str, **kwargs: Any) -> Any:
        """A request to this instance's own URL (`base_uri` + `suffix`).

        Raises:
            InstanceNotOpen: the instance was not opened, or is closed already.
        """
        if self.base_uri is None:
            raise InstanceNotOpen(f"this {self.kind} is not open; use it inside a `with` block")
        return self.client.request(method, self.base_uri + suffix, **kwargs)

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.close()
        except Exception:
            if exc is None:
                raise
            log.warning("could not delete %s %s", self.kind, self.base_uri, exc_info=True)

    def close(self) -> None:
        """Delete the instance (it leaves its group, and releases what it holds); one already gone is fine."""
        if self.base_uri is None:
            return
        uri, self.base_uri = self.base_uri, None
        delete_instance(self.client, uri)


def json_of(response: requests.Response, method: str, path: str) -> Any:
    """An answer's JSON body (`{}` for an empty one); ProxyError when it is not JSON."""
    if response.status_code == 204 or not response.content:
        return {}
    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError:
        raise ProxyError(
            response.status_code,
            response.status_code,
            f"{method} {path}: the answer is not JSON: {response.text[:120]!r}",
        ) from None


def checked(response: requests.Response, method: str, url: str) -> requests.Response:
    """The response when it is not an error; else `ProxyError` with the proxy's own error code
    and message (Confluent's JSON body, or the text of a proxy that answers in text)."""
    if response.status_code < 400:
        return response
    status = response.status_code
    error_code, message = status, response.text.strip() or response.reason
    try:
        body = response.json()
        if isinstance(body, dict):
            error_code = int(body.get("error_code", status))
            message = str(body.get("message", message))
    except (ValueError, TypeError):
        pass  # Karapace sends some errors as text/plain; the text is the message
    finally:
        response.close()
    raise ProxyError(status, error_code, f"{message} ({method} {url.split('?')[0]})")


def never_sent(exc: requests.RequestException) -> bool:
    """True when the request cannot have reached a proxy: refused or timed out connecting."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    if isinstance(exc, requests.ConnectionError):
        text = repr(exc.args[0]) if exc.args else ""
        return "NewConnectionError" in text or "Connection refused" in text or "NameResolutionError" in text
    return False


def short_cause(exc: Exception) -> str:
    """A transport error in a few words, for a message that names every attempt's cause."""
    text = str(exc)
    if "Connection refused" in text:
        return "connection refused"
    return text if len(text) < 160 else text[:157] + "..."
