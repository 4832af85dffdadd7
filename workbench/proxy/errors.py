"""The proxy client's error for "no proxy answered"; a proxy's own error body is `ProxyError`.

WorkbenchError
├── ProxyError               the proxy answered with an error body: status, error_code
├── ProxyUnavailableError    no base URL could be reached (connection refused, timeout)
└── InstanceNotOpen          a consumer instance was used outside its `with` block
"""

from __future__ import annotations

from workbench.errors import ProxyError, WorkbenchError

__all__ = ["InstanceNotOpen", "ProxyError", "ProxyUnavailableError"]


class InstanceNotOpen(WorkbenchError):
    """A consumer or share-consumer instance was asked for something before `open` or after
    `close`: no request is sent, since no proxy holds such an instance."""


class ProxyUnavailableError(WorkbenchError):
    """No REST proxy answered at any of the base URLs; `urls` lists those tried."""

    def __init__(self, urls: list[str], reason: str) -> None:
        self.urls = urls
        self.reason = reason
        super().__init__(
            f"no REST proxy answered at {', '.join(urls)}: {reason}; "
            "is the stack up (`workbench status`) and the profile's proxy.urls right?"
        )
