"""Extra embedded stacks for experiments that need a different proxy set-up.

Scale-out (1, 2, 4 proxy processes behind nginx) and the proxy's producer buffer time
are properties of the running proxies, not of a request, so each point needs proxies
started for it. `side_stack` starts a complete stack of its own (broker, proxies,
nginx when there are several) from a copy of the profile with its own run directory
and free ports, so it never disturbs the stack the notebook is using, and stops it
again at the end of the `with` block.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from workbench.bench.errors import BenchError
from workbench.config import Profile
from workbench.stack import Stack

__all__ = ["proxy_env", "side_stack"]


def proxy_env(settings: Mapping[str, Any]) -> dict[str, str]:
    """Proxy properties as the `KAFKA_REST_*` environment the proxy reads on start.

    Usage: `proxy_env({"producer.linger.ms": 500})` → `{"KAFKA_REST_PRODUCER_LINGER_MS": "500"}`.
    """
    return {"KAFKA_REST_" + k.upper().replace(".", "_"): str(v) for k, v in settings.items()}


@contextmanager
def side_stack(
    profile: Profile, *, instances: int = 1, proxy_settings: Mapping[str, Any] | None = None, label: str = "side"
) -> Iterator[Stack]:
    """A separate embedded stack with `instances` proxies, stopped when the block ends.

    Args:
        profile: the profile to copy (it must be embedded).
        instances: REST proxy processes; more than one puts nginx in front of them.
        proxy_settings: proxy properties for these proxies (`{"producer.linger.ms": 3000}`).
        label: names its run directory, for finding its logs.

    Raises:
        BenchError: the profile is not embedded (on a cluster, list 1, 2 or 4 proxies'
            URLs in `proxy.urls` of separate profiles instead).

    Usage:
        with side_stack(active.profile, instances=2) as two:
            proxy_produce(two, records_per_call=500)
    """
    if not profile.embedded:
        raise BenchError(
            f"profile {profile.name!r} is not embedded: the workbench cannot start proxies on a cluster; "
            "measure each set-up with its own profile listing its proxies in proxy.urls"
        )
    from workbench import stack as stacks

    run_dir = profile.path(profile.run_dir) / "side" / f"{label}-{uuid.uuid4().hex[:6]}"
    copy = profile.model_copy(
        update={
            "run_dir": run_dir,
            "broker": profile.broker.model_copy(update={"port": 0}),
            "proxy": profile.proxy.model_copy(update={"instances": instances, "first_port": 0}),
            "balancer": profile.balancer.model_copy(update={"port": 0}),
        }
    )
    env = proxy_env(proxy_settings or {})
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the proxies read KAFKA_REST_* at start; restored right after
    try:
        side = stacks.up(copy)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    try:
        yield side
    finally:
        stacks.down(copy)
