"""Admin for service tokens: issued through ``service_token_issue`` (shown once), revoked
through an action that asks for a reason; rows are never edited or deleted (the audit of
who had access). Rotation is ``manage.py service_token rotate NAME --overlap-s N``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from core.models import ServiceToken
from core.tokens import (
    REASON_MAX,
    VERIFY_CACHE_S,
    service_token_issue,
    service_token_revoke,
    token_state,
)


class ServiceTokenForm(forms.Form):
    name = forms.CharField(max_length=150, help_text="the backend service that will use the token, e.g. chat-api")


class RevokeForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=REASON_MAX)


@admin.register(ServiceToken)
class ServiceTokenAdmin(admin.ModelAdmin[ServiceToken]):
    list_display = ("name", "prefix", "created_at", "last_used_at", "state", "revoked_at", "revoke_reason")
    search_fields = ("name",)
    actions = ("revoke",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm("core.add_servicetoken")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("core.change_servicetoken")

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """Issue through ``service_token_issue``; the token is shown once, on this page."""
        if not self.has_add_permission(request):
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
            "admin/core/service_token_add.html",
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

    @admin.display(description="state")
    def state(self, obj: ServiceToken) -> str:
        return token_state(obj, timezone.now())

    @admin.action(description="Revoke the selected tokens", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ServiceToken]) -> TemplateResponse | None:
        """Ask for a reason, then revoke every valid token of the selected rows' names."""
        form = RevokeForm(request.POST if "apply" in request.POST else None)
        names = sorted({row.name for row in queryset})
        if form.is_bound and form.is_valid():
            for name in names:
                try:
                    service_token_revoke(name, reason=form.cleaned_data["reason"])
                except ServiceToken.DoesNotExist:
                    self.message_user(request, f"{name} has no valid token.", messages.WARNING)
                else:
                    self.message_user(request, f"Revoked the token of {name}.", messages.SUCCESS)
            return None
        opts = self.model._meta
        return TemplateResponse(
            request,
            "admin/core/service_token_revoke.html",
            {
                **self.admin_site.each_context(request),
                "title": "Revoke service tokens",
                "form": form,
                "names": names,
                "cache_s": f"{VERIFY_CACHE_S:g}",
                "selected": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME),
                "select_across": request.POST.get("select_across", "0"),
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "opts": opts,
                "app_label": opts.app_label,
            },
        )
