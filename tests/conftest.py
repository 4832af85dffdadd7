"""Fixtures shared by every tier.

The whole test session runs in its own sandbox: its own run directory, results and
reports folders, and free ports, all set through the profile's environment overrides
before anything starts. So tests never touch a stack the user has up, and every child
process (the CLI, papermill kernels, proxies) inherits the same sandbox.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from workbench.stack import Stack

_SANDBOX = Path(tempfile.mkdtemp(prefix="workbench-tests-"))
_OVERRIDES = {
    "WORKBENCH_RUN_DIR": str(_SANDBOX / "run"),
    "WORKBENCH_RESULTS_DIR": str(_SANDBOX / "results"),
    "WORKBENCH_REPORTS_DIR": str(_SANDBOX / "reports"),
    "WORKBENCH_BROKER__PORT": "0",
    "WORKBENCH_PROXY__FIRST_PORT": "0",
    "WORKBENCH_BALANCER__PORT": "0",
    "WORKBENCH_SPARK__MASTER_PORT": "0",
    "WORKBENCH_SPARK__MASTER_UI_PORT": "0",
    # A hung notebook cell fails its test well inside pytest's own 600 s timeout.
    "WORKBENCH_CELL_TIMEOUT": "300",
}


def pytest_configure(config: pytest.Config) -> None:
    os.environ.update(_OVERRIDES)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SANDBOX, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tier, taken from the folder it lives in."""
    tiers = {"unit": pytest.mark.unit, "integration": pytest.mark.integration, "notebooks": pytest.mark.notebook}
    for item in items:
        parts = Path(str(item.fspath)).relative_to(Path(__file__).parent).parts
        if parts and parts[0] in tiers:
            item.add_marker(tiers[parts[0]])


@pytest.fixture(scope="session")
def sandbox() -> Path:
    """The session's private folder (run dir, results, reports)."""
    return _SANDBOX


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    """The embedded stack, started once for the session and stopped at its end."""
    from workbench.stack import running

    with running() as active:
        yield active


@pytest.fixture
def topic(stack: Stack) -> Iterator[Callable[..., str]]:
    """A factory of fresh topics: `topic(partitions=4)`; all are deleted after the test."""
    created: list[str] = []

    def make(partitions: int = 1, prefix: str = "test") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        stack.create_topics({name: partitions})
        created.append(name)
        return name

    yield make
    stack.delete_topics(created)
