"""Results of experiments, kept as tidy tables in `<results_dir>/<experiment>.parquet`.

Every row carries the run it belongs to and the facts needed to compare runs later:
when, which profile (and the replication its topics had), which workbench and git revision, how many cores. A report run
sets `WORKBENCH_RUN_ID` for its notebooks, so it can collect exactly its own rows.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import platform
import subprocess
import uuid
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from workbench._version import workbench_version
from workbench.config import Profile, environment, load_profile, project_root

__all__ = [
    "RUN_FACTS",
    "RUN_ID_ENV",
    "append_rows",
    "current_run_id",
    "experiments",
    "git_revision",
    "knee",
    "load",
    "param_columns",
    "record",
    "run_metadata",
    "run_rows",
    "spread",
]

RUN_ID_ENV = "WORKBENCH_RUN_ID"

#: The facts of the run every result row carries (`run_metadata`), in column order: the one
#: list of them; the contract's check, the report's tables and `param_columns` derive from it.
RUN_FACTS = (
    "run_id",
    "recorded_at",
    "profile",
    "replication_factor",
    "min_insync_replicas",
    "broker",
    "workbench_version",
    "git_revision",
    "cpu_cores",
    "python",
)


@cache
def _process_run_id() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6]


def current_run_id() -> str:
    """`$WORKBENCH_RUN_ID` when a report set it, else one id for this Python process."""
    return environment().run_id or _process_run_id()


@cache
def git_revision() -> str:
    """The project's short git revision, "unknown" outside a git checkout (a wheel, no git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=project_root(),
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _broker(profile: Profile) -> str:
    from workbench.stack import broker_description

    return broker_description(profile)


def run_metadata(profile: Profile) -> dict[str, Any]:
    """The facts stamped on every result row, so runs on other machines compare honestly."""
    facts = {
        "run_id": current_run_id(),
        "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "profile": profile.name,
        "replication_factor": profile.topics.replication_factor,
        "min_insync_replicas": profile.topics.min_insync_replicas,
        "broker": _broker(profile),
        "workbench_version": workbench_version(),
        "git_revision": git_revision(),
        "cpu_cores": os.cpu_count(),
        "python": platform.python_version(),
    }
    return {name: facts[name] for name in RUN_FACTS}


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
    append_rows(_results_file(experiment, profile), frame, _parquet_safe)
    return frame


def load(experiment: str, run_id: str | None = None, profile: Profile | None = None) -> pd.DataFrame:
    """All rows of an experiment, or one run's; empty when nothing was recorded."""
    path = _results_file(experiment, profile or load_profile())
    if not path.exists():
        return pd.DataFrame()
    frame = pd.read_parquet(path)
    return frame if run_id is None else frame[frame["run_id"] == run_id].reset_index(drop=True)


def run_rows(run_id: str, profile: Profile | None = None) -> dict[str, int]:
    """How many rows each experiment's table holds for `run_id` (tables without any left out).

    Reads the `run_id` column alone: a report asks before and after each notebook, and
    loading every table whole made that cost grow with the project's whole history.
    """
    profile = profile or load_profile()
    counts = {}
    for experiment in experiments(profile):
        ids = pd.read_parquet(_results_file(experiment, profile), columns=["run_id"])["run_id"]
        if found := int((ids == run_id).sum()):
            counts[experiment] = found
    return counts


def experiments(profile: Profile | None = None) -> list[str]:
    """Names of the experiments with recorded results."""
    profile = profile or load_profile()
    return sorted(p.stem for p in profile.path(profile.results_dir).glob("*.parquet"))


def append_rows(path: Path, rows: pd.DataFrame, prepare: Callable[[pd.DataFrame], pd.DataFrame] | None = None) -> None:
    """Append `rows` to the parquet table at `path`, whole or not at all; `prepare` makes the
    whole table storable first (`record`'s columns mixing value types become text).

    Processes that end runs together (a notebook and a `bench` in a terminal, the test
    suite's workers) take turns under a lock, and each writes its own temporary file, so
    no row of either is lost and a reader never sees half a table.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        table = pd.concat([pd.read_parquet(path), rows], ignore_index=True) if path.exists() else rows
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
        (prepare(table) if prepare else table).to_parquet(tmp, index=False)
        tmp.replace(path)


def _parquet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns mixing value types (`acks` = 0, 1, "all") are stored as text; Parquet needs one type.

    A whole number is written as one text whatever it was read back as (a column with
    gaps comes back from parquet as floats: 1.0), so a point's repeats keep one key.
    """
    frame = frame.copy()
    for column in [c for c in frame.columns if frame[c].dtype == "object"]:
        values = frame[column].dropna()
        kinds = {type(v) for v in values}
        if len(kinds) > 1 or (kinds and not kinds <= {str, bool, bytes}):
            frame[column] = frame[column].map(_as_text)
    return frame


def _as_text(value: Any) -> Any:
    if value is None or (isinstance(value, float) and value != value):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


#: Columns that are bookkeeping or facts of the run, never parameters of a point.
_NOT_PARAMS = {"experiment", "params", "point", "repeat", *RUN_FACTS}


def param_columns(frame: pd.DataFrame) -> list[str]:
    """The columns that identify a point: those listed in the rows' `params` column."""
    if frame.empty or "params" not in frame.columns:
        return []
    names: list[str] = []
    for listed in frame["params"].dropna().unique():
        for name in str(listed).split(","):
            if name and name in frame.columns and name not in names and name not in _NOT_PARAMS:
                names.append(name)
    return names


def spread(frame: pd.DataFrame, metric: str = "msg_s", by: Sequence[str] | None = None) -> pd.DataFrame:
    """Min, median and max of `metric` per point, over the repeats (and runs) in `frame`.

    Usage: `spread(rows, "msg_s")` → one row per parameter combination with
    `min`, `median`, `max`, `n`.
    """
    keys = list(by) if by is not None else param_columns(frame)
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "min", "median", "max", "n"])
    if not keys:
        stats = frame[metric].agg(["min", "median", "max", "count"])
        return pd.DataFrame(
            [{"min": stats["min"], "median": stats["median"], "max": stats["max"], "n": stats["count"]}]
        )
    grouped = frame.groupby(keys, dropna=False, sort=False)[metric]
    out = grouped.agg(["min", "median", "max", "count"]).rename(columns={"count": "n"}).reset_index()
    return out


def knee(frame: pd.DataFrame, x: str, y: str = "mb_s", share: float = 0.9) -> tuple[Any, float]:
    """The smallest `x` whose median `y` reaches `share` of the best median, and that best.

    Where a curve flattens: past it, larger records (or batches, or calls) buy little.

    Usage: `size, best = knee(rows, "record_bytes")` → the smallest record size at 90 % of the best MB/s.
    """
    medians = frame.groupby(x)[y].median()
    best = float(medians.max())
    return medians[medians >= share * best].index.min(), best
