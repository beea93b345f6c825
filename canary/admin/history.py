"""Admin of the read-only history: rounds, probe results, per-round outcomes, notifications."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from canary.admin.common import (
    DashboardRoutes,
    ReadOnlyAdmin,
    short,
)
from canary.dashboard_selectors import KIND_LABELS
from canary.formatting import milliseconds, usd
from canary.models import (
    EndpointRound,
    Notification,
    ProbeResult,
    Round,
)
from canary.terms import Outcome

# --------------------------------------------------------------------- history (read-only)


@admin.register(Round)
class RoundAdmin(DashboardRoutes, ReadOnlyAdmin):
    list_display = (
        "started_at", "model_id", "language", "mode", "status", "endpoints", "fails", "frozen_endpoints",
        "weak", "cost", "results_link",
    )
    list_filter = ("model_id", "status", "mode", "language")
    search_fields = ("model_id", "error")
    date_hierarchy = "started_at"
    show_full_result_count = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Round]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_endpoints=Count("endpoint_rounds"),
                n_fail=Count("endpoint_rounds", filter=Q(endpoint_rounds__outcome="fail")),
                n_frozen=Count("endpoint_rounds", filter=Q(endpoint_rounds__outcome=Outcome.FROZEN)),
            )
        )

    @admin.display(description="endpoints", ordering="n_endpoints")
    def endpoints(self, obj: Round) -> int:
        return getattr(obj, "n_endpoints", 0)

    @admin.display(description="fail", ordering="n_fail")
    def fails(self, obj: Round) -> int:
        return getattr(obj, "n_fail", 0)

    @admin.display(description=Outcome.FROZEN, ordering="n_frozen")
    def frozen_endpoints(self, obj: Round) -> int:
        return getattr(obj, "n_frozen", 0)

    @admin.display(description="cost", ordering="cost_usd")
    def cost(self, obj: Round) -> str:
        return usd(obj.cost_usd, 4)

    @admin.display(description="weak probes")
    def weak(self, obj: Round) -> str:
        return ", ".join(KIND_LABELS.get(k, k) for k in obj.weak_probes or {}) or "—"

    @admin.display(description="")
    def results_link(self, obj: Round) -> str:
        return format_html('<a href="{}">results</a>', reverse("admin:canary_round_results", args=[obj.pk]))


@admin.register(ProbeResult)
class ProbeResultAdmin(DashboardRoutes, ReadOnlyAdmin):
    list_display = (
        "created_at", "endpoint_tag", "probe", "result", "check_name", "ttft", "language", "served",
    )
    list_filter = ("kind", "verdict", "endpoint__model_id", "endpoint__provider", "transport_kind", "language")
    search_fields = ("endpoint__tag", "generation_id", "check_name", "reason")
    list_select_related = ("endpoint",)
    show_full_result_count = False

    @admin.display(description="endpoint", ordering="endpoint__tag")
    def endpoint_tag(self, obj: ProbeResult) -> str:
        return obj.endpoint.tag

    # Fewer, fuller columns so the list fits 1,400 px: sample with its kind, the probe's
    # and the transport's word under the final verdict, the generation id under its host.
    @admin.display(description="probe", ordering="kind")
    def probe(self, obj: ProbeResult) -> str:
        return f"{obj.kind} #{obj.sample}" if obj.sample else obj.kind

    @admin.display(description="verdict", ordering="verdict")
    def result(self, obj: ProbeResult) -> str:
        notes = [f"probe said {obj.raw_verdict}" if obj.raw_verdict and obj.raw_verdict != obj.verdict else "",
                 obj.transport_kind]
        why = " · ".join(n for n in notes if n)
        verdict = (obj.verdict or "not judged").replace("_", " ")
        return format_html('{}<br><span class="quiet">{}</span>', verdict, why) if why else verdict

    @admin.display(description="served by", ordering="serving_provider")
    def served(self, obj: ProbeResult) -> str:
        gen = obj.generation_id or ""
        short_gen = gen if len(gen) <= 13 else f"{gen[:12]}…"
        if not short_gen:
            return obj.serving_provider or "—"
        return format_html('{}<br><code class="quiet">{}</code>', obj.serving_provider or "—", short_gen)

    @admin.display(description="TTFT", ordering="ttft_ms")
    def ttft(self, obj: ProbeResult) -> str:
        return milliseconds(obj.ttft_ms)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        # The times read rounded with their unit on the detail page too.
        raw = {"ttft_ms": "ttft", "total_ms": "total", "wait_ms": "wait"}
        return [raw.get(name, name) if isinstance(name, str) else name for name in super().get_fields(request, obj)]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        return [*super().get_readonly_fields(request, obj), "ttft", "total", "wait"]

    @admin.display(description="total time")
    def total(self, obj: ProbeResult) -> str:
        return milliseconds(obj.total_ms)

    @admin.display(description="wait before sending")
    def wait(self, obj: ProbeResult) -> str:
        return milliseconds(obj.wait_ms)


@admin.register(EndpointRound)
class EndpointRoundAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "round_link", "endpoint_tag", "outcome", "severity", "streak", "action", "suspended_until")
    list_filter = ("outcome", "action", "endpoint__model_id", "endpoint__provider")
    search_fields = ("endpoint__tag",)
    list_select_related = ("endpoint",)
    show_full_result_count = False

    @admin.display(description="endpoint", ordering="endpoint__tag")
    def endpoint_tag(self, obj: EndpointRound) -> str:
        return obj.endpoint.tag

    @admin.display(description="round")
    def round_link(self, obj: EndpointRound) -> str:
        url = reverse("admin:canary_round_results", args=[obj.round_id])
        return format_html('<a href="{}?endpoint={}#ep-{}">{}</a>', url, obj.endpoint_id, obj.endpoint_id, obj.round_id)


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "kind", "model_id", "title", "state", "attempts", "error", "sent_at")
    list_filter = ("state", "kind", "model_id")
    search_fields = ("title", "body")

    @admin.display(description="last error")
    def error(self, obj: Notification) -> str:
        return short(obj.last_error)


# --------------------------------------------------------------------- policy and overrides
