"""The HTTP server stack the embedded REST proxy and Schema Registry both run on.

- `run`: uvicorn set up once (`run_server`), each service adding only its own options;
- `protocol`: header size and header time limits below the application;
- `routing`: routes matched on the raw path, segment by segment;
- `errors`: `RestError` and the Confluent error body both services answer with.

Neither service imports the other's internals: both import this package.
"""

__all__: list[str] = []
