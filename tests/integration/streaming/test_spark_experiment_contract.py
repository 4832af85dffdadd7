"""The Spark experiments run through `sweep` and return rows of the one contract (see
tests/integration/test_experiment_contract.py), on the streaming tier's SparkSession."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from workbench.bench.experiments import EXPERIMENTS
from workbench.bench.sweep import sweep

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # contract_points, beside the integration tests
from contract_points import CHEAP, check_contract

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from workbench.stack import Stack


@pytest.mark.parametrize("name", sorted(n for n, e in EXPERIMENTS.items() if e.needs == "spark"))
def test_spark_experiment_yields_contract_rows_through_sweep(spark: SparkSession, stack: Stack, name: str) -> None:
    rows = sweep(name, [CHEAP[name]], repeat=2, stack=stack, record=False, progress=False)
    check_contract(name, rows)
