"""One Apache Kafka node with secured listeners beside a PLAINTEXT one, for the tests of
the workbench's own protocol client on TLS and SASL (`workbench.kafka.security`).

Listeners: PLAINTEXT (the brokers' own, and the tests' set-up), SASL_PLAINTEXT (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with unsecured tokens), SASL_SSL (SCRAM-SHA-256)
and SSL, the TLS ones with a self-signed certificate for `localhost` and 127.0.0.1 made by
the JDK's keytool. SCRAM users are written into the storage when it is formatted. The node
runs from the same jars as the embedded stack's, and is stopped by its PID.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import AdminClient

from workbench.config import load_profile
from workbench.java import java_version
from workbench.stack import process
from workbench.stack.kafka import kafka_classpath

USER, PASSWORD = "alice", "alice-secret"
_STORE_PASSWORD = "broker-store"
_SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@dataclass(frozen=True)
class SecuredBroker:
    plaintext: str
    sasl_plaintext: str
    sasl_ssl: str
    ssl: str
    #: The broker's self-signed certificate, to trust as a CA.
    ca: Path


@contextmanager
def secured_broker(workdir: Path) -> Iterator[SecuredBroker]:
    """Start the node in `workdir`, yield its addresses once it answers, stop it at the end."""
    java = java_version("Apache Kafka 4", ())[1]
    classpath, _ = kafka_classpath(load_profile("local"))
    ports = [process.free_port("127.0.0.1") for _ in range(5)]
    plain, sasl, sasl_ssl, tls, controller = ports
    workdir.mkdir(parents=True, exist_ok=True)
    store, ca = _certificate(java, workdir)
    config = workdir / "server.properties"
    config.write_text(_properties(workdir, store, plain, sasl, sasl_ssl, tls, controller))
    scram = [f"{m}=[name={USER},password={PASSWORD}]" for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")]
    formatted = subprocess.run(
        [java, "-cp", ":".join(classpath), "kafka.tools.StorageTool", "format", "-t", "c2VjdXJlZC1icm9rZXIx",
         "-c", str(config), "--add-scram", scram[0], "--add-scram", scram[1]],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    log = (workdir / "broker.log").open("wb")
    node = subprocess.Popen(
        [java, "-Xmx512m", "-cp", ":".join(classpath), "kafka.Kafka", str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        _wait_ready(f"127.0.0.1:{plain}", node, workdir / "broker.log")
        yield SecuredBroker(f"127.0.0.1:{plain}", f"127.0.0.1:{sasl}", f"localhost:{sasl_ssl}", f"localhost:{tls}", ca)
    finally:
        node.terminate()
        try:
            node.wait(30)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait(10)
        log.close()


def _certificate(java: str, workdir: Path) -> tuple[Path, Path]:
    keytool = str(Path(java).parent / "keytool")
    store, ca = workdir / "broker.p12", workdir / "ca.pem"
    common = ["-keystore", str(store), "-storetype", "PKCS12", "-storepass", _STORE_PASSWORD]
    for argv in (
        ["-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
         "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-ext", "BC:c=ca:true",
         "-ext", "KU=digitalSignature,keyEncipherment,keyCertSign", "-keypass", _STORE_PASSWORD],
        ["-exportcert", "-rfc", "-alias", "broker", "-file", str(ca)],
    ):  # fmt: skip
        done = subprocess.run([keytool, *argv, *common], capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    return store, ca


def _properties(workdir: Path, store: Path, plain: int, sasl: int, sasl_ssl: int, tls: int, controller: int) -> str:
    listeners = (
        f"PLAINTEXT://127.0.0.1:{plain},SASL_PLAINTEXT://127.0.0.1:{sasl},SASL_SSL://localhost:{sasl_ssl},"
        f"SSL://localhost:{tls}"
    )
    values = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller}",
        "listeners": f"{listeners},CONTROLLER://127.0.0.1:{controller}",
        "advertised.listeners": listeners,
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": (
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL"
        ),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";'
        ),
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": _SCRAM_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": _SCRAM_JAAS,
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredLoginStringClaim_sub="admin";'
        ),
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": _SCRAM_JAAS,
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(store),
        "ssl.keystore.password": _STORE_PASSWORD,
        "ssl.key.password": _STORE_PASSWORD,
        "log.dirs": str(workdir / "data"),
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "group.share.min.record.lock.duration.ms": "1000",
    }
    return "".join(f"{key}={value}\n" for key, value in values.items())


def _wait_ready(bootstrap: str, node: subprocess.Popen[bytes], log: Path, timeout_s: float = 90.0) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if node.poll() is not None:
            raise AssertionError(f"the secured broker exited with {node.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if admin.list_topics(timeout=2).brokers:
                return
        except Exception:  # not up yet
            time.sleep(0.5)
    raise AssertionError(f"the secured broker did not answer within {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")
