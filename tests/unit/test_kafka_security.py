"""The protocol client's TLS and SASL settings (`workbench.kafka.security`) and its SASL
mechanisms (`workbench.kafka.sasl`) checked against RFC 7677's example; no broker."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from workbench.kafka.sasl import SaslError, exchange, plain, scram
from workbench.kafka.security import Security, UnsupportedSecurity

# RFC 7677, section 3: user "user", password "pencil".
_NONCE = "rOprNGfwEbeRWgbNEkqO"
_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
_CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_scram_sha_256_matches_rfc_7677_and_checks_the_brokers_signature() -> None:
    tokens = scram("SCRAM-SHA-256", "user", "pencil", nonce=_NONCE)
    assert next(tokens) == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert tokens.send(_SERVER_FIRST) == _CLIENT_FINAL
    with pytest.raises(StopIteration):
        tokens.send(_SERVER_FINAL)


@pytest.mark.parametrize(
    "server_first, server_final, says",
    [
        (_SERVER_FIRST, b"v=AAAA", "signature is wrong"),
        (_SERVER_FIRST, b"e=invalid-proof", "invalid-proof"),
        (b"r=someone-else,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", None, "nonce"),
        (b"r=" + _NONCE.encode() + b",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", None, "nonce"),
        (b"r=" + _NONCE.encode() + b"x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=100000000", None, "iterations"),
        (b"r=" + _NONCE.encode() + b"x,s=!!!,i=4096", None, "base64"),
        (b"r=" + _NONCE.encode() + b"x,i=4096", None, "no salt"),
        (b"e=unknown-user", None, "unknown-user"),
    ],
)
def test_scram_refuses_a_broker_it_cannot_trust(server_first: bytes, server_final: bytes | None, says: str) -> None:
    tokens = scram("SCRAM-SHA-256", "user", "pencil", nonce=_NONCE)
    next(tokens)
    with pytest.raises(SaslError, match=says):
        tokens.send(server_first)
        assert server_final is not None
        tokens.send(server_final)


def test_scram_escapes_the_user_name_and_plain_is_one_token() -> None:
    assert next(scram("SCRAM-SHA-512", "a=b,c", "x", nonce="n")) == b"n,,n=a=3Db=2Cc,r=n"
    assert next(plain("alice", "s3cret")) == b"\0alice\0s3cret"
    assert next(exchange("scram-sha-512", "u", "p")).startswith(b"n,,n=u,r=")
    with pytest.raises(SaslError, match="GSSAPI"):
        exchange("GSSAPI", "u", "p")


def test_plaintext_ignores_tls_and_sasl_settings_as_librdkafka_does() -> None:
    security = Security.from_conf({"sasl.username": "someone", "ssl.keystore.location": "/k.p12"})
    assert security == Security() and security.exchange() is None


def test_sasl_settings_are_taken_for_plain_and_scram_and_the_password_is_never_shown() -> None:
    conf = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": "alice"}
    security = Security.from_conf({**conf, "sasl.password": "s3cret", "sasl.kerberos.service.name": "kafka"})
    assert (security.protocol, security.mechanism, security.tls) == ("sasl_plaintext", "SCRAM-SHA-256", None)
    assert "s3cret" not in repr(security)
    with pytest.raises(UnsupportedSecurity, match=r"sasl\.username and sasl\.password"):
        Security.from_conf(conf)


@pytest.mark.parametrize(
    "conf, says",
    [
        ({"security.protocol": "SASL_SSL"}, "sasl.mechanism is GSSAPI"),
        ({"security.protocol": "sasl_plaintext", "sasl.mechanism": "OAUTHBEARER"}, "OAUTHBEARER"),
        ({"security.protocol": "SSL", "ssl.keystore.location": "/k.p12"}, "ssl.keystore.location is set"),
        ({"security.protocol": "SSL", "ssl.ca.pem": "-----BEGIN"}, "ssl.ca.pem is set"),
        ({"security.protocol": "SSL", "ssl.ca.location": "/nowhere/ca.pem"}, "cannot be loaded"),
        ({"security.protocol": "SSL", "ssl.ca.location": "ca\0.pem"}, "cannot be loaded"),
        ({"security.protocol": "SSL", "ssl.certificate.location": "x" * 10_000}, "cannot be loaded"),
        ({"security.protocol": "QUIC"}, "not one of"),
        (
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.login.callback": "x"},
            "sasl.login.callback is set",
        ),
    ],
)
def test_what_the_client_cannot_honour_is_named(conf: dict[str, str], says: str) -> None:
    with pytest.raises(UnsupportedSecurity, match=says):
        Security.from_conf(conf)


def test_tls_verifies_and_checks_host_names_unless_told_not_to(tmp_path: Path) -> None:
    checked = Security.from_conf({"security.protocol": "SSL"}).tls
    assert checked is not None and checked.verify_mode == ssl.CERT_REQUIRED and checked.check_hostname
    any_name = Security.from_conf({"security.protocol": "ssl", "ssl.endpoint.identification.algorithm": "none"}).tls
    assert any_name is not None and any_name.verify_mode == ssl.CERT_REQUIRED and not any_name.check_hostname
    trusting = Security.from_conf({"security.protocol": "ssl", "enable.ssl.certificate.verification": "false"}).tls
    assert trusting is not None and trusting.verify_mode == ssl.CERT_NONE
    directory = Security.from_conf({"security.protocol": "SASL_SSL", "ssl.ca.location": str(tmp_path), **_PLAIN})
    assert directory.tls is not None and directory.mechanism == "PLAIN"


_PLAIN = {"sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p"}
