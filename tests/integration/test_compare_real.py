"""`workbench compare` on real runs of `native_produce` (embedded broker), not synthetic rows.

The two sides' repeats are interleaved (A, B, A, B, ...), as a careful benchmark runs them,
so a machine whose load drifts during the test shifts both sides alike, and the broker is
warmed first (`warm_stack`), as `workbench up` does: on a cold broker the comparison says
"untrusted" whatever the figures (`test_a_cold_broker_makes_the_verdict_untrusted`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from workbench.bench.sweep import sweep
from workbench.bench.warmup import warm_stack
from workbench.compare import FASTER, NO_EVIDENCE, SLOWER, UNTRUSTED, Thresholds, compare_rows
from workbench.stack import Stack
from workbench.stack.warmth import broker_warmth

REPEATS = 5
#: Linger's effect here is 1.3-2x, but on a machine shared with other work the repeats spread
#: so widely that 5 a side showed it in only 2 of 10 interleaved trials (load average 14-19);
#: the A/B test adds rounds of 5 until the comparison is decisive, at most this many a side.
AB_MAX_REPEATS = 20
#: 100 B records into one partition: batching is what decides the rate.
FIXED = {"records": 50_000, "record_bytes": 100, "partitions": 1}


#: Seconds of warm-up load: less than `workbench up`'s, enough for these small runs.
WARM_UP_S = 15.0


@pytest.fixture(scope="module")
def warm(stack: Stack) -> Iterator[Stack]:
    """The session's stack, warmed once (rows then carry `broker_warmth` = "warm")."""
    yield warm_stack(stack.refreshed(), seconds=WARM_UP_S)


def test_a_cold_broker_makes_the_verdict_untrusted(stack: Stack) -> None:
    fresh = stack.refreshed()
    if broker_warmth(fresh) != "cold":
        pytest.skip("the session's broker was warmed by an earlier test in this worker")
    a, b = _interleaved(fresh, {"linger.ms": 5}, {"linger.ms": 5}, repeats=4)  # 3 a side is "too few repeats"
    verdict = compare_rows(a, b, ["msg_s"]).set_index("metric").loc["msg_s", "verdict"]
    assert verdict.startswith(UNTRUSTED) and "after the broker started: cold" in verdict


def _interleaved(
    stack: Stack, a: dict[str, Any], b: dict[str, Any], repeats: int = REPEATS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows_a, rows_b = [], []
    for _ in range(repeats):
        rows_a.append(sweep("native_produce", [a], stack=stack, fixed=FIXED, record=False, progress=False))
        rows_b.append(sweep("native_produce", [b], stack=stack, fixed=FIXED, record=False, progress=False))
    return pd.concat(rows_a, ignore_index=True), pd.concat(rows_b, ignore_index=True)


def test_two_runs_with_the_same_settings_show_no_change(warm: Stack) -> None:
    a, b = _interleaved(warm, {"linger.ms": 5}, {"linger.ms": 5})
    # alpha 0.01: with 5 against 5 only a complete separation reaches it, which two runs of
    # one setting show by chance in 2 of 252 orderings; the default 0.05 would flake more often.
    table = compare_rows(a, b, ["msg_s", "mb_s"], thresholds=Thresholds(alpha=0.01)).set_index("metric")
    assert table.loc["msg_s", "n_a"] == table.loc["msg_s", "n_b"] == REPEATS
    assert table.loc["msg_s", "verdict"] == NO_EVIDENCE, table.to_string()
    assert table.loc["mb_s", "verdict"] == NO_EVIDENCE, table.to_string()


def test_linger_0_against_50_names_the_faster_setting(warm: Stack) -> None:
    a, b = _interleaved(warm, {"linger.ms": 0}, {"linger.ms": 50})
    while True:
        table = compare_rows(a, b, ["msg_s"], ignore=["linger.ms"]).set_index("metric")
        line = table.loc["msg_s"]
        # A side whose repeats drift is "untrusted: ...; the figures said X": X is still judged.
        said = str(line["verdict"]).rsplit("the figures said ", 1)[-1]
        if said in (FASTER, SLOWER) or len(a) >= AB_MAX_REPEATS:
            break
        # Until then the comparison says "no evidence of change" rather than guessing.
        assert said == NO_EVIDENCE, table.to_string()
        more_a, more_b = _interleaved(warm, {"linger.ms": 0}, {"linger.ms": 50})
        a, b = pd.concat([a, more_a], ignore_index=True), pd.concat([b, more_b], ignore_index=True)
    assert said in (FASTER, SLOWER), table.to_string()
    assert (said == FASTER) == (line["ratio"] > 1)  # "faster" names B, the side with the higher median
    assert not (line["ci_low"] <= 1.0 <= line["ci_high"])
