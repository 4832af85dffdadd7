"""Which profiles have their cluster checked for short log ends, and how an answer is remembered.

The check itself needs a broker (`tests/integration/test_stack_log_ends.py`); here the
remembered answers are read without one: a profile whose cluster is at a closed port
would log "cannot check" if anything tried to reach it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from pathlib import Path

import pytest

from workbench.config import Profile, load_profile
from workbench.kafka import offsets
from workbench.kafka.offsets import END_PROBE_ENV, declare_end_probe, end_probe_env, needs_end_probe
from workbench.stack import Stack, log_ends
from workbench.stack.log_ends import MEMORY_FILE, EndsCheck, check_log_ends, checked, needs_check, warning_line


def _closed_address() -> str:
    """An address nothing listens on (a fresh one per test: answers are kept per process)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def _cluster(servers: str, run_dir: Path, **broker: object) -> Profile:
    return Profile.model_validate(
        {
            "name": f"theirs-{uuid.uuid4().hex[:6]}",
            "embedded": False,
            "run_dir": str(run_dir),
            "kafka": {"bootstrap.servers": servers},
            **({"broker": broker} if broker else {}),
        }
    )


@pytest.fixture(autouse=True)
def _no_declared_clusters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no cluster declared, and what it declares is undone after it."""
    monkeypatch.delenv(END_PROBE_ENV, raising=False)
    monkeypatch.setattr(offsets, "_declared_here", set())


def test_only_a_cluster_profile_that_does_not_name_its_broker_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert needs_check(_cluster("k:9092", tmp_path))
    assert needs_check(_cluster("k:9092", tmp_path, host="10.0.0.1"))  # a broker section without `kind`
    assert not needs_check(_cluster("k:9092", tmp_path, kind="kafka"))  # written, even as the default
    assert not needs_check(_cluster("k:9092", tmp_path, kind="tansu"))
    assert not needs_check(load_profile("local"))  # an embedded stack knows its broker
    file = tmp_path / "theirs.yaml"
    file.write_text("embedded: false\nkafka: {bootstrap.servers: 'k:9092'}\n")
    assert needs_check(load_profile(str(file)))
    monkeypatch.setenv("WORKBENCH_BROKER__KIND", "tansu")  # said through the environment
    assert not needs_check(load_profile(str(file)))


def test_a_short_end_is_what_falls_below_the_records_acknowledged() -> None:
    assert EndsCheck(acknowledged=6, reported_end=4).short
    assert not EndsCheck(acknowledged=6, reported_end=6).short
    assert warning_line("10.0.0.1:9092", EndsCheck(6, 4)) == (
        "cluster 10.0.0.1:9092 reports log ends short of what it acknowledged (6 acknowledged, end 4): "
        "its ends are read from the log; write `broker: {kind: tansu}` (or its kind) in the profile to skip this check"
    )


def _remember(run_dir: Path, servers: str, acknowledged: int, end: int) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    entry = {"acknowledged": acknowledged, "reported_end": end, "short": end < acknowledged}
    (run_dir / MEMORY_FILE).write_text(json.dumps({servers: entry}))


def test_a_cluster_remembered_short_is_declared_without_asking_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    servers = _closed_address()
    _remember(tmp_path, servers, 6, 4)
    with caplog.at_level(logging.INFO, logger="workbench"):
        check_log_ends(Stack(_cluster(servers, tmp_path)))
    assert needs_end_probe({"bootstrap.servers": servers})
    assert end_probe_env() == {END_PROBE_ENV: json.dumps([servers])}  # what the services it starts are given
    assert checked(servers) == EndsCheck(6, 4)
    assert caplog.records == []  # announced once, by the process that found it; nobody was asked


def test_a_cluster_remembered_right_is_left_as_it_reports(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    servers = _closed_address()
    _remember(tmp_path, servers, 6, 6)
    with caplog.at_level(logging.INFO, logger="workbench"):
        check_log_ends(Stack(_cluster(servers, tmp_path)))
    assert not needs_end_probe({"bootstrap.servers": servers})
    assert checked(servers) == EndsCheck(6, 6)
    assert caplog.records == []


def test_a_named_broker_or_a_declared_cluster_is_not_looked_up(tmp_path: Path) -> None:
    servers = _closed_address()
    _remember(tmp_path, servers, 6, 4)
    check_log_ends(Stack(_cluster(servers, tmp_path, kind="kafka")))
    assert not needs_end_probe({"bootstrap.servers": servers}) and checked(servers) is None


def test_a_check_that_cannot_run_says_so_once_and_changes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_ends, "REACH_TIMEOUT_S", 0.5)  # nothing answers at a closed port: no need to wait 2 s
    servers = _closed_address()
    (tmp_path / MEMORY_FILE).write_text("{not json")  # unreadable: as if never checked
    stack = Stack(_cluster(servers, tmp_path))
    with caplog.at_level(logging.WARNING, logger="workbench.stack.log_ends"):
        check_log_ends(stack)
        check_log_ends(stack)  # settled for this process: not tried again
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot check whether cluster {servers} reports log ends short (no broker answered within 0.5 s); its ends "
        "are taken as it reports them: write `broker: {kind: ...}` in the profile to say which broker it is"
    ]
    assert not needs_end_probe({"bootstrap.servers": servers}) and checked(servers) is None
    assert (tmp_path / MEMORY_FILE).read_text() == "{not json"  # nothing written down: a later process tries again


def test_a_declaration_holds_in_this_process_and_is_handed_to_children_explicitly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.streaming import source_options
    from workbench.streaming.options import parse_options

    environment = dict(os.environ)
    servers = _closed_address()
    declare_end_probe(servers)
    assert needs_end_probe({"bootstrap.servers": servers})
    assert dict(os.environ) == environment  # nothing passes through this process's environment
    assert end_probe_env() == {END_PROBE_ENV: json.dumps([servers])}  # what the stack's services are started with
    monkeypatch.setenv(END_PROBE_ENV, json.dumps(["operator.example:9092"]))  # an operator's own setting
    assert end_probe_env() == {END_PROBE_ENV: json.dumps(sorted([servers, "operator.example:9092"]))}

    # Spark's Python workers know only the query's options.
    options = source_options(Stack(_cluster(servers, tmp_path)), subscribe="t")
    assert options["readEndsFromLog"] == "true"
    assert parse_options(options, streaming=True).read_ends_from_log
    assert "readEndsFromLog" not in source_options(Stack(_cluster(_closed_address(), tmp_path)), subscribe="t")
