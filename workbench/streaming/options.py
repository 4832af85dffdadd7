"""The Kafka source's options, parsed and checked the way Spark's own `kafka` source does.

The option names, defaults and error messages follow `KafkaSourceProvider` in
`spark-sql-kafka-0-10`, so a notebook written against this source runs unchanged with
`format("kafka")` on a cluster that has the connector. Keys are case-insensitive (Spark
hands a Python data source its options lower-cased). Parsing is pure: no Kafka client is
touched, so every mistake is reported when the DataFrame is defined, not at the first
trigger.

`kafka.*` options are librdkafka settings here; the Java-only names a Spark user
brings along are translated (`fetch.max.wait.ms` → `fetch.wait.max.ms`) or refused with
the librdkafka way to say the same thing.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.errors import ConfigError
from workbench.kafka import java_names
from workbench.secrets import ClientConf

__all__ = [
    "EARLIEST",
    "KafkaOptionError",
    "LATEST",
    "PartitionOffsets",
    "SourceOptions",
    "Strategy",
    "TimestampOffsets",
    "option_text",
    "parse_options",
]

log = logging.getLogger("workbench.streaming")

#: Per-partition offsets in `startingOffsets` / `endingOffsets` JSON: Kafka's own sentinels.
EARLIEST = -2
LATEST = -1

_STRATEGIES = ("subscribe", "subscribepattern", "assign")
_STRATEGY_NAMES = "subscribe, subscribePattern, assign"
_OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
_ASSIGN_EXAMPLE = '{"topicA":[0,1],"topicB":[0,1]}'

#: Dropped besides the Java-only client settings: the source assigns partitions itself.
_SOURCE_DROPPED = {"partition.assignment.strategy"}
#: Refused exactly as the official source refuses them.
_REFUSED = {
    "auto.offset.reset": (
        "Kafka option 'auto.offset.reset' is not supported. Instead set the source option "
        "'startingOffsets' to 'earliest' or 'latest' to specify where to start. Structured Streaming "
        "manages which offsets are consumed internally; 'startingOffsets' only applies when a new "
        "query is started, and resuming always picks up from where the query left off."
    ),
    "key.deserializer": (
        "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte arrays. "
        "Use DataFrame operations to explicitly deserialize the keys."
    ),
    "value.deserializer": (
        "Kafka option 'value.deserializer' is not supported as values are deserialized as byte arrays. "
        "Use DataFrame operations to explicitly deserialize the values."
    ),
    "enable.auto.commit": "Kafka option 'enable.auto.commit' is not supported",
    "interceptor.classes": "Kafka option 'interceptor.classes' is not supported",
    "ssl.truststore.location": (
        "Kafka option 'ssl.truststore.location' (a JKS truststore) is not supported by librdkafka; "
        "give the CA certificate as PEM with 'kafka.ssl.ca.location'"
    ),
    "ssl.keystore.location": (
        "Kafka option 'ssl.keystore.location' (a JKS keystore) is not supported by librdkafka; "
        "use 'kafka.ssl.certificate.location' and 'kafka.ssl.key.location' (PEM)"
    ),
}
_JAAS = re.compile(r'(username|password)\s*=\s*"([^"]*)"')


class KafkaOptionError(ConfigError, ValueError):
    """A Kafka source option is missing, conflicting or malformed; `key` names the option.

    It is a `ValueError` too, the Python counterpart of the `IllegalArgumentException`
    Spark's own source raises for the same mistakes.
    """

    def __init__(self, option: str | None, message: str) -> None:
        super().__init__(None, option, message)


#: `{topic: {partition: offset}}` with EARLIEST/LATEST sentinels allowed.
PartitionOffsets = dict[tuple[str, int], int]
Strategy = tuple[Literal["subscribe", "subscribepattern", "assign"], Any]


@dataclass(frozen=True)
class TimestampOffsets:
    """Offsets to be found by record timestamp, as `startingTimestamp` and kin ask.

    `timestamps` is one timestamp (ms) for every partition (`startingTimestamp`) or one per
    partition (`startingOffsetsByTimestamp` JSON). A partition holding no record at or after
    its timestamp starts at its end when `no_match` is "latest" (always so for ending
    offsets) and fails the query when it is "error", Spark's default.
    """

    option: str
    timestamps: int | PartitionOffsets
    no_match: Literal["error", "latest"]


@dataclass(frozen=True)
class SourceOptions:
    """Everything the source needs, parsed once; pickled to executors with the reader.

    `starting` / `ending` are "earliest", "latest", a `{(topic, partition): offset}`
    dict in which -2 means earliest and -1 latest, or offsets to find by timestamp.
    """

    strategy: Strategy
    kafka: ClientConf  # librdkafka settings; printing masks sasl.password and the like
    starting: str | PartitionOffsets | TimestampOffsets
    ending: str | PartitionOffsets | TimestampOffsets
    streaming: bool
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60 * 1000
    min_partitions: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    group_id: str = field(default_factory=lambda: f"spark-kafka-source-{uuid.uuid4().hex}")
    poll_timeout_ms: int = 120_000
    offset_fetch_retries: int = 3
    offset_retry_interval_ms: int = 1000
    #: `readEndsFromLog`, the workbench's own option: the cluster reports log ends short (Tansu),
    #: so they are read from the logs (`kafka.offsets`). `source_options` sets it for such a stack.
    read_ends_from_log: bool = False

    @property
    def topic_description(self) -> str:
        """How the topics were chosen, for messages: `subscribe=a,b`."""
        kind, value = self.strategy
        shown = {"subscribepattern": "subscribePattern"}.get(kind, kind)
        return f"{shown}={value if kind != 'assign' else json.dumps(value)}"


def parse_options(options: Mapping[str, Any], *, streaming: bool | None) -> SourceOptions:
    """Check and parse source options exactly as `format("kafka")` would.

    Args:
        options: the reader's options (any key case; values as strings or plain values).
        streaming: True for `readStream` (endingOffsets refused, default start latest),
            False for `read` (start latest refused, default start earliest), None when
            not known yet (the checks common to both only).

    Returns:
        The parsed options.

    Raises:
        KafkaOptionError: no or several of subscribe/subscribePattern/assign, an empty
            topic list, malformed offsets JSON, a refused `kafka.*` key, a non-positive
            number; the message is the official source's where it has one.

    Usage: `parse_options({"kafka.bootstrap.servers": "h:9092", "subscribe": "t"}, streaming=True)`.
    """
    params = {str(k).lower(): option_text(v) for k, v in options.items()}
    if streaming is True:
        if "endingoffsets" in params:
            raise KafkaOptionError("endingOffsets", "ending offset not valid in streaming queries")
        if "endingoffsetsbytimestamp" in params or "endingtimestamp" in params:
            raise KafkaOptionError("endingTimestamp", "ending timestamp not valid in streaming queries")
    strategy = _strategy(params)
    kafka = _kafka_settings(params)

    given_start = _offsets_option(params, "startingoffsets", "latest" if streaming else "earliest")
    given_end = _offsets_option(params, "endingoffsets", "latest")
    if streaming is False:
        _check_batch_offsets(given_start, given_end)
    no_match = params.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if no_match not in ("error", "latest"):
        raise KafkaOptionError(
            "startingOffsetsByTimestampStrategy",
            f"Invalid value '{no_match}' for option 'startingOffsetsByTimestampStrategy', must be error or latest",
        )
    starting = _timestamps_option(params, "starting", no_match) or given_start
    ending = _timestamps_option(params, "ending", "latest") or given_end

    max_offsets = _positive(params, "maxoffsetspertrigger")
    min_offsets = _positive(params, "minoffsetspertrigger")
    if max_offsets is not None and min_offsets is not None and min_offsets > max_offsets:
        raise KafkaOptionError(
            "minOffsetsPerTrigger",
            f"The value of minOffsetPerTrigger({min_offsets}) is higher than the maxOffsetsPerTrigger({max_offsets}).",
        )
    if streaming is False:
        for name in ("maxoffsetspertrigger", "minoffsetspertrigger", "maxtriggerdelay"):
            if name in params:
                log.warning("%s option ignored in batch queries", name)

    prefix = params.get("groupidprefix", "spark-kafka-source" if streaming else "spark-kafka-relation")
    group_id = f"{prefix}-{uuid.uuid4().hex}"
    if "group.id" in kafka:
        log.warning(
            "Kafka option 'kafka.group.id' has been set on this query; concurrent or restarted queries "
            "with the same group id interfere with each other"
        )
        group_id = str(kafka.pop("group.id"))

    return SourceOptions(
        strategy=strategy,
        kafka=kafka,
        starting=starting,
        ending=ending,
        streaming=bool(streaming),
        max_offsets_per_trigger=max_offsets,
        min_offsets_per_trigger=min_offsets,
        max_trigger_delay_ms=_duration_ms(params.get("maxtriggerdelay", "15m")),
        min_partitions=_positive(params, "minpartitions"),
        fail_on_data_loss=_boolean(params, "failondataloss", True),
        include_headers=_boolean(params, "includeheaders", False),
        group_id=group_id,
        poll_timeout_ms=_positive(params, "kafkaconsumer.polltimeoutms") or 120_000,
        offset_fetch_retries=_non_negative(params, "fetchoffset.numretries", 3),
        offset_retry_interval_ms=_non_negative(params, "fetchoffset.retryintervalms", 1000),
        read_ends_from_log=_boolean(params, "readendsfromlog", False),
    )


def option_text(value: Any) -> str:
    """An option as the text Spark wants: booleans as true/false, mappings (`assign`,
    `startingOffsets`) as JSON, the rest as `str`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return json.dumps(value)
    return str(value)


def _strategy(params: Mapping[str, str]) -> Strategy:
    given = [k for k in _STRATEGIES if k in params]
    if not given:
        raise KafkaOptionError(
            None,
            f"One of the following options must be specified for Kafka source: {_STRATEGY_NAMES}. "
            "See the docs for more details.",
        )
    if len(given) > 1:
        raise KafkaOptionError(
            None,
            f"Only one of the following options can be specified for Kafka source: {_STRATEGY_NAMES}. "
            f"Given: {', '.join(given)}. See the docs for more details.",
        )
    kind, value = given[0], params[given[0]]
    if kind == "subscribe":
        topics = [t.strip() for t in value.split(",") if t.strip()]
        if not topics:
            raise KafkaOptionError(
                "subscribe", f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'"
            )
        return ("subscribe", tuple(topics))
    if kind == "subscribepattern":
        pattern = value.strip()
        if not pattern:
            raise KafkaOptionError(
                "subscribePattern",
                f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'",
            )
        try:
            re.compile(pattern)
        except re.error as exc:
            raise KafkaOptionError("subscribePattern", f"not a valid regular expression: {pattern!r} ({exc})") from None
        return ("subscribepattern", pattern)
    if not value.strip().startswith("{"):
        raise KafkaOptionError(
            "assign", f"No topicpartitions to assign as specified value for option 'assign' is '{value}'"
        )
    return ("assign", _assign_json(value))


def _assign_json(value: str) -> dict[str, list[int]]:
    try:
        data = json.loads(value)
        if not isinstance(data, dict) or not data:
            raise ValueError
        result = {}
        for topic, partitions in data.items():
            if not isinstance(partitions, list) or not all(isinstance(p, int) and p >= 0 for p in partitions):
                raise ValueError
            result[str(topic)] = sorted(set(partitions))
        return result
    except ValueError:
        raise KafkaOptionError("assign", f"Expected e.g. {_ASSIGN_EXAMPLE}, got {value}") from None


def _per_partition(value: str, lowest: int) -> PartitionOffsets:
    """`{"topic": {"partition": n}}` JSON as `{(topic, partition): n}`, each `n` a whole number ≥ `lowest`.

    Raises:
        ValueError: any other shape (an empty object, a topic without partitions, a number
            that is not a whole number or is too low); the caller names its option.
    """
    data = json.loads(value)
    if not isinstance(data, dict) or not data:
        raise ValueError
    found: PartitionOffsets = {}
    for topic, partitions in data.items():
        if not isinstance(partitions, dict) or not partitions:
            raise ValueError
        for partition, number in partitions.items():
            if not isinstance(number, int) or isinstance(number, bool) or number < lowest:
                raise ValueError
            found[(str(topic), int(partition))] = number
    return found


def _offsets_option(params: Mapping[str, str], name: str, default: str) -> str | PartitionOffsets:
    value = params.get(name, default).strip()
    shown = {"startingoffsets": "startingOffsets", "endingoffsets": "endingOffsets"}[name]
    if value.lower() in ("earliest", "latest"):
        return value.lower()
    try:
        return _per_partition(value, EARLIEST)
    except ValueError:
        raise KafkaOptionError(
            shown, f"Expected 'earliest', 'latest' or e.g. {_OFFSETS_EXAMPLE}, got {value}"
        ) from None


def _timestamps_option(
    params: Mapping[str, str], side: Literal["starting", "ending"], no_match: str
) -> TimestampOffsets | None:
    """`<side>Timestamp` (one for all partitions), else `<side>OffsetsByTimestamp` (JSON), else None.

    The same precedence as Spark's: the global timestamp wins over the per-partition one,
    which wins over `<side>Offsets`.
    """
    name, value = f"{side}Timestamp", params.get(f"{side}timestamp")
    if value is not None:
        if not value.strip().isdigit():
            raise KafkaOptionError(name, f"Invalid value '{value}' for option '{name}', must be a timestamp in ms")
        return TimestampOffsets(name, int(value), "error" if no_match == "error" else "latest")
    name, value = f"{side}OffsetsByTimestamp", params.get(f"{side}offsetsbytimestamp")
    if value is None:
        return None
    example = '{"topicA":{"0":1700000000000,"1":1700000000000}}'
    try:
        found = _per_partition(value, 0)
    except ValueError:
        raise KafkaOptionError(name, f"Expected e.g. {example}, got {value}") from None
    return TimestampOffsets(name, found, "error" if no_match == "error" else "latest")


def _check_batch_offsets(starting: str | PartitionOffsets, ending: str | PartitionOffsets) -> None:
    if starting == "latest":
        raise KafkaOptionError("startingOffsets", "starting offset can't be latest for batch queries on Kafka")
    if ending == "earliest":
        raise KafkaOptionError("endingOffsets", "ending offset can't be earliest for batch queries on Kafka")
    _refuse_offset(
        "startingOffsets", starting, LATEST, "startingOffsets for {} can't be latest for batch queries on Kafka"
    )
    _refuse_offset(
        "endingOffsets", ending, EARLIEST, "ending offset for {} can't be earliest for batch queries on Kafka"
    )
    if isinstance(starting, dict) and isinstance(ending, dict):
        if set(starting) != set(ending):
            raise KafkaOptionError(
                "endingOffsets",
                "startingOffsets and endingOffsets must name the same "
                f"partitions: {sorted(starting)} vs {sorted(ending)}",
            )
        for tp, start in starting.items():
            if start >= 0 and ending[tp] >= 0 and start > ending[tp]:
                raise KafkaOptionError(
                    "endingOffsets", f"starting offset {start} is after ending offset {ending[tp]} for {tp[0]}-{tp[1]}"
                )


def _refuse_offset(option: str, offsets: str | PartitionOffsets, refused: int, message: str) -> None:
    """`option`'s per-partition offsets may not name `refused` (a batch has no latest start, no
    earliest end); `message` says so with `{}` standing for the partition."""
    if isinstance(offsets, dict):
        for (topic, partition), offset in offsets.items():
            if offset == refused:
                raise KafkaOptionError(option, message.format(f"{topic}-{partition}"))


def _kafka_settings(params: Mapping[str, str]) -> ClientConf:
    settings = ClientConf()
    for key, value in params.items():
        if not key.startswith("kafka."):
            continue
        name = key[len("kafka.") :]
        if name in _REFUSED:
            raise KafkaOptionError(f"kafka.{name}", _REFUSED[name])
        if name == "sasl.jaas.config":
            settings.update(_jaas(value))
            continue
        try:
            translated = None if name in _SOURCE_DROPPED else java_names.translate(name, value)
        except ValueError:
            raise KafkaOptionError(
                f"kafka.{name}", f"Invalid value '{value}' for option 'kafka.{name}', must be an integer"
            ) from None
        if translated is None:
            log.info("Kafka option 'kafka.%s' has no librdkafka equivalent; ignored", name)
            continue
        settings[translated[0]] = translated[1]
    if "bootstrap.servers" not in settings:
        raise KafkaOptionError(
            "kafka.bootstrap.servers",
            "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer",
        )
    return settings


def _jaas(value: str) -> dict[str, str]:
    """A Java PLAIN/SCRAM login line becomes librdkafka's `sasl.username` / `sasl.password`."""
    found = dict(_JAAS.findall(value))
    if set(found) != {"username", "password"}:
        raise KafkaOptionError(
            "kafka.sasl.jaas.config",
            "librdkafka has no JAAS; only a line with "
            'username="..." password="..." can be translated; set kafka.sasl.username '
            "and kafka.sasl.password instead",
        )
    return {"sasl.username": found["username"], "sasl.password": found["password"]}


def _positive(params: Mapping[str, str], name: str) -> int | None:
    if name not in params:
        return None
    value = params[name].strip()
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise KafkaOptionError(name, f"Invalid value '{value}' for option '{name}', must be a positive integer")
    return number


def _non_negative(params: Mapping[str, str], name: str, default: int) -> int:
    value = params.get(name, str(default)).strip()
    if not value.isdigit():
        raise KafkaOptionError(name, f"Invalid value '{value}' for option '{name}', must be a non-negative integer")
    return int(value)


def _boolean(params: Mapping[str, str], name: str, default: bool) -> bool:
    value = params.get(name, str(default)).strip().lower()
    if value not in ("true", "false"):
        raise KafkaOptionError(name, f"Invalid value '{params[name]}' for option '{name}', must be true or false")
    return value == "true"


_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def _duration_ms(value: str) -> int:
    """Spark's duration strings: `15m`, `30s`, `500ms`, or a number of milliseconds."""
    match = re.fullmatch(r"\s*(\d+)\s*([a-z]*)\s*", value.lower())
    if not match or match.group(2) not in ("", *_UNITS_MS):
        raise KafkaOptionError("maxTriggerDelay", f"Invalid duration '{value}'; expected e.g. 15m, 30s, 500ms")
    return int(match.group(1)) * _UNITS_MS.get(match.group(2) or "ms", 1)
