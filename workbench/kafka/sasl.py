"""The client side of the SASL mechanisms a Kafka broker offers without outside services:
PLAIN (RFC 4616) and SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677).

Each mechanism is a generator of the tokens the client sends: it yields its first token,
is sent the broker's answer to it, yields the next, and returns once the exchange is
complete; a broker's answer it cannot accept raises `SaslError`. `wire.Connection` carries
the tokens in SaslAuthenticate requests (KIP-152). GSSAPI (Kerberos) and OAUTHBEARER need a
ticket or a token from somewhere else, and are not offered here.

SCRAM checks the broker too: its last answer must prove that it knows the password's salted
key, or the exchange fails. Passwords are taken as UTF-8 without SASLprep, as Kafka's Java
client takes them (its ScramFormatter only encodes), and that is why this is not `scramp`:
scramp applies SASLprep, which changes some non-ASCII passwords into ones the broker never
stored, and takes any iteration count a broker names, where this caps it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Generator

from workbench.errors import KafkaError

__all__ = ["MECHANISMS", "SaslError", "SaslExchange", "exchange", "plain", "scram"]

#: The mechanisms this module speaks, as Kafka's `sasl.mechanism` names them.
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
#: A broker asking for more PBKDF2 iterations than this is refused: Kafka takes 4,096 to
#: 16,384 (ScramMechanism), and a hostile one could make the client spin for minutes.
_MAX_ITERATIONS = 100_000

#: Yields the client's tokens; is sent each answer of the broker (bytes).
SaslExchange = Generator[bytes, bytes, None]


class SaslError(KafkaError):
    """A SASL exchange failed: the broker's answer was not what the mechanism expects."""


def exchange(mechanism: str, username: str, password: str) -> SaslExchange:
    """The exchange of `mechanism` (one of `MECHANISMS`, any case)."""
    name = mechanism.upper()
    if name == "PLAIN":
        return plain(username, password)
    if name in _HASHES:
        return scram(name, username, password)
    raise SaslError(f"SASL mechanism {mechanism!r} is not one of {', '.join(MECHANISMS)}")


def plain(username: str, password: str) -> SaslExchange:
    """PLAIN: one token, `\\0user\\0password` (no authorisation identity); the broker's
    answer is empty."""
    yield b"\0" + username.encode() + b"\0" + password.encode()


def scram(mechanism: str, username: str, password: str, nonce: str | None = None) -> SaslExchange:
    """SCRAM-SHA-256 or -512: client-first, client-final, then the broker's signature
    checked. `nonce` is for tests (RFC 7677's example); by default 24 random bytes."""
    digest = _HASHES[mechanism]
    client_nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode()
    first_bare = f"n={_saslname(username)},r={client_nonce}"
    server_first = (yield f"n,,{first_bare}".encode()).decode("utf-8", "replace")
    fields = _fields(server_first)
    server_nonce, salt, iterations = fields.get("r", ""), fields.get("s"), fields.get("i", "")
    if "e" in fields:
        raise SaslError(f"the broker refused {mechanism}: {fields['e']}", "SASL_AUTHENTICATION_FAILED")
    if not server_nonce.startswith(client_nonce) or len(server_nonce) == len(client_nonce):
        raise SaslError(f"{mechanism}: the broker's nonce does not extend the client's", "SASL_AUTHENTICATION_FAILED")
    if salt is None or not iterations.isascii() or not iterations.isdigit():
        raise SaslError(f"{mechanism}: the broker's first answer has no salt or iteration count")
    rounds = int(iterations)
    if not 1 <= rounds <= _MAX_ITERATIONS:
        raise SaslError(f"{mechanism}: the broker asks for {rounds} iterations (this client does 1-{_MAX_ITERATIONS})")
    try:
        salted = hashlib.pbkdf2_hmac(digest, password.encode(), base64.b64decode(salt, validate=True), rounds)
    except ValueError:
        raise SaslError(f"{mechanism}: the broker's salt is not base64") from None
    final_bare = f"c=biws,r={server_nonce}"
    message = f"{first_bare},{server_first},{final_bare}".encode()
    client_key = hmac.digest(salted, b"Client Key", digest)
    signature = hmac.digest(hashlib.new(digest, client_key).digest(), message, digest)
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    server_final = (yield f"{final_bare},p={base64.b64encode(proof).decode()}".encode()).decode("utf-8", "replace")
    answer = _fields(server_final)
    if "e" in answer:
        raise SaslError(f"the broker refused {mechanism}: {answer['e']}", "SASL_AUTHENTICATION_FAILED")
    expected = hmac.digest(hmac.digest(salted, b"Server Key", digest), message, digest)
    if not hmac.compare_digest(answer.get("v", ""), base64.b64encode(expected).decode()):
        raise SaslError(
            f"{mechanism}: the broker's signature is wrong; it does not know this user's password",
            "SASL_AUTHENTICATION_FAILED",
        )


def _saslname(name: str) -> str:
    """A user name as SCRAM writes it: `=` and `,` escaped."""
    return name.replace("=", "=3D").replace(",", "=2C")


def _fields(message: str) -> dict[str, str]:
    """`a=1,b=2` as {a: 1, b: 2}; a field without `=` is left out."""
    return dict(part.split("=", 1) for part in message.split(",") if "=" in part)
