"""A notebook's kernel log is kept when it says something: a failure's traceback, a
warning; a run that went well leaves none, even when its kernel was interrupted on the
way out (a busy machine's late shutdown). A kernel that died is named by its log's last
words: after a native crash, faulthandler's dump read down to the crashing thread's own
innermost frames, not another thread's."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.report import _last_words, _says_nothing


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


_DUMP = """\
noise a C library printed
Fatal Python error: Segmentation fault

Thread 0x00007f01 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 327 in wait

Current thread 0x00007f02 (most recent call first):
  {frames}

Thread 0x00007f03 (most recent call first):
  File "/venv/site-packages/zmq/sugar/socket.py", line 9 in recv

the kernel process ended on its own: killed by SIGSEGV
"""


def test_a_crash_names_its_own_innermost_frames_and_how_the_kernel_ended(tmp_path: Path) -> None:
    log = tmp_path / "k.log"
    frames = "\n  ".join(
        f'File "/usr/lib/python3.11/{f}.py", line {n} in {f}' for n, f in enumerate(["a", "b", "c", "d"], 1)
    )
    log.write_text(_DUMP.format(frames=frames))
    assert _last_words(log) == (
        "Fatal Python error: Segmentation fault | a (python3.11/a.py:1) | b (python3.11/b.py:2) | "
        "c (python3.11/c.py:3) | the kernel process ended on its own: killed by SIGSEGV"
    )


def test_a_thread_with_one_frame_or_none_borrows_no_other_threads_frames(tmp_path: Path) -> None:
    log = tmp_path / "k.log"
    log.write_text(_DUMP.format(frames='File "/x/ctypes/__init__.py", line 519 in string_at'))
    assert "string_at (ctypes/__init__.py:519) | the kernel" in _last_words(log)
    log.write_text(_DUMP.format(frames="<no Python frame>"))
    assert "recv" not in _last_words(log) and "<no Python frame> | the kernel" in _last_words(log)


def test_without_a_dump_the_last_lines_are_said(tmp_path: Path) -> None:
    log = tmp_path / "k.log"
    log.write_text("one\ntwo\nthree\nfour\nfive\n")
    assert _last_words(log) == "two | three | four | five"
    assert _last_words(tmp_path / "missing.log") == ""
