"""Secrets never print: proxy users, SASL passwords in profiles, proxy settings and source options."""

from __future__ import annotations

import pytest

from workbench.config import load_profile
from workbench.kafka import java_names
from workbench.restproxy.settings import load_restproxy_settings
from workbench.secrets import MASK, ClientConf, SecretStr
from workbench.streaming.options import parse_options

PASSWORD = "hunter2-do-not-print"


def test_client_conf_is_a_plain_dict_that_prints_a_mask() -> None:
    conf = ClientConf({"bootstrap.servers": "h:9092", "sasl.password": PASSWORD, "ssl.key.password": PASSWORD})
    assert conf["sasl.password"] == PASSWORD and isinstance(conf, dict)
    for shown in (repr(conf), str(conf), f"{conf}", f"{[conf]}"):
        assert PASSWORD not in shown and MASK in shown and "h:9092" in shown


def test_proxy_settings_hide_basic_auth_and_client_passwords() -> None:
    settings = load_restproxy_settings(
        None,
        environ={
            "KAFKA_REST_BOOTSTRAP_SERVERS": "h:9092",
            "KAFKA_REST_AUTHENTICATION_METHOD": "BASIC",
            "KAFKA_REST_AUTHENTICATION_BASIC_USERS": f"alice:{PASSWORD}",
            "KAFKA_REST_CLIENT_SASL_PASSWORD": PASSWORD,
        },
    )
    assert PASSWORD not in repr(settings) and PASSWORD not in str(settings)
    assert isinstance(settings.basic_auth["alice"], SecretStr)
    assert settings.basic_auth["alice"].get_secret_value() == PASSWORD
    assert settings.producer["sasl.password"] == settings.admin["sasl.password"] == PASSWORD


def test_a_profile_hides_sasl_passwords_but_hands_them_to_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_KAFKA__COMMON__SASL_PASSWORD", PASSWORD)
    profile = load_profile("local")
    assert PASSWORD not in repr(profile) and PASSWORD not in str(profile)
    conf = profile.kafka.for_role("producer")
    assert conf["sasl.password"] == PASSWORD and PASSWORD not in repr(conf)


def test_source_options_hide_the_jaas_password() -> None:
    options = parse_options(
        {
            "kafka.bootstrap.servers": "h:9092",
            "subscribe": "t",
            "kafka.sasl.jaas.config": f"org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="bob" password="{PASSWORD}";',
        },
        streaming=True,
    )
    assert options.kafka["sasl.password"] == PASSWORD
    assert PASSWORD not in repr(options)


@pytest.mark.parametrize(
    ("java", "value", "expected"),
    [
        ("max.request.size", "2000000", ("message.max.bytes", 2_000_000)),
        ("buffer.memory", "33554432", ("queue.buffering.max.kbytes", 32768)),
        ("fetch.max.wait.ms", "100", ("fetch.wait.max.ms", 100)),
        ("receive.buffer.bytes", "65536", ("socket.receive.buffer.bytes", 65536)),
        ("linger.ms", "5", ("linger.ms", "5")),
        ("key.serializer", "org.apache.kafka.common.serialization.StringSerializer", None),
    ],
)
def test_one_table_translates_java_names_for_the_proxy_and_the_spark_source(
    java: str, value: str, expected: tuple[str, object] | None
) -> None:
    assert java_names.translate(java, value) == expected
    settings = load_restproxy_settings(
        None,
        environ={
            "KAFKA_REST_BOOTSTRAP_SERVERS": "h:9092",
            "KAFKA_REST_CONSUMER_" + java.upper().replace(".", "_"): value,
        },
    )
    source = (
        parse_options({"kafka.bootstrap.servers": "h:9092", "subscribe": "t", f"kafka.{java}": value}, streaming=True)
        if java != "key.serializer"
        else None
    )
    if expected is None:
        assert java not in settings.consumer
    else:
        assert settings.consumer[expected[0]] == expected[1]
        assert source is not None and source.kafka[expected[0]] == expected[1]
