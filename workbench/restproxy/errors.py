"""Error bodies in Confluent's shape: `{"error_code": <int>, "message": "<text>"}`.

A handler raises `RestError(status, error_code, message)` (`workbench.httpserver.errors`,
shared with the Schema Registry); the application turns it
(and anything unexpected) into that JSON body. An unexpected exception is logged with
its traceback and answered 500 / 50002 with a one-line message, never a stack trace,
unless `debug=true` asks for the exception text in the message as upstream does.

The codes are upstream's (see the API reference, §1.3):

    40401 topic not found          40402 partition not found
    40403 consumer instance not found
    40601 consumer format does not match Accept
    40902 consumer instance already exists    40903 illegal state (assignment)
    42201/42202 schema missing     42204 invalid consumer config   42205 invalid schema
    42206 v3 payload error         413 record or body too large
    50002 Kafka error              50003 retriable Kafka error
"""

from __future__ import annotations

__all__ = ["CONSUMER_NOT_FOUND", "ILLEGAL_STATE", "PARTITION_NOT_FOUND", "TOPIC_NOT_FOUND"]

TOPIC_NOT_FOUND = 40401
PARTITION_NOT_FOUND = 40402
CONSUMER_NOT_FOUND = 40403
#: A consumer asked to mix subscription and assignment, or to seek a partition it does not own.
ILLEGAL_STATE = 40903
