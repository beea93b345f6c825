"""``python manage.py canary_replay --model ID --since ISO8601``: replay the suspension
policy over stored round outcomes and print what would have been suspended.

The way to measure false positives before switching a model from observe to enforce:
thresholds can be overridden to compare policies on the same history.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser

from canary import policy
from canary.management.commands.canary_round import parse_now
from canary.models import EndpointRound
from canary.services.quarantine import policy_settings
from canary.terms import Action, Mode
from core.identifiers import validate_model_id
from core.management.strict import StrictCommand


def replay_history(
    by_round: dict[int, list[policy.RoundInput]], started: dict[int, datetime]
) -> list[tuple[datetime, list[policy.RoundInput]]]:
    """Rounds in the order they ran. Manual re-runs may share a start time (``--now``);
    the policy replays one round per instant, so each tie is moved 1 µs after the round
    before it, keeping the order in which they were stored."""
    history: list[tuple[datetime, list[policy.RoundInput]]] = []
    for round_id in sorted(by_round, key=lambda rid: (started[rid], rid)):
        at = started[round_id]
        if history and at <= history[-1][0]:
            at = history[-1][0] + timedelta(microseconds=1)
        history.append((at, by_round[round_id]))
    return history


MAX_DAYS = 3650


def _check_days(flag: str, days: float) -> None:
    """Policy durations are positive, finite and at most ten years (datetime arithmetic on
    a replayed history must stay representable). Raises ValueError naming ``flag``."""
    if not math.isfinite(days) or not 0 < days <= MAX_DAYS:
        raise ValueError(f"{flag} values must be more than 0 and at most {MAX_DAYS} days, got {days}")


class Command(StrictCommand):
    help = "Replay the suspension policy over stored rounds; print would-be suspensions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", required=True)
        parser.add_argument("--since", required=True, help="ISO 8601")
        parser.add_argument("--until", default=None, help="ISO 8601; default now")
        parser.add_argument("--fail-rounds", type=int, default=None, help="consecutive failed rounds that suspend")
        parser.add_argument("--clean-rounds", type=int, default=None, help="consecutive clean rounds that restore")
        parser.add_argument("--floor", type=int, default=None)
        parser.add_argument("--durations-days", default=None, help="comma list, e.g. 1,3,7")
        parser.add_argument("--decay-days", type=float, default=None)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            model_id = validate_model_id(opts["model"])
        except ValueError as exc:
            raise CommandError(f"--model: {exc}") from exc
        since = parse_now(opts["since"], "--since")
        until = parse_now(opts["until"], "--until")
        if since > until:
            raise CommandError(f"--since ({since.isoformat()}) is after --until ({until.isoformat()})")
        base = policy_settings()
        try:
            durations = base.suspension_durations
            if opts["durations_days"] is not None:
                try:
                    days = [float(d) for d in opts["durations_days"].split(",")]
                except ValueError:
                    raise ValueError(f"--durations-days takes numbers separated by commas, got {opts['durations_days']!r}") from None
                if days != sorted(days):
                    raise ValueError(f"--durations-days must not decrease (escalation), got {opts['durations_days']!r}")
                for d in days:
                    _check_days("--durations-days", d)
                durations = tuple(timedelta(days=d) for d in days)
            if opts["decay_days"] is not None:
                _check_days("--decay-days", opts["decay_days"])

            def pick(name: str, default: object) -> object:
                return default if opts[name] is None else opts[name]

            settings = policy.PolicySettings(
                fail_rounds_to_suspend=pick("fail_rounds", base.fail_rounds_to_suspend),  # type: ignore[arg-type]
                clean_rounds_to_restore=pick("clean_rounds", base.clean_rounds_to_restore),  # type: ignore[arg-type]
                suspension_durations=durations,
                decay_after=base.decay_after if opts["decay_days"] is None else timedelta(days=opts["decay_days"]),
                floor=pick("floor", base.floor),  # type: ignore[arg-type]
            )
        except ValueError as exc:
            raise CommandError(f"bad threshold override: {exc}") from exc
        rows = (
            EndpointRound.objects.filter(
                round__model_id=model_id, round__started_at__gte=since, round__started_at__lte=until,
                round__status="completed",
            )
            .select_related("endpoint", "round")
            .order_by("round__started_at", "round_id")
        )
        by_round: dict[int, list[policy.RoundInput]] = defaultdict(list)
        started: dict[int, datetime] = {}
        for er in rows:
            by_round[er.round_id].append(policy.RoundInput(er.endpoint.tag, er.outcome, er.severity))
            started[er.round_id] = er.round.started_at
        fleet = max((len(inputs) for inputs in by_round.values()), default=0)
        if opts["floor"] is not None and by_round and settings.floor >= fleet:
            # Every suspension would be floor-blocked "until capacity allows", which it never
            # would: say so once rather than print that reason for each would-be suspension.
            relation = "is larger than" if settings.floor > fleet else "equals"
            raise CommandError(
                f"--floor {settings.floor} {relation} the fleet ({fleet} endpoint(s) of {model_id} in the "
                f"replayed rounds): no endpoint could ever be suspended; use --floor {fleet - 1} or less"
            )
        replayed = policy.policy_replay(replay_history(by_round, started), Mode.ENFORCE, settings)
        actions = [
            {"at": at.isoformat(), "tag": d.tag, "action": d.action, "suspended_until": d.suspended_until.isoformat() if d.suspended_until else None, "reason": d.reason}
            for at, decisions in replayed
            for d in decisions
            if d.action != "none"
        ]
        summary = {
            "model": model_id,
            "rounds": len(replayed),
            "suspensions": sum(1 for a in actions if a["action"] == "suspended"),
            Action.FLOOR_BLOCKED: sum(1 for a in actions if a["action"] == Action.FLOOR_BLOCKED),
            "actions": actions,
        }
        if opts["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(f"Replayed {summary['rounds']} rounds of {summary['model']}: {summary['suspensions']} suspensions, {summary[Action.FLOOR_BLOCKED]} floor-blocked")
        for a in actions:
            self.stdout.write(f"  {a['at']}  {a['tag']:<18} {a['action']:<14} {a['reason']}")
