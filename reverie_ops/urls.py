"""URL routes: the admin site (staff) and the internal API under /api/v1/."""

from django.contrib import admin
from django.urls import path

urlpatterns = [
    path("admin/", admin.site.urls),
]
