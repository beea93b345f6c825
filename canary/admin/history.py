"""Admin of the read-only history: rounds, probe results, per-round outcomes, notifications."""

from __future__ import annotations

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
        "weak", "cost_usd", "results_link",
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

    @admin.display(description="weak probes")
    def weak(self, obj: Round) -> str:
        return ", ".join(KIND_LABELS.get(k, k) for k in obj.weak_probes or {}) or "—"

    @admin.display(description="")
    def results_link(self, obj: Round) -> str:
        return format_html('<a href="{}">results</a>', reverse("admin:canary_round_results", args=[obj.pk]))


@admin.register(ProbeResult)
class ProbeResultAdmin(DashboardRoutes, ReadOnlyAdmin):
    list_display = (
        "created_at", "endpoint_tag", "kind", "sample", "verdict", "raw_verdict", "check_name",
        "ttft_ms", "language", "transport_kind", "serving_provider", "generation_id",
    )
    list_filter = ("kind", "verdict", "endpoint__model_id", "endpoint__provider", "transport_kind", "language")
    search_fields = ("endpoint__tag", "generation_id", "check_name", "reason")
    list_select_related = ("endpoint",)
    show_full_result_count = False

    @admin.display(description="endpoint", ordering="endpoint__tag")
    def endpoint_tag(self, obj: ProbeResult) -> str:
        return obj.endpoint.tag


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
