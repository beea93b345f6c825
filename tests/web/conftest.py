"""Fixtures of the staff web UI tests: staff users per group and a generated history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from canary.groups import groups_ensure
from tests.web.history import MODEL, history_build

PASSWORD = "correct horse battery staple"  # noqa: S105 - test users only


def slot_floor(at: datetime) -> datetime:
    """``at`` rounded down to its 30-minute round slot."""
    return at.replace(minute=at.minute - at.minute % 30, second=0, microsecond=0)


@pytest.fixture
def staff(db):
    """Factory: ``staff("operator")`` is a staff user in that group, logged into a Client."""
    groups_ensure()

    def _make(group: str | None, *, superuser: bool = False) -> Client:
        name = f"{group or 'nobody'}{'-root' if superuser else ''}"
        user = User.objects.create_user(name, password=PASSWORD, is_staff=True, is_superuser=superuser)
        if group:
            user.groups.add(Group.objects.get(name=group))
        client = Client()
        client.force_login(user)
        return client

    return _make


@pytest.fixture
def viewer(staff) -> Client:
    return staff("viewer")


@pytest.fixture
def operator(staff) -> Client:
    return staff("operator")


@pytest.fixture
def reviewer(staff) -> Client:
    return staff("reviewer")


@pytest.fixture
def now() -> datetime:
    return timezone.now().astimezone(UTC)


@pytest.fixture
def day_history(db, now):
    """One day of observe-mode history, then six hours in enforce mode (suspensions in
    force now) for the 15 endpoints of the default fleet."""
    end = slot_floor(now)
    history_build(start=end - timedelta(days=1), end=end - timedelta(hours=6), mode="observe")
    history_build(start=end - timedelta(hours=6), end=end, mode="enforce", seed=8)
    return MODEL
