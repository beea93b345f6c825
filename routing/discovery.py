"""Routes from the canary's discovery: one OpenRouter route per endpoint the canary probes.

The canary already lists every endpoint of a watched model (tag, context window,
supported parameters, prices in USD per token). ``routes_sync`` turns that listing into
gateway routes pinned by tag, so admins do not retype it: new endpoints become routes
(disabled until an admin enables them, unless asked otherwise, and accepting the
model's input modalities as the listing gives them), known routes get the
listing's capability profile, and routes whose endpoint OpenRouter no longer lists are
disabled. Admin-owned fields (enabled, model class, region, modalities) of known routes
are never overwritten, and neither is a listed field an admin edited (context length,
tools, structured-output modes, prices): each route keeps what the listing last said per
field (``Route.listing``), and a value that differs from it is the admin's. Measurements
stay with ``route_measurements_refresh``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils.text import slugify

from canary.selectors import endpoints_of_model
from core.identifiers import validate_model_id
from routing.contracts import MODALITIES
from routing.models import Route
from routing.terms import OutputMode

NAME_MAX = 100


def route_modalities(listed: Any) -> list[str]:
    """A new route's modalities: the listing's input modalities that contracts name
    (``routing.contracts.MODALITIES``; "file" is not one), text always among them."""
    kept = [m for m in (listed or []) if isinstance(m, str) and m in MODALITIES]
    return ["text", *(m for m in kept if m != "text")]


@dataclass
class RoutesSync:
    """What ``routes_sync`` did, by route name."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # endpoint tag -> why
    still_disabled: list[str] = field(default_factory=list)  # known, listed, waiting for an admin
    # route -> field -> (old, new): what this run changed
    changes: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)
    # route -> field -> (admin's value, the listing's): admin edits this run kept
    kept: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)


SYNCED_FIELDS = ("context_length", "tools", "output_modes", "price_prompt_usd", "price_completion_usd")


def plain_value(value: Any) -> Any:
    """A field's value as JSON stores it (prices as normalised decimal strings)."""
    if isinstance(value, Decimal | float):
        return format(Decimal(str(value)).normalize(), "f")
    return value


def shown_value(value: Any) -> Any:
    """A field's value for a person: ``plain_value``, and ``unknown`` for a price the
    listing did not give (None), never a $0 it is not."""
    return "unknown" if value is None else plain_value(value)  # vocabulary: a price not known, shown


def route_name(model_id: str, tag: str) -> str:
    """A stable slug for the route of ``tag`` serving ``model_id``:
    ``("meta-llama/llama-3.3-70b-instruct", "atlas/fp8")`` -> ``llama-3-3-70b-instruct-atlas-fp8``."""
    raw = f"{model_id.rsplit('/', 1)[-1]}-{tag}"
    return slugify(raw.replace("/", "-").replace(".", "-"))[:NAME_MAX]


def output_modes(supported_parameters: list[str]) -> list[str]:
    """Structured-output modes an endpoint advertises: ``response_format`` gives JSON mode,
    ``structured_outputs`` JSON-schema mode (OpenRouter's listing vocabulary). Whether the
    schema mode is *honoured* is the canary's verdict, kept in ``structured_honoured``."""
    params = set(supported_parameters)
    modes: list[str] = []
    if "response_format" in params or "structured_outputs" in params:
        modes.append(OutputMode.JSON_OBJECT)
    if "structured_outputs" in params:
        modes.append(OutputMode.JSON_SCHEMA)
    return modes


def routes_sync(model_id: str, *, enable_new: bool = False, model_class: str = "") -> RoutesSync:
    """Create or update the OpenRouter routes of ``model_id`` from the canary's endpoint
    rows (run a canary round first so they exist). ``model_class`` (e.g. ``chat-70b``, what
    contracts' ``model_classes`` allow) is set on new routes and on known ones that have
    none. ``model_id`` is compared in its canonical lower-case form (``core.identifiers``).
    Raises ValueError for a malformed id or when the canary has never discovered it."""
    model_id = validate_model_id(model_id)
    endpoints = endpoints_of_model(model_id)
    if not endpoints:
        raise ValueError(f"the canary has no endpoints for {model_id!r}: run a canary round for it first")
    result = RoutesSync()
    with transaction.atomic():
        existing = {r.provider_tag.lower(): r for r in Route.objects.filter(model_id=model_id, base_url="")}
        for ep in endpoints:
            route = existing.get(ep.tag.lower())
            if not ep.active:
                if route is not None and route.enabled:
                    route.enabled = False
                    route.save(update_fields=["enabled"])
                    result.disabled.append(route.name)
                continue
            if not ep.context_length:
                result.skipped[ep.tag] = "the listing gives no context length"
                continue
            params = list(ep.supported_parameters or [])
            profile = {
                "context_length": ep.context_length,
                "tools": "tools" in params,
                "output_modes": output_modes(params),
                # None when the listing gives none: unknown, not free (routing.provider_prefs).
                "price_prompt_usd": ep.price_prompt_usd,
                "price_completion_usd": ep.price_completion_usd,
            }
            if model_class and (route is None or not route.model_class):
                profile["model_class"] = model_class
            if route is None:
                name = route_name(model_id, ep.tag)
                if Route.objects.filter(name=name).exists():
                    result.skipped[ep.tag] = f"a route named {name!r} already exists for another target"
                    continue
                Route.objects.create(
                    name=name, model_id=model_id, provider_tag=ep.tag, modalities=route_modalities(ep.input_modalities),
                    enabled=enable_new,
                    listing={k: plain_value(profile[k]) for k in SYNCED_FIELDS}, **profile,
                )
                result.created.append(name)
                continue
            last = route.listing or {}
            changed: list[str] = []
            for key, new in profile.items():
                current = plain_value(getattr(route, key))
                if current == plain_value(new):
                    continue
                # Without a record of the listing's last value (a route from before it was
                # kept), a difference may be an admin's edit: keep it.
                if key in SYNCED_FIELDS and current != last.get(key, object()):
                    result.kept.setdefault(route.name, {})[key] = (getattr(route, key), new)
                    continue
                result.changes.setdefault(route.name, {})[key] = (getattr(route, key), new)
                setattr(route, key, new)
                changed.append(key)
            listing = {k: plain_value(profile[k]) for k in SYNCED_FIELDS}
            if listing != last:
                route.listing = listing
                changed.append("listing")
            if changed:
                route.save(update_fields=changed)
            if set(changed) - {"listing"}:
                result.updated.append(route.name)
            if not route.enabled:
                result.still_disabled.append(route.name)
    return result
