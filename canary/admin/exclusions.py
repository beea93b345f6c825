"""Admin of the reviewed and incident exclusions (add, remove, promote)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from canary.admin.common import (
    INCIDENT_DEFAULT_HOURS,
    PERM_ADD_INCIDENT,
    PERM_CHANGE_INCIDENT,
    PERM_REVIEW,
    DashboardRoutes,
    PromoteActionForm,
    ReadOnlyAdmin,
    ask_reason,
    short,
)
from canary.dashboard_selectors import models_known
from canary.models import (
    Exclusion,
)
from canary.reasons import actor_of
from canary.services.quarantine import (
    QuarantineError,
    exclusion_add,
    exclusion_promote,
    exclusion_remove,
)
from canary.terms import Layer


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

    @admin.display(description="in force")
    def in_force(self, obj: Exclusion) -> str:
        # Words, not boolean icons: an ended exclusion is not a failure.
        if not obj.active:
            return "removed"
        return "in force" if obj.expires_at is None or obj.expires_at > timezone.now() else "expired"

    @admin.display(description="reason")
    def reason_short(self, obj: Exclusion) -> str:
        return short(obj.reason)

    @admin.display(description="removed")
    def removed(self, obj: Exclusion) -> str:
        if obj.active:
            return "—"
        return f"{obj.removed_by} {obj.removed_at:%Y-%m-%d %H:%M}: {short(obj.removal_reason, 40)}" if obj.removed_at else "yes"

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
                    cd["model_id"], cd["layer"], cd["target"], actor=actor_of(request), reason=cd["reason"],
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
            exclusion_remove(exclusion, actor=actor_of(request), reason=data["reason"], now=timezone.now())
            return f"Removed the {exclusion.layer} exclusion of {exclusion.target}."

        return ask_reason(
            self, request, queryset, action="remove_exclusions", title="Remove exclusions",
            explain="The targets return to routing unless another layer still excludes them. The rows are kept.",
            apply=apply,
        )

    @admin.action(description="Promote the selected incident exclusions to reviewed…", permissions=["review"])
    def promote_to_reviewed(self, request: HttpRequest, queryset: QuerySet[Exclusion]) -> TemplateResponse | None:
        def apply(exclusion: Exclusion, data: dict[str, Any]) -> str:
            exclusion_promote(
                exclusion, actor=actor_of(request), reason=data["reason"], now=timezone.now(),
                evidence_url=data["evidence_url"],
            )
            return f"Promoted {exclusion.target} to a reviewed exclusion."

        return ask_reason(
            self, request, queryset, action="promote_to_reviewed", title="Promote to reviewed exclusions",
            explain="A reviewed exclusion (no expiry) replaces each incident exclusion.",
            apply=apply, form_class=PromoteActionForm,
        )
