"""Every public module says what it exports, sorted, and every name exists; every
exception the workbench exports belongs to its one exception tree."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import workbench
from workbench.errors import WorkbenchError

#: Modules whose names start with `_` are internal; the CLI is a command, not an API.
PUBLIC = sorted(
    info.name
    for info in pkgutil.walk_packages(workbench.__path__, "workbench.")
    if not any(part.startswith("_") for part in info.name.split(".")) and info.name != "workbench.cli"
)


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_the_main_areas_are_covered() -> None:
    for area in ("bench", "kafka", "proxy", "restproxy", "stack", "streaming", "topics", "viz"):
        assert f"workbench.{area}" in PUBLIC


@pytest.mark.parametrize("name", ["workbench", *PUBLIC])
def test_all_is_sorted_and_complete(name: str) -> None:
    module = _module(name)
    exported = module.__all__
    assert exported == sorted(exported)
    assert not [item for item in exported if not hasattr(module, item)]


@pytest.mark.parametrize("name", ["workbench", *PUBLIC])
def test_exported_exceptions_are_workbench_errors(name: str) -> None:
    module = _module(name)
    exceptions = [getattr(module, item) for item in module.__all__]
    exceptions = [e for e in exceptions if isinstance(e, type) and issubclass(e, BaseException)]
    assert not [e.__name__ for e in exceptions if not issubclass(e, WorkbenchError)]
