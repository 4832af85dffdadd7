"""Java artifacts from Maven Central, resolved once into a cache and used offline after.

The embedded Kafka broker (and Spark's Kafka connector) are jars on Maven Central. A
Python user already has what it takes to fetch them: Java, which PySpark needs, and the
Apache Ivy inside PySpark (`pyspark/jars/ivy-*.jar`), the resolver Spark itself uses
for `spark.jars.packages`. Ivy checks each download against the checksum Maven Central
publishes beside it; once a set of jars is resolved, a manifest records each file's
size and SHA-256, and every later use checks the files against it without the network.
A damaged file (a truncated copy, a disk error) is retrieved again from Ivy's cache or
reported in one line.

The cache is `$WORKBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/workbench`, else
`~/.cache/workbench`: outside the work tree, shared by every clone of the project.
`WORKBENCH_MAVEN_REPOSITORY` names a mirror (an Artifactory or Nexus behind a firewall)
instead of Maven Central.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from workbench.config import environment
from workbench.errors import StackError

__all__ = [
    "Artifact",
    "RESOLVE_TIMEOUT_S",
    "ResolutionError",
    "cache_dir",
    "ivy_jar",
    "repository",
    "resolve",
]

#: Seconds a resolution may take: the first one downloads tens of MB.
RESOLVE_TIMEOUT_S = 900.0

_MANIFEST = "manifest.json"
_ALONE = ' transitive="false"'


class ResolutionError(StackError):
    """The jars could not be resolved, with the ways to provide them in the message."""


@dataclass(frozen=True)
class Artifact:
    """One Maven module, `group:name:version`.

    `transitive=False` takes the module's own jar only: for a plug-in whose dependencies
    the host application (Spark's `jars/`) already ships, in the versions it was built with.
    """

    group: str
    name: str
    version: str
    transitive: bool = True

    def __post_init__(self) -> None:
        for part in (self.group, self.name, self.version):
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}", part):
                raise ValueError(f"not a Maven coordinate part: {part[:80]!r}")

    def __str__(self) -> str:
        return f"{self.group}:{self.name}:{self.version}"


def cache_dir() -> Path:
    """Where resolved jars live: `$WORKBENCH_CACHE_DIR`, `$XDG_CACHE_HOME/workbench`, `~/.cache/workbench`."""
    return environment().cache_dir or Path.home() / ".cache" / "workbench"


def repository() -> str | None:
    """The mirror to resolve from (`$WORKBENCH_MAVEN_REPOSITORY`), or None for Ivy's default
    resolver, which is Maven Central: the code names no registry's host of its own."""
    url = environment().maven_repository
    if url is None:
        return None
    return url if url.endswith("/") else url + "/"


def _source() -> str:
    """Where jars come from, in words: the mirror's URL or Maven Central."""
    return repository() or "Maven Central"


def ivy_jar() -> Path:
    """The Apache Ivy jar PySpark ships (`pyspark/jars/ivy-*.jar`)."""
    try:
        import pyspark
    except ImportError:
        raise ResolutionError("PySpark is not installed, and its Ivy resolves the jars; run `make setup`") from None
    found = sorted(Path(pyspark.__file__).parent.joinpath("jars").glob("ivy-*.jar"))
    if not found:
        raise ResolutionError(f"no ivy-*.jar in {Path(pyspark.__file__).parent / 'jars'}; reinstall PySpark")
    return found[-1]


def resolve(name: str, artifacts: Sequence[Artifact], *, how_else: str = "") -> list[Path]:
    """The jars of `artifacts` and everything they need at run time, resolved once.

    Args:
        name: the set's folder in the cache (`kafka-4.4.0`); one set per name.
        artifacts: the modules to resolve, with their runtime dependencies.
        how_else: a further way to provide them, named in the error (`set KAFKA_HOME`).

    Returns:
        The jar paths, sorted: a classpath.

    Raises:
        ResolutionError: not in the cache and not resolvable, in one line naming the
            coordinates, the cause and the ways to provide them.
    """
    target = cache_dir() / "jars" / name
    jars = _verified(target)
    if jars is not None:
        return jars
    _retrieve(target, artifacts, how_else)
    jars = _verified(target)
    if jars is None:  # Ivy's own cached copy is damaged: fetch the files again
        shutil.rmtree(cache_dir() / "ivy", ignore_errors=True)
        _retrieve(target, artifacts, how_else)
        jars = _verified(target)
    if jars is None:
        raise ResolutionError(f"the jars of {name} in {target} do not match what was downloaded; delete {target}")
    return jars


def _verified(target: Path) -> list[Path] | None:
    """The set's jars if every file the manifest lists is there with its size and SHA-256."""
    try:
        manifest = json.loads((target / _MANIFEST).read_text())
        files = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    jars = []
    for file_name, facts in sorted(files.items()):
        path = target / file_name
        try:
            if path.stat().st_size != facts["size"] or _sha256(path) != facts["sha256"]:
                return None
        except (OSError, KeyError, TypeError):
            return None
        jars.append(path)
    return jars or None


def _retrieve(target: Path, artifacts: Sequence[Artifact], how_else: str) -> None:
    """Run Ivy into a fresh folder, then swap it in with its manifest."""
    from workbench.java import java_version

    _, java = java_version("Resolving jars with Ivy", ())
    root = cache_dir()
    root.joinpath("jars").mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root / "jars"))
    try:
        (staging / "ivy.xml").write_text(_ivy_module(artifacts))
        (staging / "ivysettings.xml").write_text(_ivy_settings(repository()))
        argv = [
            java, "-jar", str(ivy_jar()),
            "-settings", str(staging / "ivysettings.xml"),
            "-cache", str(root / "ivy"),
            "-ivy", str(staging / "ivy.xml"),
            "-confs", "default",
            "-retrieve", str(staging / "lib" / "[artifact]-[revision](-[classifier]).[ext]"),
        ]  # fmt: skip
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            cause = f"Ivy did not finish within {RESOLVE_TIMEOUT_S:.0f} s"
            raise ResolutionError(_failure(artifacts, cause, how_else)) from None
        log = done.stdout + done.stderr
        (root / "jars" / f"{target.name}.ivy.log").write_text(log)
        jars = sorted((staging / "lib").glob("*.jar"))
        if done.returncode != 0 or not jars:
            raise ResolutionError(_failure(artifacts, _cause(log), how_else))
        files = {path.name: {"size": path.stat().st_size, "sha256": _sha256(path)} for path in jars}
        manifest = {"artifacts": [str(a) for a in artifacts], "repository": _source(), "files": files}
        for path in jars:
            path.rename(staging / path.name)
        (staging / _MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
        for leftover in ("ivy.xml", "ivysettings.xml"):
            (staging / leftover).unlink()
        (staging / "lib").rmdir()
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _failure(artifacts: Sequence[Artifact], cause: str, how_else: str) -> str:
    """The one line a failed resolution ends in."""
    ways = [
        "let this machine reach Maven Central",
        "set WORKBENCH_MAVEN_REPOSITORY to a Maven mirror it reaches",
    ]
    if how_else:
        ways.append(how_else)
    return (
        f"cannot resolve {', '.join(map(str, artifacts))} from {_source()}: {cause}; "
        f"provide them one of {len(ways)} ways: {'; '.join(ways)}"
    )


def _cause(log: str) -> str:
    """The first reason Ivy gives: a server error, an unresolved module, else its last line."""
    for pattern in (
        r"Server access error at url \S+ \(([^)]*)\)",
        r"::\s+(\S+;\S+: not found)",
        r"(unresolved dependency: .*)",
    ):
        match = re.search(pattern, log)
        if match:
            return match.group(1).strip()
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "Ivy printed nothing"


def _ivy_module(artifacts: Sequence[Artifact]) -> str:
    """An Ivy module that depends on `artifacts`, each with its runtime closure (`default->default`) or alone."""
    deps = "\n".join(
        f"    <dependency org={quoteattr(a.group)} name={quoteattr(a.name)} rev={quoteattr(a.version)} "
        f'conf="default->default"{_ALONE if not a.transitive else ""}/>'
        for a in artifacts
    )
    return (
        '<ivy-module version="2.0">\n  <info organisation="workbench" module="jars"/>\n'
        f'  <configurations><conf name="default"/></configurations>\n  <dependencies>\n{deps}\n  </dependencies>\n'
        "</ivy-module>\n"
    )


def _ivy_settings(url: str | None) -> str:
    """One Maven-layout resolver (at `url`, else Ivy's default root, Maven Central); Ivy
    verifies SHA-1 and MD5 checksums of what it downloads."""
    root = f" root={quoteattr(url)}" if url else ""
    return (
        '<ivysettings>\n  <property name="ivy.checksums" value="sha1,md5"/>\n'
        '  <settings defaultResolver="maven"/>\n  <resolvers>\n'
        f'    <ibiblio name="maven" m2compatible="true"{root}/>\n'
        "  </resolvers>\n</ivysettings>\n"
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
