"""kafka-rest.properties: parsing, upstream defaults, pass-through, errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from workbench.errors import ConfigError
from workbench.restproxy.consumer_instances import ConsumerManager
from workbench.restproxy.settings import load_restproxy_settings, parse_properties

PROJECT_PROPERTIES = Path(__file__).resolve().parents[2] / "conf" / "kafka-rest.properties"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kafka-rest.properties"
    path.write_text(text)
    return path


def test_java_properties_syntax() -> None:
    text = "# comment\n! also\na=1\nb: two\nc three\nlong = x,\\\n    y\nempty=\n"
    assert parse_properties(text) == {"a": "1", "b": "two", "c": "three", "long": "x,y", "empty": ""}


def test_project_file_loads_with_upstream_defaults() -> None:
    settings = load_restproxy_settings(PROJECT_PROPERTIES, bootstrap_servers="b:9092", environ={})
    assert (settings.host, settings.port) == ("127.0.0.1", 8082), "loopback by default"
    assert settings.consumer_request_timeout_ms == 1000
    assert settings.consumer_request_max_bytes == 67108864
    assert settings.consumer_instance_timeout_ms == 300000
    assert settings.fetch_min_bytes == -1
    assert settings.consumer["session.timeout.ms"] == "6000", "consumer.* passes through, prefix stripped"
    assert settings.producer["allow.auto.create.topics"] is False
    assert settings.consumer["allow.auto.create.topics"] is settings.admin["allow.auto.create.topics"] is False
    assert "linger.ms" not in settings.producer, "unset: librdkafka's own default"


def test_overrides_in_order(tmp_path: Path) -> None:
    path = write(tmp_path, "listeners=http://0.0.0.0:9000\nbootstrap.servers=file:1\nid=a\n")
    settings = load_restproxy_settings(
        path, environ={"KAFKA_REST_ID": "from-env", "KAFKA_REST_CONSUMER_INSTANCE_TIMEOUT_MS": "5"}
    )
    assert (settings.host, settings.port, settings.bootstrap_servers) == ("0.0.0.0", 9000, "file:1")
    assert settings.id == "from-env" and settings.consumer_instance_timeout_ms == 5
    cli = load_restproxy_settings(path, host="127.0.0.2", port=7, bootstrap_servers="cli:2", environ={})
    assert (cli.host, cli.port, cli.bootstrap_servers) == ("127.0.0.2", 7, "cli:2")


def test_an_empty_client_setting_is_not_set_so_an_override_can_take_one_away() -> None:
    """A KIP-848 consumer (`group.protocol=consumer`) must not carry the classic group's
    timings, which librdkafka refuses with it: the environment takes the file's away."""
    environ = {
        "KAFKA_REST_CONSUMER_GROUP_PROTOCOL": "consumer",
        "KAFKA_REST_CONSUMER_SESSION_TIMEOUT_MS": "",
        "KAFKA_REST_CONSUMER_HEARTBEAT_INTERVAL_MS": " ",
    }
    settings = load_restproxy_settings(PROJECT_PROPERTIES, bootstrap_servers="b:9092", environ=environ)
    assert settings.consumer["group.protocol"] == "consumer"
    assert "session.timeout.ms" not in settings.consumer and "heartbeat.interval.ms" not in settings.consumer
    assert settings.consumer["max.poll.interval.ms"] == "7000", "the others stay"


def test_mapr_buffer_time_is_the_linger(tmp_path: Path) -> None:
    for key in ("streams.buffer.max.time.ms", "producer.streams.buffer.max.time.ms"):
        settings = load_restproxy_settings(
            write(tmp_path, f"{key}=3000\nproducer.linger.ms=5\n"), bootstrap_servers="b", environ={}
        )
        assert settings.producer["linger.ms"] == 3000


def test_java_client_names_are_translated(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = (
        "producer.max.request.size=2000000\nproducer.buffer.memory=33554432\nproducer.max.block.ms=1\n"
        "client.max.block.ms=5\n"
    )
    with caplog.at_level(logging.WARNING, "workbench.restproxy"):
        settings = load_restproxy_settings(write(tmp_path, text), bootstrap_servers="b", environ={})
    assert settings.producer["message.max.bytes"] == 2000000 == settings.message_max_bytes
    assert settings.producer["queue.buffering.max.kbytes"] == 32768
    assert "max.block.ms" not in settings.producer and "producer.max.block.ms" in caplog.text
    assert settings.max_block_ms == 1, "the proxy's own wait for room in a full producer queue"


def test_unknown_properties_warn_by_name(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "workbench.restproxy"):
        text = "frobnicate=1\nzoo.keeper=x\nthread.pool.max=9\n"
        load_restproxy_settings(write(tmp_path, text), bootstrap_servers="b", environ={})
    assert "frobnicate, zoo.keeper" in caplog.text
    assert "thread.pool.max" not in caplog.text, "upstream JVM settings are accepted quietly"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("consumer.request.timeout.ms=abc", "consumer.request.timeout.ms"),
        ("api.v3.enable=yes", "api.v3.enable"),
        ("fetch.min.bytes=20000000", "fetch.min.bytes"),
        ("listeners=https://h:1", "listeners"),
        ("authentication.method=BASIC", "authentication.basic.users"),
        ("port=x", "port"),
    ],
)
def test_wrong_values_are_one_line_errors(tmp_path: Path, text: str, key: str) -> None:
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as raised:
        load_restproxy_settings(path, bootstrap_servers="b", environ={})
    assert raised.value.key == key and raised.value.file == str(path)
    assert "\n" not in str(raised.value)


def test_bootstrap_servers_is_required(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"bootstrap\.servers"):
        load_restproxy_settings(write(tmp_path, "id=x\n"), environ={})


def test_base_url_prefers_advertised_then_host_name(tmp_path: Path) -> None:
    listeners = write(tmp_path, "advertised.listeners=http://proxy-1:8082\n")
    advertised = load_restproxy_settings(listeners, bootstrap_servers="b", environ={})
    assert advertised.base_url("ignored:1") == "http://proxy-1:8082"
    named = load_restproxy_settings(write(tmp_path, "host.name=box\n"), port=8090, bootstrap_servers="b", environ={})
    assert named.base_url("ignored:1") == "http://box:8090"
    bound = load_restproxy_settings(write(tmp_path, ""), host="127.0.0.1", port=8091, bootstrap_servers="b", environ={})
    assert bound.base_url("balancer:80") == "http://127.0.0.1:8091"
    empty = write(tmp_path, "")
    wildcard = load_restproxy_settings(empty, host="0.0.0.0", port=8092, bootstrap_servers="b", environ={})
    assert wildcard.base_url("myhost:8092") == "http://myhost:8092"


def test_an_instance_fetches_again_10_ms_after_a_full_queue_unless_told_otherwise(tmp_path: Path) -> None:
    """librdkafka's 1 s default stalls a reader that drains its queue faster than that."""
    for text, expected in (("", 10), ("consumer.fetch.queue.backoff.ms=250\n", "250")):
        manager = ConsumerManager(load_restproxy_settings(write(tmp_path, text), bootstrap_servers="b:1", environ={}))
        instance = manager.create("g", {})
        try:
            assert instance.conf["fetch.queue.backoff.ms"] == expected
        finally:
            instance.consumer.close()
