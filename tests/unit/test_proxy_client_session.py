"""A caller's own `requests.Session` carries every call (`ProxyClient(session=...)`): its
adapters see the requests, and closing the client leaves the caller's session open."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from requests.adapters import BaseAdapter

from workbench.proxy import ProxyClient


class _Recording(BaseAdapter):
    """Answers every call with an empty topic list and keeps what was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str]] = []
        self.closed = False

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.seen.append((str(request.method), str(request.url)))
        response = requests.Response()
        response.status_code, response.url = 200, str(request.url)
        response.headers["Content-Type"] = "application/vnd.kafka.v2+json"
        response._content = json.dumps([]).encode()
        return response

    def close(self) -> None:
        self.closed = True


def test_every_call_goes_through_the_callers_session_which_stays_open() -> None:
    adapter = _Recording()
    session = requests.Session()
    session.mount("http://", adapter)
    with ProxyClient("http://proxy.example:8082", session=session) as client:
        assert client.topics() == []
    assert adapter.seen == [("GET", "http://proxy.example:8082/topics")]
    assert not adapter.closed  # the caller's to close


def test_auth_with_a_session_belongs_on_the_session() -> None:
    with pytest.raises(ValueError, match="configure auth and verify on the session"):
        ProxyClient("http://proxy.example:8082", session=requests.Session(), auth=("u", "p"))
