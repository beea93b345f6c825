"""Service tokens: rotation with an overlap, the listing, revocation with a reason."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from core.models import ServiceToken
from core.tokens import (
    last_use_flush,
    service_token_issue,
    service_token_rotate,
    service_token_verify,
)

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def bearer(token: str) -> str:
    return f"Bearer {token}"


def test_rotation_keeps_both_tokens_valid_during_the_overlap_and_keeps_history():
    _, old = service_token_issue("chat-api")
    new = run("service_token", "rotate", "chat-api", "--overlap-s", "3600").strip()
    assert new.startswith("rvo_") and new != old
    assert service_token_verify(bearer(old)) and service_token_verify(bearer(new))
    rows = list(ServiceToken.objects.filter(name="chat-api").order_by("created_at", "pk"))
    assert len(rows) == 2
    assert rows[0].revoked_at is not None and rows[0].revoked_at > timezone.now() + timedelta(minutes=59)
    assert rows[1].revoked_at is None and rows[1].rotated_from_id == rows[0].pk
    # A second rotation without overlap ends the second token at once; all three rows stay.
    newest = run("service_token", "rotate", "chat-api").strip()
    assert not service_token_verify(bearer(new)) and service_token_verify(bearer(newest))
    assert ServiceToken.objects.filter(name="chat-api").count() == 3


def test_the_old_token_stops_working_once_the_overlap_is_over():
    _, old = service_token_issue("chat-api")
    _, new = service_token_rotate("chat-api", overlap_s=60, now=timezone.now() - timedelta(minutes=2))
    assert not service_token_verify(bearer(old))
    assert service_token_verify(bearer(new))


@pytest.mark.parametrize("overlap", ["-1", "nan", "1e9"])
def test_a_rotation_refuses_an_overlap_out_of_range(overlap):
    service_token_issue("chat-api")
    with pytest.raises(CommandError, match="--overlap-s must be between 0 and 604800 seconds"):
        run("service_token", "rotate", "chat-api", "--overlap-s", overlap)
    assert ServiceToken.objects.filter(name="chat-api").count() == 1


def test_rotating_or_revoking_an_unknown_name_is_refused():
    with pytest.raises(CommandError, match="no valid service token named 'nobody'"):
        run("service_token", "rotate", "nobody")
    with pytest.raises(CommandError, match="no valid service token named 'nobody'"):
        run("service_token", "revoke", "nobody", "--reason", "gone")


def test_revoking_asks_for_a_reason_and_keeps_it_on_every_row_of_the_name():
    _, old = service_token_issue("chat-api")
    _, new = service_token_rotate("chat-api", overlap_s=3600)
    with pytest.raises(CommandError, match="--reason"):
        run("service_token", "revoke", "chat-api")
    with pytest.raises(CommandError, match="needs a reason"):
        run("service_token", "revoke", "chat-api", "--reason", "  ")
    said = run("service_token", "revoke", "chat-api", "--reason", "leaked in a log")
    assert "revoked chat-api (2 tokens)" in said and "within 5 s" in said
    assert not service_token_verify(bearer(old)) and not service_token_verify(bearer(new))
    assert set(ServiceToken.objects.filter(name="chat-api").values_list("revoke_reason", flat=True)) == {"leaked in a log"}
    # All revoked: the name can be issued again, history kept.
    service_token_issue("chat-api")
    assert ServiceToken.objects.filter(name="chat-api").count() == 3


def test_list_shows_names_creation_last_use_and_state():
    _, used = service_token_issue("chat-api")
    service_token_issue("batch")
    service_token_rotate("batch", overlap_s=3600)
    assert service_token_verify(bearer(used))
    last_use_flush()  # what the end of the request that checked it does (core.last_use)
    run("service_token", "revoke", "batch", "--reason", "retired")
    lines = run("service_token", "list").splitlines()
    assert lines[0].split() == ["name", "prefix", "created", "last", "used", "state"]
    chat = next(line for line in lines if line.startswith("chat-api"))
    today = f"{timezone.now():%Y-%m-%d}"
    assert chat.count(today) == 2 and chat.endswith("active")  # created and last used
    batch = [line for line in lines if line.startswith("batch")]
    assert len(batch) == 2 and all("revoked" in line and line.endswith(": retired") for line in batch)
    assert all(" - " in line for line in batch)  # never used


@pytest.mark.parametrize("name", ["backend\nprod", "back\tend", "\u200b", "---"])
def test_a_name_that_would_garble_lists_and_logs_is_refused(name):
    with pytest.raises(ValueError, match="printable text with a letter or digit"):
        service_token_issue(name)
    assert not ServiceToken.objects.exists()
    service_token_issue("product backend-2")  # spaces and punctuation beside letters are fine
