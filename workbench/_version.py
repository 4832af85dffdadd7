"""The installed workbench's version, read from the package metadata.

It imports nothing of ours, so any module (`results`, `catalog`) can stamp the version
on what it writes without importing the top package, whose lazy names reach up to
`notebook` and the benchmark toolkit.
"""

from __future__ import annotations

from functools import cache

__all__ = ["workbench_version"]


@cache
def workbench_version() -> str:
    """The installed version; "0.0.0" in a source tree that was never installed.

    Read once: the metadata lookup costs ~20 ms, which `import workbench` must not pay.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("workbench")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"
