"""Closing a librdkafka client never holds the proxy longer than `close_within`'s bound.

A consumer's close was seen blocked for an hour in CI, holding a worker thread and the
process's shutdown. The close is pure plumbing around a blocking call, so a call that
blocks on an event stands in for librdkafka here (no Kafka is involved)."""

from __future__ import annotations

import logging
import threading

import pytest

from workbench.restproxy.instances import close_within


def test_a_close_that_returns_is_waited_for() -> None:
    closed: list[str] = []
    assert close_within("consumer g/i", lambda: closed.append("done"), timeout_s=5.0)
    assert closed == ["done"]


def test_a_close_that_blocks_is_left_behind_after_the_bound(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()
    with caplog.at_level(logging.WARNING, logger="workbench.restproxy"):
        finished = close_within("consumer g/stuck", lambda: release.wait(60), timeout_s=0.2)
    still_closing = [t for t in threading.enumerate() if t.name == "close-consumer g/stuck"]
    release.set()
    assert not finished
    assert still_closing and still_closing[0].daemon, "the caller returned only once the close did"
    assert "closing consumer g/stuck did not finish within 0.2 s" in caplog.text


def test_a_close_that_raises_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    def fail() -> None:
        raise RuntimeError("Consumer closed")

    with caplog.at_level(logging.WARNING, logger="workbench.restproxy"):
        assert close_within("share consumer g/i", fail, timeout_s=5.0)
    assert "closing share consumer g/i: Consumer closed" in caplog.text
