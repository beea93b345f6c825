"""The servers the gateway bench compares: ours over HTTP and LiteLLM's proxy, each
started as its users run it, plus the streamed-chat caller every HTTP row uses.

- Ours: the web app under gunicorn with gthread workers as ``docker-compose.yml`` deploys
  it (its gunicorn settings file, metrics in per-process files), its breakers in Redis
  under a bench prefix, a throwaway SQLite file.
- LiteLLM's proxy: ``litellm --config FILE --num_workers N`` (one uvicorn worker per
  core, its production guide's sizing for several workers in one container), no
  database, no callbacks, ``set_verbose`` off, message logging off, ``LITELLM_LOG=ERROR``,
  retries off (ours has its own budget; the simulator never fails here). The proxy's
  extras are not a project dependency: it runs from a throwaway virtualenv
  (``--litellm-proxy-venv``), made on first use with the command ``proxy_venv_help``
  prints.

Idle keep-alive connections live 30 s on every server (gunicorn's default of 2 s and
uvicorn's of 5 s closed pooled client connections while the client processes waited at a barrier, a reset that
says nothing about the server). uvicorn's supervisor gets 60 s to hear from a worker:
at 50 streams on 2 cores its default 5 s killed busy workers mid-stream. Every start waits at most ``START_TIMEOUT_S`` and says why it failed (the server's own
output); every HTTP call has a 30 s timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from _setup import Server, gunicorn_start, wait_ready

START_TIMEOUT_S = 90.0
TIMEOUT = httpx.Timeout(30.0)


def stream_caller(url: str, body: dict[str, Any], headers: dict[str, str]) -> Callable[[int], None]:
    """A streamed chat completion read to the end of the body (past ``[DONE]``, as the
    OpenAI SDK does, so the connection is reused), on one pooled client per caller."""
    client = httpx.Client(timeout=TIMEOUT, transport=httpx.HTTPTransport(
        retries=0, limits=httpx.Limits(max_connections=256, max_keepalive_connections=256)))
    raw = json.dumps(body).encode()
    all_headers = {"Content-Type": "application/json", **headers}

    def call(_: int) -> None:
        with client.stream("POST", url, content=raw, headers=all_headers) as response:
            for _line in response.iter_lines():
                pass
        if response.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {response.status_code}")

    return call


def start_ours(root: Path, env: dict[str, str], *, workers: int, threads: int = 32) -> Server:
    """The web app under gunicorn gthread, as deployed (``_setup.gunicorn_start``): the
    deployed settings file (``observability/gunicorn_conf.py``: the application preloaded
    in the arbiter, each worker warm before it accepts) and metrics in per-process files
    (``PROMETHEUS_MULTIPROC_DIR``, a fresh folder), as docker-compose.yml runs it; idle
    keep-alive connections kept 30 s. Waits until it answers."""
    env = {**env, "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="bench-metrics-")}
    return gunicorn_start(env, workers=workers, threads=threads, root=root, timeout_s=START_TIMEOUT_S,
                          args=["-c", str(root / "observability" / "gunicorn_conf.py"), "--keep-alive", "30"])


def proxy_venv_help(venv: Path) -> str:
    return (f"LiteLLM's proxy runs from a throwaway virtualenv at {venv} (not a project dependency). Create it:\n"
            f"  python3.11 -m venv {venv} && {venv}/bin/pip install litellm==1.110.2 fastapi uvicorn uvloop websockets "
            "orjson apscheduler backoff pyyaml rq cryptography pyjwt python-multipart fastapi-sso pynacl httpx2 "
            "semver expression mcp soundfile\n"
            "(litellm[proxy] pins a litellm-proxy wheel the index may not carry; these are the modules its server imports)\n"
            "or pass --no-litellm-proxy.")


def start_litellm_proxy(venv: Path, base_url: str, model: str, tag: str, port: int, *, workers: int,
                        master_key: str) -> subprocess.Popen[bytes]:
    """LiteLLM's proxy on 127.0.0.1:``port`` with one model ``bench`` pinned to ``tag`` on
    the simulator (module docstring for its settings). Waits until it answers."""
    exe = venv / "bin" / "litellm"
    if not exe.exists():
        raise SystemExit(proxy_venv_help(venv))
    folder = Path(tempfile.mkdtemp())
    config = folder / "litellm.yaml"
    # JSON is YAML: no YAML writer needed on our side.
    config.write_text(json.dumps({
        "model_list": [{"model_name": "bench", "litellm_params": {
            "model": f"openai/{model}", "api_base": base_url, "api_key": "sk-bench",
            "extra_body": {"provider": {"only": [tag], "allow_fallbacks": False}}}}],
        "litellm_settings": {"num_retries": 0, "set_verbose": False, "turn_off_message_logging": True,
                             "callbacks": [], "success_callback": [], "failure_callback": [], "request_timeout": 30},
        "general_settings": {"master_key": master_key, "disable_spend_logs": True, "disable_error_logs": True},
    }))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"LITELLM_LOG": "ERROR", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
                "LITELLM_DONT_SHOW_FEEDBACK_BOX": "true"})
    log = folder / "litellm.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(  # noqa: S603 - the peer's own CLI with fixed arguments
            [str(exe), "--config", str(config), "--host", "127.0.0.1", "--port", str(port), "--num_workers", str(workers),
             "--keepalive_timeout", "30"],
            cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    wait_ready(proc, f"http://127.0.0.1:{port}/health/liveliness", "LiteLLM's proxy", log, timeout_s=START_TIMEOUT_S)
    return proc
