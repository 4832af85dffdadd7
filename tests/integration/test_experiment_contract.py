"""Every registered experiment runs through `sweep` (repeat=2) and returns rows of the one contract.

The Spark experiments are checked in tests/integration/streaming, on that tier's SparkSession;
the one that kills brokers in tests/integration/test_three_brokers.py, on three of them.
"""

from __future__ import annotations

import pytest
from contract_points import CHEAP, check_contract

from workbench.bench.experiments import EXPERIMENTS
from workbench.bench.sweep import sweep
from workbench.stack import Stack


def test_every_registered_experiment_has_a_cheap_point_here() -> None:
    assert sorted(CHEAP) == sorted(EXPERIMENTS)


@pytest.mark.parametrize("name", sorted(n for n, e in EXPERIMENTS.items() if not e.needs))
def test_experiment_yields_contract_rows_through_sweep(stack: Stack, name: str) -> None:
    rows = sweep(name, [CHEAP[name]], repeat=2, stack=stack, record=False, progress=False)
    check_contract(name, rows)
