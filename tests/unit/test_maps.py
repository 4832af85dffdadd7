"""The prose maps of the architecture are true: every subpackage's `__init__` names each of
its modules, and names none that is gone; the error tree in `workbench.errors` holds every
`WorkbenchError` subclass under its real parent; an `__init__` holds its map, imports and
`__all__` only, in 80 lines at most. These maps are the architecture's
documentation, so a module or an error added without its line fails here."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import workbench
from workbench.errors import WorkbenchError

SUBPACKAGES = sorted(info.name for info in pkgutil.walk_packages(workbench.__path__, "workbench.") if info.ispkg)

#: A map line: `    name   what it holds` (two spaces or more before the text), or `- `name`: ...`.
MAP_LINE = re.compile(r"^(?: {4}(\w+) {2,}\S|- `(\w+)`:)", re.MULTILINE)


def _modules(package: str) -> set[str]:
    folder = Path(str(importlib.import_module(package).__file__)).parent
    return {info.name for info in pkgutil.iter_modules([str(folder)])} | (
        {"__main__"} if (folder / "__main__.py").exists() else set()
    )


def _mapped(package: str) -> set[str]:
    doc = importlib.import_module(package).__doc__ or ""
    return {a or b for a, b in MAP_LINE.findall(doc)}


def test_there_are_subpackages_to_check() -> None:
    assert {"workbench.bench", "workbench.restproxy", "workbench.stack"} <= set(SUBPACKAGES)


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_the_module_map_names_every_module_and_no_other(package: str) -> None:
    modules, mapped = _modules(package), _mapped(package)
    assert not modules - mapped, f"{package}'s docstring does not name {sorted(modules - mapped)}"
    assert not mapped - modules, f"{package}'s docstring names {sorted(mapped - modules)}, which are not modules"


def _error_tree() -> dict[str, str]:
    """Each class in the tree drawn in `workbench.errors`' docstring, with its parent's name."""
    doc = importlib.import_module("workbench.errors").__doc__ or ""
    parents: dict[str, str] = {}
    path = ["WorkbenchError"]
    for line in doc.splitlines():
        found = re.match(r"^ {4}((?:[│ ] {3})*)[├└]── (\w+)", line)
        if found:
            depth = len(found[1]) // 4 + 1
            del path[depth:]
            parents[found[2]] = path[-1]
            path.append(found[2])
    return parents


def _subclasses(root: type) -> set[type]:
    found: set[type] = set(root.__subclasses__())
    return found.union(*(_subclasses(c) for c in found)) if found else found


def test_the_error_tree_holds_every_error_under_its_parent() -> None:
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    tree = _error_tree()
    assert tree["KafkaOptionError"] == "ConfigError"  # the parser reads nesting
    for error in _subclasses(WorkbenchError):
        if error.__module__.startswith("workbench.") and not error.__name__.startswith("_"):
            parent = next(b for b in error.__mro__[1:] if issubclass(b, WorkbenchError))
            assert tree.get(error.__name__) == parent.__name__, (
                f"{error.__module__}.{error.__name__} is not drawn under {parent.__name__} in workbench/errors.py"
            )


def test_the_readme_layout_names_every_public_module_and_subpackage() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    folder = Path(str(workbench.__file__)).parent
    public = [i for i in pkgutil.iter_modules([str(folder)]) if not i.name.startswith("_")]
    missing = [i.name for i in public if f"`workbench/{i.name}{'/' if i.ispkg else '.py'}`" not in layout]
    assert not missing, f"README.md's layout table does not name {missing}"


def test_no_two_test_modules_share_a_name() -> None:
    """pytest imports test modules by their basename (the tiers have no `__init__.py`): a
    second `test_x.py` in another tier fails the whole run's collection."""
    tests = Path(__file__).parents[1]
    names = [p.name for p in tests.rglob("test_*.py")]
    assert not {n for n in names if names.count(n) > 1}


#: Lines a subpackage's `__init__` may take: its map, its imports and `__all__`, nothing else.
INIT_LINES = 80


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_an_init_holds_a_map_and_re_exports_only(package: str) -> None:
    path = Path(str(importlib.import_module(package).__file__))
    tree = ast.parse(path.read_text())
    kinds = {type(node).__name__ for node in tree.body[1:]}  # after the docstring
    assert kinds <= {"ImportFrom", "Import", "Assign", "AnnAssign"}, (
        f"{path} holds {sorted(kinds)}: logic belongs in a module"
    )
    assigned = {ast.unparse(n.target) for n in tree.body if isinstance(n, ast.AnnAssign)} | {
        ast.unparse(t) for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
    }
    assert assigned <= {"__all__"}, f"{path} assigns {sorted(assigned - {'__all__'})}: logic belongs in a module"
    lines = len(path.read_text().splitlines())
    assert lines <= INIT_LINES, f"{path} is {lines} lines; more than {INIT_LINES} means a module is hiding in it"
