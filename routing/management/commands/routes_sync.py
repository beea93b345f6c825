"""Create or update the gateway's OpenRouter routes from the canary's discovered endpoints."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from core.identifiers import validate_model_id
from core.management.strict import StrictCommand
from routing.discovery import routes_sync, shown_value
from routing.services.contracts import contract_model_classes


class Command(StrictCommand):
    help = (
        "One route per endpoint the canary discovered for a model (pinned by tag, with the listing's "
        "context window, tools, structured-output modes and prices). New routes are disabled until an "
        "admin enables them (--enable-new enables them at once); routes of delisted endpoints are disabled."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", default=None, help="model id (default: CANARY_MODEL)")
        parser.add_argument("--enable-new", action="store_true", help="enable the routes this run creates")
        parser.add_argument("--model-class", default="", help="model class for new routes (and known ones without one), e.g. chat-70b")

    def handle(self, *args: Any, **options: Any) -> None:
        model_class = options["model_class"].strip()
        if len(model_class) > 50 or any(ch.isspace() or not ch.isprintable() for ch in model_class):
            raise CommandError(f"--model-class: at most 50 characters, no spaces or control characters, got {options['model_class']!r}")
        if model_class:
            allowed = contract_model_classes()
            if model_class not in allowed:
                raise CommandError(f"--model-class {model_class!r} is allowed by no contract (their model_classes: "
                                   f"{sorted(allowed) or 'none named'}); a route of that class would serve nothing")
        try:
            model_id = validate_model_id(settings.CANARY_MODEL if options["model"] is None else options["model"])
            result = routes_sync(model_id, enable_new=options["enable_new"], model_class=model_class)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        state = "enabled" if options["enable_new"] else "disabled until an admin enables them"
        self.stdout.write(f"{model_id}: {len(result.created)} created ({state}), {len(result.updated)} updated, "
                          f"{len(result.disabled)} disabled (delisted), {len(result.skipped)} skipped")
        for label, names in (("created", result.created), ("updated", result.updated), ("disabled", result.disabled)):
            for name in names:
                self.stdout.write(f"  {label}: {name}")
        for name, fields in result.changes.items():
            for key, (old, new) in fields.items():
                self.stdout.write(f"  {name}: {key} {shown_value(old)} -> {shown_value(new)}")
        for name, fields in result.kept.items():
            for key, (mine, listed) in fields.items():
                self.stdout.write(f"  {name}: {key} kept at {shown_value(mine)} (an admin's edit; the listing says {shown_value(listed)})")
        for tag, why in result.skipped.items():
            self.stdout.write(f"  skipped {tag}: {why}")
        if result.still_disabled:
            self.stdout.write(f"{len(result.still_disabled)} routes created earlier are still disabled: enable them in the "
                              "admin (Routing > Routes); --enable-new only enables routes this run creates")
