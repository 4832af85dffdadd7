"""On a profile the workbench did not start, proxy set-ups come from what the profile lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench import load_profile
from workbench.bench import BenchError, missing_setup, proxy_counts, proxy_setup, setup_sweep
from workbench.bench.scale import side_profile
from workbench.config import Profile, conf_dir
from workbench.stack import Stack


def _cluster(**proxy: object) -> Stack:
    profile = Profile.model_validate(
        {
            "name": "theirs",
            "embedded": False,
            "kafka": {"bootstrap.servers": "kafka:9092"},
            "proxy": {"urls": ["http://a", "http://b", "http://c"], **proxy},
            "balancer": {"url": "http://lb"},
        }
    )
    return Stack(profile)


def test_scale_out_measures_one_to_n_of_the_listed_urls() -> None:
    active = _cluster()
    assert proxy_counts(active, [1, 2, 4]) == [1, 2, 3]
    with proxy_setup(active, instances=2) as two:
        assert two.stack.proxy_urls == ["http://a", "http://b"] and two.via == "round-robin"
        assert two.stack.balancer_url is None
    with proxy_setup(active, instances=3) as every:
        assert every.via == "balancer" and every.stack.balancer_url == "http://lb"
    assert "needs 4 proxy URLs" in (missing_setup(active, instances=4) or "")


def test_a_variant_stands_in_for_proxies_started_with_other_settings() -> None:
    active = _cluster(
        variants={
            "mapr-unbuffered": {"urls": ["http://u"], "properties": {"streams.buffer.max.time.ms": 0}},
            "large": {"urls": ["http://l"], "properties": {"producer.message.max.bytes": 10_000_000}},
        }
    )
    with proxy_setup(active, {"producer.linger.ms": 0}) as unbuffered:  # MapR's name matches upstream's
        assert unbuffered.stack.proxy_urls == ["http://u"] and unbuffered.note is None
    with proxy_setup(active, {"producer.message.max.bytes": 8_000_000}) as large:  # a larger limit will do
        assert large.stack.proxy_urls == ["http://l"]
    assert missing_setup(active, {"producer.linger.ms": 3000}) is not None
    refused = pytest.raises(BenchError, match=r"needs a proxy running with `producer\.linger\.ms=3000`")
    with refused, proxy_setup(active, {"producer.linger.ms": 3000}):
        pass
    with proxy_setup(active, {"producer.linger.ms": 3000}, fallback=True) as fallback:
        assert fallback.stack is active and fallback.note and "proxy.variants" in fallback.note


def test_knee_is_the_smallest_size_at_ninety_percent_of_the_best() -> None:
    import pandas as pd

    from workbench.results import knee

    rows = pd.DataFrame({"record_bytes": [100, 100, 1_000, 10_000, 100_000], "mb_s": [10, 12, 50, 95, 100]})
    assert knee(rows, "record_bytes") == (10_000, 100.0)
    assert knee(rows, "record_bytes", share=0.5) == (1_000, 100.0)


def test_setup_sweep_refuses_a_key_that_is_neither_a_count_nor_a_property() -> None:
    with pytest.raises(BenchError, match=r"set-up keys are 'proxy_instances' or proxy properties prefixed 'proxy\.'"):
        setup_sweep(None, "proxy_produce", [{"linger.ms": 0}])  # type: ignore[arg-type]


def test_a_side_stack_takes_free_ports_for_every_service_whatever_the_profile_fixed(tmp_path: Path) -> None:
    # The profile's own stack holds the profile's ports while a side stack runs beside it: a
    # registry port left fixed made notebooks 01, 04 and 05 fail on the default profile.
    profile = load_profile(str(conf_dir() / "local.yaml"))
    overrides = {"producer.linger.ms": 0}
    copy = side_profile(profile, tmp_path / "side", instances=2, overrides=overrides, bootstrap="127.0.0.1:19092")
    ports = {
        f"{section}.{name}": value
        for section, settings in copy.model_dump().items()
        if isinstance(settings, dict)
        for name, value in settings.items()
        if name == "port" or name.endswith("_port")
    }
    assert ports and set(ports.values()) == {0}, ports
    assert copy.proxy.instances == 2 and copy.proxy.overrides == {"producer.linger.ms": 0}
    assert copy.run_dir == tmp_path / "side" and copy.spark.workers == 0 and not copy.schema_registry.enabled


def test_a_side_stack_starts_proxies_and_nginx_on_the_running_broker_and_no_broker(tmp_path: Path) -> None:
    # A broker of its own per point was a cold JVM each time, and seconds of start-up.
    from workbench.stack.lifecycle import services_for

    profile = load_profile(str(conf_dir() / "local-geo.yaml"))
    copy = side_profile(profile, tmp_path / "side", instances=2, overrides={}, bootstrap="127.0.0.1:19092")
    assert copy.kafka.bootstrap_servers == "127.0.0.1:19092" and not copy.replication.enabled
    kinds = [service.kind for service in services_for(copy)]
    assert kinds.count("proxy") == 2 and set(kinds) <= {"proxy", "balancer"}, kinds
