"""The admin site: Django's, with the operational state on its home page.

On-call opens ``/admin/`` first; the index shows what is suspended now, what observe mode
would suspend, each model's last round, the open circuit breakers and the last hour's
validation-rejection rate, each linking to its page. Staff who may see neither half see
Django's plain index.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone

from canary.dashboard_selectors import canary_overview
from observability.overview import gateway_overview

# Viewing any of these shows the canary's or the gateway's part of the home page.
CANARY_PERMS = ("canary.view_round", "canary.view_endpoint", "canary.view_exclusion", "canary.view_decision")
GATEWAY_PERMS = ("routing.view_route", "routing.view_requestevent", "observability.view_reliability",
                 "observability.view_breakerboard")


class OpsAdminSite(admin.AdminSite):
    """``admin.site``: the index carries ``ops_canary`` (``canary_overview``) and
    ``ops_gateway`` (``gateway_overview``) for users allowed to see them."""

    site_header = "Reverie Ops"
    site_title = "Reverie Ops"
    index_title = "Operations"

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> TemplateResponse:
        now = timezone.now()
        user = request.user
        context: dict[str, Any] = {"ops_now": now, **(extra_context or {})}
        if any(user.has_perm(p) for p in CANARY_PERMS):
            context["ops_canary"] = canary_overview(now)
        if any(user.has_perm(p) for p in GATEWAY_PERMS):
            context["ops_gateway"] = gateway_overview(now)
        return super().index(request, context)
