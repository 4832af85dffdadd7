"""Results of experiments, kept as tidy tables in `<results_dir>/<experiment>.parquet`.

Every row carries the run it belongs to and the facts needed to compare runs later:
when, which profile, which workbench and git revision, how many cores. A report run
sets `WORKBENCH_RUN_ID` for its notebooks, so it can collect exactly its own rows.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.config import Profile, load_profile, project_root

__all__ = ["current_run_id", "experiments", "load", "record", "run_metadata"]

RUN_ID_ENV = "WORKBENCH_RUN_ID"


@cache
def _process_run_id() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6]


def current_run_id() -> str:
    """`$WORKBENCH_RUN_ID` when a report set it, else one id for this Python process."""
    return os.environ.get(RUN_ID_ENV) or _process_run_id()


@cache
def _git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=project_root(), capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_metadata(profile: Profile) -> dict[str, Any]:
    """The facts stamped on every result row, so runs on other machines compare honestly."""
    from workbench import __version__

    return {
        "run_id": current_run_id(),
        "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "profile": profile.name,
        "workbench_version": __version__,
        "git_revision": _git_revision(),
        "cpu_cores": os.cpu_count(),
        "python": platform.python_version(),
    }


def _results_file(experiment: str, profile: Profile) -> Path:
    return profile.path(profile.results_dir) / f"{experiment}.parquet"


def record(
    experiment: str,
    rows: pd.DataFrame | Sequence[Mapping[str, Any]] | Mapping[str, Any],
    profile: Profile | None = None,
) -> pd.DataFrame:
    """Append result rows (stamped with `run_metadata`) to the experiment's table.

    Returns:
        The rows as written, metadata columns included.

    Usage: `record("quickstart", {"produce_msg_s": 1.2e6})`.
    """
    profile = profile or load_profile()
    frame = (
        rows if isinstance(rows, pd.DataFrame) else pd.DataFrame([rows] if isinstance(rows, Mapping) else list(rows))
    )
    frame = frame.assign(**run_metadata(profile))
    path = _results_file(experiment, profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    combined = pd.concat([pd.read_parquet(path), frame], ignore_index=True) if path.exists() else frame
    tmp = path.with_suffix(".parquet.tmp")
    combined.to_parquet(tmp, index=False)
    tmp.replace(path)
    return frame


def load(experiment: str, run_id: str | None = None, profile: Profile | None = None) -> pd.DataFrame:
    """All rows of an experiment, or one run's; empty when nothing was recorded."""
    path = _results_file(experiment, profile or load_profile())
    if not path.exists():
        return pd.DataFrame()
    frame = pd.read_parquet(path)
    return frame if run_id is None else frame[frame["run_id"] == run_id].reset_index(drop=True)


def experiments(profile: Profile | None = None) -> list[str]:
    """Names of the experiments with recorded results."""
    profile = profile or load_profile()
    return sorted(p.stem for p in profile.path(profile.results_dir).glob("*.parquet"))
