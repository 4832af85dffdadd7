"""The CLI prints the workbench's own errors as one line, with exit status 1."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from typer.testing import Result


def test_unknown_profile_is_one_line_on_stderr() -> None:
    """In a process of its own: the exit status and the stderr a shell sees, with no traceback."""
    command = [sys.executable, "-m", "workbench.cli", "status", "--profile", "no-such-profile"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "no-such-profile.yaml" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_notebook_is_one_line(cli: Callable[..., Result]) -> None:
    result = cli("report", "--notebook", "99_nothing")
    assert result.exit_code == 1
    assert "no notebook '99_nothing'" in result.stderr
    assert "Traceback" not in result.stderr
