"""A consumer instance used outside its `with` block fails here, in one line, and sends
nothing: no proxy holds such an instance, so there is no proxy error to wait for."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.proxy import InstanceNotOpen
from workbench.proxy.consumer import ProxyConsumer
from workbench.proxy.share import ProxyShareConsumer


class _NoNetwork:
    def request(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a request was sent for an instance that is not open")


@pytest.mark.parametrize(
    ("instance", "kind"),
    [
        (ProxyConsumer(_NoNetwork(), "readers", topics=["t"]), "consumer instance"),  # type: ignore[arg-type]
        (ProxyShareConsumer(_NoNetwork(), "workers", topics=["t"]), "share consumer instance"),  # type: ignore[arg-type]
    ],
)
def test_an_unopened_instance_says_so_without_a_request(instance: Any, kind: str) -> None:
    with pytest.raises(InstanceNotOpen, match=f"this {kind} is not open; use it inside a `with` block"):
        instance.subscription()
