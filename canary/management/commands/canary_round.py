"""``python manage.py canary_round``: run one canary round and print the verdicts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from canary.models import Round
from canary.report import render_round_table
from canary.selectors import round_report
from canary.services.rounds import NO_ENDPOINTS_TITLE, RoundError, round_close_stuck, round_run
from canary.terms import Mode
from core.identifiers import validate_model_id
from core.management.strict import StrictCommand
from core.terminal import terminal_width

# Clock skew between the machine that types --now and this one.
FUTURE_TOLERANCE = timedelta(minutes=5)


def parse_now(value: str | None, flag: str = "--now") -> datetime:
    """Parse an ISO 8601 time option (naive times are UTC; None: now). Raises CommandError
    naming ``flag`` if malformed."""
    if value is None:
        return timezone.now()
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise CommandError(f"{flag} must be ISO 8601 (e.g. 2026-11-29T14:00:00Z), got {value!r}") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    # Suspensions run up to weeks past a round and the policy looks back weeks: keep every
    # such date representable (datetime ends at year 9999).
    if not 1971 <= parsed.year <= 9000:
        raise CommandError(f"{flag} must be between the years 1971 and 9000, got {value!r}")
    return parsed


class Command(StrictCommand):
    help = "Run one canary round: discover the model's endpoints, probe each pinned, judge, print."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", default=None, help="model id (default: CANARY_MODEL)")
        parser.add_argument("--language", default=None, help="force the round's language (ISO 639-1)")
        parser.add_argument("--now", default=None, help="the round's time, ISO 8601 (replay)")
        parser.add_argument("--mode", choices=[m.value for m in Mode], default=None, help="override the model's mode for this run")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            model_id = validate_model_id(settings.CANARY_MODEL if opts["model"] is None else opts["model"])
        except ValueError as exc:
            raise CommandError(f"--model: {exc}") from exc
        now = parse_now(opts["now"])
        if now > timezone.now() + FUTURE_TOLERANCE:
            # The round's decisions are real: a suspension dated in the future would hold
            # the endpoint out from today until then (and later rounds never shorten it).
            raise CommandError(f"--now may not be in the future (a replayed round is dated now or earlier), got {opts['now']!r}")
        # As the scheduled trigger does (``round_start_task``): a round left running past its
        # time budget (a lost worker) is finalised before a new one starts, so it cannot
        # stay "running" for ever when rounds are run by hand.
        closed = round_close_stuck(model_id, timezone.now())
        if closed:
            self.stderr.write(f"closed {len(closed)} round(s) of {model_id} stuck running past their budget: {', '.join(map(str, closed))}")
        try:
            rnd = round_run(model_id, now=now, language=opts["language"], mode=opts["mode"])
        except (RoundError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        report = round_report(rnd)
        if rnd.status == Round.Status.COMPLETED and not report["endpoints"]:
            self.stderr.write(f"warning: {model_id}: {NO_ENDPOINTS_TITLE} The round completed with no endpoints (admins notified).")
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(render_round_table(report, terminal_width(self.stdout)))
