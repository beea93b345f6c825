"""``manage.py fake_openrouter --fleet PATH --port N [--host 127.0.0.1]``: serve the
OpenRouter simulator for a fleet file until Ctrl-C.

Thin on purpose: it validates the fleet, prints the base URL and hands over to
``fake_openrouter.server.run``. The simulator itself imports nothing from Django.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.management.strict import StrictCommand
from fake_openrouter.fleet import FleetError, load_fleet
from fake_openrouter.server import API_PREFIX, run


class Command(StrictCommand):
    help = "Serve a fake OpenRouter API on loopback, driven by a fleet file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fleet", required=True, help="path of the fleet JSON file")
        parser.add_argument("--port", type=int, default=8080, help="TCP port (default 8080)")
        parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            load_fleet(options["fleet"])
        except FleetError as exc:
            raise CommandError(f"invalid fleet {options['fleet']}: {exc}") from exc
        host, port = options["host"], options["port"]
        if not 0 < port < 65536:
            raise CommandError(f"--port must be between 1 and 65535, got {port}")

        def ready() -> None:
            self.stdout.write(f"fake OpenRouter serving {options['fleet']} at http://{host}:{port}{API_PREFIX}")
            self.stdout.flush()

        try:
            run(options["fleet"], host=host, port=port, on_ready=ready)
        except FleetError as exc:  # the file changed between the check and the start
            raise CommandError(f"invalid fleet {options['fleet']}: {exc}") from exc
        except OSError as exc:
            raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
