"""Staff dashboards inside the Django admin: views only (parse input, call one selector,
render). The reads live in ``canary.dashboard_selectors``; the writes (lift, false
positive) call ``canary.services.quarantine`` and show its ``QuarantineError`` as a message.

Routes are added by the canary ModelAdmins' ``get_urls`` (see ``canary.admin``), so every
page sits under ``/admin/canary/…``, is wrapped by ``AdminSite.admin_view`` (staff login)
and checks its own permission. ``dashboard_urls`` lists them per model.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from canary import dashboard_selectors as sel
from canary.dashboard_selectors.live import endpoint_live, suspect_tags
from canary.judges.run import judge_pasted
from canary.models import Decision, Endpoint
from canary.reasons import ApplyFn, ReasonNextForm, false_positive_by, lift_by, reasons_apply
from core.identifiers import validate_model_id

# Who may do what (see canary/groups.py for the groups).
PERM_VIEW_ROUNDS = "canary.view_round"
PERM_VIEW_ENDPOINTS = "canary.view_endpoint"
PERM_VIEW_EXCLUSIONS = "canary.view_exclusion"
PERM_VIEW_DECISIONS = "canary.view_decision"
PERM_VIEW_RESULTS = "canary.view_proberesult"
PERM_LIFT = "canary.change_endpointpolicystate"
# Its own permission: decisions are read-only, marking one adds a new audit row.
PERM_MARK_FALSE_POSITIVE = "canary.mark_false_positive"

# The tab bar of the dashboards: (URL name, label, permission).
NAV: tuple[tuple[str, str, str], ...] = (
    ("admin:canary_round_health", "Fleet health", PERM_VIEW_ROUNDS),
    ("admin:canary_exclusion_ignore_list", "Ignore list", PERM_VIEW_EXCLUSIONS),
    ("admin:canary_decision_observe_report", "Observe-mode report", PERM_VIEW_DECISIONS),
    ("admin:canary_round_probe_health", "Probe health", PERM_VIEW_ROUNDS),
    ("admin:canary_proberesult_correlate", "User reports", PERM_VIEW_RESULTS),
)

View = Callable[..., HttpResponse]


def _require(request: HttpRequest, perm: str) -> None:
    if not request.user.has_perm(perm):
        raise PermissionDenied


def _render(
    request: HttpRequest, site: admin.AdminSite, template: str, title: str, context: dict[str, Any]
) -> TemplateResponse:
    nav = [
        {"url": reverse(name), "label": label, "active": request.path == reverse(name)}
        for name, label, perm in NAV
        if request.user.has_perm(perm)
    ]
    return TemplateResponse(
        request, template, {**site.each_context(request), "title": title, "dashboard_nav": nav, **context}
    )


def _model_choice(request: HttpRequest) -> tuple[list[str], str]:
    """The pickers' models and the one to show. A ``?model=`` that is not a model id
    (``a/b/c``) or that the canary has no data for is said on the page (an error, a
    warning), never replaced by the default in silence."""
    models = sel.models_known()
    requested = (request.GET.get("model") or "").strip()
    model = sel.model_pick(requested, models)
    if requested:
        try:
            wanted = validate_model_id(requested)
        except ValueError as exc:
            messages.error(request, f"model: {exc}; showing {model}")
        else:
            if wanted != model:
                messages.warning(request, f"model: the canary has no data for {wanted}; showing {model}")
    return models, model


def _next_url(request: HttpRequest, default: str) -> str:
    """The ``next`` parameter when it points into this site, else ``default``."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return default


# --------------------------------------------------------------------- read-only pages


def health_matrix_view(request: HttpRequest, site: admin.AdminSite) -> HttpResponse:
    """Fleet health matrix: ``?model=`` and ``?rounds=`` (default 48, one day)."""
    _require(request, PERM_VIEW_ROUNDS)
    models, model = _model_choice(request)
    rounds = sel.clamp(request.GET.get("rounds"), sel.MATRIX_ROUNDS_DEFAULT, sel.MATRIX_ROUNDS_MAX)
    data = sel.health_matrix(model, rounds, timezone.now())
    return _render(
        request, site, "admin/canary/health_matrix.html", "Fleet health",
        {"models": models, "rounds": rounds, "suspects": suspect_tags(model), **data},
    )


def round_results_view(request: HttpRequest, site: admin.AdminSite, round_id: int) -> HttpResponse:
    """One round's probe results with evidence; ``?endpoint=`` opens that endpoint's block."""
    _require(request, PERM_VIEW_ROUNDS)
    data = sel.round_results(round_id)
    if data is None:
        raise Http404("no such round")
    focus = sel.clamp(request.GET.get("endpoint"), 0, 2**62, minimum=0)
    return _render(
        request, site, "admin/canary/round_results.html", f"Round {round_id}", {"focus": focus, **data}
    )


def endpoint_view(request: HttpRequest, site: admin.AdminSite, endpoint_id: int) -> HttpResponse:
    """Endpoint page: ``?rounds=`` chart window (default 336, a week), ``?table=`` verdict rows."""
    _require(request, PERM_VIEW_ENDPOINTS)
    chart_rounds = sel.clamp(request.GET.get("rounds"), sel.CHART_ROUNDS_DEFAULT, sel.CHART_ROUNDS_MAX)
    table_rounds = sel.clamp(request.GET.get("table"), sel.TABLE_ROUNDS_DEFAULT, sel.TABLE_ROUNDS_MAX)
    data = sel.endpoint_history(endpoint_id, chart_rounds, table_rounds, timezone.now())
    if data is None:
        raise Http404("no such endpoint")
    return _render(
        request, site, "admin/canary/endpoint.html", f"{data.endpoint.tag} ({data.endpoint.model_id})",
        {
            "h": data,
            "chart_rounds": chart_rounds,
            "table_rounds": table_rounds,
            "can_lift": request.user.has_perm(PERM_LIFT),
            "live": endpoint_live(data.endpoint, timezone.now()),
        },
    )


def ignore_list_view(request: HttpRequest, site: admin.AdminSite) -> HttpResponse:
    """The ignore list in force now, per model, with the source of each entry."""
    _require(request, PERM_VIEW_EXCLUSIONS)
    models = sel.models_known()
    return _render(
        request, site, "admin/canary/ignore_list.html", "Ignore list",
        {"lists": sel.ignore_lists(models, timezone.now()), "can_lift": request.user.has_perm(PERM_LIFT)},
    )


def observe_report_view(request: HttpRequest, site: admin.AdminSite) -> HttpResponse:
    """Observe-mode report: ``?model=``, ``?days=`` (default 30)."""
    _require(request, PERM_VIEW_DECISIONS)
    models, model = _model_choice(request)
    days = sel.clamp(request.GET.get("days"), sel.DAYS_DEFAULT, sel.DAYS_MAX)
    data = sel.observe_report(model, timezone.now() - timedelta(days=days))
    return _render(
        request, site, "admin/canary/observe_report.html", "Observe-mode report",
        {"models": models, "days": days, "can_mark": request.user.has_perm(PERM_MARK_FALSE_POSITIVE), **data},
    )


def probe_health_view(request: HttpRequest, site: admin.AdminSite) -> HttpResponse:
    """Probe health: positive controls, weak-probe rounds and the per-check baselines
    with their declared false-suspension rates; ``?model=``, ``?days=``."""
    _require(request, PERM_VIEW_ROUNDS)
    models, model = _model_choice(request)
    days = sel.clamp(request.GET.get("days"), 7, sel.DAYS_MAX)
    now = timezone.now()
    data = {**sel.probe_health(model, now - timedelta(days=days)), **sel.probe_baselines(model, now)}
    return _render(
        request, site, "admin/canary/probe_health.html", "Probe health", {"models": models, "days": days, **data}
    )


class UserReportForm(forms.Form):
    """A user's report as support staff enter it (all times UTC)."""

    model = forms.ChoiceField(choices=())
    at = forms.DateTimeField(
        label="Approximate time (UTC)",
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    language = forms.ChoiceField(label="Conversation language", required=False, choices=())
    symptom = forms.ChoiceField(choices=[(k, v[0]) for k, v in sel.SYMPTOMS.items()])
    generation_id = forms.CharField(label="Generation id (optional)", required=False, max_length=200)
    reply = forms.CharField(
        label="Reply the user saw (optional)", required=False, max_length=20_000, widget=forms.Textarea(attrs={"rows": 3})
    )

    def __init__(self, *args: Any, models: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [(m, m) for m in models]  # type: ignore[attr-defined]
        self.fields["language"].choices = [("", "any")] + [  # type: ignore[attr-defined]
            (code, code) for code in settings.CANARY_LANGUAGES
        ]


def correlate_view(request: HttpRequest, site: admin.AdminSite) -> HttpResponse:
    """User-report correlation: a GET form; with valid input, the probes and decisions of
    the model within two hours of the time, and the provider behind the generation id."""
    _require(request, PERM_VIEW_RESULTS)
    models, model = _model_choice(request)
    bound = "at" in request.GET
    data = request.GET.copy()
    data.setdefault("model", model)
    form = UserReportForm(data if bound else None, models=models, initial={"model": model})
    context: dict[str, Any] = {"form": form, "symptoms": sel.SYMPTOMS}
    if bound and form.is_valid():
        cd = form.cleaned_data
        generation_id = cd["generation_id"].strip()
        lookup = sel.generation_lookup(generation_id) if generation_id else None
        context["lookup"] = lookup
        context["report"] = sel.report_correlate(
            cd["model"], cd["at"], cd["language"], cd["symptom"], lookup.provider_name if lookup else ""
        )
        context["only_relevant"] = request.GET.get("relevant") == "1"
        if cd["reply"].strip():
            context["reply_judgement"] = judge_pasted(cd["reply"], cd["language"])
    return _render(request, site, "admin/canary/correlate.html", "User-report correlation", context)


# --------------------------------------------------------------------- single-object actions


def _reason_page(
    request: HttpRequest, site: admin.AdminSite, row: Any, apply: ApplyFn, *, back: str, title: str, explain: str,
    submit: str,
) -> HttpResponse:
    """Ask for a reason, apply one override to ``row`` (``canary.reasons``), and return to
    ``back``; a refusal is shown on the form again."""
    form = ReasonNextForm(request.POST or None, initial={"next": back})
    if request.method == "POST" and form.is_valid() and reasons_apply(request, [row], apply, form.cleaned_data, name_rows=False):
        return HttpResponseRedirect(back)
    return _render(
        request, site, "admin/canary/reason_form.html", title,
        {"form": form, "objects": [row], "explain": explain, "submit": submit, "back": back},
    )


def lift_view(request: HttpRequest, site: admin.AdminSite, endpoint_id: int) -> HttpResponse:
    """Lift one endpoint's suspension (real or shadow) after asking for a reason."""
    _require(request, PERM_LIFT)
    endpoint = Endpoint.objects.select_related("policy_state").filter(pk=endpoint_id).first()
    if endpoint is None:
        raise Http404("no such endpoint")
    return _reason_page(
        request, site, endpoint, lift_by(request),
        back=_next_url(request, reverse("admin:canary_endpoint_history", args=[endpoint.pk])),
        title=f"Lift the suspension of {endpoint.tag}",
        explain="The endpoint returns to routing now, with a fresh streak. The reason is kept in the audit log.",
        submit="Lift suspension",
    )


def false_positive_view(request: HttpRequest, site: admin.AdminSite, decision_id: int) -> HttpResponse:
    """Mark one (would-)suspend decision a false positive after asking for a reason."""
    _require(request, PERM_MARK_FALSE_POSITIVE)
    decision = Decision.objects.select_related("endpoint").filter(pk=decision_id).first()
    if decision is None:
        raise Http404("no such decision")
    return _reason_page(
        request, site, decision, false_positive_by(request),
        back=_next_url(request, reverse("admin:canary_decision_observe_report")),
        title="Mark a false positive",
        explain="A new audit row records that this suspension decision was wrong; the decision itself is never changed.",
        submit="Mark false positive",
    )


# --------------------------------------------------------------------- routes


def _wrap(site: admin.AdminSite, view: View) -> View:
    def bound(request: HttpRequest, **kwargs: Any) -> HttpResponse:
        return view(request, site, **kwargs)

    bound.__name__ = view.__name__
    bound.__doc__ = view.__doc__
    return site.admin_view(bound)


def dashboard_urls(site: admin.AdminSite, model_name: str) -> list[URLPattern]:
    """The dashboard routes that live under ``/admin/canary/<model_name>/``; URL names are
    ``admin:canary_<model_name>_<page>``. Must come before the ModelAdmin's own routes
    (its ``<path:object_id>/`` would swallow them)."""
    routes: dict[str, list[tuple[str, View, str]]] = {
        "round": [
            ("health/", health_matrix_view, "health"),
            ("probe-health/", probe_health_view, "probe_health"),
            ("<int:round_id>/results/", round_results_view, "results"),
        ],
        "endpoint": [
            ("<int:endpoint_id>/history/", endpoint_view, "history"),
            ("<int:endpoint_id>/lift/", lift_view, "lift"),
        ],
        "exclusion": [("ignore-list/", ignore_list_view, "ignore_list")],
        "decision": [
            ("observe-report/", observe_report_view, "observe_report"),
            ("<int:decision_id>/false-positive/", false_positive_view, "false_positive"),  # vocabulary: a URL name
        ],
        "proberesult": [("correlate/", correlate_view, "correlate")],
    }
    return [
        path(route, _wrap(site, view), name=f"canary_{model_name}_{name}")
        for route, view, name in routes.get(model_name, [])
    ]
