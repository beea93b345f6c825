"""``python manage.py demo``: the whole product on one machine, for ``make demo``.

Starts the OpenRouter simulator on loopback with the project's copy of the default fleet,
points the canary at it, seeds the known content filter as a positive control, runs canary
rounds, prints every endpoint's verdicts, calls the gateway once per shipped contract
through the OpenAI SDK (``routing.demo``), then serves the web app with an admin login.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import sys
import threading
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError, CommandParser
from django.urls import reverse
from django.utils import timezone

from canary.models import Endpoint, EndpointPolicyState
from canary.report import render_round_table
from canary.selectors import round_report
from canary.services.client import openrouter_client
from canary.services.ignore_list import ignore_list_get
from canary.services.quarantine import mode_set
from canary.services.rounds import endpoints_sync, round_run
from canary.terms import Mode
from core.addr import addr_problem
from core.management.strict import StrictCommand
from core.redis_keys import keys_under_delete
from core.terminal import MAX_WIDTH, fill, terminal_width
from core.tokens import service_token_issue
from fake_openrouter.process import SimulatorStartError, free_port, start_simulator
from reverie_ops.handlers import wsgi_application
from routing.demo import (
    demo_breaker_report,
    demo_breaker_route,
    demo_breaker_trip,
    demo_calls,
    demo_report,
    demo_routes_ensure,
)
from routing.services.routes import routes_cache_clear
from routing.services.wiring import breaker_store, gateway_flush, gateway_reset

DEFAULT_FLEET = Path(settings.BASE_DIR) / "canary" / "fleets" / "default.json"
# The default fleet's host that runs its own content filter: the refusal probe's control.
DEMO_CONTROLS = {"dynamo/bf16": ["refusal"]}
ROUND_INTERVAL = timedelta(minutes=30)
# The demo's breakers stay open an hour (the default is 30 s, Envoy's base ejection time),
# so the one its tour opens is still open while someone looks at the pages.
DEMO_BREAKER_OPEN_S = 3600.0
REVIEWED_FILE = Path(settings.BASE_DIR) / "canary" / "exclusions" / "reviewed.json"


def demo_first_round_at(now: datetime, rounds: int) -> datetime:
    """When the first of ``rounds`` demo rounds runs: rounds are 30 minutes apart (one
    slot each) and the last runs at ``now``, so with the default two the first runs at
    now minus 30 minutes."""
    return now - ROUND_INTERVAL * max(rounds - 1, 0)


def demo_key_prefix() -> str:
    """A Redis key prefix of this demo run alone: ``demo:<8 hex>:``."""
    return f"demo:{secrets.token_hex(4)}:"


def addr_check(addr: str) -> None:
    """Raise CommandError unless ``host:port`` can be listened on now."""
    problem = addr_problem(addr)
    if problem:
        raise CommandError(problem.replace("the address must", "--addr must"))


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return None


class Command(StrictCommand):
    help = "Run the demo: simulator + canary rounds + web app on 127.0.0.1:8000."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fleet", default=str(DEFAULT_FLEET))
        parser.add_argument("--rounds", type=int, default=2)
        parser.add_argument("--addr", default="127.0.0.1:8000")
        parser.add_argument("--no-serve", action="store_true", help="stop after printing the rounds")

    # Every line is wrapped at word boundaries to the terminal's width (60 to 100), set
    # again by ``handle`` for the stream it writes to.
    _width = MAX_WIDTH

    def handle(self, *args: Any, **opts: Any) -> None:
        fleet = Path(opts["fleet"])
        self._addr = opts["addr"]
        self._width = terminal_width(self.stdout)
        if not opts["no_serve"]:
            # runserver exits the process outright on a busy port (os._exit), which would
            # leave the simulator behind: find out before anything starts.
            addr_check(opts["addr"])
        port = free_port()
        self._say(f"Starting the OpenRouter simulator with {fleet} on 127.0.0.1:{port} ...")
        try:
            sim = start_simulator(fleet, port)
        except SimulatorStartError as exc:
            raise CommandError(str(exc)) from exc
        # A plain kill (SIGTERM) must stop the simulator too: turn it into SystemExit so
        # the ``finally`` below runs, as it does for Ctrl-C.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        # The demo's breaker and live-scorecard keys live under a prefix of their own,
        # removed on exit: a demo run never leaves a 24-hour breaker or a live window behind
        # in a Redis someone else uses.
        self._prefix = demo_key_prefix()
        settings.ROUTING_BREAKER_PREFIX = f"{self._prefix}routing:breaker"
        settings.CANARY_LIVE_PREFIX = f"{self._prefix}live"
        breaker_before = getattr(settings, "ROUTING_BREAKER", None)
        settings.ROUTING_BREAKER = {**(breaker_before or {}), "open_s": DEMO_BREAKER_OPEN_S}
        gateway_reset()
        try:
            base = f"http://127.0.0.1:{port}/api/v1"
            settings.OPENROUTER_BASE_URL = base
            os.environ["OPENROUTER_BASE_URL"] = base
            self._seed()
            now = timezone.now()
            # The rounds are 30 minutes apart and the last one runs now: none is stamped in
            # the future (the pages would show a round that has not happened yet).
            first = demo_first_round_at(now, opts["rounds"])
            # The demo shows quarantine at work: the model is switched to enforce (audited).
            mode_set(settings.CANARY_MODEL, Mode.ENFORCE, actor="demo", reason="make demo shows enforcement", now=first)
            for i in range(opts["rounds"]):
                at = first + ROUND_INTERVAL * i
                self.stdout.write(f"\nCanary round {i + 1} of {opts['rounds']} (time {at:%Y-%m-%d %H:%M} UTC) ...")
                rnd = round_run(settings.CANARY_MODEL, now=at)
                self.stdout.write(render_round_table(round_report(rnd), self._width))
            self._print_quarantine(now)
            self._gateway_tour()
            if opts["no_serve"]:
                return
            password = secrets.token_urlsafe(12)
            user_model = get_user_model()
            admin, _ = user_model.objects.get_or_create(username="admin", defaults={"is_staff": True, "is_superuser": True})
            admin.is_staff = admin.is_superuser = True
            admin.set_password(password)
            admin.save()
            self.stdout.write(f"\nWeb app: http://{opts['addr']}/admin/  login: admin  password: {password}")
            self._say(f"Simulator stays up at {base} (Ctrl-C stops both).")
            self.stdout.write("")
            call_command("runserver", opts["addr"], use_reloader=False)
        finally:
            sim.terminate()
            sim.wait(timeout=5)
            self._redis_leave()
            settings.ROUTING_BREAKER = breaker_before
            gateway_reset()

    def _redis_leave(self) -> None:
        """Delete the demo's keys (its prefix) from the routing Redis; a Redis that is down
        is reported, not raised (there is nothing to clean then)."""
        try:
            client = redis.Redis.from_url(settings.ROUTING_REDIS_URL or settings.REDIS_URL, socket_timeout=2)
            removed = keys_under_delete(client, self._prefix)
        except redis.RedisError as exc:
            self.stderr.write("\n".join(fill(f"could not remove the demo's Redis keys ({self._prefix}*): {exc}", self._width)))
            return
        self._say(f"Removed the demo's {removed} Redis key(s) under {self._prefix}*.")

    def _say(self, text: str, first: str = "", rest: str = "  ") -> None:
        """``text`` wrapped at word boundaries to the terminal's width."""
        self.stdout.write("\n".join(fill(text, self._width, first=first, rest=rest)))

    def _print_quarantine(self, at: Any) -> None:
        """The suspensions the rounds decided and the merged ignore list."""
        self.stdout.write("\nSuspensions (enforce mode):")
        states = EndpointPolicyState.objects.filter(
            endpoint__model_id=settings.CANARY_MODEL, enforced=True, suspended_until__gt=at
        ).select_related("endpoint")
        for state in states.order_by("endpoint__tag"):
            self.stdout.write(f"  {state.endpoint.tag:<16} until {state.suspended_until:%Y-%m-%d %H:%M} UTC (streak {state.fail_streak})")
        if not states:
            self.stdout.write("  none")
        data = ignore_list_get(settings.CANARY_MODEL, at)
        self.stdout.write(f"\nIgnore list of {settings.CANARY_MODEL}:")
        self._say(str(data["ignore"]), first="  ", rest="   ")
        for layer, targets in data["sources"].items():
            self._say(str(targets), first=f"  {layer:<9} ", rest=" " * 13)
        name = f"demo-backend-{secrets.token_hex(3)}"
        _, token = service_token_issue(name)
        # One part a line, joined again by the shell (a trailing backslash): each fits 80
        # columns and the command can be copied whole.
        self.stdout.write(
            "\nThe product backend fetches it over the internal API (service token shown once):\n"
            f"  curl -G http://{self._addr}/api/v1/routing/ignore \\\n"
            f"    --data-urlencode model={settings.CANARY_MODEL} \\\n"
            f"    -H 'Authorization: Bearer {token}'"
        )
        self.stdout.write("")
        self._say("Scheduled rounds run on Celery with Redis; locally (PostgreSQL or SQLite, Redis on 127.0.0.1):")
        self.stdout.write(
            "  .venv/bin/celery -A reverie_ops worker -P threads -c 32 -Q canary -l info\n"
            "  .venv/bin/celery -A reverie_ops beat -l info   # exactly one beat process\n"
        )

    def _gateway_tour(self) -> None:
        """Every shipped contract once through the OpenAI SDK, over HTTP to this process."""
        demo_routes_ensure(settings.CANARY_MODEL, model_class="chat-70b")
        _, token = service_token_issue(f"demo-gateway-{secrets.token_hex(3)}")
        server = make_server("127.0.0.1", 0, wsgi_application(), handler_class=_QuietHandler)
        thread = threading.Thread(target=server.serve_forever, name="demo-gateway", daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{server.server_port}/v1"
        try:
            calls = demo_calls(base, token, model_id=settings.CANARY_MODEL, flush=gateway_flush)
            self.stdout.write(demo_report(calls, self._width))
            route = demo_breaker_route(settings.CANARY_MODEL)
            routes_cache_clear()
            # The gateway's 502/503 answers are what this part shows, and it prints them
            # itself: Django's per-response error log would only repeat them.
            request_log = logging.getLogger("django.request")
            level = request_log.level
            request_log.setLevel(logging.CRITICAL)
            try:
                trip = demo_breaker_trip(base, token, model_id=settings.CANARY_MODEL, route=route,
                                         snapshot=breaker_store().snapshot)
            finally:
                request_log.setLevel(level)
            gateway_flush()
        finally:
            server.shutdown()
            thread.join(5)
        page = f"http://{self._addr}{reverse('admin:observability_breakerboard_changelist')}"
        self.stdout.write(demo_breaker_report(trip, page_url=page, width=self._width))

    def _seed(self) -> None:
        """Discover once and mark the known content filter as the refusal probe's control."""
        endpoints_sync(settings.CANARY_MODEL, openrouter_client().list_endpoints(settings.CANARY_MODEL), timezone.now())
        for tag, kinds in DEMO_CONTROLS.items():
            Endpoint.objects.filter(model_id=settings.CANARY_MODEL, tag=tag).update(positive_control_kinds=kinds)
        # The reviewed layer comes from a versioned file in the repo.
        loaded = StringIO()
        call_command("exclusions_load", str(REVIEWED_FILE), stdout=loaded)
        self._say(loaded.getvalue().strip())
