"""Secrets that never print: passwords in proxy settings, profiles and client settings.

A password reaches the workbench three ways: `authentication.basic.users` of a proxy,
a SASL or SSL setting in a librdkafka dictionary (`sasl.password`, often from
`WORKBENCH_KAFKA__COMMON__SASL_PASSWORD`), and a profile's `auth` (read from the
environment when used). Each is held in a form whose `repr` and `str` show a mask, so a
settings object in a log line, a traceback or a notebook cell's output gives nothing away.

Single values use pydantic's `SecretStr` (the value comes out only through
`get_secret_value()`); librdkafka needs plain dictionaries, so those are `ClientConf`, a
`dict` that masks the values of secret keys when printed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import SecretStr

__all__ = ["ClientConf", "MASK", "SecretStr", "is_secret_key", "masked"]

MASK = "**********"


def __getattr__(name: str) -> Any:
    """`SecretStr`, imported when first asked for: pydantic costs a process 0.1 s of CPU,
    and the Kafka source's modules (run by every Spark Python worker) import this one for
    `ClientConf` alone."""
    if name == "SecretStr":
        from pydantic import SecretStr

        return SecretStr
    raise AttributeError(f"module 'workbench.secrets' has no attribute {name!r}")


#: librdkafka's secret settings: sasl.password, ssl.key.password, ssl.keystore.password,
#: sasl.oauthbearer.client.secret, sasl.jaas.config (Java), basic.auth.user.info (registry).
_SECRET_KEY = re.compile(r"password|secret|jaas|user\.info|credentials", re.IGNORECASE)


def is_secret_key(name: str) -> bool:
    """True for a setting whose value must not be shown (matched on the name, any case)."""
    return bool(_SECRET_KEY.search(name))


def masked(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy to show: secret keys' values replaced by the mask."""
    return {key: MASK if is_secret_key(str(key)) else value for key, value in settings.items()}


class ClientConf(dict[str, Any]):
    """A librdkafka settings dictionary that masks its secrets when printed.

    It is a plain `dict` to every consumer of it (confluent-kafka takes it as is); only
    `repr` and `str` differ. Spreading it (`{**conf}`) gives a plain dict again, so keep
    the `ClientConf` for anything that may be shown.
    """

    def __repr__(self) -> str:
        return repr(masked(self))

    __str__ = __repr__
