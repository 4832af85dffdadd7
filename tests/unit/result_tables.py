"""A results table on disk, as `workbench compare` reads one, for the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def results_file(path: Path, msg_s: list[float], *, records: int = 1000) -> Path:
    """`native_produce` rows with these msg/s, one repeat each, at one point (`records`)."""
    n = len(msg_s)
    pd.DataFrame(
        {
            "experiment": ["native_produce"] * n,
            "records": [records] * n,
            "params": ["records"] * n,
            "msg_s": msg_s,
            "seconds": [1.0] * n,
            "client_cpu_s": [0.5] * n,
            "cpu_cores": [2] * n,
        }
    ).to_parquet(path)
    return path
