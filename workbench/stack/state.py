"""The state file of a running stack: which services, their PIDs, addresses and logs.

It lives in the profile's run directory, so `workbench status` and `workbench down`
work from any shell, and `workbench up` run twice finds the stack already there.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["STATE_FILE", "ServiceRecord", "StackState", "locked"]

STATE_FILE = "state.json"


@dataclass(frozen=True)
class ServiceRecord:
    """One started process: enough to find it, reach it and stop it again."""

    name: str
    kind: str
    pid: int
    create_time: float
    address: str
    log: str
    url: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class StackState:
    """All services of one profile's stack, in start order."""

    profile: str
    services: dict[str, ServiceRecord] = field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: Path) -> StackState | None:
        path = run_dir / STATE_FILE
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        records = {name: ServiceRecord(**rec) for name, rec in data["services"].items()}
        return cls(profile=data["profile"], services=records)

    def save(self, run_dir: Path) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        tmp = run_dir / f".{STATE_FILE}.tmp"
        payload = {"profile": self.profile, "services": {n: asdict(r) for n, r in self.services.items()}}
        tmp.write_text(json.dumps(payload, indent=2))
        tmp.replace(run_dir / STATE_FILE)

    @staticmethod
    def remove(run_dir: Path) -> None:
        (run_dir / STATE_FILE).unlink(missing_ok=True)


@contextmanager
def locked(run_dir: Path, name: str = ".lock") -> Iterator[None]:
    """Serialise up/down across processes, so two `up`s never start two stacks; another
    `name` is a lock of its own in the same run directory (the log-ends check's)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / name).open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
