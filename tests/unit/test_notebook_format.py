"""Every notebook is committed thin and clean: one tagged parameters cell that papermill
parses without a warning, a `quick` switch and a `profile`, no outputs, the workbench
kernel, no cell longer than a screen, and no host:port written in it."""

from __future__ import annotations

import ast
import json
import logging
import re
from pathlib import Path

import nbformat
import pytest
from papermill.translators import PythonTranslator

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_clean(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    notebook = nbformat.read(path, as_version=4)
    assert notebook.metadata["kernelspec"]["name"] == "workbench"
    # papermill turns nbformat's warning about a cell without an id into the run's failure
    # (nbformat's own reader fills the ids in, so the file is read as it is).
    ids = [cell.get("id") for cell in json.loads(path.read_text())["cells"]]
    assert all(ids) and len(set(ids)) == len(ids), "every cell has an id of its own"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.get("outputs") and cell.get("execution_count") is None for cell in code)
    tagged = [cell for cell in code if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert "quick: bool = False" in tagged[0].source and 'profile: str = ""' in tagged[0].source
    with caplog.at_level(logging.WARNING, logger="papermill"):
        assert PythonTranslator.inspect({**tagged[0], "source": tagged[0].source})
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    assert max(len(cell.source.splitlines()) for cell in notebook.cells) <= 25
    assert not [c for c in code if re.search(r"(localhost|127\.0\.0\.1):\d{2,5}", c.source)]
    # A function defined in a notebook is logic that belongs in the package (and its tests).
    defined = [line for c in code for line in c.source.splitlines() if re.match(r"\s*(async\s+)?def |\s*class ", line)]
    assert not defined, defined


def _thin(node: ast.stmt) -> bool:
    """Whether a statement of an exercise cell only hands names to the course: no logic, no answer written in."""

    def plain(value: ast.expr) -> bool:
        return isinstance(value, ast.Constant | ast.Name) or (
            isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
        )

    def course_call(value: ast.expr | None, names: set[str]) -> bool:
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and f"{value.func.value.id}.{value.func.attr}" in names
            and all(plain(a) for a in value.args)
            and all(plain(k.value) for k in value.keywords)
        )

    def assigns(stmt: ast.stmt, name: str) -> bool:
        return isinstance(stmt, ast.Assign) and [ast.unparse(t) for t in stmt.targets] == [name]

    if isinstance(node, ast.ImportFrom):
        return node.module == "workbench" and [a.name for a in node.names] == ["course"]
    if isinstance(node, ast.Expr):
        return course_call(node.value, {"exercises.ask", "exercises.check"})
    if isinstance(node, ast.If):
        return (
            ast.unparse(node.test) == "solutions"
            and not node.orelse
            and len(node.body) == 1
            and assigns(node.body[0], "answer")
            and course_call(getattr(node.body[0], "value", None), {"exercises.solution"})
        )
    if assigns(node, "answer"):
        value = getattr(node, "value", None)
        return isinstance(value, ast.Constant) and value.value is Ellipsis
    return assigns(node, "exercises") and course_call(getattr(node, "value", None), {"course.Exercises"})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_are_thin_calls_into_the_workbench(path: Path) -> None:
    """Checks live in `workbench.course`; a notebook's exercise cells only call them, and the
    committed answer cells hold `...`, never an answer."""
    from workbench import course

    notebook = nbformat.read(path, as_version=4)
    parameters = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    assert "solutions: bool = False" in parameters.source and 'learner: str = ""' in parameters.source
    cells = [c for c in notebook.cells if c.cell_type == "code" and ("exercises" in c.source or "course" in c.source)]
    assert cells, "the notebook has no exercises"
    for cell in cells:
        bad = [ast.unparse(n) for n in ast.parse(cell.source).body if not _thin(n)]
        assert not bad, f"logic in an exercise cell belongs in workbench.course: {bad}"
    answers = [c for c in notebook.cells if "exercise" in c.metadata.get("tags", [])]
    assert all(c.source.startswith("answer = ...  # ✍") for c in answers)
    keys = {e.key for e in course.catalogue() if e.notebook == path.name[:2]}
    for verb in ("ask", "solution", "check"):
        called = {m for c in cells for m in re.findall(rf'exercises\.{verb}\("(\w+)"', c.source)}
        assert called == keys, (verb, called, keys)
    assert len(answers) == len(keys)
