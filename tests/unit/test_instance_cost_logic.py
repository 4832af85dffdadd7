"""`instance_cost`'s pure parts: a profile without a proxy process on this machine says so in
one line, and what a sweep says is computed from its rows."""

from __future__ import annotations

import pandas as pd

from workbench import load_profile
from workbench.bench.instance_cost import instance_cost_sentence, instance_cost_sweep
from workbench.stack import Stack


def test_a_stack_without_a_proxy_process_here_is_one_line_not_a_run() -> None:
    rows, note = instance_cost_sweep(Stack(load_profile("local"), {}), [1, 10])
    assert rows is None and note is not None and "\n" not in note and "needs a proxy the workbench started" in note


def test_the_sentence_sets_the_measured_cost_against_the_guides() -> None:
    rows = pd.DataFrame(
        [
            {
                "kind": "consumer",
                "instances": 1,
                "idle_mb_per_instance": 0.5,
                "fetching_mb_per_instance": 0.6,
                "fetching_cpu_pct": 5.0,
            },
            {
                "kind": "consumer",
                "instances": 10,
                "idle_mb_per_instance": 0.05,
                "fetching_mb_per_instance": 0.25,
                "fetching_cpu_pct": 22.7,
            },
        ]
    )
    said = instance_cost_sentence(rows, consumers=1_000)
    assert said.startswith("10 consumer instances cost this proxy 0.05 MB each idle and 0.25 MB each while reading")
    assert "about 250 MB here and 16,000 MB by the guide" in said
