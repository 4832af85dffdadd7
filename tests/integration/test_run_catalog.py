"""Bench runs from the shell land in the run catalogue with their facts, and two of them
compare point by point. Verdicts on real runs are not asserted: speed is measured, not tested."""

from __future__ import annotations

import os
import subprocess
import sys

from workbench import catalog, results
from workbench.compare import FASTER, NO_EVIDENCE, SLOWER, TOO_FEW, UNTRUSTED
from workbench.config import Profile
from workbench.stack import Stack


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "250"},
    )


def _bench(profile: Profile, repeat: int = 3) -> str:
    """Run a quick native_produce point `repeat` times; its run id, from the catalogue."""
    before = set(catalog.runs(profile, kind="bench")["run_id"])
    point = ["--param", "records=2000", "--param", "linger.ms=5"]
    result = _cli("bench", "native_produce", *point, "--repeat", str(repeat))
    assert result.returncode == 0, result.stderr
    (new,) = set(catalog.runs(profile, kind="bench")["run_id"]) - before
    return str(new)


def test_a_bench_run_is_catalogued_with_its_facts(stack: Stack) -> None:
    run_id = _bench(stack.profile)
    entry = catalog.show(run_id, stack.profile)
    assert entry["kind"] == "bench" and entry["name"] == "native_produce" and entry["status"] == "ok"
    assert entry["profile"] == stack.profile.name
    assert entry["ended_at"] >= entry["started_at"]
    assert entry["cpu_cores"] == os.cpu_count() and entry["memory_gib"] > 0 and entry["load_avg_1m"] >= 0
    assert entry["librdkafka"] and entry["confluent_kafka"] and entry["pyspark"] and entry["python"]
    assert '"linger.ms": 5' in entry["parameters"] and '"repeat": 3' in entry["parameters"]
    rows = results.load("native_produce", run_id=run_id, profile=stack.profile)
    assert len(rows) == 3  # the catalogue's id is the one its rows carry

    listed = _cli("runs", "--notebook", "native_produce")
    assert listed.returncode == 0 and run_id in listed.stdout
    shown = _cli("runs", "show", run_id)
    assert shown.returncode == 0 and "librdkafka" in shown.stdout and "load_avg_1m" in shown.stdout


def test_two_bench_runs_compare_point_by_point(stack: Stack) -> None:
    a, b = _bench(stack.profile, 4), _bench(stack.profile, 4)  # 3 against 3 can never reach p < 0.05
    result = _cli("compare", a, b, "--metric", "msg_s")
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if "msg_s" in x and "native_produce" in x)
    assert "linger.ms=5" in line and "records=2000" in line, result.stdout
    # the tests' broker skipped the warm-up, so the verdict may be "untrusted [1]" with its note below
    verdict = result.stdout if f"{UNTRUSTED} [1]" in line else line
    assert any(v in verdict for v in (FASTER, SLOWER, NO_EVIDENCE)) and TOO_FEW not in line, result.stdout
    assert "client " in line  # the load generator's CPU was measured, so saturation is judged
