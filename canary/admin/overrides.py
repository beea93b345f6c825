"""Admin of the models' modes and of the decisions (audit rows; false positives)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from canary.admin.common import (
    PERM_MARK_FALSE_POSITIVE,
    PERM_MODE,
    DashboardRoutes,
    ReadOnlyAdmin,
    ask_reason,
    short,
)
from canary.models import (
    Decision,
    ModelConfig,
)
from canary.reasons import actor_of, false_positive_by
from canary.services.quarantine import (
    mode_set,
)
from canary.terms import Action, Mode


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
            mode_set(config.model_id, mode, actor=actor_of(request), reason=data["reason"], now=timezone.now())
            return f"{config.model_id} is now in {mode} mode."

        explain = (
            "Enforce: canary suspensions enter the ignore list and routing avoids the endpoints."
            if mode == Mode.ENFORCE
            else "Observe: the canary only records what it would suspend; routing sees no change."
        )
        return ask_reason(
            self, request, queryset, action=f"switch_to_{mode}", title=f"Switch to {mode} mode",
            explain=explain, apply=apply,
        )

    @admin.action(description="Switch the selected models to enforce mode…", permissions=["mode"])
    def switch_to_enforce(self, request: HttpRequest, queryset: QuerySet[ModelConfig]) -> TemplateResponse | None:
        return self._switch(request, queryset, Mode.ENFORCE)

    @admin.action(description="Switch the selected models to observe mode…", permissions=["mode"])
    def switch_to_observe(self, request: HttpRequest, queryset: QuerySet[ModelConfig]) -> TemplateResponse | None:
        return self._switch(request, queryset, Mode.OBSERVE)

@admin.register(Decision)
class DecisionAdmin(DashboardRoutes, ReadOnlyAdmin):
    list_display = (
        # The model id is a filter, not a column: the list must fit 1,400 px.
        "created_at", "action_in_mode", "endpoint_tag", "actor", "reason_short",
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
        return short(obj.reason, 160)

    @admin.display(description="action", ordering="action")
    def action_in_mode(self, obj: Decision) -> str:
        label = obj.get_action_display()
        return format_html('{}<br><span class="quiet">{}</span>', label, obj.mode) if obj.mode else str(label)

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

    @admin.display(description="false positive")
    def marked_false_positive(self, obj: Decision) -> str:
        # Words, not Django's boolean icons: a red cross would read as a failure where it
        # means "no" or "not applicable" (only suspensions can be marked).
        if obj.action not in (Action.SUSPENDED, Action.WOULD_SUSPEND):
            return "—"
        return "marked" if getattr(obj, "marked_fp", False) else "no"

    @admin.action(description="Mark the selected suspensions false positives…", permissions=["mark_false_positive"])
    def mark_false_positive(self, request: HttpRequest, queryset: QuerySet[Decision]) -> TemplateResponse | None:
        return ask_reason(
            self, request, queryset, action="mark_false_positive", title="Mark false positives",
            explain="A new audit row refers to each decision; the decisions themselves never change.",
            apply=false_positive_by(request),
        )
