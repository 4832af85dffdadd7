"""The CLI prints the workbench's own errors as one line, with exit status 1."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, timeout=60)


def test_unknown_profile_is_one_line_on_stderr() -> None:
    result = run_cli("status", "--profile", "no-such-profile")
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "no-such-profile.yaml" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_notebook_is_one_line() -> None:
    result = run_cli("report", "--notebook", "99_nothing")
    assert result.returncode == 1
    assert "no notebook '99_nothing'" in result.stderr
    assert "Traceback" not in result.stderr
