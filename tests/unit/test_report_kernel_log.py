"""A notebook's kernel log is kept when it says something: a failure's traceback, a
warning; a run that went well leaves none, even when its kernel was interrupted on the
way out (a busy machine's late shutdown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.report import _says_nothing


@pytest.mark.parametrize(
    ("text", "failed", "nothing"),
    [
        ("", False, True),
        ("[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.\n", False, True),
        ("[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.\n", True, False),
        ("Traceback (most recent call last):\n  ...\nValueError: bad\n", False, False),
    ],
)
def test_only_shutdown_noise_of_a_good_run_is_nothing(tmp_path: Path, text: str, failed: bool, nothing: bool) -> None:
    log = tmp_path / "n.kernel.log"
    log.write_text(text)
    assert _says_nothing(log, failed=failed) is nothing
