"""docker-compose.yml's services as processes on one machine, without Docker.

Each service runs its own ``command`` from the compose file, with the environment compose
would give it (``.env.example`` as ``.env`` plus a generated secret, then the service's
``environment`` block). What Docker's network would provide is mapped onto loopback, and
nothing else is changed:

- each compose host name (``postgres``, ``redis``, ``web``, ``worker``, ``simulator``) is
  an address ``127.0.0.1:<free port>`` (PostgreSQL is the machine's own, with a database
  of this stack's own; Redis is a ``redis-server`` of its own);
- a service's listen address in its command (``0.0.0.0:8000``, ``--port 8765``) becomes
  its loopback port, and so does a URL naming a compose host in its environment;
- callers keep the ``Host`` each sends under compose: the proxy passes the browser's
  (``localhost:8000``), Prometheus its target's (``web:8000``: the scrape goes through
  ``proxy_url`` to the mapped port, so the request line and Host still say ``web:8000``).

The nginx and Prometheus binaries come from Debian (``scripts/nginx.sh``,
``scripts/prometheus.sh``), the images' own programs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
import yaml
from django.conf import settings

from fake_openrouter.process import free_port
from tests.deploy.compose import ROOT, compose, process_environment

NGINX = Path("/usr/sbin/nginx")
# The staging profile's fleet for the simulator (a fleet file is its configuration).
FLEET = ROOT / "tests" / "fixtures" / "fleets" / "compose-stack.json"
PROMETHEUS = Path("/usr/bin/prometheus")
NGINX_CONF = ROOT / "deploy" / "nginx" / "nginx.conf"
PROMETHEUS_YML = ROOT / "deploy" / "observability" / "prometheus.yml"
# Compose host names and the ports their services listen on inside the network.
INTERNAL = {"postgres": 5432, "redis": 6379, "web": 8000, "worker": 9808, "simulator": 8765}
PROXY_INTERNAL_PORT = 8080


def binary(path: Path, script: str) -> Path:
    """``path``, installed by ``scripts/<script>`` (Debian's package) when missing."""
    if not path.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / script)], check=True)  # noqa: S603, S607
    return path


class Stack:
    """The compose services of one test as processes; ``close()`` stops them all.

    ``admin_url``: the maintenance database URL (its host and port serve every
    database of the stack). ``tmp``: a directory of the test's own for logs and files.
    """

    def __init__(self, tmp: Path, admin_url: str, *, name: str = "stack") -> None:
        self.tmp = tmp
        self.admin_url = admin_url
        admin = urlsplit(admin_url)
        self.database = f"reverie_ops_{name}_{os.getpid()}"
        self.addr = {host: ("127.0.0.1", free_port()) for host in INTERNAL}
        self.addr["postgres"] = (admin.hostname or "127.0.0.1", admin.port or 5432)
        self.proxy_port = free_port()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self.secret = ""
        self.extra_env: dict[str, str] = {}
        self._database_create()

    # --- names and addresses -----------------------------------------------------

    def port(self, host: str) -> int:
        return self.addr[host][1]

    def base(self, host: str) -> str:
        ip, port = self.addr[host]
        return f"http://{ip}:{port}"

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port}"

    def map_text(self, text: str) -> str:
        """``host:port`` of any compose service in ``text`` -> its loopback address."""
        for host, internal in INTERNAL.items():
            ip, port = self.addr[host]
            text = re.sub(rf"(?<![\w.-]){host}:{internal}(?!\d)", f"{ip}:{port}", text)
        return text

    def environment(self, service: str, **extra: str) -> dict[str, str]:
        """What ``service``'s process sees under compose, its addresses mapped."""
        env = process_environment(service)
        # One secret for the whole stack, as one .env gives every service the same.
        self.secret = self.secret or env["DJANGO_SECRET_KEY"]
        env["DJANGO_SECRET_KEY"] = self.secret
        env = {k: self.map_text(v) for k, v in env.items()}
        if "DATABASE_URL" in env:
            env["DATABASE_URL"] = env["DATABASE_URL"].rsplit("/", 1)[0] + f"/{self.database}"
        if env.get("OBSERVABILITY_WORKER_METRICS_PORT"):
            # The worker's metrics listener: worker:9808 inside the network.
            env["OBSERVABILITY_WORKER_METRICS_PORT"] = str(self.port("worker"))
            env["OBSERVABILITY_WORKER_METRICS_ADDR"] = "127.0.0.1"
        if "PROMETHEUS_MULTIPROC_DIR" in env:
            # One directory per container: per process here.
            env["PROMETHEUS_MULTIPROC_DIR"] = str(self.tmp / f"prom-{service}")
        env["HOSTNAME"] = socket.gethostname()
        env.update({k: self.map_text(v) for k, v in self.extra_env.items()})
        env.update(extra)
        return env

    def argv(self, service: str) -> list[str]:
        """The service's command, its listen address mapped to its loopback port."""
        command = compose()["services"][service]["command"]
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if service in INTERNAL:
            ip, port = self.addr[service]
            argv = [a.replace(f"0.0.0.0:{INTERNAL[service]}", f"{ip}:{port}") for a in argv]
            for flag, value in (("--host", ip), ("--port", str(port))):
                if flag in argv:
                    argv[argv.index(flag) + 1] = value
        if argv[0] == "python":
            argv[0] = sys.executable
        elif argv[0] in ("gunicorn", "celery"):
            argv[:1] = [sys.executable, "-m", argv[0]]
        return argv

    # --- processes -------------------------------------------------------------

    def start(self, service: str, argv: list[str] | None = None, env: dict[str, str] | None = None,
              label: str | None = None) -> subprocess.Popen[bytes]:
        """Start ``service``'s command (or ``argv``) in the background, logging to a file."""
        label = label or service
        log = self.tmp / f"{label}.log"
        if env is None:
            env = self.environment(service)
        if "PROMETHEUS_MULTIPROC_DIR" in env:
            Path(env["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(  # noqa: S603 - the compose file's own commands
            argv or self.argv(service), cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
            start_new_session=True)
        self.procs[label] = proc
        self.logs[label] = log
        return proc

    def run(self, service: str, *args: str, timeout_s: float = 180.0, **extra: str) -> subprocess.CompletedProcess[str]:
        """A one-shot in ``service``'s environment (``docker compose run --rm SERVICE ...``);
        without ``args``, the service's own command (``migrate``)."""
        argv = list(args) if args else self.argv(service)
        if argv[0] == "python":
            argv[0] = sys.executable
        return subprocess.run(argv, cwd=ROOT, env=self.environment(service, **extra), capture_output=True,  # noqa: S603
                              text=True, timeout=timeout_s)

    def manage(self, *args: str, **env: str) -> str:
        """``docker compose run --rm web python manage.py ...``: its stdout (it must exit 0)."""
        done = self.run("web", "python", "manage.py", *args, **env)
        assert done.returncode == 0, f"manage.py {' '.join(args)}: {done.stderr[-2000:]}"
        return done.stdout

    def steer(self, tags: list[str]) -> None:
        """What an operator does in Routing > Routes: only the routes of these endpoint
        tags enabled, ranked in this order (health equal, latency ascending); every web
        process re-reads its routes within ROUTING_CACHE_S (5 s), so this waits 6 s."""
        self.sql("UPDATE routing_route SET enabled = false")
        for rank, tag in enumerate(tags, start=1):
            self.sql("UPDATE routing_route SET enabled = true, health = 1, latency_ms = %s WHERE provider_tag = %s", rank, tag)
        time.sleep(6)

    def start_base(self, fleet: Path = FLEET) -> None:
        """What every staging stack starts first, in ``depends_on`` order: ``redis``
        (healthy), the ``migrate`` one-shot (exit 0), the staging simulator on
        ``fleet``."""
        self.start_redis()
        self.wait_healthy("redis")
        migrate = self.run("migrate")
        assert migrate.returncode == 0, migrate.stderr[-3000:]
        argv = self.argv("simulator")
        argv[argv.index("--fleet") + 1] = str(fleet)
        self.start("simulator", argv)

    def wait_answers(self, url: str, label: str, timeout_s: float = 120.0, **kw: Any) -> httpx.Response:
        """``GET url`` (``kw``: httpx's, e.g. ``headers``) until it answers 200, while
        the process ``label`` runs; returns that response. AssertionError with the
        process's log when it exits or ``timeout_s`` passes (a replica with no health
        check of its own in the compose file)."""

        def answered() -> httpx.Response | None:
            proc = self.procs.get(label)
            if proc is not None and proc.poll() is not None:
                raise AssertionError(f"{label} exited ({proc.returncode}): {self.tail(label)}")
            try:
                response = httpx.get(url, timeout=10, **kw)
            except httpx.HTTPError:
                return None
            return response if response.status_code == 200 else None

        return wait_for(answered, timeout_s, f"{url} ({label}) to answer 200: {self.tail(label, 500)}")

    def start_redis(self) -> None:
        """``redis``'s command (append-only file on) on its loopback port, its data here."""
        argv = shlex.split(compose()["services"]["redis"]["command"])
        data = self.tmp / "redis-data"
        data.mkdir()
        self.start("redis", [*argv, "--port", str(self.port("redis")), "--bind", "127.0.0.1", "--dir", str(data),
                             "--save", ""], env={"PATH": os.environ["PATH"]})

    def nginx_conf(self) -> Path:
        """The shipped deploy/nginx/nginx.conf with only the network mapped: the upstream
        ``web:8000`` and the listen port on loopback, and Debian's worker user for the
        image's."""
        text = self.map_text(NGINX_CONF.read_text())
        text = text.replace(f"listen {PROXY_INTERNAL_PORT} ", f"listen 127.0.0.1:{self.proxy_port} ")
        text = re.sub(r"^user\s+nginx;", "user www-data;", text, flags=re.M)
        path = self.tmp / "nginx.conf"
        path.write_text(text)
        return path

    def start_proxy(self) -> None:
        conf = self.nginx_conf()
        prefix = self.tmp / "nginx"
        prefix.mkdir(exist_ok=True)
        argv = [str(binary(NGINX, "nginx.sh")), "-p", str(prefix), "-c", str(conf), "-e", "stderr",
                "-g", f"daemon off; pid {prefix / 'nginx.pid'};"]
        self.start("proxy", argv, env={"PATH": os.environ["PATH"]})

    def start_prometheus(self, token: str) -> str:
        """Prometheus with the shipped prometheus.yml: its targets and jobs unchanged, each
        scrape sent through ``proxy_url`` to the target's loopback address (so it still
        asks for ``http://web:8000/metrics``, Host ``web:8000``), the token file here.
        Returns Prometheus's base URL."""
        config = yaml.safe_load(PROMETHEUS_YML.read_text())
        token_file = self.tmp / "metrics-token"
        token_file.write_text(token)
        for job in config["scrape_configs"]:
            targets = [t for group in job["static_configs"] for t in group["targets"]]
            hosts = {t.split(":")[0] for t in targets}
            assert len(hosts) == 1, f"job {job['job_name']}: one compose host per job here"
            job["proxy_url"] = self.base(hosts.pop())
            if "authorization" in job:
                job["authorization"]["credentials_file"] = str(token_file)
        path = self.tmp / "prometheus.yml"
        path.write_text(yaml.safe_dump(config))
        port = free_port()
        argv = [str(binary(PROMETHEUS, "prometheus.sh")), f"--config.file={path}",
                f"--storage.tsdb.path={self.tmp / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"]
        self.start("prometheus", argv, env={"PATH": os.environ["PATH"]})
        return f"http://127.0.0.1:{port}"

    def healthcheck(self, service: str) -> subprocess.CompletedProcess[str]:
        """The service's compose health check, run once in its environment (its own
        address inside the container, ``localhost:PORT``, mapped to its loopback port)."""
        test = compose()["services"][service]["healthcheck"]["test"]
        if test[0] == "CMD-SHELL":
            argv = ["sh", "-c", test[1].replace("$$", "$")]
        else:
            argv = list(test[1:])
        own = {"web": (INTERNAL["web"], self.port("web")), "proxy": (PROXY_INTERNAL_PORT, self.proxy_port),
               "redis": (INTERNAL["redis"], self.port("redis"))}
        if service in own:
            internal, mapped = own[service]
            argv = [a.replace(f"localhost:{internal}", f"localhost:{mapped}") for a in argv]
        if argv[0] == "redis-cli":
            argv[1:1] = ["-p", str(self.port("redis"))]
        if argv[0] == "python":
            argv[0] = sys.executable
        env = self.environment(service) if service in ("web", "worker", "beat") else {"PATH": os.environ["PATH"]}
        if argv[0] == "sh":
            env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
        return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)  # noqa: S603

    def wait_healthy(self, service: str, timeout_s: float = 120.0) -> None:
        """Run the health check until it passes (compose's ``service_healthy``)."""
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            proc = self.procs.get(service)
            if proc is not None and proc.poll() is not None:
                raise AssertionError(f"{service} exited ({proc.returncode}): {self.tail(service)}")
            last = self.healthcheck(service)
            if last.returncode == 0:
                return
            time.sleep(1)
        raise AssertionError(f"{service} not healthy in {timeout_s} s: {last and last.stderr[-2000:]} {self.tail(service)}")

    def wait_log(self, label: str, text: str, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text.encode() in self.logs[label].read_bytes():
                return
            if self.procs[label].poll() is not None:
                raise AssertionError(f"{label} exited: {self.tail(label)}")
            time.sleep(0.3)
        raise AssertionError(f"{label} did not log {text!r} in {timeout_s} s: {self.tail(label)}")

    def tail(self, label: str, chars: int = 3000) -> str:
        log = self.logs.get(label)
        return log.read_text(errors="replace")[-chars:] if log and log.exists() else ""

    def stop(self, label: str) -> None:
        proc = self.procs.pop(label, None)
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)

    def close(self) -> None:
        for label in reversed(list(self.procs)):
            self.stop(label)
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    # --- the stack's database, as an operator reads it (psql) ----------------------

    def _database_create(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.database}"')

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        url = self.admin_url.rsplit("/", 1)[0] + f"/{self.database}"
        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []


def maintenance_url() -> str:
    """The test database server's maintenance database (``postgres``), from the test
    settings: every stack creates its own database there."""
    db = settings.DATABASES["default"]
    return f"postgres://{db.get('USER') or 'postgres'}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/postgres"


@contextmanager
def staging_stack(tmp: Path, name: str, **extra_env: str) -> Iterator[Stack]:
    """A ``Stack`` in the staging profile (the simulator stands in for OpenRouter, as
    ``.env`` sets it) with ``extra_env`` on top; closed (its processes stopped, its
    database dropped) when the block ends."""
    stack = Stack(tmp, maintenance_url(), name=name)
    stack.extra_env["OPENROUTER_BASE_URL"] = "http://simulator:8765/api/v1"
    stack.extra_env["OPENROUTER_API_KEY"] = "sk-or-v1-staging"
    stack.extra_env.update(extra_env)
    try:
        yield stack
    finally:
        stack.close()


def wait_for(check: Callable[[], Any], timeout_s: float, what: str, every_s: float = 0.5) -> Any:
    """Poll ``check`` until it returns something truthy (returned); AssertionError after
    ``timeout_s`` naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def prometheus_targets(base: str) -> dict[str, str]:
    """``{job: health}`` of Prometheus's active targets ({} while it is not answering, or
    answers 503 "Service Unavailable" in plain text while it starts)."""
    try:
        response = httpx.get(f"{base}/api/v1/targets", timeout=5)
    except httpx.HTTPError:
        return {}
    if response.status_code != 200:
        return {}
    body = response.json()
    return {t["labels"]["job"]: t["health"] for t in body["data"]["activeTargets"]}


def dashboard_metric_names(path: Path) -> set[str]:
    """Metric names in every PromQL ``expr`` of a Grafana dashboard (functions, label
    names and values, and range selectors left out), histogram suffixes kept."""
    exprs: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "expr" and isinstance(value, str):
                    exprs.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(path.read_text()))
    names: set[str] = set()
    for expr in exprs:
        bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"|by \([^)]*\)", " ", expr)
        for token in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", bare):
            if re.match(r"(reverie|gen_ai)_", token):
                names.add(token)
    return names
