"""The admin app configured with the project's own site (``reverie_ops.admin_site``)."""

from __future__ import annotations

from django.contrib.admin.apps import AdminConfig


class OpsAdminConfig(AdminConfig):
    default_site = "reverie_ops.admin_site.OpsAdminSite"
