"""The workbench's own Kafka REST proxy: Confluent REST Proxy API v2 and v3 core.

One process per instance (`workbench proxy --config conf/kafka-rest.properties`), an
ASGI app on uvicorn, built on confluent-kafka. Modules, one per concept:

    settings            kafka-rest.properties: upstream names, defaults, pass-through
    app                 create_app(settings): lifespan, dispatch, auth, error rendering
    context             what a handler gets: settings, clients, body and answer helpers
    formats             media types, embedded formats (binary, json), negotiation
    produce             v2 produce (records arrays)
    produce_v3          v3 produce (streaming)
    metadata_v2         v2 topics, partitions and brokers
    consumers           v2 consumer endpoints: bodies, handlers, routes
    consumer_instances  v2 consumer instances and their blocking Kafka work
    consumer_records    a records answer: fetched, rendered, sent in pieces
    instances           what every kind of consumer instance shares, and their manager
    share_consumers     share-consumer endpoints (KIP-932 over REST): bodies, handlers, routes
    share_instances     share-consumer instances and their blocking Kafka work
    share_records       a share consumer's records answer, and the proof it was written
    share_groups        v3 share groups: Confluent Cloud's five read-only GETs
    v3                  v3 clusters, topics, configs, consumer groups and lag
    producer            the shared async producer
    delivery            one request's delivery reports, collected into its answer
    tracing             opt-in per-record tracing of produce (Workbench-Trace)
    metadata            admin calls and their cache
    schemas             Schema Registry formats (avro, jsonschema, protobuf)
    metrics             Prometheus at /metrics
    errors              the proxy's error codes
    validation          names and numbers checked at the edge
    openapi             the OpenAPI document at /openapi.json, one module per API
    server              serve(): the process itself

The server stack it shares with the Schema Registry (uvicorn set-up, header limits,
routing on the raw path, `RestError` and its body) is `workbench.httpserver`.
"""

from workbench.restproxy.app import create_app
from workbench.restproxy.server import serve
from workbench.restproxy.settings import RestProxySettings, load_restproxy_settings

__all__ = ["RestProxySettings", "create_app", "load_restproxy_settings", "serve"]
