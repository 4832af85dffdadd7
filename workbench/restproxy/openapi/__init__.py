"""The proxy's OpenAPI document, served at `GET /openapi.json`; one module per API.

Modules:

    document         the document itself, its description and its route
    schemas          the component schemas, and the helpers they are written with
    operations       parameters, operations, answers, error tables
    v2               v2 metadata, produce and consumer instances
    v3               v3 clusters, topics, partitions, configs, groups, produce
    share            share-consumer instances and the v3 share-group GETs
"""

from workbench.restproxy.openapi.document import ROUTES, document, openapi
from workbench.restproxy.openapi.schemas import Schema

__all__ = ["ROUTES", "Schema", "document", "openapi"]
