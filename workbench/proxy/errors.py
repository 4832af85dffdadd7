"""The proxy client's error for "no proxy answered"; a proxy's own error body is `ProxyError`.

WorkbenchError
├── ProxyError               the proxy answered with an error body: status, error_code
└── ProxyUnavailableError    no base URL could be reached (connection refused, timeout)
"""

from __future__ import annotations

from workbench.errors import ProxyError, WorkbenchError

__all__ = ["ProxyError", "ProxyUnavailableError"]


class ProxyUnavailableError(WorkbenchError):
    """No REST proxy answered at any of the base URLs; `urls` lists those tried."""

    def __init__(self, urls: list[str], reason: str) -> None:
        self.urls = urls
        self.reason = reason
        super().__init__(
            f"no REST proxy answered at {', '.join(urls)}: {reason}; "
            "is the stack up (`workbench status`) and the profile's proxy.urls right?"
        )
