"""The embedded Schema Registry: Confluent Schema Registry's REST API on a Kafka topic.

No Schema Registry can be installed from the registries this project uses, so, as with
the REST proxy, the workbench ships its own. Clients (confluent-kafka's
`SchemaRegistryClient` and serializers, the REST proxy) use it unchanged.

    app.py            routes, media types, validation, error bodies
    store.py          state in memory, the `_schemas` topic behind it, ids across instances
    schemas.py        parsing and identity (avro, jsonschema, protoc/descriptors)
    compatibility.py  levels and checks
    settings.py       SCHEMA_REGISTRY_* properties
    server.py         one process: `python -m workbench.registry`
"""

from workbench.registry.app import create_app
from workbench.registry.server import serve
from workbench.registry.settings import RegistrySettings, load_registry_settings
from workbench.registry.store import SchemaStore

__all__ = ["RegistrySettings", "SchemaStore", "create_app", "load_registry_settings", "serve"]
