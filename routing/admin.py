"""Admin of the gateway: contracts (edited as new versions), routes with their live
breaker state, and read-only request/attempt events and ledger rows."""

from __future__ import annotations

import json
import threading
from datetime import UTC
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.html import format_html

from canary.selectors import RouteCanaryState, route_canary_states
from core.identifiers import validate_model_id
from routing.contracts import ContractError, contract_from_dict
from routing.models import AttemptEvent, ContractVersion, ExecutionLedger, RequestEvent, Route
from routing.services.contracts import contract_version_create
from routing.services.wiring import breaker_store
from routing.terms import BreakerState


def _ms(value: float | None) -> str:
    """A duration rounded to a whole ms with its unit (``230.77`` -> ``"231 ms"``)."""
    return "—" if value is None else f"{round(value):,} ms"


def _usd(value: Any) -> str:
    """An amount in USD with six decimals (``0.00018`` -> ``"$0.000180"``)."""
    return "—" if value is None else f"${float(value):.6f}"

class ContractVersionForm(forms.ModelForm):
    class Meta:
        model = ContractVersion
        fields = ["name", "spec", "note"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        spec = data.get("spec")
        if isinstance(spec, dict):
            try:
                contract_from_dict({**spec, "name": data.get("name") or spec.get("name"), "version": 1})
            except ContractError as exc:
                raise ValidationError(f"invalid contract: {exc}") from exc
        return data


@admin.register(ContractVersion)
class ContractVersionAdmin(admin.ModelAdmin):
    """Saving always creates a new version (latest + 1); stored versions never change, so
    a version in use stays what it was when events recorded it."""

    form = ContractVersionForm
    list_display = ["name", "version", "workload", "in_use", "created_by", "created_at", "note"]
    list_filter = ["name"]
    readonly_fields = ["version", "created_by", "created_at", "first_used_at"]

    @admin.display(description="workload")
    def workload(self, obj: ContractVersion) -> str:
        return str(obj.spec.get("workload", ""))

    @admin.display(description="in use")
    def in_use(self, obj: ContractVersion) -> str:
        # Words, not a red cross: a version nobody has used yet is not a failure.
        return f"since {obj.first_used_at:%Y-%m-%d %H:%M} UTC" if obj.first_used_at is not None else "not yet"

    def save_model(self, request: HttpRequest, obj: ContractVersion, form: Any, change: bool) -> None:
        spec = {**obj.spec, "name": obj.name}
        row = contract_version_create(spec, actor=request.user.get_username(), note=obj.note)
        obj.pk = row.pk
        obj.version = row.version
        messages.info(request, f"saved as new version {row}")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RouteForm(forms.ModelForm):
    """A route's model id is checked and stored in its canonical form, as ``routes_sync``
    stores it (``core.identifiers.validate_model_id``): a typo is a form error, not a
    route the gateway never matches."""

    # A base URL typed without a scheme is read as https (upstreams are TLS); naming the
    # scheme also keeps Django 6's change of the default from reaching this form.
    base_url = forms.URLField(
        required=False, assume_scheme="https", help_text="OpenAI-compatible base URL; empty = OpenRouter.",
    )

    class Meta:
        model = Route
        fields = [
            "name", "model_id", "provider_tag", "base_url", "api_key_setting", "modalities", "context_length",
            "tools", "output_modes", "model_class", "price_prompt_usd", "price_completion_usd", "region",
            "enabled", "health", "latency_ms", "structured_honoured", "measured_at",
        ]

    def clean_model_id(self) -> str:
        try:
            return validate_model_id(self.cleaned_data["model_id"])
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc


@admin.register(Route)
class RouteAdmin(admin.ModelAdmin):
    form = RouteForm
    # The model id is in the filter, not a column: routes of one model repeat it on every
    # row, and the list must fit a 1440 px window.
    list_display = ["name", "provider_tag", "context", "model_class", "enabled",
                    "health", "latency", "structured_honoured", "canary", "breaker"]
    list_filter = ["model_id", "enabled", "model_class", "region"]
    actions = ["reset_breakers"]

    class Media:
        css = {"all": ["routing/changelist.css"]}

    @admin.display(description="latency", ordering="latency_ms")
    def latency(self, obj: Route) -> str:
        return _ms(obj.latency_ms)

    @admin.display(description="context", ordering="context_length")
    def context(self, obj: Route) -> str:
        """The context length in thousands of tokens (131072 -> ``128k``): a narrow column."""
        n = obj.context_length or 0
        return f"{n // 1024}k" if n >= 1024 else str(n)
    # The canary state of every listed route, read once per changelist request (one
    # ignore-list lookup per model), per thread: admin instances are shared by threads.
    _canary = threading.local()

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        self._canary.states = route_canary_states(Route.objects.all(), timezone.now())
        try:
            return super().changelist_view(request, extra_context)
        finally:
            self._canary.states = None

    @admin.display(description="canary")
    def canary(self, obj: Route) -> str:
        """Whether the canary suspended the route's endpoint or an exclusion covers it:
        the gateway then skips the route whatever its health and enabled flag say."""
        states = getattr(self._canary, "states", None)
        if states is None:
            states = route_canary_states([obj], timezone.now())
        state: RouteCanaryState | None = states.get(obj.name)
        return state.label() if state is not None else "—"

    @admin.display(description="circuit breaker")
    def breaker(self, obj: Route) -> str:
        try:
            state = breaker_store().snapshot(obj.name)
        except Exception as exc:  # noqa: BLE001 - a changelist must render without Redis
            return f"unavailable ({type(exc).__name__})"
        opened = sorted(k[:-6] for k, v in state.items() if k.endswith(":state") and v != BreakerState.CLOSED)
        return ", ".join(f"{c}: {state[c + ':state']}" for c in opened) or BreakerState.CLOSED

    @admin.action(description="Reset circuit breakers of the selected routes")
    def reset_breakers(self, request: HttpRequest, queryset: QuerySet[Route]) -> None:
        store = breaker_store()
        for route in queryset:
            store.reset(route.name)
        messages.info(request, f"reset {queryset.count()} breaker(s)")


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class AttemptInline(admin.TabularInline):
    model = AttemptEvent
    extra = 0
    can_delete = False
    fields = ["index", "route", "status", "failure_class", "failure_reason", "http_status", "latency", "ttft",
              "fallback_reason", "validation", "breaker_state", "cost", "hedge"]
    readonly_fields = ["index", "route", "status", "failure_class", "failure_reason", "http_status", "latency", "ttft",
                       "fallback_reason", "validation", "breaker_state", "cost", "hedge"]

    @admin.display(description="latency")
    def latency(self, obj: AttemptEvent) -> str:
        return _ms(obj.latency_ms)

    @admin.display(description="TTFT")
    def ttft(self, obj: AttemptEvent) -> str:
        return _ms(obj.ttft_ms)

    @admin.display(description="cost (USD)")
    def cost(self, obj: AttemptEvent) -> str:
        return _usd(obj.cost_usd)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(RequestEvent)
class RequestEventAdmin(_ReadOnly):
    list_display = ["started", "operation", "contract", "result", "final_route", "attempt_count", "latency",
                    "cost"]
    list_display_links = ["started"]
    list_filter = ["outcome", "failure_class", "contract"]
    search_fields = ["operation_id"]
    inlines = [AttemptInline]

    class Media:
        css = {"all": ["routing/changelist.css"]}

    @admin.display(description="started at (UTC)", ordering="started_at")
    def started(self, obj: RequestEvent) -> str:
        if not obj.started_at:
            return "—"
        at = obj.started_at.astimezone(UTC)
        return format_html("{}<br>{}", at.strftime("%Y-%m-%d"), at.strftime("%H:%M:%S"))

    @admin.display(description="latency", ordering="latency_ms")
    def latency(self, obj: RequestEvent) -> str:
        return _ms(obj.latency_ms)

    @admin.display(description="cost (USD)", ordering="cost_usd")
    def cost(self, obj: RequestEvent) -> str:
        return _usd(obj.cost_usd)

    @admin.display(description="outcome", ordering="outcome")
    def result(self, obj: RequestEvent) -> str:
        """The outcome, with the failure class and error code under it (one column, so the
        list fits a 1440 px window; both stay list filters)."""
        why = " · ".join(v for v in (obj.failure_class, obj.error_code) if v)
        label = obj.get_outcome_display()
        return format_html("{}<br><span class=\"quiet\">{}</span>", label, why) if why else str(label)

    @admin.display(description="operation id", ordering="operation_id")
    def operation(self, obj: RequestEvent) -> str:
        """The operation id's first 12 characters (enough to tell rows apart and to search
        for; the whole id is on the event's page): the list fits a 1440 px window."""
        op = obj.operation_id or ""
        return op if len(op) <= 13 else f"{op[:12]}…"


@admin.register(ExecutionLedger)
class ExecutionLedgerAdmin(_ReadOnly):
    list_display = ["key", "kind", "status", "created_at", "updated_at"]
    list_filter = ["status", "kind"]
    search_fields = ["key", "operation_id"]

    @admin.display(description="result")
    def result_json(self, obj: ExecutionLedger) -> str:
        return json.dumps(obj.result)[:200]
