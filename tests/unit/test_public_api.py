"""Each public module says what it exports, sorted, and every name exists."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "workbench",
    "workbench.bench",
    "workbench.config",
    "workbench.errors",
    "workbench.kafka",
    "workbench.report",
    "workbench.results",
    "workbench.stack",
    "workbench.streaming",
    "workbench.topics",
    "workbench.viz",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported == sorted(exported)
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing
