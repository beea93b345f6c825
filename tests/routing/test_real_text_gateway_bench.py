"""``bench/real_text_gateway.py`` on one text of each group, so the bench cannot rot: real
gunicorn, the bench's own OpenRouter-compatible stub, the openai SDK, the shipped
``roleplay-reply`` contract, a PostgreSQL database of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def database_url() -> str:
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reverie_ops")
    server, _, _ = base.rpartition("/")
    name = f"bench_rtg_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{server}/{name}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.slow(90)
def test_the_bench_serves_real_text_through_gunicorn_and_reports_it(database_url: str, tmp_path: Path) -> None:
    out = tmp_path / "cases.json"
    run = subprocess.run(  # noqa: S603 - our interpreter, our script
        [sys.executable, "bench/real_text_gateway.py", "--limit", "1", "--concurrency", "4",
         "--database-url", database_url, "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=240, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "clean replies blocked:" in run.stdout and "defects delivered, per kind:" in run.stdout
    cases = json.loads(out.read_text())
    kinds = {c["kind"] for c in cases}
    assert {"clean", "mojibake", "junk_prefix", "language_shift"} <= kinds
    assert {c["stream"] for c in cases} == {True, False}
    for case in cases:
        assert case["outcome"] in ("delivered", "after_commit") or case["outcome"].startswith("http_"), case
        assert case["served"] >= 1, case  # the gateway asked the stub for it
    # The first NTREX passage of each language, in a conversation in that language: the
    # guards pass it, and the client gets exactly the text the stub sent.
    news = [c for c in cases if c["role"] == "clean" and c["source"] == "ntrex"]
    assert len(news) == 17
    for case in news:
        assert case["outcome"] == "delivered" and case["detail"] == "", case
    # A Spanish passage in a Portuguese conversation, an English one in a Japanese one,
    # a junk-opened answer and Windows-1252 mojibake never end normally at the client.
    for case in cases:
        if case["group"] in ("language_shift ntrex es in pt", "language_shift ntrex en in ja", "junk_prefix llmzoo") \
                or case["group"].startswith("mojibake ntrex"):
            assert case["outcome"] != "delivered", case
