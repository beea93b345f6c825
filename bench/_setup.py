"""Shared set-up of the bench scripts: Django on a throwaway database, the simulator, the
web app under gunicorn (``gunicorn_start``) and waiting until a server answers."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
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
    """Drop and create database ``name`` (or the one ``BENCH_DATABASE`` names, when set:
    one database of your own on a shared server, whichever bench runs) on the local
    PostgreSQL; returns its URL."""
    import psycopg

    name = os.environ.get("BENCH_DATABASE") or name
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


@dataclass
class Server:
    """A web app the bench started under gunicorn: its arbiter, base URL
    (``http://127.0.0.1:PORT``) and log file (its stdout and stderr)."""

    proc: subprocess.Popen[bytes]
    base: str
    log: Path

    def tail(self, chars: int = 2000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def stop(self) -> None:
        """Terminate the arbiter and its workers (TERM, then KILL after 30 s)."""
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen[bytes] | None, wait_s: float = 30.0) -> None:
    """TERM ``proc`` and wait ``wait_s`` for it, then KILL it; nothing if it is gone."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def wait_ready(proc: subprocess.Popen[bytes], url: str, what: str, log: Path | None = None, *,
               status: int | None = None, timeout_s: float = 90.0) -> float:
    """Poll ``GET url`` until it answers (with ``status``, when given); returns the
    seconds it took. Raises RuntimeError naming ``what`` (and the tail of ``log``) when
    ``proc`` exits first or ``timeout_s`` passes (a loaded machine can take a minute to
    import Django and build the language models)."""
    import httpx

    started = time.monotonic()
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {_tail(log)}")
        try:
            answer = httpx.get(url, timeout=30)
            if status is None or answer.status_code == status:
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        if time.monotonic() - started > timeout_s:
            proc.kill()
            raise RuntimeError(f"{what} did not answer within {timeout_s:.0f} s: {_tail(log)}")
        time.sleep(0.05)


def _tail(log: Path | None) -> str:
    return log.read_text(errors="replace")[-2000:] if log is not None and log.exists() else "(no log)"


def gunicorn_start(env: dict[str, str], *, workers: int = 2, threads: int = 8, args: Sequence[str] = (),
                   root: Path = ROOT, log: Path | None = None, ready_path: str = "/v1/chat/completions",
                   ready_status: int | None = None, timeout_s: float = 90.0) -> Server:
    """The web app (``reverie_ops.wsgi``, from ``root``) under gunicorn gthread as
    deployed, ``workers`` x ``threads``, on a free loopback port, in ``env``; ``args``
    come last (a later flag wins: ``--log-level info``, ``-c <settings file>``). Every
    server gets a control socket of its own next to its log (gunicorn's default path is
    one per user, which concurrent servers would fight over). Waits until
    ``ready_path`` answers (with ``ready_status`` when given: ``/api/v1/health`` answers
    200 only once the database and Redis do), at most ``timeout_s``; raises
    RuntimeError with the log's tail when it does not. The caller ``stop()``s it."""
    from fake_openrouter.process import free_port

    port = free_port()
    log = log or Path(tempfile.mkdtemp()) / f"gunicorn-{port}.log"
    argv = [sys.executable, "-m", "gunicorn", "reverie_ops.wsgi", "-k", "gthread", "-w", str(workers),
            "--threads", str(threads), "-b", f"127.0.0.1:{port}", "--log-level", "warning",
            "--control-socket", str(log.parent / f"gunicorn-{port}.ctl"), *args]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)  # noqa: S603 - our interpreter
    server = Server(proc, f"http://127.0.0.1:{port}", log)
    try:
        wait_ready(proc, server.base + ready_path, f"gunicorn ({root})", log, status=ready_status, timeout_s=timeout_s)
    except BaseException:
        server.stop()
        raise
    return server


NGINX = Path("/usr/sbin/nginx")
# One line per request the TLS front relayed: nginx's connection serial and how many
# requests that connection had carried (1: the request opened it).
TLS_FRONT_LOG_FORMAT = "$connection $connection_requests $request_method $request_uri $status"


@dataclass
class TlsFront:
    """nginx terminating TLS on ``base`` (``https://127.0.0.1:PORT``) in front of a plain
    HTTP server, with a certificate from a throwaway CA (``ca_file``: what a client must
    trust, ``SSL_CERT_FILE``); ``access_log`` has one ``TLS_FRONT_LOG_FORMAT`` line per
    request."""

    proc: subprocess.Popen[bytes]
    base: str
    ca_file: Path
    access_log: Path

    def requests(self) -> list[tuple[int, int, str, str]]:
        """(connection serial, its request count, method, URI) of every request so far."""
        rows = []
        for line in self.access_log.read_text().splitlines():
            serial, count, method, uri, _ = line.split(" ", 4)
            rows.append((int(serial), int(count), method, uri))
        return rows

    def stop(self) -> None:
        stop_process(self.proc)


def tls_front(target_port: int) -> TlsFront:
    """Start nginx (``scripts/nginx.sh`` installs it) terminating TLS 1.2/1.3 on a free
    loopback port and proxying to ``127.0.0.1:target_port`` over kept-alive HTTP/1.1,
    unbuffered (server-sent events pass as they come); waits until it listens."""
    import trustme

    from fake_openrouter.process import free_port, wait_accepting

    if not NGINX.exists():
        raise SystemExit(f"--tls needs nginx at {NGINX} (scripts/nginx.sh installs it)")
    work = Path(tempfile.mkdtemp())
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.private_key_and_cert_chain_pem.write_to_path(str(work / "server.pem"))
    ca.cert_pem.write_to_path(str(work / "ca.pem"))
    port = free_port()
    (work / "nginx.conf").write_text(f"""
worker_processes 1;
error_log {work}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format front '{TLS_FRONT_LOG_FORMAT}';
    access_log {work}/access.log front;
    client_body_temp_path {work}/body; proxy_temp_path {work}/proxy; fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
    upstream target {{ server 127.0.0.1:{target_port}; keepalive 64; }}
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {work}/server.pem;
        ssl_certificate_key {work}/server.pem;
        keepalive_timeout 75s;
        location / {{
            proxy_pass http://target;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }}
    }}
}}
""")
    (work / "access.log").touch()
    proc = subprocess.Popen([str(NGINX), "-p", str(work), "-c", str(work / "nginx.conf"), "-e", "stderr",  # noqa: S603
                             "-g", f"daemon off; pid {work / 'nginx.pid'};"], stderr=(work / "stderr.log").open("wb"))
    if not wait_accepting(port, proc, 10):
        stop_process(proc)
        raise RuntimeError(f"nginx did not listen: {(work / 'stderr.log').read_text()[-2000:]}")
    return TlsFront(proc, f"https://127.0.0.1:{port}", work / "ca.pem", work / "access.log")
