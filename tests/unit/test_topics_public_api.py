"""The topics package and its modules say what they export, sorted, and every name exists."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "workbench.topics",
    "workbench.topics.errors",
    "workbench.topics.growth",
    "workbench.topics.measure",
    "workbench.topics.partitioners",
    "workbench.topics.plots",
    "workbench.topics.sizing",
    "workbench.topics.strategies",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__ == sorted(module.__all__)
    assert not [item for item in module.__all__ if not hasattr(module, item)]


def test_topic_design_error_is_a_workbench_error() -> None:
    from workbench.errors import WorkbenchError
    from workbench.topics import TopicDesignError

    assert issubclass(TopicDesignError, WorkbenchError)
