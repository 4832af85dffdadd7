"""The workbench's subpackages import each other without a cycle.

Computed from the source with `ast`, so an import inside a function counts as much as one
at the top of a module: a function-level import only postpones a cycle to the first call,
and a cycle is what made `topics` and `streaming` import `bench` sideways while `bench`
imported them back. The nodes are the subpackages (`workbench.bench`), the top-level
modules (`workbench.results`) and the top package itself (`workbench`, for a name its
`__init__` defines, like `__version__`). An import inside one subpackage is not an edge.

When this fails, the message names every edge of the cycle with the file and line that
makes it: move what both sides need below both (as `workbench.measure` is below the
experiments), rather than hiding the import in a function.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import workbench

PACKAGE = Path(workbench.__file__).parent

#: One import that crosses subpackages: the node it leaves, the node it reaches, where it is.
Edge = tuple[str, str, str]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _node(module: str) -> str:
    """`workbench.bench.sweep` → `workbench.bench`; `workbench.results` stays; `workbench` stays."""
    return ".".join(module.split(".")[:2])


def _imported(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> Iterator[str]:
    """The workbench modules an import statement reaches (a name of a package's
    `__init__` reaches the package; a submodule named in `from x import y` reaches y)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        base = importer.split(".")[: len(importer.split(".")) - node.level + (1 if is_package else 0)]
        source = ".".join([*base, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    for alias in node.names:
        full = f"{source}.{alias.name}"
        yield full if _exists(full) else source


def _edges() -> list[Edge]:
    edges: list[Edge] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _imported(node, importer, path.name == "__init__.py"):
                if target.split(".")[0] != "workbench":
                    continue
                if _node(importer) != _node(target):
                    where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {target}"
                    edges.append((_node(importer), _node(target), where))
    return edges


def _cycle(edges: list[Edge]) -> list[Edge]:
    """One cycle of the graph as its edges, or [] when it has none (depth-first search)."""
    out: dict[str, list[Edge]] = defaultdict(list)
    for edge in edges:
        out[edge[0]].append(edge)
    state: dict[str, str] = {}  # "open" while on the path, "done" once every way out is seen
    path: list[Edge] = []

    def visit(node: str) -> list[Edge]:
        state[node] = "open"
        for edge in out[node]:
            target = edge[1]
            if state.get(target) == "open":
                start = next((i for i, e in enumerate(path) if e[0] == target), len(path))
                return [*path[start:], edge]
            if target not in state:
                path.append(edge)
                found = visit(target)
                if found:
                    return found
                path.pop()
        state[node] = "done"
        return []

    for node in sorted(out):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def _describe(cycle: list[Edge]) -> str:
    return "subpackage import cycle:\n" + "\n".join(f"  {a} -> {b}  ({where})" for a, b, where in cycle)


def test_the_subpackage_import_graph_has_no_cycle() -> None:
    cycle = _cycle(_edges())
    assert not cycle, _describe(cycle)


def _module_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it is imported (or a type checker reads), at any
    depth of `if` and `try` but outside functions."""
    statements: list[ast.stmt] = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If | ast.Try):
            statements += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            statements += [s for handler in getattr(node, "handlers", []) for s in handler.body]


def test_no_two_modules_import_each_other_at_module_level() -> None:
    """Inside a subpackage too, as `proxy/client.py` and `proxy/consumer.py` once did: a
    cycle of modules is one import order away from a half-initialised module."""
    edges: list[Edge] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module_name(path)
        for node in _module_level_imports(ast.parse(path.read_text(), filename=str(path))):
            for target in _imported(node, importer, path.name == "__init__.py"):
                if target.split(".")[0] == "workbench" and target != importer and _exists(target):
                    edges.append((importer, target, f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"))
    cycle = _cycle(edges)
    assert not cycle, "module import cycle:\n" + "\n".join(f"  {a} -> {b}  ({w})" for a, b, w in cycle)


def test_the_graph_sees_function_level_and_upward_imports() -> None:
    """The guard guards: an import inside a function is an edge, and a cycle is found and named."""
    edges = _edges()
    # notebook_setup imports the measuring kernel inside the function, nowhere else.
    assert any(a == "workbench.notebook" and b == "workbench.measure" for a, b, _ in edges)
    upward = ("workbench.measure", "workbench.bench", "workbench/measure/contract.py:1 imports workbench.bench.sweep")
    cycle = _cycle([*edges, upward])
    assert upward in cycle
    assert "workbench.measure -> workbench.bench  (workbench/measure/contract.py:1" in _describe(cycle)
