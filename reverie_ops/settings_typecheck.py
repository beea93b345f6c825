"""Settings for static type checking only (``[tool.django-stubs]`` in pyproject.toml).

django-stubs' mypy plugin imports the settings to learn the apps and models; a type check
has no secret and needs none, so it runs the real settings with DEBUG on. Never deployed.
"""

import os

os.environ.setdefault("DJANGO_DEBUG", "true")

from reverie_ops.settings import *  # noqa: E402, F403
