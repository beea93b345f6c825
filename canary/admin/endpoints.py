"""Admin of providers, endpoints (positive controls, incident exclusions, lifts) and their policy state."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Count, Prefetch, QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from canary.admin.common import (
    PERM_ADD_INCIDENT,
    PERM_LIFT,
    RECENT_OUTCOMES,
    DashboardRoutes,
    EndpointStateFilter,
    IncidentExclusionActionForm,
    ReadOnlyAdmin,
    SuspensionStateFilter,
    ask_reason,
    state_html,
)
from canary.dashboard_selectors import KIND_LABELS, mode_subquery
from canary.models import (
    Endpoint,
    EndpointPolicyState,
    EndpointRound,
    Provider,
)
from canary.probes import ALL_KINDS
from canary.reasons import actor_of, lift_by
from canary.services.quarantine import (
    exclusion_add,
    suspension_lift,
)
from canary.terms import Layer, Mode

# --------------------------------------------------------------------- providers, endpoints


@admin.register(Provider)
class ProviderAdmin(ReadOnlyAdmin):
    list_display = ("name", "slug", "endpoint_count", "first_seen", "last_seen")
    search_fields = ("slug", "name")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Provider]:
        return super().get_queryset(request).annotate(n_endpoints=Count("endpoints"))

    @admin.display(description="endpoints", ordering="n_endpoints")
    def endpoint_count(self, obj: Provider) -> int:
        return getattr(obj, "n_endpoints", 0)


class EndpointForm(forms.ModelForm[Endpoint]):
    """Only the positive controls are set by people; the rest comes from discovery."""

    class Meta:
        model = Endpoint
        fields = ("positive_control_kinds",)

    def clean_positive_control_kinds(self) -> list[str]:
        kinds = self.cleaned_data.get("positive_control_kinds") or []
        if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
            raise forms.ValidationError('Give a JSON list of probe kinds, e.g. ["refusal"].')
        unknown = sorted(set(kinds) - set(ALL_KINDS))
        if unknown:
            raise forms.ValidationError(f"Unknown probe kinds: {', '.join(unknown)}; known: {', '.join(ALL_KINDS)}.")
        return sorted(set(kinds))


@admin.register(Endpoint)
class EndpointAdmin(DashboardRoutes, admin.ModelAdmin[Endpoint]):
    form = EndpointForm
    list_display = (
        # The tag names the provider and the quantization (both are filters): the list
        # must fit 1,400 px.
        "tag", "model_id", "active", "state", "streak",
        "recent_outcomes", "mode", "controls", "history_link",
    )
    list_filter = ("model_id", "provider", EndpointStateFilter, "active", "quantization")
    search_fields = ("tag", "provider_name", "model_id")
    readonly_fields = (
        "model_id", "tag", "provider", "provider_name", "quantization", "context_length",
        "supported_parameters", "price_prompt_usd", "price_completion_usd", "active", "first_seen", "last_seen",
    )
    fields = readonly_fields[:5] + ("positive_control_kinds",) + readonly_fields[5:]
    actions = ("lift_suspension", "add_incident_exclusion")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Endpoint]:
        # The page's endpoints, their policy state and mode in one query, and their last
        # outcomes in one more (a sliced prefetch: a window function per endpoint).
        recent = EndpointRound.objects.order_by("-created_at", "-id").only(
            "id", "endpoint_id", "outcome", "action", "created_at", "round_id"
        )[:RECENT_OUTCOMES]
        return (
            super()
            .get_queryset(request)
            .select_related("provider", "policy_state")
            .annotate(mode=mode_subquery())
            .prefetch_related(Prefetch("endpoint_rounds", queryset=recent, to_attr="recent_rounds"))
        )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # endpoints come from discovery

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_lift_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM_LIFT)

    def has_add_incident_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM_ADD_INCIDENT)

    @admin.display(description="state")
    def state(self, obj: Endpoint) -> str:
        # A missing reverse one-to-one raises an AttributeError subclass: hasattr is the test.
        if not hasattr(obj, "policy_state"):
            return "—"
        return state_html(obj.policy_state.suspended_until, obj.policy_state.enforced)

    @admin.display(description="streak")
    def streak(self, obj: Endpoint) -> int:
        return obj.policy_state.fail_streak if hasattr(obj, "policy_state") else 0

    @admin.display(description="last outcomes (newest first)")
    def recent_outcomes(self, obj: Endpoint) -> str:
        rows: Iterable[EndpointRound] = getattr(obj, "recent_rounds", [])
        return format_html_join(
            "", '<span class="canary-dot canary-{}" title="round {}: {} {}"></span>',
            ((er.outcome, er.round_id, er.outcome, "" if er.action == "none" else er.action) for er in rows),
        ) or "—"

    @admin.display(description="mode")
    def mode(self, obj: Endpoint) -> str:
        return getattr(obj, "mode", None) or Mode.OBSERVE

    @admin.display(description="positive control of")
    def controls(self, obj: Endpoint) -> str:
        return ", ".join(KIND_LABELS.get(k, k) for k in obj.positive_control_kinds or []) or "—"

    @admin.display(description="")
    def history_link(self, obj: Endpoint) -> str:
        return format_html('<a href="{}">history</a>', reverse("admin:canary_endpoint_history", args=[obj.pk]))

    @admin.action(description="Lift the suspension of the selected endpoints…", permissions=["lift"])
    def lift_suspension(self, request: HttpRequest, queryset: QuerySet[Endpoint]) -> TemplateResponse | None:
        return ask_reason(
            self, request, queryset, action="lift_suspension", title="Lift suspensions",
            explain="The endpoints return to routing now, with a fresh streak.", apply=lift_by(request),
        )

    @admin.action(description="Exclude the selected endpoints for an incident…", permissions=["add_incident"])
    def add_incident_exclusion(self, request: HttpRequest, queryset: QuerySet[Endpoint]) -> TemplateResponse | None:
        def apply(ep: Endpoint, data: dict[str, Any]) -> str:
            now = timezone.now()
            exclusion_add(
                ep.model_id, Layer.INCIDENT, ep.tag, actor=actor_of(request), reason=data["reason"], now=now,
                expires_at=now + timedelta(hours=data["expires_in_hours"]), evidence_url=data["evidence_url"],
            )
            return f"Excluded {ep.tag} for {data['expires_in_hours']} h (incident)."

        return ask_reason(
            self, request, queryset, action="add_incident_exclusion", title="Incident exclusion",
            explain="The endpoints leave routing at once (incident layer of the ignore list) until the expiry.",
            apply=apply, form_class=IncidentExclusionActionForm,
        )

@admin.register(EndpointPolicyState)
class EndpointPolicyStateAdmin(ReadOnlyAdmin):
    list_display = (
        "endpoint_tag", "model_of", "state", "fail_streak", "clean_streak", "suspension_level",
        "last_suspended_at", "updated_at",
    )
    list_filter = (SuspensionStateFilter, "endpoint__model_id", "enforced")
    search_fields = ("endpoint__tag",)
    list_select_related = ("endpoint",)
    actions = ("lift_suspension",)

    def has_lift_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM_LIFT)

    @admin.display(description="endpoint", ordering="endpoint__tag")
    def endpoint_tag(self, obj: EndpointPolicyState) -> str:
        url = reverse("admin:canary_endpoint_history", args=[obj.endpoint_id])
        return format_html('<a href="{}">{}</a>', url, obj.endpoint.tag)

    @admin.display(description="model", ordering="endpoint__model_id")
    def model_of(self, obj: EndpointPolicyState) -> str:
        return obj.endpoint.model_id

    @admin.display(description="suspended", ordering="suspended_until")
    def state(self, obj: EndpointPolicyState) -> str:
        return state_html(obj.suspended_until, obj.enforced)

    @admin.action(description="Lift the selected suspensions…", permissions=["lift"])
    def lift_suspension(self, request: HttpRequest, queryset: QuerySet[EndpointPolicyState]) -> TemplateResponse | None:
        def apply(state: EndpointPolicyState, data: dict[str, Any]) -> str:
            suspension_lift(state.endpoint, actor=actor_of(request), reason=data["reason"], now=timezone.now())
            return f"Lifted the suspension of {state.endpoint.tag}."

        return ask_reason(
            self, request, queryset.select_related("endpoint"), action="lift_suspension", title="Lift suspensions",
            explain="The endpoints return to routing now, with a fresh streak.", apply=apply,
        )
