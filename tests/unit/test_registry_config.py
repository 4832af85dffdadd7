"""The `schema_registry` profile section: on in the local profile, a URL with auth on a cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config import load_profile
from workbench.errors import StackError
from workbench.stack import ServiceRecord, Stack
from workbench.stack.lifecycle import services_for
from workbench.stack.services import SchemaRegistry


def test_local_profile_starts_a_registry_before_the_proxies() -> None:
    profile = load_profile("local")
    assert profile.schema_registry.enabled
    kinds = [service.kind for service in services_for(profile)]
    assert kinds.index("broker") < kinds.index("registry") < kinds.index("proxy")
    assert isinstance(services_for(profile)[1], SchemaRegistry)


def test_cluster_profile_takes_a_url_and_basic_auth_by_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.config import conf_dir

    profile = load_profile(str(conf_dir() / "cluster.example.yaml"))
    stack = Stack(profile)
    assert stack.registry_url == profile.schema_registry.url
    monkeypatch.setenv("SCHEMA_REGISTRY_USER", "ann")
    monkeypatch.setenv("SCHEMA_REGISTRY_PASSWORD", "s3cret")
    assert stack.registry_config() == {"url": profile.schema_registry.url, "basic.auth.user.info": "ann:s3cret"}


def test_an_embedded_stack_can_use_an_outside_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_SCHEMA_REGISTRY__ENABLED", "false")
    monkeypatch.setenv("WORKBENCH_SCHEMA_REGISTRY__URL", "http://registry.example:8081")
    profile = load_profile("local")
    assert Stack(profile).registry_config() == {"url": "http://registry.example:8081"}
    proxy = next(s for s in services_for(profile) if s.kind == "proxy")
    proxy.command("127.0.0.1", 1, Path("/nonexistent"), {"broker": _record("broker")})
    assert proxy.env()["KAFKA_REST_SCHEMA_REGISTRY_URL"] == "http://registry.example:8081"


def _record(kind: str) -> ServiceRecord:
    return ServiceRecord(name=kind, kind=kind, pid=1, create_time=0.0, address="127.0.0.1:1", log="-")


def test_no_registry_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_SCHEMA_REGISTRY__ENABLED", "false")
    profile = load_profile("local")
    assert "registry" not in [service.kind for service in services_for(profile)]
    with pytest.raises(StackError, match="no Schema Registry"):
        Stack(profile).registry_config()
