"""Every public module says what it exports, sorted: every name it lists exists, and
every public name it defines is listed (or the name is private); every exception the
workbench exports belongs to its one exception tree."""

from __future__ import annotations

import ast
import importlib
import logging
import pkgutil
from pathlib import Path
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


def _defined_names(module: ModuleType) -> set[str]:
    """The names the module's own top level binds: functions, classes, assignments."""
    tree = ast.parse(Path(str(module.__file__)).read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


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
def test_every_public_name_a_module_defines_is_exported(name: str) -> None:
    """A module logger (`log`) is found by its dotted name through `logging`, not imported: not API."""
    module = _module(name)
    public = {n for n in _defined_names(module) if not n.startswith("_")}
    public = {n for n in public if not isinstance(getattr(module, n, None), logging.Logger)}
    assert sorted(public - set(module.__all__)) == []


@pytest.mark.parametrize("name", ["workbench", *PUBLIC])
def test_exported_exceptions_are_workbench_errors(name: str) -> None:
    module = _module(name)
    exceptions = [getattr(module, item) for item in module.__all__]
    exceptions = [e for e in exceptions if isinstance(e, type) and issubclass(e, BaseException)]
    assert not [e.__name__ for e in exceptions if not issubclass(e, WorkbenchError)]
