"""The workbench: measure Kafka, REST proxy and Spark ingestion choices on your own stack.

Import what you need from the subpackages; heavy dependencies (pyspark, plotly) are
imported only by the modules that use them, so `import workbench` stays instant.

    from workbench.config import load_profile
    from workbench.stack import running
    from workbench import kafka
"""

from typing import TYPE_CHECKING, Any

from workbench.errors import (
    ConfigError,
    KafkaError,
    NotebookRunError,
    ProxyError,
    StackError,
    WorkbenchError,
)

if TYPE_CHECKING:
    from workbench.config import Profile, load_profile
    from workbench.notebook import notebook_setup

    __version__: str


def __getattr__(name: str) -> Any:
    """`Profile`, `load_profile`, `notebook_setup` and `__version__`, found when first asked
    for: the profile's models (pydantic) cost 0.1-0.2 s of CPU and reading the installed
    version 20 ms, and Spark's Python workers import this package for the Kafka source,
    which needs none of them."""
    if name in ("Profile", "load_profile"):
        from workbench import config

        return getattr(config, name)
    if name == "notebook_setup":
        from workbench.notebook import notebook_setup

        return notebook_setup
    if name == "__version__":
        from workbench._version import workbench_version

        return workbench_version()
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


__all__ = [
    "ConfigError",
    "KafkaError",
    "NotebookRunError",
    "Profile",
    "ProxyError",
    "StackError",
    "WorkbenchError",
    "__version__",
    "load_profile",
    "notebook_setup",
]
