"""Opt-in per-record tracing of a produce: where a record's time goes inside the proxy.

A produce request (v2 `POST /topics/...`, v3 `POST /v3/.../records`) asks for it with the
request header `Workbench-Trace: true` (or `1`; `false`, `0` or no header: off; anything
else: 400 / 400). This is the workbench's own extension, not Confluent's API, and it is
off unless asked for: untraced records are written byte for byte as sent.

Two levels. `Workbench-Trace: answer` traces the answer only: every per-record result
carries its `trace` object (below), and the records take the proxy's own produce path,
untouched, so what is traced is what an untraced call costs (the latency waterfall asks
for this). `Workbench-Trace: true` (or `1`) also writes the stamps into every record, two
more record headers after the user's own (v3), each a wall-clock `time.time_ns()` as ASCII
decimal digits, for a downstream consumer to read:

    workbench.proxy.received_ns   the request reached its handler (see `received_ns`)
    workbench.proxy.handed_ns     just before the produce() call that handed the record
                                  to librdkafka

and each per-record result in the answer carries a `trace` object with `received_ns`,
`handed_ns`, `delivered_ns` (the delivery report's callback, before any hop back to the
event loop) and `answered_ns` (just before the answer, or in v3 that record's result, is
written). A record librdkafka never took has `handed_ns` null; one without a delivery
report (refused at once, or before producing) has `delivered_ns` null or the time of
its refusal.

The clock is CLOCK_REALTIME, so another process on the machine (a client, a consumer, a
broker's LogAppendTime) can be compared with it; on two machines, that compares two
clocks, which NTP keeps within about a millisecond on a LAN, often worse.
"""

from __future__ import annotations

from typing import Any, Literal

from workbench.httpserver.errors import RestError

__all__ = [
    "HANDED_HEADER",
    "RECEIVED_HEADER",
    "TRACE_HEADER",
    "TraceMode",
    "trace_mode",
    "trace_object",
    "tracing_requested",
]

#: The request header that asks for tracing (HTTP header names are case-insensitive).
TRACE_HEADER = "workbench-trace"
#: The record headers a traced record carries.
RECEIVED_HEADER = "workbench.proxy.received_ns"
HANDED_HEADER = "workbench.proxy.handed_ns"

#: What a request asked for: `"records"` (stamps in the answer and in every record),
#: `"answer"` (in the answer only), or None (no tracing).
TraceMode = Literal["records", "answer"] | None

_ON = frozenset(("true", "1"))
_ANSWER = "answer"
_OFF = frozenset(("false", "0"))


def tracing_requested(values: list[str]) -> bool:
    """Whether a request asks for tracing at either level (see `trace_mode`)."""
    return trace_mode(values) is not None


def trace_mode(values: list[str]) -> TraceMode:
    """What a request asks for, from its `Workbench-Trace` header values.

    Args:
        values: every value the request sent for the header (`headers.getlist`).

    Raises:
        RestError: 400 / 400 for a value other than true, 1, answer, false or 0 (any
            case), or for the header sent more than once: a typo must not silently turn it off.
    """
    if not values:
        return None
    if len(values) > 1:
        raise RestError(400, 400, f"Bad Request: the Workbench-Trace header was sent {len(values)} times; send it once")
    value = values[0].strip().lower()
    if value in _ON:
        return "records"
    if value == _ANSWER:
        return "answer"
    if value in _OFF:
        return None
    shown = values[0][:40] + ("..." if len(values[0]) > 40 else "")
    raise RestError(
        400,
        400,
        f"Bad Request: the Workbench-Trace header is {shown!r}; its allowed values are true, 1 (trace "
        "every record, in the answer and in its headers), answer (in the answer only) and false, 0 (do not; "
        "the same as no header)",
    )


def trace_object(received_ns: int, handed_ns: int | None, delivered_ns: int | None, answered_ns: int) -> dict[str, Any]:
    """The `trace` object of one record's result in an answer."""
    return {
        "received_ns": received_ns,
        "handed_ns": handed_ns,
        "delivered_ns": delivered_ns,
        "answered_ns": answered_ns,
    }
