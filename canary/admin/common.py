"""What the canary's ModelAdmins share: permissions, badges, the reason-asking action,
read-only bases, filters."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import helpers
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import URLPattern
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import Truncator

from canary import dashboards
from canary.exclusions import INCIDENT_MAX_HOURS
from canary.reasons import ApplyFn, ReasonForm, reasons_apply

PERM_ADD_INCIDENT = "canary.add_exclusion"
PERM_CHANGE_INCIDENT = "canary.change_exclusion"
PERM_REVIEW = "canary.review_exclusion"
PERM_MODE = "canary.change_mode"
PERM_LIFT = dashboards.PERM_LIFT
PERM_MARK_FALSE_POSITIVE = dashboards.PERM_MARK_FALSE_POSITIVE
RECENT_OUTCOMES = 8
# An incident exclusion is temporary by definition; this is the expiry the form proposes.
INCIDENT_DEFAULT_HOURS = 24


def short(text: str, chars: int = 80) -> str:
    return Truncator(text).chars(chars)


def state_html(suspended_until: Any, enforced: bool) -> str:
    """A badge: suspended (in the ignore list) or shadow (observe mode), with the end."""
    if suspended_until is None or suspended_until <= timezone.now():
        return "—"
    label, css = ("suspended", "canary-badge-suspended") if enforced else ("shadow", "canary-badge-shadow")
    return format_html(
        '<span class="canary-badge {}">{}</span> until {}', css, label, f"{suspended_until:%Y-%m-%d %H:%M} UTC"
    )


# --------------------------------------------------------------------- action forms


class ReasonActionForm(ReasonForm):
    """The reason every override asks for (the shared ``canary.reasons.ReasonForm``)."""


class IncidentExclusionActionForm(ReasonActionForm):
    """Reason plus the expiry of an incident exclusion (hours from now)."""

    expires_in_hours = forms.IntegerField(
        min_value=1, max_value=INCIDENT_MAX_HOURS, initial=INCIDENT_DEFAULT_HOURS, label="Expires in (hours)"
    )
    evidence_url = forms.URLField(required=False, label="Evidence URL (incident, ticket)", assume_scheme="https")


class PromoteActionForm(ReasonActionForm):
    evidence_url = forms.URLField(required=False, label="Evidence URL (review)", assume_scheme="https")


def ask_reason(
    modeladmin: admin.ModelAdmin[Any],
    request: HttpRequest,
    queryset: QuerySet[Any],
    *,
    action: str,
    title: str,
    explain: str,
    apply: ApplyFn,
    form_class: type[forms.Form] = ReasonActionForm,
) -> TemplateResponse | None:
    """Run an admin action that needs a reason: first show a form, then call ``apply(obj,
    cleaned_data)`` for each selected row. ``apply`` returns a success message or raises
    ``QuarantineError``/``ValueError``, shown as an error message for that row."""
    form = form_class(request.POST if "apply" in request.POST else None)
    if form.is_bound and form.is_valid():
        reasons_apply(request, queryset, apply, form.cleaned_data)
        return None  # back to the changelist, which shows the messages
    opts = modeladmin.model._meta
    return TemplateResponse(
        request,
        "admin/canary/action_form.html",
        {
            **modeladmin.admin_site.each_context(request),
            "title": title,
            "explain": explain,
            "objects": list(queryset[:200]),
            "count": queryset.count(),
            "form": form,
            "action": action,
            "select_across": request.POST.get("select_across", "0"),
            "selected": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME),
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "opts": opts,
            "app_label": opts.app_label,
        },
    )


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """History: viewable, never added, changed or deleted through the admin."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class DashboardRoutes:
    """Mixin: put the dashboards of this model before the ModelAdmin's own routes."""

    admin_site: admin.AdminSite
    model: Any

    def get_urls(self) -> list[URLPattern]:
        own: list[URLPattern] = super().get_urls()  # type: ignore[misc]
        return dashboards.dashboard_urls(self.admin_site, self.model._meta.model_name) + own


class SuspensionStateFilter(admin.SimpleListFilter):
    """Filter by suspension state now: suspended, shadow (observe), failing, none."""

    title = "state"
    parameter_name = "state"
    prefix = ""

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [
            ("suspended", "suspended (in the ignore list)"),
            ("shadow", "shadow suspension (observe)"),
            ("failing", "failing, not suspended"),
            ("ok", "not suspended"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        p, now = self.prefix, timezone.now()
        active = Q(**{f"{p}suspended_until__gt": now})
        if self.value() == "suspended":
            return queryset.filter(active, **{f"{p}enforced": True})
        if self.value() == "shadow":
            return queryset.filter(active, **{f"{p}enforced": False})
        if self.value() == "failing":
            return queryset.filter(~active, **{f"{p}fail_streak__gt": 0})
        if self.value() == "ok":
            return queryset.exclude(active)
        return queryset


class EndpointStateFilter(SuspensionStateFilter):
    prefix = "policy_state__"
