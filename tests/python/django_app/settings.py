"""Django settings for tests/python/test_django.py: the contrib apps whose
migrations a typical project runs, and the `shop` app, against the server
on STRATA_PORT."""

import os

SECRET_KEY = "strata-test"
USE_TZ = True
TIME_ZONE = "America/Chicago"
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.admin",
    "django.contrib.messages",
    "shop",
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "postgres",
        "USER": "postgres",
        "HOST": "127.0.0.1",
        "PORT": os.environ.get("STRATA_PORT", "5432"),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The admin's template and middleware checks: no requests are served here.
SILENCED_SYSTEM_CHECKS = ["admin.E403", "admin.E408", "admin.E409", "admin.E410"]
