"""Fixtures the REST proxy's integration tests share; what they import by name is in `proxy_http.py`.

Both are module-scoped, so the tests of a module share them and run in one worker (see
`tests/conftest.py`'s `_group`); a module that needs another lifetime or another proxy says so with
a fixture of the same name (`test_restproxy_consumers.py`, `test_proxy_client.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from workbench.stack import Stack


@pytest.fixture(scope="module")
def proxy(stack: Stack) -> str:
    """The URL of the session stack's first REST proxy."""
    assert stack.proxy_urls, "the stack runs at least one proxy"
    return stack.proxy_urls[0]


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    """One HTTP session for a module's tests, closed after them."""
    with requests.Session() as session:
        yield session


@pytest.fixture
def registry_client(stack: Stack) -> Iterator[Any]:
    """confluent-kafka's `SchemaRegistryClient` on the stack's registry, closed after the test."""
    from confluent_kafka.schema_registry import SchemaRegistryClient

    client = SchemaRegistryClient(stack.registry_config())
    yield client
    client.close()
