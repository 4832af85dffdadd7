"""The Java the stack's JVMs run on: Spark's driver and daemons, and the Kafka broker.

Both need Java 17 or newer, and both find it the same way (`JAVA_HOME`, else `java` on
PATH), so a missing or unsupported Java is one line naming the fix before any JVM starts,
never a dead daemon with the reason in its log.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Collection
from pathlib import Path

from workbench.errors import StackError

__all__ = ["INSTALL_HINT", "SPARK_JAVA", "java_cause", "java_executable", "java_version"]

#: Java versions Spark 4 runs on.
SPARK_JAVA = (17, 21)

#: How to get a Java the stack can use.
INSTALL_HINT = "install Java 17 (Debian: apt-get install openjdk-17-jre-headless) or point JAVA_HOME at one"


def java_executable() -> str | None:
    """`$JAVA_HOME/bin/java`, else `java` on PATH; None when neither exists."""
    from workbench.config import environment

    home = environment().java_home
    java = str(home / "bin" / "java") if home else shutil.which("java")
    return java if java and Path(java).exists() else None


def java_version(needed_by: str = "Spark 4", supported: Collection[int] = SPARK_JAVA) -> tuple[int, str]:
    """The major version of the Java the stack will start, and its path.

    Args:
        needed_by: what needs it, for the message (`"Spark 4"`, `"Apache Kafka 4"`).
        supported: the major versions it runs on; empty means any from 17 on.

    Raises:
        StackError: no Java found, or a version `needed_by` does not run on.
    """
    from workbench.config import environment

    wanted = " or ".join(map(str, supported)) if supported else "17 or newer"
    java = java_executable()
    if java is None:
        home = environment().java_home
        raise StackError(
            f"{needed_by} needs Java {wanted} and none was found "
            f"(JAVA_HOME={str(home) if home else None!r}, no java on PATH); {INSTALL_HINT}"
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise StackError(f"cannot run {java} -version: {exc}; {INSTALL_HINT}") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise StackError(f"cannot tell the Java version of {java} from: {out.stderr.strip()[:200]!r}; {INSTALL_HINT}")
    major = int(match.group(1))
    major = int(match.group(2)) if major == 1 and match.group(2) else major  # "1.8" is Java 8
    if (supported and major not in supported) or major < 17:
        raise StackError(f"{java} is Java {major}; {needed_by} runs on Java {wanted}; {INSTALL_HINT}")
    return major, java


def java_cause(output: str) -> str:
    """The line of a JVM's output that says why it failed: the last exception message (the
    root cause of a chain), without the stack around it; else its last ERROR line, else its
    last line. A stack trace's own last line ("... 8 more") says nothing a user can act on."""
    causes = re.findall(r"^(?:Caused by: |\S*(?:Exception|Error): )(.+)$", output, flags=re.MULTILINE)
    if causes:
        return str(causes[-1]).strip()[:300]
    errors = [line for line in output.splitlines() if " ERROR " in line]
    lines = errors or [line for line in output.splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else "no output"
