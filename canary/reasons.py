"""The one reason-asking flow of the manual overrides, shared by the admin actions
(``canary.admin``, many rows at once) and the dashboard buttons (``canary.dashboards``, one
row): every override asks why, calls one service per row, and reports each row's result
as a message. A refused override (``QuarantineError``, ``ValueError``) is a message,
never a 500.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest
from django.utils import timezone

from canary.models import Decision, Endpoint
from canary.services.quarantine import (
    QuarantineError,
    decision_mark_false_positive,
    suspension_lift,
)

# ``apply(row, cleaned_data)`` calls the service and returns the success message.
ApplyFn = Callable[[Any, dict[str, Any]], str]


class ReasonForm(forms.Form):
    """Every manual override asks why; the reason goes into the audit row."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)


class ReasonNextForm(ReasonForm):
    """The dashboard buttons' form: the reason, and where to return (``next``)."""

    next = forms.CharField(widget=forms.HiddenInput, required=False)


def actor_of(request: HttpRequest) -> str:
    """Who is acting: the staff user's username, recorded as the audit row's actor."""
    return str(request.user.get_username())


def reasons_apply(
    request: HttpRequest, rows: Iterable[Any], apply: ApplyFn, cleaned_data: dict[str, Any], *, name_rows: bool = True
) -> int:
    """Apply a confirmed override to each row and add one message per row (success, or
    the refusal, prefixed with the row when ``name_rows``). Returns how many succeeded."""
    done = 0
    for row in rows:
        try:
            message = apply(row, cleaned_data)
        except (QuarantineError, ValueError) as exc:
            messages.error(request, f"{row}: {exc}" if name_rows else str(exc))
        else:
            messages.success(request, message)
            done += 1
    return done


def lift_by(request: HttpRequest) -> ApplyFn:
    """The lift override as ``request``'s user: lift one endpoint's suspension now."""

    def lift(ep: Endpoint, data: dict[str, Any]) -> str:
        suspension_lift(ep, actor=actor_of(request), reason=data["reason"], now=timezone.now())
        return f"Lifted the suspension of {ep.tag}."

    return lift


def false_positive_by(request: HttpRequest) -> ApplyFn:
    """The false-positive override as ``request``'s user: a new audit row on one decision."""

    def mark(decision: Decision, data: dict[str, Any]) -> str:
        decision_mark_false_positive(decision, actor=actor_of(request), reason=data["reason"], now=timezone.now())
        return f"Marked decision {decision.pk} a false positive."

    return mark
