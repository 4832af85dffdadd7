"""REST proxy client: the Confluent v2/v3 API against ours, Confluent's or MapR's proxy.

from workbench.proxy import ProxyClient
with ProxyClient.for_stack(stack) as proxy:
    proxy.produce("orders", [b"one", b"two"])
    with proxy.consumer("readers", topics=["orders"]) as consumer:
        records = list(consumer.iter_records(timeout_ms=1000))

Modules:

    client           `ProxyClient`: the v2 and v3 API from Python
    consumer         `ProxyConsumer`: a v2 consumer instance, always deleted again
    share            share-group consumption through the workbench's proxy
    records          the shapes records take into and out of a proxy
    wire             the v2 media types, topic names in paths, answers read into JSON or errors
    settings         typed timeouts and limits, in the manner of httpx
    errors           `ProxyUnavailableError`: no proxy answered; `InstanceNotOpen`
"""

from workbench.errors import ProxyError
from workbench.proxy.client import ProxyClient, proxy_urls
from workbench.proxy.consumer import ProxyConsumer
from workbench.proxy.errors import InstanceNotOpen, ProxyUnavailableError
from workbench.proxy.records import (
    EncodedRecords,
    ProduceResult,
    ProduceTrace,
    ProxyRecord,
    RecordOffset,
    encode_records,
)
from workbench.proxy.settings import Retries, Timeout
from workbench.proxy.share import ProxyShareConsumer
from workbench.proxy.wire import encode_topic

__all__ = [
    "EncodedRecords",
    "InstanceNotOpen",
    "ProduceResult",
    "ProduceTrace",
    "ProxyClient",
    "ProxyConsumer",
    "ProxyError",
    "ProxyRecord",
    "ProxyShareConsumer",
    "ProxyUnavailableError",
    "RecordOffset",
    "Retries",
    "Timeout",
    "encode_records",
    "encode_topic",
    "proxy_urls",
]
