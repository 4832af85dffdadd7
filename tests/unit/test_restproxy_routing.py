"""Raw-path routing and media types, without a server."""

from __future__ import annotations

import pytest

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route, Router, split_path
from workbench.restproxy.formats import check_accept, embedded_format, produce_format


async def _handler() -> None:
    return None


ROUTER = Router(
    [
        Route("GET", "/topics/{topic}", _handler),
        Route("POST", "/topics/{topic}", _handler),
        Route("GET", "/topics/{topic}/partitions/{partition}", _handler),
    ]
)


def test_segments_are_decoded_after_splitting() -> None:
    assert split_path(b"/topics/%2Fstreams%2Ftest%3Atopic1/partitions/0/") == [
        "topics",
        "/streams/test:topic1",
        "partitions",
        "0",
    ]
    route, params = ROUTER.match("GET", split_path(b"/topics/%2Fs%3At/"))
    assert route.template == "/topics/{topic}" and params == {"topic": "/s:t"}


def test_unknown_path_and_method() -> None:
    with pytest.raises(RestError) as missing:
        ROUTER.match("GET", split_path("/nothing/here"))
    assert (missing.value.status, missing.value.error_code) == (404, 404)
    with pytest.raises(RestError) as method:
        ROUTER.match("DELETE", split_path("/topics/t"))
    assert (method.value.status, method.value.error_code) == (405, 405)
    assert method.value.headers["Allow"] == "GET, POST"


@pytest.mark.parametrize(
    ("content_type", "fmt"),
    [
        ("application/vnd.kafka.json.v2+json", "json"),
        ("application/vnd.kafka.json.v1+json", "json"),
        ("application/vnd.kafka.binary.v2+json; charset=utf-8", "binary"),
        ("application/vnd.kafka.v2+json", "binary"),
        ("application/vnd.kafka+json", "binary"),
        ("application/json", "binary"),
        ("application/octet-stream", "binary"),
    ],
)
def test_produce_formats(content_type: str, fmt: str) -> None:
    assert produce_format(content_type) == fmt


def test_schema_formats_are_answered_after_the_topic_and_schema_checks() -> None:
    assert produce_format("application/vnd.kafka.avro.v2+json") == "avro"


@pytest.mark.parametrize(
    ("content_type", "status", "code"),
    [
        (None, 415, 415),
        ("text/plain", 415, 415),
    ],
)
def test_produce_format_errors(content_type: str | None, status: int, code: int) -> None:
    with pytest.raises(RestError) as raised:
        produce_format(content_type)
    assert (raised.value.status, raised.value.error_code) == (status, code)


def test_accept() -> None:
    assert check_accept(None) == []
    assert check_accept("application/vnd.kafka.v2+json, application/json;q=0.9")
    assert check_accept("*/*")
    with pytest.raises(RestError):
        check_accept("text/html")
    assert embedded_format("application/vnd.kafka.jsonschema.v2+json") == (True, "jsonschema")
