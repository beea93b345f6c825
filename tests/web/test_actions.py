"""Admin overrides: each calls its service with a reason, is refused without the
permission, and shows a refused action as a message (never a 500)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from canary.groups import GROUPS, groups_ensure
from canary.models import (
    Decision,
    Endpoint,
    EndpointPolicyState,
    Exclusion,
    ModelConfig,
)
from canary.services.ignore_list import ignore_list_get
from canary.services.quarantine import QuarantineError, exclusion_add
from core.models import ServiceToken
from core.tokens import token_hash

pytestmark = pytest.mark.django_db


def state(tag: str) -> EndpointPolicyState:
    return EndpointPolicyState.objects.get(endpoint__tag=tag)


def ignored(model: str) -> list[str]:
    return ignore_list_get(model, timezone.now())["ignore"]


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def run_action(client: Client, model: str, action: str, pks: list[int], **fields) -> object:
    """Post an admin action through its reason form (the second, confirming POST)."""
    url = reverse(f"admin:canary_{model}_changelist")
    first = client.post(url, {"action": action, ACTION_CHECKBOX_NAME: pks})
    assert first.status_code == 200 and b'name="apply"' in first.content, first.status_code
    return client.post(
        url, {"action": action, ACTION_CHECKBOX_NAME: pks, "apply": "1", **fields}, follow=True
    )


# --------------------------------------------------------------------- groups


def test_groups_are_created_after_migrate_and_kept_in_step():
    # The test database was migrated: the post_migrate handler made the groups.
    assert set(Group.objects.values_list("name", flat=True)) >= set(GROUPS)
    viewer = Group.objects.get(name="viewer")
    viewer.permissions.clear()
    call_command("ensure_groups", verbosity=0)
    assert viewer.permissions.count() == len(GROUPS["viewer"])
    assert groups_ensure() == {name: len(codes) for name, codes in GROUPS.items()}
    reviewer = set(Group.objects.get(name="reviewer").permissions.values_list("codename", flat=True))
    assert {"review_exclusion", "change_mode", "change_endpointpolicystate"} <= reviewer
    operator = set(Group.objects.get(name="operator").permissions.values_list("codename", flat=True))
    assert "review_exclusion" not in operator and "change_mode" not in operator


# --------------------------------------------------------------------- lifting


def test_a_viewer_cannot_lift_a_suspension(viewer: Client, day_history):
    ep = Endpoint.objects.get(tag="borealis/fp8")
    until = state("borealis/fp8").suspended_until
    url = reverse("admin:canary_endpoint_lift", args=[ep.pk])
    assert viewer.get(url).status_code == 403
    assert viewer.post(url, {"reason": "looks fine"}).status_code == 403
    # Nor through the admin action: it is not offered.
    cl = viewer.get(reverse("admin:canary_endpointpolicystate_changelist"))
    assert b"lift_suspension" not in cl.content
    viewer.post(
        reverse("admin:canary_endpointpolicystate_changelist"),
        {"action": "lift_suspension", ACTION_CHECKBOX_NAME: [state("borealis/fp8").pk], "apply": "1", "reason": "x"},
    )
    assert state("borealis/fp8").suspended_until == until
    assert "borealis/fp8" in ignored(day_history)


def test_an_operator_lifts_a_suspension_with_a_reason(operator: Client, day_history):
    ep = Endpoint.objects.get(tag="borealis/fp8")
    assert "borealis/fp8" in ignored(day_history)
    url = reverse("admin:canary_endpoint_lift", args=[ep.pk])
    form = operator.get(url)
    assert form.status_code == 200 and b'name="reason"' in form.content
    # No reason: the form asks again and nothing changes.
    assert operator.post(url, {"reason": ""}).status_code == 200
    assert state("borealis/fp8").suspended_until is not None
    back = reverse("admin:canary_exclusion_ignore_list")
    response = operator.post(url, {"reason": "provider fixed their tokenizer", "next": back})
    assert response.status_code == 302 and response["Location"] == back
    assert state("borealis/fp8").suspended_until is None
    assert "borealis/fp8" not in ignored(day_history)
    lifted = Decision.objects.get(action="lifted")
    assert lifted.actor == "operator" and lifted.reason == "provider fixed their tokenizer"
    page = operator.get(back)
    assert "Lifted the suspension of borealis/fp8." in messages_of(page)
    assert not any(e["target"] == "borealis/fp8" for e in page.context["lists"][0]["entries"])


def test_lifting_an_endpoint_that_is_not_suspended_is_a_message_not_a_500(operator: Client, day_history):
    ep = Endpoint.objects.get(tag="atlas/fp8")
    response = operator.post(reverse("admin:canary_endpoint_lift", args=[ep.pk]), {"reason": "why not"})
    assert response.status_code == 200
    assert "atlas/fp8 is not suspended" in messages_of(response)


def test_lift_refuses_an_offsite_next(operator: Client, day_history):
    ep = Endpoint.objects.get(tag="borealis/fp8")
    response = operator.post(
        reverse("admin:canary_endpoint_lift", args=[ep.pk]), {"reason": "ok", "next": "https://evil.example/"}
    )
    assert response["Location"] == reverse("admin:canary_endpoint_history", args=[ep.pk])


def test_lift_as_an_admin_action_on_policy_states(operator: Client, day_history):
    pks = list(EndpointPolicyState.objects.filter(enforced=True, suspended_until__gt=timezone.now()).values_list("pk", flat=True))
    assert len(pks) >= 2
    # Include one that is not suspended: its error is a message, the others are lifted.
    pks.append(state("atlas/fp8").pk)
    response = run_action(operator, "endpointpolicystate", "lift_suspension", pks, reason="incident over")
    msgs = messages_of(response)
    assert sum(m.startswith("Lifted the suspension") for m in msgs) == len(pks) - 1
    assert any("atlas/fp8 is not suspended" in m for m in msgs)
    assert ignored(day_history) == []


def test_lift_action_on_endpoints(operator: Client, day_history):
    ep = Endpoint.objects.get(tag="borealis/fp8")
    run_action(operator, "endpoint", "lift_suspension", [ep.pk], reason="fixed")
    assert state("borealis/fp8").suspended_until is None


# --------------------------------------------------------------------- exclusions


def test_an_operator_adds_an_incident_exclusion_with_an_expiry(operator: Client, day_history):
    ep = Endpoint.objects.get(tag="fjord/fp8")
    run_action(operator, "endpoint", "add_incident_exclusion", [ep.pk], reason="429 storm", expires_in_hours="6", evidence_url="")
    row = Exclusion.objects.get(target="fjord/fp8")
    assert row.layer == "incident" and row.created_by == "operator"
    assert timedelta(hours=5.9) < row.expires_at - timezone.now() < timedelta(hours=6.1)
    assert "fjord/fp8" in ignored(day_history)


def test_the_add_form_offers_operators_incident_exclusions_only(operator: Client, day_history):
    url = reverse("admin:canary_exclusion_add")
    assert b'value="reviewed"' not in operator.get(url).content
    soon = (timezone.now() + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    data = {"model_id": day_history, "target": "dynamo", "reason": "filters content", "expires_at": soon}
    refused = operator.post(url, {**data, "layer": "reviewed"})
    assert refused.status_code == 200 and not Exclusion.objects.exists()
    no_expiry = operator.post(url, {**data, "layer": "incident", "expires_at": ""})
    assert "An incident exclusion needs an expiry." in no_expiry.content.decode()
    bad_target = operator.post(url, {**data, "layer": "incident", "target": "Not A Target!"})
    assert bad_target.status_code == 200 and "neither a provider slug" in bad_target.content.decode()
    ok = operator.post(url, {**data, "layer": "incident"})
    assert ok.status_code == 302 and ok["Location"] == reverse("admin:canary_exclusion_ignore_list")
    assert "dynamo" in ignored(day_history)
    assert Decision.objects.filter(action="exclusion_added", actor="operator").count() == 1


def test_a_viewer_cannot_add_exclusions(viewer: Client, day_history):
    assert viewer.get(reverse("admin:canary_exclusion_add")).status_code == 403


def test_a_reviewer_promotes_an_incident_exclusion(reviewer: Client, operator: Client, day_history):
    now = timezone.now()
    incident = exclusion_add(day_history, "incident", "gale", actor="bob", reason="broken JSON", now=now, expires_at=now + timedelta(days=1))
    # Operators are not offered the promotion.
    assert b"promote_to_reviewed" not in operator.get(reverse("admin:canary_exclusion_changelist")).content
    run_action(reviewer, "exclusion", "promote_to_reviewed", [incident.pk], reason="confirmed by review", evidence_url="https://tickets.example/1")
    incident.refresh_from_db()
    assert not incident.active and incident.removed_by == "reviewer"
    reviewed = Exclusion.objects.get(layer="reviewed", target="gale")
    assert reviewed.active and reviewed.expires_at is None and reviewed.evidence_url == "https://tickets.example/1"
    assert ignore_list_get(day_history, timezone.now())["sources"]["reviewed"] == ["gale"]


def test_operators_remove_incident_but_not_reviewed_exclusions(operator: Client, day_history):
    now = timezone.now()
    incident = exclusion_add(day_history, "incident", "fjord", actor="bob", reason="429s", now=now, expires_at=now + timedelta(hours=1))
    reviewed = exclusion_add(day_history, "reviewed", "dynamo", actor="alice", reason="filter", now=now)
    response = run_action(operator, "exclusion", "remove_exclusions", [incident.pk, reviewed.pk], reason="over")
    incident.refresh_from_db()
    reviewed.refresh_from_db()
    assert not incident.active and reviewed.active
    assert any("needs the canary.review_exclusion permission" in m for m in messages_of(response))


# --------------------------------------------------------------------- decisions, modes


def test_a_reviewer_marks_a_would_suspend_decision_false_positive(reviewer: Client, operator: Client, day_history):
    decision = Decision.objects.filter(action="would_suspend", followups__isnull=True).first()
    url = reverse("admin:canary_decision_false_positive", args=[decision.pk])
    assert operator.get(url).status_code == 403
    response = reviewer.post(url, {"reason": "the host was fine"})
    assert response.status_code == 302
    fp = Decision.objects.get(refers_to=decision, action="false_positive")
    assert fp.actor == "reviewer" and fp.reason == "the host was fine"
    # Twice: the service refuses, the page says so.
    again = reviewer.post(url, {"reason": "again"})
    assert again.status_code == 200
    assert "this decision is already marked a false positive" in messages_of(again)


def test_false_positive_admin_action_and_its_refusals(reviewer: Client, day_history):
    would = Decision.objects.filter(action="would_suspend", followups__isnull=True).first()
    lifted_like = Decision.objects.create(
        model_id=day_history, action="restored", reason="two clean rounds", created_at=timezone.now()
    )
    response = run_action(reviewer, "decision", "mark_false_positive", [would.pk, lifted_like.pk], reason="flaky")
    assert Decision.objects.filter(refers_to=would, action="false_positive").exists()
    assert any("only suspensions can be false positives" in m for m in messages_of(response))


def test_decisions_are_read_only_and_never_deleted(staff, day_history):
    root = staff(None, superuser=True)
    decision = Decision.objects.first()
    change = reverse("admin:canary_decision_change", args=[decision.pk])
    page = root.get(change)
    assert page.status_code == 200 and b'name="_save"' not in page.content
    root.post(change, {"reason": "rewritten"})
    decision.refresh_from_db()
    assert decision.reason != "rewritten"
    assert root.get(reverse("admin:canary_decision_delete", args=[decision.pk])).status_code == 403
    assert b"delete_selected" not in root.get(reverse("admin:canary_decision_changelist")).content
    assert b"delete_selected" not in root.get(reverse("admin:canary_round_changelist")).content


def test_a_reviewer_switches_a_model_to_enforce(reviewer: Client, operator: Client, day_history):
    config = ModelConfig.objects.get(model_id=day_history)
    config.mode = "observe"
    config.save()
    assert b"switch_to_enforce" not in operator.get(reverse("admin:canary_modelconfig_changelist")).content
    run_action(reviewer, "modelconfig", "switch_to_enforce", [config.pk], reason="false-positive rate is low")
    config.refresh_from_db()
    assert config.mode == "enforce" and config.updated_by == "reviewer"
    assert Decision.objects.get(action="mode_changed").evidence == {"from": "observe", "to": "enforce"}


def test_a_reviewer_sets_positive_controls_and_unknown_kinds_are_refused(reviewer: Client, operator: Client, day_history):
    ep = Endpoint.objects.get(tag="juniper/fp8")
    url = reverse("admin:canary_endpoint_change", args=[ep.pk])
    assert b'name="positive_control_kinds"' not in operator.get(url).content
    bad = reviewer.post(url, {"positive_control_kinds": '["nonsense"]'})
    assert bad.status_code == 200 and "Unknown probe kinds" in bad.content.decode()
    ok = reviewer.post(url, {"positive_control_kinds": '["corruption"]'})
    assert ok.status_code == 302
    ep.refresh_from_db()
    assert ep.positive_control_kinds == ["corruption"]


# --------------------------------------------------------------------- service tokens


def test_a_service_token_is_shown_once_and_only_its_hash_is_stored(staff, db):
    root = staff(None, superuser=True)
    response = root.post(reverse("admin:core_servicetoken_add"), {"name": "chat-api"})
    token = response.context["token"]
    assert token.startswith("rvo_") and token in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    row = ServiceToken.objects.get(name="chat-api")
    assert row.token_hash == token_hash(token)
    assert token not in root.get(reverse("admin:core_servicetoken_changelist")).content.decode()
    dup = root.post(reverse("admin:core_servicetoken_add"), {"name": "chat-api"})
    assert "already exists" in dup.content.decode() and not dup.context["token"]


def test_revoking_a_service_token_in_the_admin_asks_for_a_reason(staff, db):
    root = staff(None, superuser=True)
    root.post(reverse("admin:core_servicetoken_add"), {"name": "chat-api"})
    row = ServiceToken.objects.get(name="chat-api")
    url = reverse("admin:core_servicetoken_changelist")
    first = root.post(url, {"action": "revoke", ACTION_CHECKBOX_NAME: [row.pk]})
    assert first.status_code == 200 and b'name="reason"' in first.content
    row.refresh_from_db()
    assert row.revoked_at is None
    blank = root.post(url, {"action": "revoke", ACTION_CHECKBOX_NAME: [row.pk], "apply": "1", "reason": ""})
    assert b'name="reason"' in blank.content
    done = root.post(url, {"action": "revoke", ACTION_CHECKBOX_NAME: [row.pk], "apply": "1", "reason": "leaked"}, follow=True)
    assert "Revoked the token of chat-api." in messages_of(done)
    row.refresh_from_db()
    assert row.revoked_at is not None and row.revoke_reason == "leaked"


def test_viewers_cannot_issue_service_tokens(viewer: Client, db):
    assert viewer.get(reverse("admin:core_servicetoken_add")).status_code == 403


@pytest.mark.parametrize(("expires_in", "says"), [
    (None, "an incident exclusion needs an expiry"),
    (timedelta(days=31), "an incident exclusion expires within 30 days; a longer one is a reviewed exclusion"),
])
def test_an_incident_exclusion_is_temporary_in_every_door(day_history, expires_in, says):
    now = timezone.now()
    with pytest.raises(QuarantineError, match=says):
        exclusion_add(day_history, "incident", "gale", actor="bob", reason="x", now=now,
                      expires_at=None if expires_in is None else now + expires_in)


def test_a_second_incident_on_an_excluded_target_is_refused_naming_the_first(operator: Client, day_history):
    now = timezone.now()
    first = exclusion_add(day_history, "incident", "gale", actor="bob", reason="broken JSON", now=now, expires_at=now + timedelta(hours=2))
    with pytest.raises(QuarantineError, match=f"gale is already excluded by incident #{first.pk} until"):
        exclusion_add(day_history, "incident", "Gale", actor="ana", reason="broken JSON too", now=now, expires_at=now + timedelta(hours=5))
    assert Exclusion.objects.filter(layer="incident", target="gale").count() == 1
    # Once it has expired (or was removed), a new incident may exclude it again.
    later = now + timedelta(hours=3)
    exclusion_add(day_history, "incident", "gale", actor="ana", reason="again", now=later, expires_at=later + timedelta(hours=1))
