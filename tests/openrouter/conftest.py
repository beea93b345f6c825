"""Fixtures of the wire tests: the scripted server and a client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer

from openrouter.client import OpenRouterClient
from tests.openrouter.scripted import ScriptedServer


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()


@pytest.fixture
def sclient(scripted: ScriptedServer) -> Iterator[OpenRouterClient]:
    with OpenRouterClient(base_url=scripted.base_url, api_key="") as c:
        yield c


@pytest.fixture
def client(httpserver: HTTPServer) -> Iterator[OpenRouterClient]:
    with OpenRouterClient(base_url=httpserver.url_for("/api/v1"), api_key="sk-or-test") as c:
        yield c
