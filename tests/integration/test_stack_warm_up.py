"""A new embedded broker is cold until the warm-up load ran on it, and its rows say so."""

from __future__ import annotations

from workbench.bench import native_produce
from workbench.bench.warmup import warm_stack, warm_up_curve
from workbench.stack import Stack
from workbench.stack.warmth import broker_uptime_s, broker_warmth


def test_the_warm_up_load_marks_the_broker_warm_and_rows_carry_it(stack: Stack) -> None:
    fresh = stack.refreshed()
    if broker_warmth(fresh) == "cold":
        cold_row = native_produce(fresh, records=1_000)
        assert cold_row["broker_warmth"] == "cold" and 0 < cold_row["broker_uptime_s"] < broker_uptime_s(fresh)
    warmed = warm_stack(fresh, seconds=1.0)
    assert broker_warmth(warmed) == "warm" and broker_warmth(warmed.refreshed()) == "warm"
    brokers = [r for r in warmed.refreshed().services.values() if r.kind == "broker"]
    assert all(r.extra["warmed_up"] and r.extra["warm_up_s"] >= 1.0 for r in brokers)
    row = native_produce(warmed.refreshed(), records=1_000)
    assert row["broker_warmth"] == "warm" and row["landed"] == 1_000
    assert warm_stack(warmed.refreshed(), seconds=30.0).services == warmed.refreshed().services  # warm already: no load


def test_the_curve_stamps_each_run_with_the_uptime_it_started_at(stack: Stack) -> None:
    curve = warm_up_curve(stack, "native_produce", seconds=1.0, records=2_000)
    assert len(curve) >= 1 and (curve["landed"] == 2_000).all()
    assert curve["broker_uptime_s"].is_monotonic_increasing and list(curve["run_index"]) == list(range(len(curve)))
