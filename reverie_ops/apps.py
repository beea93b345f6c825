"""The admin app configured with the project's own site (``reverie_ops.admin_site``)."""

from __future__ import annotations

from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig


class OpsAdminConfig(AdminConfig):
    default_site = "reverie_ops.admin_site.OpsAdminSite"


class ReverieOpsConfig(AppConfig):
    """The project itself as an app, for the commands that use both halves (``demo``)."""

    name = "reverie_ops"
    label = "reverie_ops"
