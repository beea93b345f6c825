"""Reading docker-compose.yml and .env.example the way Compose does (for the deploy tests)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"


def compose() -> dict[str, Any]:
    """The compose file with YAML merge keys (``<<: *app``) resolved."""
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def env_file(path: Path = ENV_EXAMPLE) -> dict[str, str]:
    """``KEY=VALUE`` lines of an env file (comments and blank lines skipped)."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def service_environment(name: str) -> dict[str, str]:
    """What a service's process sees: its env_file (the example, as after
    ``cp .env.example .env``) overridden by its ``environment`` block."""
    service = compose()["services"][name]
    env: dict[str, str] = {}
    files = service.get("env_file") or []
    for _ in [files] if isinstance(files, str) else files:
        env.update(env_file())
    block = service.get("environment") or {}
    if isinstance(block, list):
        block = dict(item.partition("=")[::2] for item in block)
    env.update({k: "" if v is None else str(v) for k, v in block.items()})
    return env


def process_environment(service: str, **extra: str) -> dict[str, str]:
    """A clean environment for a subprocess standing in for ``service``: nothing of the
    test run's own environment but PATH/HOME, plus a generated secret (the example leaves
    it empty on purpose: the operator generates one)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
    env.update(service_environment(service))
    if not env.get("DJANGO_SECRET_KEY"):
        env["DJANGO_SECRET_KEY"] = secrets.token_urlsafe(50)
    env.update(extra)
    return env
