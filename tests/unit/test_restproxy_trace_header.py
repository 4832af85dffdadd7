"""The `Workbench-Trace` header's values, and a trace object's round trip to the client's type."""

from __future__ import annotations

import pytest

from workbench.httpserver.errors import RestError
from workbench.proxy import ProduceTrace
from workbench.restproxy.tracing import trace_mode, trace_object, tracing_requested


@pytest.mark.parametrize("value", ["true", "1", "TRUE", " True "])
def test_true_and_1_turn_tracing_on(value: str) -> None:
    assert tracing_requested([value]) is True


@pytest.mark.parametrize("values", [[], ["false"], ["0"], ["False"]])
def test_false_0_or_no_header_leave_it_off(values: list[str]) -> None:
    assert tracing_requested(values) is False


@pytest.mark.parametrize("value", ["", "yes", "2", "on", "true,true", "t" * 10_000])
def test_any_other_value_is_400_naming_the_header_and_its_values(value: str) -> None:
    with pytest.raises(RestError) as raised:
        tracing_requested([value])
    error = raised.value
    assert (error.status, error.error_code) == (400, 400)
    assert "Workbench-Trace" in error.message and "true, 1" in error.message and "false, 0" in error.message
    assert len(error.message) < 300, "a long value is cut, not echoed"


def test_the_header_twice_is_400() -> None:
    with pytest.raises(RestError) as raised:
        tracing_requested(["true", "true"])
    assert raised.value.status == 400 and "once" in raised.value.message


def test_a_trace_object_reads_back_as_a_produce_trace() -> None:
    assert ProduceTrace.from_json(trace_object(1, 2, 3, 4)) == ProduceTrace(1, 2, 3, 4)
    assert ProduceTrace.from_json(trace_object(1, None, None, 4)) == ProduceTrace(1, None, None, 4)


@pytest.mark.parametrize(
    ("values", "mode"),
    [
        ([], None),
        (["0"], None),
        (["true"], "records"),
        (["1"], "records"),
        (["answer"], "answer"),
        ([" Answer "], "answer"),
    ],
)
def test_the_header_names_a_level_records_or_answer_only(values: list[str], mode: str | None) -> None:
    assert trace_mode(values) == mode
    assert tracing_requested(values) is (mode is not None)
