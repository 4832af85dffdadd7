"""The workbench's exceptions: one root, so a notebook or script can catch them all.

    WorkbenchError
    ├── ConfigError             a profile or properties file is missing, malformed or wrong-typed
    │   └── KafkaOptionError    a Spark Kafka source option is wrong (streaming.options)
    ├── StackError              an embedded service did not start, stop or answer
    │   └── ResolutionError     the jars could not be resolved; the message names the ways out (maven)
    ├── KafkaError              a Kafka admin or client call failed (wraps librdkafka's error)
    │   ├── PartitionGrowthRefused  the cluster did not add partitions (topics.errors)
    │   ├── TopicConfigRefused  the cluster refused a topic's log settings (retention.errors)
    │   ├── ReaderOutOfRange    a reader's offset left the log with auto.offset.reset=none (retention.reading)
    │   ├── KafkaProtocolError  a broker spoken to by hand did not answer, or not readably (kafka.wire)
    │   ├── SaslError           a SASL exchange got an answer its mechanism does not expect (kafka.sasl)
    │   ├── UnsupportedSecurity the settings ask for security the hand-written client lacks (kafka.security)
    │   ├── ShareGroupsUnsupported  the cluster has no share groups (kafka.share_admin)
    │   └── ShareGroupNotFound  no share group of that id (kafka.share_admin)
    ├── ProxyError              a REST proxy answered with an error body (status, error_code)
    ├── ProxyUnavailableError   no REST proxy URL answered (proxy.errors)
    ├── InstanceNotOpen         a proxy consumer instance used outside its `with` block (proxy.errors)
    ├── RestError               inside the embedded proxy and registry: a Confluent error body (httpserver.errors)
    │   └── RegistryError       a registry error whose HTTP status follows from its code (registry.errors)
    ├── Unrenderable            in the proxy: a record its consumer's format cannot show (restproxy.consumer_records)
    ├── BenchError              an experiment was given a bad name, parameter or grid
    │   └── DeliveryError       records an experiment sent did not all get through; names the cause (measure.failures)
    ├── TopicDesignError        a topic layout or sizing input is impossible (topics.errors)
    ├── RetentionError          a log setting that is not Kafka's, or a retention input out of range (retention.errors)
    ├── AnswerError             a course answer is not of the form its exercise asks (course)
    ├── NotMeasured             the run did not measure what a course exercise needs (course)
    └── NotebookRunError        a notebook failed under papermill; its executed copy is kept

The tree is checked: `tests/unit/test_maps.py` fails when a subclass is missing from it or
sits under another parent.

Messages say what happened, the offending value and the way out, in one line, so the
CLI can print them as they are.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BenchError",
    "ConfigError",
    "KafkaError",
    "NotebookRunError",
    "ProxyError",
    "StackError",
    "WorkbenchError",
]


class WorkbenchError(Exception):
    """Root of every error the workbench raises on purpose."""


class ConfigError(WorkbenchError):
    """A configuration file or value is wrong; names the file and the key."""

    def __init__(self, file: str | Path | None, key: str | None, message: str) -> None:
        self.file = str(file) if file is not None else None
        self.key = key
        self.message = message
        where = ": ".join(part for part in (self.file, key) if part)
        super().__init__(f"{where}: {message}" if where else message)


class StackError(WorkbenchError):
    """An embedded service could not be started, reached or stopped."""


class KafkaError(WorkbenchError):
    """A Kafka call failed; `code` is librdkafka's error name when there is one."""

    def __init__(self, message: str, code: str | None = None) -> None:
        self.code = code
        super().__init__(message)


class ProxyError(WorkbenchError):
    """A REST proxy answered with an error: HTTP `status` and Confluent `error_code`."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        self.status = status
        self.error_code = error_code
        self.message = message
        super().__init__(f"HTTP {status}, error_code {error_code}: {message}")


class BenchError(WorkbenchError):
    """An experiment, parameter or grid was wrong; the message names it and the way out.

    Here rather than in `bench`: the topic and Spark experiments raise it too, and they
    sit below the benchmark toolkit, which registers them.
    """


class NotebookRunError(WorkbenchError):
    """A notebook failed under papermill; `output_path` holds the executed copy."""

    def __init__(self, notebook: str, ename: str, evalue: str, output_path: str | Path) -> None:
        self.notebook = notebook
        self.ename = ename
        self.evalue = evalue
        self.output_path = str(output_path)
        super().__init__(f"{notebook} failed with {ename}: {evalue} (executed copy: {self.output_path})")
