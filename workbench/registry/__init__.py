"""The embedded Schema Registry: Confluent Schema Registry's REST API on a Kafka topic.

No Schema Registry can be installed from the registries this project uses, so, as with
the REST proxy, the workbench ships its own. Clients (confluent-kafka's
`SchemaRegistryClient` and serializers, the REST proxy) use it unchanged.

Modules:

    app                 routes, media types, validation, error bodies
    store               state in memory, the `_schemas` topic behind it, the writes
    log                 the topic's records, and the rules by which instances agree on ids
    schemas             parsing and identity (avro, jsonschema, protoc/descriptors)
    compatibility       levels and checks
    json_compatibility  JSON Schema compatibility as Confluent decides it, ported
    protobuf_compatibility  Protobuf compatibility as Confluent decides it, ported
    protobuf_text       a Protobuf schema's canonical `.proto` text, as Confluent prints it
    avro_text           an Avro schema's canonical text, as Avro Java prints it
    errors              error codes and bodies in Confluent's shape
    settings            SCHEMA_REGISTRY_* properties
    server              one process's `serve`
    __main__            `python -m workbench.registry`
"""

from workbench.registry.app import create_app
from workbench.registry.server import serve
from workbench.registry.settings import RegistrySettings, load_registry_settings
from workbench.registry.store import SchemaStore

__all__ = ["RegistrySettings", "SchemaStore", "create_app", "load_registry_settings", "serve"]
