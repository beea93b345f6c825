"""Shared set-up of the bench scripts: Django on a throwaway database, the simulator."""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Benches run the production settings (DEBUG off) over plain HTTP on loopback: a secret
# of this run only, no HTTPS redirect. Servers a bench starts inherit both.
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-run-" + secrets.token_urlsafe(48))
os.environ.setdefault("DJANGO_HTTPS", "false")


def django_on(database_url: str | None = None, *, migrate: bool = True) -> None:
    """Set Django up on ``database_url`` (default: a fresh SQLite file) and migrate
    (unless ``migrate`` is False: the caller migrates once its arguments are parsed)."""
    if database_url is None:
        database_url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.sqlite3'}"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def fresh_postgres(name: str) -> str:
    """Drop and create database ``name`` on the local PostgreSQL; returns its URL."""
    import psycopg

    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgres://postgres@127.0.0.1:5432/{name}"


def simulator(fleet: dict | Path):  # type: ignore[no-untyped-def]
    """Start the simulator on a fleet (dict or path); returns (process, base_url)."""
    from fake_openrouter.process import free_port, start_simulator

    if isinstance(fleet, dict):
        path = Path(tempfile.mkdtemp()) / "fleet.json"
        path.write_text(json.dumps(fleet))
    else:
        path = fleet
    port = free_port()
    return start_simulator(path, port), f"http://127.0.0.1:{port}/api/v1"


def scale_fleet(models: list[str]) -> dict:
    """The scale benches' fleet: ``models``, each served by the same 15 healthy endpoints
    (TTFT drawn between 200 and 1500 ms)."""
    from tests.verdicts.fleets import NAMES, endpoint

    return {
        "seed": 11,
        "models": [
            {"id": model_id, "context_length": 131072, "endpoints": [endpoint(name, {"ttft_ms": [200, 1500]}) for name in NAMES]}
            for model_id in models
        ],
    }


def listen_overflows() -> int:
    """The kernel's count of SYNs dropped because a listen queue was full (TcpExt
    ListenOverflows in /proc/net/netstat; 0 where it cannot be read): each one costs a
    connection the one-second SYN retransmission."""
    try:
        lines = open("/proc/net/netstat").read().splitlines()
    except OSError:
        return 0
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            fields = dict(zip(names.split()[1:], values.split()[1:], strict=False))
            return int(fields.get("ListenOverflows", 0))
    return 0


def proc_cpu_s(pid: int, parts: tuple[int, ...] = (11, 12)) -> float:
    """CPU seconds used so far by process ``pid`` (Linux /proc; user + system by default,
    ``(12,)`` for system only); 0 if it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in parts) / os.sysconf("SC_CLK_TCK")
