"""URL routes: the admin site (staff), the internal API under /api/v1/, the gateway; the
site root sends a browser to the admin, where the dashboards live."""

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from canary import api
from core.favicon import favicon_view
from observability.views import breakers_view, metrics_view

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="admin:index"), name="home"),
    path("admin/", admin.site.urls),
    path("api/v1/health", api.health_view, name="api-health"),
    path("api/v1/openapi.json", api.openapi_view, name="api-openapi"),
    path("api/v1/routing/ignore", api.ignore_view, name="api-ignore"),
    path("api/v1/routing/provider", api.provider_view, name="api-provider"),
    path("api/v1/routing/breakers", breakers_view, name="api-breakers"),
    path("metrics", metrics_view, name="metrics"),
    path("favicon.ico", favicon_view, name="favicon"),
    path("", include("routing.urls")),
]

# Unknown paths, refused Hosts and crashes under /v1/ and /api/v1/ answer JSON.
handler400 = "reverie_ops.api_errors.handler400"
handler404 = "reverie_ops.api_errors.handler404"
handler500 = "reverie_ops.api_errors.handler500"
