"""The on-call pages in the admin: Observability > Reliability and > Circuit breakers.

Each hangs on a proxy model (``observability.models``), so the pages sit in the admin's
app list, behind its staff login, with view permissions of their own; viewing the
gateway's request events (routing) or routes is enough too.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from canary.selectors import route_canary_states
from observability.breaker_why import ADVICE, breaker_reasons, endpoint_verdicts
from observability.breakers import breaker_rows
from observability.models import BreakerBoard, Reliability
from observability.series import breaker_page_timeline, reliability_page_charts
from routing.models import Route
from routing.services.wiring import breaker_store
from routing.terms import BreakerState


class _Page(admin.ModelAdmin):
    template = ""
    title = ""
    also_allowed = ""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_view_permission(request, obj) or request.user.has_perm(self.also_allowed)

    def page_context(self, request: HttpRequest) -> dict[str, Any]:
        raise NotImplementedError

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {**self.admin_site.each_context(request), "title": self.title, "opts": self.model._meta,
                   **self.page_context(request)}
        return TemplateResponse(request, self.template, context)


@admin.register(Reliability)
class ReliabilityAdmin(_Page):
    template = "admin/observability/reliability.html"
    title = "Reliability"
    also_allowed = "routing.view_requestevent"

    def page_context(self, request: HttpRequest) -> dict[str, Any]:
        return reliability_page_charts(timezone.now())


@admin.register(BreakerBoard)
class BreakerBoardAdmin(_Page):
    template = "admin/observability/breakers.html"
    title = "Circuit breakers"
    also_allowed = "routing.view_route"

    def page_context(self, request: HttpRequest) -> dict[str, Any]:
        routes = list(Route.objects.order_by("name"))
        now_ms = int(time.time() * 1000)
        error = ""
        rows: list[Any] = []
        try:
            rows = breaker_rows(breaker_store(), [r.name for r in routes], now_ms)
        except Exception as exc:  # noqa: BLE001 - the page must render without Redis
            error = f"breaker store unavailable ({type(exc).__name__}: {exc})"
        canary = route_canary_states(routes, timezone.now())
        verdicts = endpoint_verdicts(routes)
        reasons = breaker_reasons(rows)
        with_state = {r.route for r in rows}
        return {
            "rows": [{"row": r, "opened_at": _when(r.opened_at_ms), "open_until": _when(r.open_until_ms),
                      "next_trial": _when(r.next_trial_ms), "canary": canary.get(r.route),
                      # Why: the failure that opened it, else the latest one counted.
                      "why": r.reason or (r.last_failures[0] if r.last_failures else None),
                      "verdict": verdicts.get(r.route), "attempts": reasons.get((r.route, r.failure_class), ""),
                      "advice": ADVICE.get(r.state, "")} for r in rows],
            "healthy": [{"route": r, "canary": canary.get(r.name), "verdict": verdicts.get(r.name)}
                        for r in routes if r.name not in with_state],
            "error": error,
            "open_count": sum(1 for r in rows if r.state == BreakerState.OPEN),
            "half_open_count": sum(1 for r in rows if r.state == BreakerState.HALF_OPEN),
            "timeline": breaker_page_timeline(rows, timezone.now()),
        }


def _when(ms: int | None) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, UTC) if ms else None
