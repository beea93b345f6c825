"""Fixtures of the wire tests: the scripted server and a client pointed at it.

Every client test runs twice: against the httpx client (a thread per call) and against
the event-loop client the canary's probes use (``openrouter.aiochat``), which must return
the same ``Call`` for the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer

from openrouter.aiochat import LoopOpenRouterClient
from openrouter.client import OpenRouterClient
from tests.openrouter.scripted import ScriptedServer

CLIENTS = {"httpx": OpenRouterClient, "loop": LoopOpenRouterClient}


@pytest.fixture(params=sorted(CLIENTS))
def client_cls(request: pytest.FixtureRequest) -> type[OpenRouterClient]:
    return CLIENTS[request.param]


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()


@pytest.fixture
def sclient(scripted: ScriptedServer, client_cls: type[OpenRouterClient]) -> Iterator[OpenRouterClient]:
    with client_cls(base_url=scripted.base_url, api_key="") as c:
        yield c


@pytest.fixture
def client(httpserver: HTTPServer, client_cls: type[OpenRouterClient]) -> Iterator[OpenRouterClient]:
    with client_cls(base_url=httpserver.url_for("/api/v1"), api_key="sk-or-test") as c:
        yield c
