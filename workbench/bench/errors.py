"""The benchmark toolkit's error: a bad experiment name, parameter or grid.

It is a `WorkbenchError`, so the CLI prints it as one line and exits with status 1.
"""

from __future__ import annotations

from workbench.errors import WorkbenchError

__all__ = ["BenchError"]


class BenchError(WorkbenchError):
    """An experiment, parameter or grid was wrong; the message names it and the way out."""
