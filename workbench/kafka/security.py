"""How the workbench's own Kafka protocol client (`wire`) reaches a secured listener, read
from the librdkafka settings the rest of the workbench already uses for the same cluster.

`Security.from_conf` takes what librdkafka takes for TLS and for SASL PLAIN / SCRAM, with
librdkafka's defaults (certificates verified, host names checked); whatever else a conf
asks for (GSSAPI, OAUTHBEARER, keystores, certificates given inline, cipher lists...) is
`UnsupportedSecurity`, with the setting named, so a caller can say why and fall back. Like
librdkafka, a PLAINTEXT conf ignores `ssl.*` and `sasl.*`, and an SSL conf `sasl.*`.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import KafkaError
from workbench.kafka.sasl import MECHANISMS, SaslExchange, exchange

__all__ = ["PROTOCOLS", "Security", "UnsupportedSecurity"]

PROTOCOLS = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")
#: The TLS settings taken; any other `ssl.*` key of an SSL conf is unsupported.
_TLS_KEYS = {
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
    "enable.ssl.certificate.verification",
}
#: The SASL settings taken with PLAIN and SCRAM; the other mechanisms' own settings
#: (`sasl.kerberos.*`, `sasl.oauthbearer.*`) do not matter to them and are ignored.
_SASL_KEYS = {"sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password"}
_OTHER_MECHANISMS = ("sasl.kerberos.", "sasl.oauthbearer.")


class UnsupportedSecurity(KafkaError):
    """The conf asks for security this client does not speak; the message says which."""


@dataclass(frozen=True)
class Security:
    """TLS (a context, None for none) and SASL (a mechanism, None for none) for connections."""

    protocol: str = "plaintext"
    tls: ssl.SSLContext | None = field(default=None, repr=False)
    mechanism: str | None = None
    username: str = ""
    password: str = field(default="", repr=False)

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any]) -> Security:
        """The security a librdkafka conf asks for.

        Raises:
            UnsupportedSecurity: a protocol, mechanism or setting this client cannot honour.
        """
        protocol = str(conf.get("security.protocol", "plaintext")).lower()
        if protocol not in PROTOCOLS:
            raise UnsupportedSecurity(f"security.protocol {protocol!r} is not one of {', '.join(PROTOCOLS)}")
        tls = _tls_context(conf) if protocol in ("ssl", "sasl_ssl") else None
        if not protocol.startswith("sasl_"):
            return cls(protocol, tls)
        mechanism = str(conf.get("sasl.mechanism", conf.get("sasl.mechanisms", "GSSAPI"))).upper()
        if mechanism not in MECHANISMS:
            raise UnsupportedSecurity(
                f"sasl.mechanism is {mechanism}, and the share-group admin client speaks {', '.join(MECHANISMS)}"
            )
        _refuse_unknown(conf, "sasl.", _SASL_KEYS, skip=_OTHER_MECHANISMS)
        username, password = conf.get("sasl.username"), conf.get("sasl.password")
        if not isinstance(username, str) or not isinstance(password, str):
            raise UnsupportedSecurity(f"sasl.mechanism {mechanism} needs sasl.username and sasl.password")
        return cls(protocol, tls, mechanism, username, password)

    def exchange(self) -> SaslExchange | None:
        """A fresh SASL exchange for one connection, or None without SASL."""
        if self.mechanism is None:
            return None
        return exchange(self.mechanism, self.username, self.password)


def _tls_context(conf: Mapping[str, Any]) -> ssl.SSLContext:
    """librdkafka's TLS settings as an SSLContext: the CA file or directory (else the
    system's), a client certificate and key when given, verification and host-name
    checks on unless turned off."""
    _refuse_unknown(conf, "ssl.", _TLS_KEYS)
    ca = conf.get("ssl.ca.location")
    try:
        if ca is None or str(ca) == "probe":
            context = ssl.create_default_context()
        elif os.path.isdir(str(ca)):
            context = ssl.create_default_context(capath=str(ca))
        else:
            context = ssl.create_default_context(cafile=str(ca))
        certificate, key = conf.get("ssl.certificate.location"), conf.get("ssl.key.location")
        if certificate is not None:
            password = conf.get("ssl.key.password")
            context.load_cert_chain(str(certificate), None if key is None else str(key), password)
    except (OSError, ssl.SSLError, ValueError) as exc:  # ValueError: a path with a NUL in it
        raise UnsupportedSecurity(f"the TLS settings cannot be loaded: {exc}") from None
    if str(conf.get("enable.ssl.certificate.verification", "true")).lower() in ("false", "0"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif str(conf.get("ssl.endpoint.identification.algorithm", "https")).lower() == "none":
        context.check_hostname = False
    return context


def _refuse_unknown(conf: Mapping[str, Any], prefix: str, known: set[str], skip: tuple[str, ...] = ()) -> None:
    for key in sorted(conf):
        if key.startswith(prefix) and key not in known and not key.startswith(skip):
            raise UnsupportedSecurity(f"{key} is set, and the share-group admin client does not speak it")
