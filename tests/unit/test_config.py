"""Profiles: loading, environment overrides, and one-line errors naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workbench.config import conf_dir, environment, load_profile
from workbench.errors import ConfigError


def test_local_profile_loads_with_the_settings_the_embedded_broker_needs() -> None:
    profile = load_profile("local")
    assert profile.embedded
    consumer = profile.kafka.for_role("consumer")
    assert consumer["allow.auto.create.topics"] is False
    assert consumer["session.timeout.ms"] == 6000
    assert profile.source == conf_dir() / "local.yaml"


def test_environment_selects_the_profile_and_overrides_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("broker: {port: 1234}\n")
    monkeypatch.setenv("WORKBENCH_CONF_DIR", str(tmp_path))
    monkeypatch.setenv("WORKBENCH_PROFILE", "mine")
    monkeypatch.setenv("WORKBENCH_BROKER__PORT", "4321")
    monkeypatch.setenv("WORKBENCH_KAFKA__CONSUMER__FETCH_WAIT_MAX_MS", "25")
    monkeypatch.setenv("WORKBENCH_RUN_ID", "not-a-profile-key")  # other WORKBENCH_* are left alone
    profile = load_profile()
    assert profile.name == "mine"
    assert profile.broker.port == 4321
    assert profile.kafka.consumer == {"fetch.wait.max.ms": 25}


def test_cluster_example_is_valid_and_has_no_embedded_services() -> None:
    profile = load_profile(str(conf_dir() / "cluster.example.yaml"))
    assert not profile.embedded
    assert profile.kafka.bootstrap_servers and len(profile.proxy.urls) == 2
    assert profile.proxy.auth is not None and profile.proxy.auth.username_env == "KAFKA_REST_USER"


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ("broker: {startup_timeout_s: soon}\n", "broker.startup_timeout_s", "valid number"),
        ("broker: {prot: 1}\n", "broker.prot", "Extra inputs"),
        ("embedded: false\n", None, "bootstrap.servers is required"),
        ("spark: {connector: jar}\n", "spark.connector", "'auto', 'kafka' or 'workbench'"),
        ("broker: [1, 2\n", "line", "not valid YAML"),
        ("proxy: {unresponsive_s: .nan}\n", "proxy.unresponsive_s", "less than or equal to 3600"),
        ("proxy: {unresponsive_s: -1}\n", "proxy.unresponsive_s", "greater than or equal to 0"),
        ("proxy: {unresponsive_s: 1e12}\n", "proxy.unresponsive_s", "less than or equal to 3600"),
        ("proxy: {unresponsive_s: ''}\n", "proxy.unresponsive_s", "valid number"),
    ],
)
def test_bad_profiles_name_file_and_key(tmp_path: Path, text: str, key: str | None, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_profile(str(path))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    if key:
        assert key in message
    assert fragment in message


def test_missing_profile_lists_the_ones_there() -> None:
    with pytest.raises(ConfigError, match=r"no such profile file; profiles in conf/: \[.*'local'"):
        load_profile("nope")


def test_env_override_with_a_wrong_type_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_PROXY__INSTANCES", "many")
    with pytest.raises(ConfigError, match=r"proxy\.instances: .*'many'"):
        load_profile("local")


def test_cluster_example_shows_the_cluster_keys() -> None:
    profile = load_profile(str(conf_dir() / "cluster.example.yaml"))
    assert (profile.topics.replication_factor, profile.topics.min_insync_replicas) == (3, 2)
    assert profile.proxy.variants["unbuffered"].properties == {"producer.linger.ms": 0}
    assert profile.balancer.url and profile.spark.ui_url and profile.schema_registry


def test_embedded_profiles_default_to_one_replica_and_no_spark_workers() -> None:
    local = load_profile("local")
    assert (local.topics.replication_factor, local.topics.min_insync_replicas, local.spark.workers) == (1, 1, 0)
    assert load_profile("local-spark").spark.workers == 2


def test_min_insync_above_replication_names_the_key(tmp_path: Path) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text("topics: {replication_factor: 1, min_insync_replicas: 2}\n")
    with pytest.raises(ConfigError, match=r"topics: .*min_insync_replicas 2 exceeds replication_factor 1"):
        load_profile(str(file))


def test_standalone_workers_on_a_cluster_profile_are_refused(tmp_path: Path) -> None:
    file = tmp_path / "theirs.yaml"
    file.write_text("embedded: false\nkafka: {bootstrap.servers: 'k:9092'}\nspark: {workers: 2}\n")
    with pytest.raises(ConfigError, match=r"spark\.workers starts Spark on this machine"):
        load_profile(str(file))


def test_an_unknown_workbench_variable_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_BROKER_PORT", "0")  # one underscore: not broker.port
    with pytest.raises(ConfigError, match=r"WORKBENCH_BROKER_PORT: unknown variable: not a profile key \(sections: "):
        load_profile("local")


def test_the_environment_is_read_and_checked_in_one_place() -> None:
    env = environment(
        {
            "WORKBENCH_RUN_ID": "r1",
            "WORKBENCH_CELL_TIMEOUT": "90",
            "WORKBENCH_BROKER__PORT": "0",
            "JAVA_HOME": "/opt/java",
            "HOME": "/root",
        }
    )
    assert (env.run_id, env.cell_timeout_s, str(env.java_home)) == ("r1", 90.0, "/opt/java")
    assert env.overrides == {"WORKBENCH_BROKER__PORT": "0"} and env.profile is None
    with pytest.raises(ConfigError, match=r"WORKBENCH_CELL_TIMEOUT: expected a positive number of seconds, got 'soon'"):
        environment({"WORKBENCH_CELL_TIMEOUT": "soon"})


def test_profile_proxy_overrides_reach_the_proxies_as_kafka_rest_variables(tmp_path: Path) -> None:
    from workbench.stack.services import ProxyInstance

    file = tmp_path / "p.yaml"
    file.write_text("proxy:\n  overrides:\n    producer.linger.ms: 0\n")
    env = ProxyInstance(load_profile(str(file)), index=0).env()
    assert env["KAFKA_REST_PRODUCER_LINGER_MS"] == "0" and env["KAFKA_REST_ID"] == "proxy-0"


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"": 1}, "is not a dotted name"),
        ({"producer.linger.ms": "a\x00b"}, "a property value is one string or number"),
        ({"producer.linger.ms": [1, 2]}, "a property value is one string or number"),
        ({"x" * 10_000: 1}, "is not a dotted name"),
    ],
)
def test_proxy_overrides_that_cannot_become_environment_variables_are_refused(
    tmp_path: Path, overrides: dict[str, object], fragment: str
) -> None:
    file = tmp_path / "p.yaml"
    file.write_text(yaml.safe_dump({"proxy": {"overrides": overrides}}))
    with pytest.raises(ConfigError, match=r"proxy\.overrides") as refused:
        load_profile(str(file))
    assert fragment in str(refused.value) and len(str(refused.value)) < 400
