"""Admin of the internal API's service tokens (issued once, revoked, never shown again)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from canary.admin.common import (
    ReadOnlyAdmin,
)
from canary.models import (
    ServiceToken,
)
from canary.tokens import service_token_issue, service_token_revoke

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
