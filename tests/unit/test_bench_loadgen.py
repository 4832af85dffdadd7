"""The wrk load generator's wrapper: a plain message when wrk is missing, the saturation rule."""

from __future__ import annotations

import pytest

from workbench.bench import BenchError, loadgen, proxy_produce


def test_a_missing_wrk_is_named_with_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loadgen, "wrk_path", lambda: None)
    with pytest.raises(BenchError, match=r"wrk load generator, which is not installed: sudo apt-get install wrk"):
        loadgen.require_wrk()


def test_a_proxy_benchmark_refuses_an_unknown_client_before_any_work() -> None:
    with pytest.raises(BenchError, match="client must be one of python, wrk, got 'curl'"):
        proxy_produce(None, records=10, client="curl")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cpu_s", "seconds", "cores", "saturated"),
    [(0.95, 1.0, 1, True), (0.5, 1.0, 1, False), (1.0, 1.0, 2, False), (0.0, 0.0, 1, False)],
)
def test_a_client_busy_for_nearly_all_its_time_is_saturated(
    cpu_s: float, seconds: float, cores: int, saturated: bool
) -> None:
    assert loadgen.is_saturated(cpu_s, seconds, cores) is saturated
