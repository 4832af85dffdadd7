"""Is a service someone else runs answering? One probe per protocol, each with a reason.

`workbench status` on a cluster profile cannot look at PIDs: the brokers, proxies,
balancer, Spark master and schema registry are the user's. It asks each one through
its own protocol instead (Kafka metadata, an HTTP GET of the root, a TCP connect to a
Spark master's RPC port) and says why one is unhealthy, in a few words a user can act on.
"""

from __future__ import annotations

import base64
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from workbench.config import KafkaConf, ProxyAuth
from workbench.errors import ConfigError

__all__ = ["Probe", "probe_broker", "probe_http", "probe_tcp"]


@dataclass(frozen=True)
class Probe:
    """The answer to one health question: `healthy`, and `reason` when it is not."""

    healthy: bool
    reason: str | None = None


def probe_broker(bootstrap_servers: str, conf: KafkaConf, timeout: float = 3.0) -> Probe:
    """A Kafka cluster answers when one of its bootstrap servers returns metadata."""
    from workbench.kafka.admin import broker_answers

    if broker_answers(bootstrap_servers, timeout=timeout, conf=conf):
        return Probe(True)
    return Probe(False, f"no metadata from {bootstrap_servers} within {timeout:.0f} s")


def probe_http(url: str, *, auth: ProxyAuth | None = None, path: str = "/", timeout: float = 2.0) -> Probe:
    """An HTTP service answers when GET `url` + `path` returns 2xx (with basic auth if given)."""
    target = url.rstrip("/") + path
    request = urllib.request.Request(target)
    if auth is not None:
        try:
            user, password = auth.credentials()
        except ConfigError as exc:
            return Probe(False, exc.message)
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            if 200 <= response.status < 300:
                return Probe(True)
            return Probe(False, f"GET {target} answered HTTP {response.status}")
    except urllib.error.HTTPError as exc:
        return Probe(False, f"GET {target} answered HTTP {exc.code}")
    except (OSError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        return Probe(False, f"GET {target} failed: {reason}")


def probe_tcp(address: str, timeout: float = 2.0) -> Probe:
    """A service answers at the TCP level when `host:port` (or `scheme://host:port`) accepts a connection."""
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return Probe(True)
    except OSError as exc:
        return Probe(False, f"cannot connect to {host}:{port}: {exc.strerror or exc}")


def _host_port(address: str) -> tuple[str, int]:
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    return parts.hostname or "", parts.port or 0
