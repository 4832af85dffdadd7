"""Proxy set-ups for experiments that need proxies configured otherwise than the stack's.

Scale-out (1, 2, 4 proxy processes behind nginx) and the proxy's producer buffer time
are properties of the running proxies, not of a request, so each point needs proxies
set up for it:

- on the embedded stack `side_stack` starts proxies of their own (nginx in front when
  there are several) from a copy of the profile with its own run directory and free
  ports, against the stack's running broker, and stops them again at the end of the
  `with` block. The broker is shared on purpose: a broker of its own per point was a
  cold JVM every time (see `workbench.bench.warmup`), and 4-5 s of start-up per point;
- on a profile the workbench did not start, nothing can be started or reconfigured:
  `proxy_setup` uses what the profile offers instead (the first N of `proxy.urls`, or a
  `proxy.variants` entry configured as asked), and when nothing can stand in it says,
  in one line, what the profile would need (`missing_setup`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.config import Profile, ProxyVariant
from workbench.errors import BenchError
from workbench.stack import Stack

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

#: A set-up key that is the number of proxies rather than a proxy property.
INSTANCES = "proxy_instances"
#: How a set-up names a proxy property: `{"proxy.producer.linger.ms": 0}`.
PROPERTY_PREFIX = "proxy."

__all__ = [
    "INSTANCES",
    "PROPERTY_PREFIX",
    "ProxySetup",
    "missing_setup",
    "proxy_counts",
    "proxy_setup",
    "setup_sweep",
    "side_profile",
    "side_stack",
]

#: MapR's name for the proxy producer's buffer time, and the upstream one it matches.
_ALIASES = {"streams.buffer.max.time.ms": "producer.linger.ms"}


@dataclass(frozen=True)
class ProxySetup:
    """Proxies for one experiment point: the stack to load, and how it differs from what was asked.

    `note` is None when the set-up is exactly what was asked for; otherwise one Markdown
    line saying what stood in for it, for the notebook to show next to its figure.
    """

    stack: Stack
    note: str | None = None
    via: str = "embedded"


def missing_setup(stack: Stack, properties: Mapping[str, Any] | None = None, *, instances: int = 1) -> str | None:
    """None when `proxy_setup` can provide these proxies; else one line saying what it would need.

    Usage: `notes = [n for t in (0, 500) if (n := missing_setup(active, {"producer.linger.ms": t}))]`.
    """
    profile = stack.profile
    if profile.embedded:
        return None
    if properties:
        if _variant(profile, properties) is None:
            wanted = ", ".join(f"`{k}={v}`" for k, v in properties.items())
            return (
                f"needs a proxy running with {wanted}: list it under `proxy.variants` in "
                f"{profile.source or 'the profile'} (the workbench cannot reconfigure your proxies)"
            )
        return None
    if instances > len(profile.proxy.urls):
        return f"needs {instances} proxy URLs in `proxy.urls`; profile {profile.name!r} lists {len(profile.proxy.urls)}"
    return None


def proxy_counts(stack: Stack, wanted: Sequence[int]) -> list[int]:
    """The proxy counts a scale-out can measure here: all of `wanted` on the embedded stack
    (it starts them); on a cluster those up to the number of `proxy.urls`, and that number.

    Usage: `proxy_counts(active, [1, 2, 4])` → `[1, 2]` on a cluster profile listing two URLs.
    """
    if stack.profile.embedded:
        return list(wanted)
    available = len(stack.profile.proxy.urls)
    counts = [n for n in wanted if 1 <= n <= available]
    return counts if available in counts or not available else [*counts, available]


@contextmanager
def proxy_setup(
    stack: Stack,
    properties: Mapping[str, Any] | None = None,
    *,
    instances: int = 1,
    label: str = "side",
    fallback: bool = False,
) -> Iterator[ProxySetup]:
    """Proxies with `properties` (and `instances` of them) for the duration of the block.

    Embedded: a `side_stack` started with them. A cluster profile: the first `instances`
    of `proxy.urls` (through `balancer.url` when that is all of them), or the
    `proxy.variants` entry whose properties include `properties`.

    Args:
        stack: the notebook's stack.
        properties: proxy properties, upstream names (`{"producer.linger.ms": 0}`).
        instances: proxy processes (embedded) or URLs (cluster) to load.
        label: names an embedded side stack's run directory.
        fallback: when the profile has no such proxies, use its own ones and say so in
            `note`, instead of raising.

    Raises:
        BenchError: the profile cannot provide them (and `fallback` is off); the message
            is `missing_setup`'s line.

    Usage:
        with proxy_setup(active, {"producer.linger.ms": 0}, fallback=True) as unbuffered:
            rows = sweep("proxy_produce", {...}, stack=unbuffered.stack)
    """
    if stack.profile.embedded:
        with side_stack(stack, instances=instances, proxy_properties=properties, label=label) as side:
            yield ProxySetup(side, via="nginx" if side.balancer_url else "direct")
        return
    missing = missing_setup(stack, properties, instances=instances)
    if missing is not None:
        if not fallback:
            raise BenchError(f"profile {stack.profile.name!r} {missing}")
        yield ProxySetup(stack, f"Measured on the profile's own proxies instead: this section {missing}.", "profile")
        return
    yield _cluster_setup(stack, properties, instances)


def _cluster_setup(stack: Stack, properties: Mapping[str, Any] | None, instances: int) -> ProxySetup:
    profile = stack.profile
    if properties:
        name, variant = _variant(profile, properties) or ("", None)
        assert variant is not None  # missing_setup said it exists
        proxy = profile.proxy.model_copy(update={"urls": list(variant.urls)})
        balancer = profile.balancer.model_copy(update={"url": None})
        narrowed = profile.model_copy(update={"proxy": proxy, "balancer": balancer})
        return ProxySetup(Stack(narrowed), via=f"variant {name}")
    urls = profile.proxy.urls[:instances]
    whole = instances == len(profile.proxy.urls) and profile.balancer.url is not None
    proxy = profile.proxy.model_copy(update={"urls": urls})
    balancer = profile.balancer if whole else profile.balancer.model_copy(update={"url": None})
    via = "balancer" if whole else ("round-robin" if instances > 1 else "direct")
    return ProxySetup(Stack(profile.model_copy(update={"proxy": proxy, "balancer": balancer})), via=via)


def _variant(profile: Profile, properties: Mapping[str, Any]) -> tuple[str, ProxyVariant] | None:
    """The first variant configured with every one of `properties` (sizes: at least as large)."""
    wanted = {_ALIASES.get(k, k): v for k, v in properties.items()}
    for name, variant in profile.proxy.variants.items():
        has = {_ALIASES.get(k, k): v for k, v in variant.properties.items()}
        if all(k in has and _satisfies(k, has[k], v) for k, v in wanted.items()):
            return name, variant
    return None


def _satisfies(key: str, has: Any, wanted: Any) -> bool:
    if key.endswith((".max.bytes", ".max.request.size")):
        try:
            return float(has) >= float(wanted)
        except (TypeError, ValueError):
            return False
    return str(has) == str(wanted)


def side_profile(
    profile: Profile, run_dir: Path, *, instances: int, overrides: Mapping[str, Any], bootstrap: str
) -> Profile:
    """The profile of a side stack: its own run directory and free ports, and the running
    broker at `bootstrap` (an embedded profile naming `kafka.bootstrap.servers` starts no
    broker of its own, `workbench.stack.services_for`).

    The side stack runs beside the profile's own stack, which holds the profile's ports,
    so each port of the copy is 0 (a free one at start), whatever the profile fixed. It
    is there to measure proxies with other settings, in binary and JSON: it starts no
    Schema Registry, no Spark cluster and no second cluster of its own.
    """
    return profile.model_copy(
        update={
            "run_dir": run_dir,
            "broker": profile.broker.model_copy(update={"port": 0}),
            "kafka": profile.kafka.model_copy(update={"bootstrap_servers": bootstrap}),
            "proxy": profile.proxy.model_copy(update={"instances": instances, "first_port": 0, "overrides": overrides}),
            "balancer": profile.balancer.model_copy(update={"port": 0}),
            "schema_registry": profile.schema_registry.model_copy(update={"enabled": False, "port": 0}),
            "spark": profile.spark.model_copy(update={"workers": 0, "master_port": 0, "master_ui_port": 0}),
            "replication": profile.replication.model_copy(update={"enabled": False}),
        }
    )


@contextmanager
def side_stack(
    stack: Stack, *, instances: int = 1, proxy_properties: Mapping[str, Any] | None = None, label: str = "side"
) -> Iterator[Stack]:
    """Proxies of their own beside an embedded stack, on its broker, stopped when the block ends.

    The stack yielded carries the running broker's records too, so its rows say how long
    that broker has run and whether it was warmed (`workbench.stack.warmth`).

    Args:
        stack: the running embedded stack whose broker the proxies use.
        instances: REST proxy processes; more than one puts nginx in front of them.
        proxy_properties: proxy properties for these proxies (`{"producer.linger.ms": 3000}`).
        label: names its run directory, for finding its logs.

    Raises:
        BenchError: the profile is not embedded (`proxy_setup` handles both).

    Usage:
        with side_stack(active, instances=2) as two:
            proxy_produce(two, records_per_call=500)
    """
    profile = stack.profile
    if not profile.embedded:
        raise BenchError(
            f"profile {profile.name!r} is not embedded: the workbench cannot start proxies on a cluster; "
            "use proxy_setup, which takes them from proxy.urls and proxy.variants"
        )
    from workbench import stack as stacks

    run_dir = profile.path(profile.run_dir) / "side" / f"{label}-{uuid.uuid4().hex[:6]}"
    overrides = {**profile.proxy.overrides, **(proxy_properties or {})}  # the proxies get them as KAFKA_REST_*
    copy = side_profile(profile, run_dir, instances=instances, overrides=overrides, bootstrap=stack.bootstrap_servers)
    side = stacks.up(copy)
    brokers = {name: record for name, record in stack.services.items() if record.kind == "broker"}
    try:
        yield Stack(copy, {**brokers, **side.services}, started_here=True)
    finally:
        stacks.down(copy)


def setup_sweep(
    stack: Stack,
    experiment: str,
    setups: Sequence[Mapping[str, Any]],
    *,
    repeat: int = 1,
    fixed: Mapping[str, Any] | None = None,
    label: str = "setup",
) -> tuple[pd.DataFrame, list[str]]:
    """`experiment` against proxies set up each way: a sweep whose points are proxy set-ups.

    A set-up is `{"proxy_instances": 2}` and/or proxy properties with a `proxy.` prefix
    (`{"proxy.producer.linger.ms": 0}`); each point runs against `proxy_setup`'s proxies for
    it, `repeat` times. Rows look like `sweep`'s: the set-up's keys as columns, `point`,
    `repeat`, `params` naming the set-up's keys, and `proxy_setup` saying what provided the
    proxies. Set-ups this profile cannot provide are not measured; the second value says
    which and what the profile would need (`missing_setup`'s lines).

    Raises:
        BenchError: an unknown experiment or parameter, or a set-up key that is neither.

    Usage:
        frame, unmeasured = setup_sweep(active, "proxy_produce", [{"proxy_instances": n} for n in (1, 2, 4)],
                                        fixed={"records": 20_000})
    """
    import pandas as pd

    from workbench.bench.sweep import sweep

    frames, unmeasured = [], []
    for index, setup in enumerate(setups):
        properties, instances = _setup_parts(setup)
        missing = missing_setup(stack, properties, instances=instances)
        if missing is not None:
            unmeasured.append(f"{_describe(setup)}: {missing}")
            continue
        with proxy_setup(stack, properties, instances=instances, label=f"{label}{index}") as proxies:
            frame = sweep(
                experiment, None, repeat=repeat, stack=proxies.stack, fixed=fixed, record=False, progress=False
            )
        frames.append(frame.assign(**dict(setup), point=index, proxy_setup=proxies.via, params=",".join(setup)))
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), unmeasured


def _setup_parts(setup: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    unknown = [k for k in setup if k != INSTANCES and not k.startswith(PROPERTY_PREFIX)]
    if unknown:
        raise BenchError(
            f"set-up keys are {INSTANCES!r} or proxy properties prefixed {PROPERTY_PREFIX!r} "
            f"(proxy.producer.linger.ms); got {unknown}"
        )
    properties = {k[len(PROPERTY_PREFIX) :]: v for k, v in setup.items() if k.startswith(PROPERTY_PREFIX)}
    return properties, int(setup.get(INSTANCES, 1))


def _describe(setup: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in setup.items())
