"""The `cli` fixture: the `workbench` command run in this process, as a shell would see it.

A test of what the command line parses and prints needs no process of its own; typer's
`CliRunner` keeps stdout, stderr and the exit status apart. The few tests where the process is
the point (the exit status a shell sees, signals, processes left behind) start one instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
from typer.testing import CliRunner, Result

from workbench.cli import app

#: Wide enough that no table cell is folded, unless a test asks for a narrower terminal.
COLUMNS = 250


@pytest.fixture
def cli() -> Iterator[Callable[..., Result]]:
    """`cli("bench", "--list")` runs `workbench bench --list`; `columns=` sets the terminal's width.

    The environment is restored afterwards: a command exports its `--profile` for the child
    processes it starts, and that must not leak into the next test.
    """
    runner = CliRunner()
    saved = dict(os.environ)

    def run(*args: str, columns: int = COLUMNS) -> Result:
        return runner.invoke(app, list(args), env={"COLUMNS": str(columns)})

    yield run
    os.environ.clear()
    os.environ.update(saved)
