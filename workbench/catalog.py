"""The run catalogue: every report and bench run, with the facts needed to trust a comparison.

One row per run in `<results_dir>/catalog/runs.parquet`, a plain table a data engineer
queries with DuckDB, pandas or Spark like the result tables beside it:

| column | what |
|---|---|
| `run_id` | the id the run's result rows carry (`run_id` column) |
| `kind`, `name` | `report` (name: the notebooks, comma-separated) or `bench` (name: the experiment) |
| `started_at`, `ended_at` | UTC timestamps |
| `status`, `error` | `ok` or `failed`, and why |
| `profile`, `git_revision` | what ran, from which commit |
| `workbench`, `confluent_kafka`, `librdkafka`, `pyspark`, `python`, `broker`, `proxy` | versions |
| `spark_connector` | the Kafka source Spark reads with: `kafka` (Spark's connector), `workbench`, `auto` |
| `hostname`, `cpu_cores`, `memory_gib`, `load_avg_1m` | the machine, load average taken before the run |
| `parameters`, `output` | the run's parameters as JSON; where its report is |

Appends are atomic (a lock, a temporary file, a rename), so a reader never sees half a
table and two runs finishing together both land.

    with catalog.track("bench", "native_produce", profile, {"repeat": 3}) as entry:
        ...                                   # an exception catalogues the run as failed
    catalog.runs(profile, since="2026-11-01")  # DuckDB over the parquet file
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from workbench._version import workbench_version
from workbench.config import Profile
from workbench.errors import ConfigError
from workbench.results import append_rows

__all__ = [
    "RunEntry",
    "catalog_path",
    "previous_run",
    "record_run",
    "run_facts",
    "runs",
    "show",
    "track",
]


@dataclass
class RunEntry:
    """One catalogued run; `track` fills it, the caller may set `status`, `error`, `output`, `run_id`."""

    run_id: str
    kind: str
    name: str
    profile: str
    started_at: dt.datetime
    ended_at: dt.datetime | None = None
    status: str = "ok"
    error: str = ""
    parameters: str = "{}"
    output: str = ""
    facts: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The table row: the entry's fields with the facts spread into columns."""
        data = asdict(self)
        facts = data.pop("facts")
        return {**data, **facts}


def catalog_path(profile: Profile) -> Path:
    """`<results_dir>/catalog/runs.parquet`: beside the result tables, not among them."""
    return profile.path(profile.results_dir) / "catalog" / "runs.parquet"


@cache
def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    import confluent_kafka

    try:
        pyspark = version("pyspark")  # not imported: that would start nothing but cost seconds
    except PackageNotFoundError:
        pyspark = "not installed"
    return {
        "workbench": workbench_version(),
        "confluent_kafka": version("confluent-kafka"),
        "librdkafka": confluent_kafka.libversion()[0],
        "pyspark": pyspark,
        "python": platform.python_version(),
    }


def run_facts() -> dict[str, Any]:
    """Versions and machine facts, the load average as of now (call it before the run)."""
    import psutil

    from workbench.results import git_revision

    return {
        "git_revision": git_revision(),
        **_versions(),
        "hostname": socket.gethostname(),
        "cpu_cores": os.cpu_count() or 0,
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 2),
        "load_avg_1m": os.getloadavg()[0],
    }


def _services(profile: Profile) -> dict[str, str]:
    """What serves Kafka and REST: the embedded stack's broker as it runs (`kafka 4.4.0 x3`);
    a cluster's are not asked, but a profile that says its broker is Tansu is believed. And
    which Kafka source Spark reads with (`spark.connector`; each Spark row names the one it used)."""
    from workbench.stack import broker_description

    proxy = f"workbench restproxy {workbench_version()}" if profile.embedded else "not asked"
    return {"broker": broker_description(profile), "proxy": proxy, "spark_connector": profile.spark.connector}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


@contextmanager
def track(
    kind: str, name: str, profile: Profile, parameters: Mapping[str, Any] | None = None, *, run_id: str | None = None
) -> Iterator[RunEntry]:
    """Catalogue the run inside the `with` block: facts before it, end and status after it.

    An exception ends the run as `failed` (with the error) and is raised on; the block may
    also set `entry.status = "failed"` itself, e.g. for a report whose notebook failed.

    Args:
        kind: `report` or `bench`.
        name: the notebooks (comma-separated) or the experiment.
        profile: the profile the run uses; the catalogue lives in its results folder.
        parameters: the run's parameters (stored as JSON).
        run_id: the id its result rows carry (default: `results.current_run_id()`); the
            block may replace it once known.

    Usage: `with track("bench", "native_produce", profile, {"repeat": 3}): sweep(...)`.
    """
    from workbench.results import current_run_id

    entry = RunEntry(
        run_id=run_id or current_run_id(),
        kind=kind,
        name=name,
        profile=profile.name,
        started_at=_now(),
        parameters=json.dumps(dict(parameters or {}), default=str, sort_keys=True),
        facts={**run_facts(), **_services(profile)},
    )
    try:
        yield entry
    except BaseException as exc:
        entry.status = "failed"
        entry.error = entry.error or f"{type(exc).__name__}: {exc}".strip()
        raise
    finally:
        entry.ended_at = _now()
        record_run(entry, profile)


def record_run(entry: RunEntry, profile: Profile) -> Path:
    """Append one run to the catalogue atomically; returns the catalogue's path."""
    path = catalog_path(profile)
    append_rows(path, pd.DataFrame([entry.row()]))  # two runs ending together must both land
    return path


def runs(
    profile: Profile,
    *,
    profile_name: str | None = None,
    notebook: str | None = None,
    kind: str | None = None,
    since: str | dt.date | None = None,
) -> pd.DataFrame:
    """The catalogued runs, oldest first, filtered with DuckDB over the parquet table.

    Args:
        profile: whose results folder holds the catalogue.
        profile_name: only runs of this profile.
        notebook: only runs of this notebook (reports) or experiment (bench).
        kind: only `report` or only `bench` runs.
        since: only runs started on or after this date (`2026-11-23`, UTC).

    Raises:
        ConfigError: `since` is not a date.

    Usage: `runs(load_profile(), notebook="00_quickstart", since="2026-11-01")`.
    """
    import duckdb

    path = catalog_path(profile)
    if not path.exists():
        return pd.DataFrame(columns=list(RunEntry("", "", "", "", _now()).row()))
    where: list[str] = []
    args: list[Any] = []
    if profile_name:
        where.append("profile = ?")
        args.append(profile_name)
    if notebook:
        where.append("list_contains(string_split(name, ','), ?)")
        args.append(notebook)
    if kind:
        where.append("kind = ?")
        args.append(kind)
    if since is not None:
        try:
            day = since if isinstance(since, dt.date) else dt.date.fromisoformat(str(since))
        except ValueError:
            raise ConfigError(None, "since", f"expected a date like 2026-11-23, got {since!r}") from None
        where.append("started_at >= ?")
        args.append(dt.datetime.combine(day, dt.time()))
    source = str(path).replace("'", "''")
    query = f"SELECT * FROM read_parquet('{source}')"  # the path is ours, quotes doubled
    if where:
        query += " WHERE " + " AND ".join(where)
    with duckdb.connect() as con:
        return con.execute(query + " ORDER BY started_at, run_id", args).df()


def show(run_id: str, profile: Profile) -> dict[str, Any]:
    """One run's catalogue row; a unique prefix of its id is enough.

    Raises:
        ConfigError: no run, or several runs, match `run_id`.
    """
    table = runs(profile)
    exact = table[table["run_id"] == run_id]
    found = exact if len(exact) else table[table["run_id"].astype(str).str.startswith(run_id)]
    if found.empty:
        recent = ", ".join(table["run_id"].astype(str).tail(3)) or "none yet"
        raise ConfigError(None, None, f"no catalogued run {run_id!r}; latest: {recent} (`workbench runs` lists them)")
    if found["run_id"].nunique() > 1:
        raise ConfigError(None, None, f"{run_id!r} matches {found['run_id'].nunique()} runs; give more of the id")
    return {k: (None if v is pd.NaT else v) for k, v in found.iloc[-1].to_dict().items()}


def previous_run(profile: Profile, kind: str = "report", *, before: str | None = None) -> str:
    """The id of the latest catalogued run of this kind and profile (other than `before`).

    Raises:
        ConfigError: there is none yet.

    Usage: `previous_run(profile)` is what `workbench report --compare-to last` compares with.
    """
    table = runs(profile, profile_name=profile.name, kind=kind)
    table = table[table["run_id"] != before] if before else table
    if table.empty:
        raise ConfigError(
            None,
            None,
            f"no earlier {kind} run of profile {profile.name!r} in the catalogue "
            f"({catalog_path(profile)}); run one first or name a run id",
        )
    return str(table["run_id"].iloc[-1])
