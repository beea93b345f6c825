"""Django admin of the canary: operational state at a glance, and the manual overrides.

Changelists show what an operator needs first (suspended now and until when, streak, the
last outcomes, the model's mode). Overrides are admin actions that ask for a reason and
call the services in ``canary.services.quarantine``: the admin never writes policy state itself,
so every override leaves the same audit row as the command line would. A refused action
(``QuarantineError``) is shown as a message, never a 500.

History rows (rounds, probe results, outcomes, decisions, notifications) are read-only and
never deleted. The dashboards (``canary.dashboards``) are routed through these
ModelAdmins' ``get_urls``.

Permissions (groups in ``canary/management/commands/ensure_groups.py``):
viewer: ``view_*``; operator: incident exclusions (``add_exclusion``, ``change_exclusion``)
and lifts (``change_endpointpolicystate``); reviewer: reviewed exclusions
(``review_exclusion``), mode changes (``change_mode``), positive controls
(``change_endpoint``), false positives (``mark_false_positive``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from canary import dashboards
from canary.dashboard_selectors import KIND_LABELS, models_known
from canary.models import (
    Decision,
    Endpoint,
    EndpointPolicyState,
    EndpointRound,
    Exclusion,
    ModelConfig,
    Notification,
    ProbeResult,
    Provider,
    Round,
    ServiceToken,
)
from canary.probes import ALL_KINDS
from canary.services.quarantine import (
    QuarantineError,
    decision_mark_false_positive,
    exclusion_add,
    exclusion_promote,
    exclusion_remove,
    mode_set,
    suspension_lift,
)
from canary.terms import Action, Layer, Mode, Outcome
from canary.tokens import service_token_issue, service_token_revoke

PERM_ADD_INCIDENT = "canary.add_exclusion"
PERM_CHANGE_INCIDENT = "canary.change_exclusion"
PERM_REVIEW = "canary.review_exclusion"
PERM_MODE = "canary.change_mode"
PERM_LIFT = dashboards.PERM_LIFT
PERM_MARK_FALSE_POSITIVE = dashboards.PERM_MARK_FALSE_POSITIVE
RECENT_OUTCOMES = 8
# An incident exclusion is temporary by definition; this is the expiry the form proposes.
INCIDENT_DEFAULT_HOURS = 24


def _actor(request: HttpRequest) -> str:
    return request.user.get_username()


def _short(text: str, chars: int = 80) -> str:
    return Truncator(text).chars(chars)


def _mode_subquery() -> Subquery:
    return Subquery(ModelConfig.objects.filter(model_id=OuterRef("model_id")).values("mode")[:1])


def _state_html(suspended_until: Any, enforced: bool) -> str:
    """A badge: suspended (in the ignore list) or shadow (observe mode), with the end."""
    if suspended_until is None or suspended_until <= timezone.now():
        return "—"
    label, css = ("suspended", "canary-badge-suspended") if enforced else ("shadow", "canary-badge-shadow")
    return format_html(
        '<span class="canary-badge {}">{}</span> until {}', css, label, f"{suspended_until:%Y-%m-%d %H:%M} UTC"
    )


# --------------------------------------------------------------------- action forms


class ReasonActionForm(forms.Form):
    """The reason every override asks for."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)


class IncidentExclusionActionForm(ReasonActionForm):
    """Reason plus the expiry of an incident exclusion (hours from now)."""

    expires_in_hours = forms.IntegerField(
        min_value=1, max_value=24 * 30, initial=INCIDENT_DEFAULT_HOURS, label="Expires in (hours)"
    )
    evidence_url = forms.URLField(required=False, label="Evidence URL (incident, ticket)", assume_scheme="https")


class PromoteActionForm(ReasonActionForm):
    evidence_url = forms.URLField(required=False, label="Evidence URL (review)", assume_scheme="https")


ApplyFn = Callable[[Any, dict[str, Any]], str]


def _ask_reason(
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
        for obj in queryset:
            try:
                done = apply(obj, form.cleaned_data)
            except (QuarantineError, ValueError) as exc:
                modeladmin.message_user(request, f"{obj}: {exc}", messages.ERROR)
            else:
                modeladmin.message_user(request, done, messages.SUCCESS)
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
        "tag", "model_id", "provider_name", "quantization", "active", "state", "streak",
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
            .annotate(mode=_mode_subquery())
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
        return _state_html(obj.policy_state.suspended_until, obj.policy_state.enforced)

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
        def apply(ep: Endpoint, data: dict[str, Any]) -> str:
            suspension_lift(ep, actor=_actor(request), reason=data["reason"], now=timezone.now())
            return f"Lifted the suspension of {ep.tag}."

        return _ask_reason(
            self, request, queryset, action="lift_suspension", title="Lift suspensions",
            explain="The endpoints return to routing now, with a fresh streak.", apply=apply,
        )

    @admin.action(description="Exclude the selected endpoints for an incident…", permissions=["add_incident"])
    def add_incident_exclusion(self, request: HttpRequest, queryset: QuerySet[Endpoint]) -> TemplateResponse | None:
        def apply(ep: Endpoint, data: dict[str, Any]) -> str:
            now = timezone.now()
            exclusion_add(
                ep.model_id, Layer.INCIDENT, ep.tag, actor=_actor(request), reason=data["reason"], now=now,
                expires_at=now + timedelta(hours=data["expires_in_hours"]), evidence_url=data["evidence_url"],
            )
            return f"Excluded {ep.tag} for {data['expires_in_hours']} h (incident)."

        return _ask_reason(
            self, request, queryset, action="add_incident_exclusion", title="Incident exclusion",
            explain="The endpoints leave routing at once (incident layer of the ignore list) until the expiry.",
            apply=apply, form_class=IncidentExclusionActionForm,
        )


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
        return _short(obj.last_error)


# --------------------------------------------------------------------- policy and overrides


@admin.register(ModelConfig)
class ModelConfigAdmin(ReadOnlyAdmin):
    list_display = ("model_id", "mode", "updated_at", "updated_by")
    list_filter = ("mode",)
    search_fields = ("model_id",)
    actions = ("switch_to_enforce", "switch_to_observe")

    def has_mode_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM_MODE)

    def _switch(self, request: HttpRequest, queryset: QuerySet[ModelConfig], mode: str) -> TemplateResponse | None:
        def apply(config: ModelConfig, data: dict[str, Any]) -> str:
            mode_set(config.model_id, mode, actor=_actor(request), reason=data["reason"], now=timezone.now())
            return f"{config.model_id} is now in {mode} mode."

        explain = (
            "Enforce: canary suspensions enter the ignore list and routing avoids the endpoints."
            if mode == Mode.ENFORCE
            else "Observe: the canary only records what it would suspend; routing sees no change."
        )
        return _ask_reason(
            self, request, queryset, action=f"switch_to_{mode}", title=f"Switch to {mode} mode",
            explain=explain, apply=apply,
        )

    @admin.action(description="Switch the selected models to enforce mode…", permissions=["mode"])
    def switch_to_enforce(self, request: HttpRequest, queryset: QuerySet[ModelConfig]) -> TemplateResponse | None:
        return self._switch(request, queryset, Mode.ENFORCE)

    @admin.action(description="Switch the selected models to observe mode…", permissions=["mode"])
    def switch_to_observe(self, request: HttpRequest, queryset: QuerySet[ModelConfig]) -> TemplateResponse | None:
        return self._switch(request, queryset, Mode.OBSERVE)


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
        return _state_html(obj.suspended_until, obj.enforced)

    @admin.action(description="Lift the selected suspensions…", permissions=["lift"])
    def lift_suspension(self, request: HttpRequest, queryset: QuerySet[EndpointPolicyState]) -> TemplateResponse | None:
        def apply(state: EndpointPolicyState, data: dict[str, Any]) -> str:
            suspension_lift(state.endpoint, actor=_actor(request), reason=data["reason"], now=timezone.now())
            return f"Lifted the suspension of {state.endpoint.tag}."

        return _ask_reason(
            self, request, queryset.select_related("endpoint"), action="lift_suspension", title="Lift suspensions",
            explain="The endpoints return to routing now, with a fresh streak.", apply=apply,
        )


@admin.register(Decision)
class DecisionAdmin(DashboardRoutes, ReadOnlyAdmin):
    list_display = (
        "created_at", "action", "model_id", "endpoint_tag", "mode", "actor", "reason_short",
        "suspended_until", "round_link", "refers", "marked_false_positive",
    )
    list_filter = ("action", "model_id", "mode", "actor")
    search_fields = ("reason", "endpoint__tag", "actor")
    list_select_related = ("endpoint",)
    show_full_result_count = False
    actions = ("mark_false_positive",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Decision]:
        marked = Decision.objects.filter(refers_to=OuterRef("pk"), action=Action.FALSE_POSITIVE)
        return super().get_queryset(request).annotate(marked_fp=Exists(marked))

    def has_mark_false_positive_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM_MARK_FALSE_POSITIVE)

    @admin.display(description="endpoint", ordering="endpoint__tag")
    def endpoint_tag(self, obj: Decision) -> str:
        return obj.endpoint.tag if obj.endpoint_id and obj.endpoint else "—"

    @admin.display(description="reason")
    def reason_short(self, obj: Decision) -> str:
        return _short(obj.reason)

    @admin.display(description="round")
    def round_link(self, obj: Decision) -> str:
        if not obj.round_id:
            return "—"
        return format_html('<a href="{}">{}</a>', reverse("admin:canary_round_results", args=[obj.round_id]), obj.round_id)

    @admin.display(description="refers to")
    def refers(self, obj: Decision) -> str:
        if not obj.refers_to_id:
            return "—"
        url = reverse("admin:canary_decision_change", args=[obj.refers_to_id])
        return format_html('<a href="{}">#{}</a>', url, obj.refers_to_id)

    @admin.display(description="false positive", boolean=True)
    def marked_false_positive(self, obj: Decision) -> bool | None:
        if obj.action not in (Action.SUSPENDED, Action.WOULD_SUSPEND):
            return None
        return bool(getattr(obj, "marked_fp", False))

    @admin.action(description="Mark the selected suspensions false positives…", permissions=["mark_false_positive"])
    def mark_false_positive(self, request: HttpRequest, queryset: QuerySet[Decision]) -> TemplateResponse | None:
        def apply(decision: Decision, data: dict[str, Any]) -> str:
            decision_mark_false_positive(decision, actor=_actor(request), reason=data["reason"], now=timezone.now())
            return f"Marked decision {decision.pk} a false positive."

        return _ask_reason(
            self, request, queryset, action="mark_false_positive", title="Mark false positives",
            explain="A new audit row refers to each decision; the decisions themselves never change.",
            apply=apply,
        )


class ExclusionAddForm(forms.Form):
    """A new reviewed or incident exclusion; the service validates it once more."""

    model_id = forms.ChoiceField(label="Model", choices=())
    layer = forms.ChoiceField(choices=())
    target = forms.CharField(max_length=200, help_text="provider slug (e.g. dynamo) or endpoint tag (e.g. borealis/fp8)")
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)
    expires_at = forms.DateTimeField(
        label="Expires at (UTC)", required=False,
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="Required for incident exclusions; reviewed exclusions usually never expire.",
    )
    evidence_url = forms.URLField(required=False, assume_scheme="https")

    def __init__(self, *args: Any, models: list[str], layers: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model_id"].choices = [(m, m) for m in models]  # type: ignore[attr-defined]
        self.fields["layer"].choices = [(x, x) for x in layers]  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("layer") == Layer.INCIDENT and not data.get("expires_at"):
            self.add_error("expires_at", "An incident exclusion needs an expiry.")
        return data


class InForceFilter(admin.SimpleListFilter):
    title = "in force"
    parameter_name = "in_force"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [("yes", "in force now"), ("no", "removed or expired")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        live = Q(active=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        if self.value() == "yes":
            return queryset.filter(live)
        if self.value() == "no":
            return queryset.exclude(live)
        return queryset


@admin.register(Exclusion)
class ExclusionAdmin(DashboardRoutes, ReadOnlyAdmin):
    list_display = (
        "target", "model_id", "layer", "in_force", "expires_at", "created_by", "created_at",
        "reason_short", "removed",
    )
    list_filter = ("layer", InForceFilter, "active", "model_id")
    search_fields = ("target", "reason", "created_by")
    actions = ("remove_exclusions", "promote_to_reviewed")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm(PERM_ADD_INCIDENT) or request.user.has_perm(PERM_REVIEW)

    def has_remove_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM_CHANGE_INCIDENT) or request.user.has_perm(PERM_REVIEW)

    def has_review_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM_REVIEW)

    @admin.display(description="in force", boolean=True)
    def in_force(self, obj: Exclusion) -> bool:
        return obj.active and (obj.expires_at is None or obj.expires_at > timezone.now())

    @admin.display(description="reason")
    def reason_short(self, obj: Exclusion) -> str:
        return _short(obj.reason)

    @admin.display(description="removed")
    def removed(self, obj: Exclusion) -> str:
        if obj.active:
            return "—"
        return f"{obj.removed_by} {obj.removed_at:%Y-%m-%d %H:%M}: {_short(obj.removal_reason, 40)}" if obj.removed_at else "yes"

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Add through ``exclusion_add`` (validation, audit row), not a raw model save."""
        if not self.has_add_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        layers: list[str] = ([Layer.INCIDENT.value] if request.user.has_perm(PERM_ADD_INCIDENT) else []) + (
            [Layer.REVIEWED.value] if request.user.has_perm(PERM_REVIEW) else []
        )
        initial = {
            "model_id": request.GET.get("model_id", ""),
            "target": request.GET.get("target", ""),
            "layer": layers[0],
            "expires_at": timezone.now() + timedelta(hours=INCIDENT_DEFAULT_HOURS),
        }
        form = ExclusionAddForm(request.POST or None, models=models_known(), layers=layers, initial=initial)
        if request.method == "POST" and form.is_valid():
            cd = form.cleaned_data
            try:
                row = exclusion_add(
                    cd["model_id"], cd["layer"], cd["target"], actor=_actor(request), reason=cd["reason"],
                    now=timezone.now(), expires_at=cd["expires_at"], evidence_url=cd["evidence_url"] or "",
                )
            except QuarantineError as exc:
                form.add_error(None, str(exc))
            else:
                self.log_addition(request, row, [{"added": {}}])
                self.message_user(request, f"Added the {row.layer} exclusion of {row.target}.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:canary_exclusion_ignore_list"))
        opts = self.model._meta
        return TemplateResponse(
            request,
            "admin/canary/exclusion_add.html",
            {
                **self.admin_site.each_context(request),
                "title": "Add an exclusion",
                "form": form,
                "opts": opts,
                "app_label": opts.app_label,
                **(extra_context or {}),
            },
        )

    @admin.action(description="Remove the selected exclusions…", permissions=["remove"])
    def remove_exclusions(self, request: HttpRequest, queryset: QuerySet[Exclusion]) -> TemplateResponse | None:
        def apply(exclusion: Exclusion, data: dict[str, Any]) -> str:
            needed = PERM_REVIEW if exclusion.layer == Layer.REVIEWED else PERM_CHANGE_INCIDENT
            if not request.user.has_perm(needed):
                raise QuarantineError(f"removing a {exclusion.layer} exclusion needs the {needed} permission")
            if not exclusion.active:
                raise QuarantineError("already removed")
            exclusion_remove(exclusion, actor=_actor(request), reason=data["reason"], now=timezone.now())
            return f"Removed the {exclusion.layer} exclusion of {exclusion.target}."

        return _ask_reason(
            self, request, queryset, action="remove_exclusions", title="Remove exclusions",
            explain="The targets return to routing unless another layer still excludes them. The rows are kept.",
            apply=apply,
        )

    @admin.action(description="Promote the selected incident exclusions to reviewed…", permissions=["review"])
    def promote_to_reviewed(self, request: HttpRequest, queryset: QuerySet[Exclusion]) -> TemplateResponse | None:
        def apply(exclusion: Exclusion, data: dict[str, Any]) -> str:
            exclusion_promote(
                exclusion, actor=_actor(request), reason=data["reason"], now=timezone.now(),
                evidence_url=data["evidence_url"],
            )
            return f"Promoted {exclusion.target} to a reviewed exclusion."

        return _ask_reason(
            self, request, queryset, action="promote_to_reviewed", title="Promote to reviewed exclusions",
            explain="A reviewed exclusion (no expiry) replaces each incident exclusion.",
            apply=apply, form_class=PromoteActionForm,
        )


# --------------------------------------------------------------------- service tokens


class ServiceTokenForm(forms.Form):
    name = forms.CharField(max_length=150, help_text="the backend service that will use the token, e.g. chat-api")


@admin.register(ServiceToken)
class ServiceTokenAdmin(ReadOnlyAdmin):
    list_display = ("name", "prefix", "created_at", "revoked_at")
    search_fields = ("name",)
    actions = ("revoke",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm("canary.add_servicetoken")

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("canary.change_servicetoken")

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Issue through ``service_token_issue``; the token is shown once, on this page."""
        if not self.has_add_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        form = ServiceTokenForm(request.POST or None)
        token = ""
        if request.method == "POST" and form.is_valid():
            try:
                row, token = service_token_issue(form.cleaned_data["name"])
            except ValueError as exc:
                form.add_error("name", str(exc))
            else:
                self.log_addition(request, row, [{"added": {}}])
        opts = self.model._meta
        response = TemplateResponse(
            request,
            "admin/canary/service_token_add.html",
            {
                **self.admin_site.each_context(request),
                "title": "Issue a service token",
                "form": form,
                "token": token,
                "opts": opts,
                "app_label": opts.app_label,
            },
        )
        # The token must not linger in a cache or the browser's history.
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke the selected tokens", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ServiceToken]) -> None:
        for row in queryset.filter(revoked_at__isnull=True):
            service_token_revoke(row.name)
            self.message_user(request, f"Revoked the token of {row.name}.", messages.SUCCESS)
