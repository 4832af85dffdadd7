"""JSON Schema validators as Confluent reads a schema: its draft, and its referenced schemas.

A schema's `$schema` names its draft; with none, Confluent reads it as draft-07 (not as
the newest draft, which `jsonschema` would pick), so draft-07's tuple `items` and
`additionalItems` keep their meaning. Referenced schemas are resources under their
reference name (and their `$id`, and the name resolved against the schema's own `$id`),
so `{"$ref": "address.json"}` resolves to the schema registered as reference
`address.json`. The registry validates schemas with this and the REST proxy validates
data, so both import it and neither imports the other.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

__all__ = ["json_validator", "json_validator_class"]


def json_validator_class(document: Any) -> Any:
    """The validator of the draft `$schema` names; draft-07 when it names none (Confluent's
    default: a schema without `$schema` is read as draft-07, not as the newest draft)."""
    import jsonschema

    return jsonschema.validators.validator_for(document, default=jsonschema.Draft7Validator)


def json_validator(document: Any, resources: dict[str, Any]) -> Any:
    """A validator for `document` whose `$ref`s resolve to the referenced documents by name."""
    import referencing
    import referencing.jsonschema

    validator_class = json_validator_class(document)
    default_spec = referencing.jsonschema.specification_with(
        validator_class.META_SCHEMA.get("$schema", ""), default=referencing.jsonschema.DRAFT7
    )
    base = document.get("$id") if isinstance(document, dict) else None
    registry: Any = referencing.Registry()
    for uri, referenced in resources.items():
        resource = referencing.Resource.from_contents(referenced, default_specification=default_spec)
        registry = registry.with_resource(uri, resource)
        if isinstance(base, str):  # a $ref relative to the document's own $id
            registry = registry.with_resource(urljoin(base, uri), resource)
    return validator_class(document, registry=registry.crawl())
