"""docker-compose.yml without a Docker daemon: valid against the Compose Specification's
JSON schema, and every service built from this project runs commands and reads
environment names that exist here. New services are checked the same way."""

from __future__ import annotations

import importlib
import json
import re
import shlex
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from django.conf import settings
from django.core.management import get_commands

from tests.deploy.compose import COMPOSE, ENV_EXAMPLE, ROOT, compose, env_file

CONTRACT_FILES = sorted((ROOT / "routing" / "contract_files").glob("*.json"))


def compose_spec_schema() -> dict:
    """The Compose Specification's schema (github.com/compose-spec/compose-spec,
    schema/compose-spec.json, Apache-2.0) as vendored by check-jsonschema, a dev dependency."""
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    return json.loads((vendor / "compose-spec.json").read_text())


def validator() -> jsonschema.protocols.Validator:
    """A validator of the draft the schema declares (``$schema``)."""
    schema = compose_spec_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def our_services() -> dict[str, dict]:
    """Services built from this checkout (``build:``); image-only ones run others' code."""
    return {name: svc for name, svc in compose()["services"].items() if "build" in svc}


def commands_of(service: dict) -> list[list[str]]:
    """The command lines a service runs: ``sh -c "a && b && exec c"`` is three."""
    command = service.get("command") or []
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if argv[:2] == ["sh", "-c"]:
        return [shlex.split(part.strip().removeprefix("exec ").strip()) for part in re.split(r"&&|;", argv[2])]
    return [argv]


def names_read_by_settings() -> set[str]:
    """Environment names the project reads: ``env.<cast>("NAME", ...)`` in reverie_ops/, and
    the few that observability/ reads from the process environment itself because a
    library or a process without Django reads them (prometheus-client's multiprocess
    directory, OpenTelemetry's exporter, the worker's metrics address)."""
    names: set[str] = set()
    for path in (ROOT / "reverie_ops").glob("*.py"):
        names |= set(re.findall(r"\benv\.\w+\(\s*\"([A-Z][A-Z0-9_]*)\"", path.read_text()))
    for path in (ROOT / "observability").glob("*.py"):
        names |= set(re.findall(r"environ\.get\(\s*\"([A-Z][A-Z0-9_]*)\"", path.read_text()))
    names |= {"PROMETHEUS_MULTIPROC_DIR"} if "PROMETHEUS_MULTIPROC_DIR" in (ROOT / "observability" / "multiprocess.py").read_text() else set()
    return names


def test_the_compose_file_is_valid_against_the_compose_specification():
    validator().validate(compose())


def test_the_validation_catches_a_mistyped_key():
    data = compose()
    name = next(iter(our_services()))
    data["services"][name]["comand"] = "python manage.py migrate"
    with pytest.raises(jsonschema.ValidationError, match="comand"):
        validator().validate(data)


def test_every_environment_name_of_our_services_and_the_example_is_read_by_the_settings():
    read = names_read_by_settings()
    assert {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY"} <= read
    for name, service in our_services().items():
        block = service.get("environment") or {}
        keys = list(block) if isinstance(block, dict) else [item.partition("=")[0] for item in block]
        unknown = sorted(set(keys) - read)
        assert not unknown, f"service {name} sets {unknown}, which reverie_ops/settings.py never reads"
        for env_path in [service["env_file"]] if isinstance(service.get("env_file"), str) else service.get("env_file") or []:
            assert env_path == ".env", f"service {name}: env_file {env_path} is not the documented .env"
    unknown = sorted(set(env_file(ENV_EXAMPLE)) - read)
    assert not unknown, f".env.example sets {unknown}, which the settings never read"


def test_every_command_of_our_services_exists_in_the_project():
    django_commands = get_commands()
    for name, service in our_services().items():
        for argv in commands_of(service):
            assert argv, f"service {name} has an empty command"
            program = Path(argv[0]).name
            if program.startswith("python"):
                assert argv[1] == "manage.py", f"service {name}: {argv}"
                assert argv[2] in django_commands, f"service {name} runs manage.py {argv[2]}, which is no command"
            elif program == "gunicorn":
                app = next(a for a in argv[1:] if ".wsgi" in a or ":" in a)
                if "-c" in argv:
                    assert (ROOT / argv[argv.index("-c") + 1]).is_file(), f"service {name}: {argv}"
                module, _, attr = app.partition(":")
                assert hasattr(importlib.import_module(module), attr or "application"), f"service {name}: {app}"
            elif program == "celery":
                app = argv[argv.index("-A") + 1]
                assert hasattr(importlib.import_module(app), "celery_app"), f"service {name}: -A {app}"
                if "-Q" in argv:
                    known = {settings.CELERY_TASK_DEFAULT_QUEUE} | {r["queue"] for r in settings.CELERY_TASK_ROUTES.values()}
                    assert set(argv[argv.index("-Q") + 1].split(",")) <= known, f"service {name}: queues {argv}"
            else:
                pytest.fail(f"service {name} runs {program}, which this test does not know how to check")
            for arg in argv[1:]:
                if re.fullmatch(r"[\w./-]+\.(json|yml|yaml|py)", arg) and "/" in arg:
                    assert (ROOT / arg).exists(), f"service {name} names {arg}, which does not exist"


def _gunicorn_argv() -> list[str]:
    web = [argv for argv in commands_of(compose()["services"]["web"]) if Path(argv[0]).name == "gunicorn"]
    assert len(web) == 1, "the web service runs gunicorn once"
    return web[0]


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name:
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def test_gunicorn_outlives_every_shipped_contracts_deadline():
    deadlines = {f"{c['name']}@{c['version']}": float(c["deadline_s"]) for path in CONTRACT_FILES for c in json.loads(path.read_text())}
    assert deadlines, "no shipped contracts found"
    timeout = float(_option(_gunicorn_argv(), "--timeout") or 30)
    longest = max(deadlines, key=deadlines.__getitem__)
    assert timeout > deadlines[longest], f"gunicorn --timeout {timeout:g} s kills {longest} (deadline {deadlines[longest]:g} s)"


def test_gunicorn_serves_with_threads():
    argv = _gunicorn_argv()
    assert _option(argv, "--worker-class") == "gthread" or _option(argv, "-k") == "gthread"
    assert int(_option(argv, "--threads") or 1) >= 8


def test_the_compose_file_named_here_is_the_projects():
    assert COMPOSE.is_file() and ENV_EXAMPLE.is_file()


# --- What a first `docker compose up` needs (the deployment issue) ----------------------

APP_SERVICES = ("web", "worker", "beat")
DOCKERIGNORE = ROOT / ".dockerignore"
DOCKERFILE = ROOT / "Dockerfile"


def _services() -> dict[str, dict]:
    return compose()["services"]


def test_every_long_running_service_restarts_unless_stopped_and_migrate_runs_once():
    for name, service in _services().items():
        if name == "migrate":
            assert service.get("restart") == "no", "migrate is one-shot: a restart policy would re-run it for ever"
        else:
            assert service.get("restart") == "unless-stopped", f"service {name} is not restarted when it dies"


def test_web_worker_and_beat_wait_for_a_completed_migrate_and_nothing_else_migrates():
    services = _services()
    assert commands_of(services["migrate"]) == [["python", "manage.py", "migrate", "--noinput"]]
    for name in APP_SERVICES:
        depends = services[name]["depends_on"]
        assert depends["migrate"] == {"condition": "service_completed_successfully"}, name
        assert depends["redis"]["condition"] == "service_healthy", name
        assert depends["postgres"]["condition"] == "service_healthy", name
    for name, service in our_services().items():
        if name != "migrate":
            assert not any(argv[2:3] == ["migrate"] for argv in commands_of(service) if argv), f"{name} runs migrate"
            assert not any(argv[2:3] == ["collectstatic"] for argv in commands_of(service) if argv), (
                f"{name} collects static files at every start: the image does it once, at build")


def test_redis_web_worker_and_the_proxy_have_health_checks_and_redis_persists():
    services = _services()
    for name in ("redis", "web", "worker", "proxy", "postgres"):
        assert services[name].get("healthcheck", {}).get("test"), f"service {name} has no health check"
    redis_command = shlex.split(services["redis"]["command"])
    assert redis_command[redis_command.index("--appendonly") + 1] == "yes"
    assert any(volume.endswith(":/data") for volume in services["redis"]["volumes"]), "the append-only file is not on a volume"
    assert services["proxy"]["depends_on"]["web"] == {"condition": "service_healthy"}


def test_only_the_proxy_is_published_to_every_interface_and_monitoring_only_on_loopback():
    for name, service in _services().items():
        for mapping in service.get("ports") or []:
            published = str(mapping)
            if name == "proxy":
                continue
            assert published.startswith("127.0.0.1:"), f"service {name} publishes {published} beyond the host's loopback"
    assert [str(p) for p in _services()["proxy"]["ports"]] == ["8000:8080"]
    assert "listen 8080" in (ROOT / "deploy" / "nginx" / "nginx.conf").read_text()


def test_the_hosts_internal_callers_use_are_allowed():
    # Prometheus scrapes web by its compose name; health checks run inside the container.
    allowed = env_file(ENV_EXAMPLE)["DJANGO_ALLOWED_HOSTS"].split(",")
    scrape = (ROOT / "deploy" / "observability" / "prometheus.yml").read_text()
    for host in re.findall(r'"(\w+):\d+"', scrape):
        if host in our_services() and host != "worker":  # the worker's listener is not Django
            assert host in allowed, f"Prometheus scrapes {host}, which DJANGO_ALLOWED_HOSTS refuses (400)"
    assert "localhost" in allowed


def test_the_image_keeps_the_checkout_clutter_out_and_runs_as_a_user():
    ignored = {line.strip() for line in DOCKERIGNORE.read_text().splitlines() if line.strip() and not line.startswith("#")}
    assert {".venv", ".git", "*.sqlite3", ".env", "staticfiles"} <= ignored
    assert "!.env.example" in ignored
    lines = [line.strip() for line in DOCKERFILE.read_text().splitlines()]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0"), "the image runs as root"
    assert any(line.startswith("RUN ") and "collectstatic" in line for line in lines)


def test_the_image_compiles_every_package_of_the_app_at_build():
    # The processes cannot write bytecode (PYTHONDONTWRITEBYTECODE, a root-owned /app):
    # a package left out is compiled from source at every start, on the first request.
    compile_line = next(line for line in DOCKERFILE.read_text().splitlines() if "compileall" in line)
    compiled = set(shlex.split(compile_line)[1:])
    packages = {d.name for d in ROOT.iterdir() if (d / "__init__.py").is_file() and d.name not in ("tests", "bench")}
    assert packages and packages <= compiled, f"not compiled at build: {sorted(packages - compiled)}"
    assert "manage.py" in compiled
