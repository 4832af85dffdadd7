"""The workbench: measure Kafka, REST proxy and Spark ingestion choices on your own stack.

Import what you need from the subpackages; heavy dependencies (pyspark, plotly) are
imported only by the modules that use them, so `import workbench` stays instant.

    from workbench.config import load_profile
    from workbench.stack import running
    from workbench import kafka
"""

from importlib.metadata import PackageNotFoundError, version

from workbench.config import Profile, load_profile
from workbench.errors import (
    ConfigError,
    KafkaError,
    NotebookRunError,
    ProxyError,
    StackError,
    WorkbenchError,
)
from workbench.notebook import notebook_setup

try:
    __version__ = version("workbench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

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
