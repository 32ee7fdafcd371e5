"""The production checklist as Django system checks tagged for deployment: `python manage.py check --deploy`
names every missing or unsafe production setting (besides Django's own security checks). The apps that own a
setting check it themselves (sending/checks.py: SENDING_PROVIDER; llmproxy/checks.py: LLM_MODELS_FILE).
Settings are read once in config/settings.py; these checks only look at them."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

DEV_SECRET_KEY = "sandbox-only-insecure-development-key-do-not-use-in-production"


def _loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@register(Tags.security, deploy=True)
def production_settings(app_configs=None, **kwargs):
    out = []
    if settings.SANDBOX:
        out.append(Error("SANDBOX=1: sandbox mode buys nothing, sends no mail (everything lands in MAIL_SINK_DIR) "
                         "and answers LLM calls from the built-in echo upstream.",
                         hint="Set SANDBOX=0 for production.", id="core.E101"))
    if settings.SECRET_KEY == DEV_SECRET_KEY:
        out.append(Error("SECRET_KEY is the built-in development key.",
                         hint="Set SECRET_KEY to a long random value (kept secret, stable across restarts).",
                         id="core.E102"))
    if not settings.MAILBOX_SECRET_KEY:
        out.append(Error("MAILBOX_SECRET_KEY is unset: mailbox secrets at rest are encrypted with a key derived "
                         "from SECRET_KEY.",
                         hint="Set MAILBOX_SECRET_KEY to a Fernet key (required when SANDBOX=0; `python -c "
                              "\"from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())\"`).",
                         id="core.E103"))
    base = urlparse(settings.BASE_URL)
    if base.scheme != "https":
        out.append(Error(f"BASE_URL ({settings.BASE_URL}) is not https: API keys, console sessions and approval "
                         "links would travel in clear.",
                         hint="Set BASE_URL to the public https URL (TLS at a proxy that sets X-Forwarded-Proto).",
                         id="core.E104"))
    if _loopback(base.hostname or ""):
        out.append(Error(f"BASE_URL host {base.hostname or '(none)'} is a loopback name: links in mail and the "
                         "allowed Host header point at this machine.",
                         hint="Set BASE_URL to the public URL clients and mail recipients use.", id="core.E105"))
    if settings.DEBUG:
        out.append(Error("DJANGO_DEBUG=1: error pages show internals.", hint="Unset DJANGO_DEBUG.", id="core.E106"))
    if "*" in settings.ALLOWED_HOSTS:
        out.append(Error("ALLOWED_HOSTS admits any Host header.",
                         hint="Remove '*' from HOST / ALLOWED_HOSTS_EXTRA; the BASE_URL host is admitted already.",
                         id="core.E107"))
    if not settings.REDIS_URL:
        out.append(Warning("REDIS_URL is unset: the rate limit is per process and Celery uses the file-system "
                           "broker under DATA_DIR.", hint="Set REDIS_URL for production.", id="core.W108"))
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        out.append(Warning("DATABASE_URL is SQLite: fine for one machine, not for several web and worker processes.",
                           hint="Set DATABASE_URL=postgres://… for production.", id="core.W109"))
    if not settings.SANDBOX and _loopback(settings.EMAIL_HOST or ""):
        out.append(Warning("EMAIL_HOST is unset (localhost): console sign-in and approval mail go to a mail server "
                           "on this machine.", hint="Set EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, "
                           "EMAIL_HOST_PASSWORD, EMAIL_USE_TLS and DEFAULT_FROM_EMAIL.", id="core.W110"))
    return out
