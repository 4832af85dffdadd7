"""Moved to `workbench.measure.resources`; only `freeze_startup_objects` is still found here.

`tests/conftest.py` imports it from this path and is being changed elsewhere right now;
once it imports `workbench.measure.resources`, this module goes.
"""

from workbench.measure.resources import freeze_startup_objects

__all__ = ["freeze_startup_objects"]
