"""Settings: every environment variable of CONTRACT section 1, read in this one place with its default."""

import os
from pathlib import Path
from urllib.parse import urlparse

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def env_int(name: str, default: int) -> int:
    raw = env(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def env_bool(name: str, default: bool) -> bool:
    raw = env(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


# --- CONTRACT section 1 -----------------------------------------------------------------------------
HOST = env("HOST", "127.0.0.1")
PORT = env_int("PORT", 8000)
# The proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated addresses or networks; uvicorn's
# --forwarded-allow-ips in every start command): loopback by default. Per-address rate limits use the address they
# name; from any other peer the headers are ignored. Set it to the load balancer's addresses; never "*" where clients
# can reach the web server directly.
FORWARDED_ALLOW_IPS = env("FORWARDED_ALLOW_IPS", "127.0.0.1")
DATA_DIR = Path(env("DATA_DIR", str(BASE_DIR / "var"))).resolve()
SANDBOX = env_bool("SANDBOX", True)
DATABASE_URL = env("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}")
REDIS_URL = env("REDIS_URL")
BASE_URL = (env("BASE_URL") or f"http://{HOST}:{PORT}").rstrip("/")
MAIL_SINK_DIR = Path(env("MAIL_SINK_DIR", str(DATA_DIR / "mail"))).resolve()
SANDBOX_SMTP_PORT = env_int("SANDBOX_SMTP_PORT", 2525)
SANDBOX_PROVISION_SECONDS = float(env("SANDBOX_PROVISION_SECONDS", "2"))
SCHEDULER_TICK_SECONDS = env_int("SCHEDULER_TICK_SECONDS", 5 if SANDBOX else 60)
VERIFIER_NAMESERVERS = [s.strip() for s in (env("VERIFIER_NAMESERVERS", "") or "").split(",") if s.strip()]
VERIFIER_SMTP_PORT = env_int("VERIFIER_SMTP_PORT", 25)
VERIFIER_TIMEOUT_SECONDS = float(env("VERIFIER_TIMEOUT_SECONDS", "10"))
VERIFIER_ALLOW_PRIVATE_NETWORKS = env_bool("VERIFIER_ALLOW_PRIVATE_NETWORKS", False)
BASE_HOST = urlparse(BASE_URL).hostname or "localhost"
VERIFIER_HELO_NAME = env("VERIFIER_HELO_NAME", BASE_HOST)
VERIFIER_MAIL_FROM = env("VERIFIER_MAIL_FROM", f"verify@{BASE_HOST}")
LLM_MODELS_FILE = env("LLM_MODELS_FILE", str(BASE_DIR / "llmproxy" / "models.json"))
# The whole upstream call (connect to the last byte, a stream included); the wait for the next bytes stays 300 s.
LLM_UPSTREAM_TOTAL_SECONDS = float(env("LLM_UPSTREAM_TOTAL_SECONDS", "600"))
STRIPE_SECRET_KEY = env("STRIPE_SECRET_KEY")
STRIPE_WEBHOOK_SECRET = env("STRIPE_WEBHOOK_SECRET")
RATE_LIMIT_PER_MINUTE = env_int("RATE_LIMIT_PER_MINUTE", 300)

_DEV_SECRET_KEY = "sandbox-only-insecure-development-key-do-not-use-in-production"
SECRET_KEY = env("SECRET_KEY")
# Live mode refuses to start without its secrets, naming every missing one at once; `manage.py check --deploy`
# (core/checks.py and each app's checks.py) names the rest of the production checklist.
_LIVE_SECRETS_MISSING = [name for name in ("SECRET_KEY", "MAILBOX_SECRET_KEY") if not env(name)]
if _LIVE_SECRETS_MISSING and not SANDBOX:
    raise ImproperlyConfigured(
        f"SANDBOX=0 (live mode) requires {' and '.join(_LIVE_SECRETS_MISSING)}; set them, then run "
        "`python manage.py check --deploy` for the rest of the production checklist")
if not SECRET_KEY:
    SECRET_KEY = _DEV_SECRET_KEY

DEBUG = env_bool("DJANGO_DEBUG", False)
# Host header: only the BASE_URL host, the loopback names, HOST (unless a wildcard) and the explicit
# ALLOWED_HOSTS_EXTRA (comma-separated, e.g. an internal load-balancer name) are served; any other Host is a 400.
# Links in mail are built from BASE_URL, never from the request.
ALLOWED_HOSTS_EXTRA = [h.strip() for h in (env("ALLOWED_HOSTS_EXTRA", "") or "").split(",") if h.strip()]
ALLOWED_HOSTS = list(dict.fromkeys(
    [BASE_HOST, "127.0.0.1", "localhost", "[::1]", *([HOST] if HOST not in ("0.0.0.0", "::", "") else []),
     *ALLOWED_HOSTS_EXTRA]))
CSRF_TRUSTED_ORIGINS = [f"{urlparse(BASE_URL).scheme}://{urlparse(BASE_URL).netloc}"]
if not SANDBOX and BASE_URL.startswith("https://"):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Security headers. When BASE_URL is https: plain-http console and page requests are redirected to the BASE_URL
# host over https (SECURE_SSL_HOST, never the request's Host; behind a TLS-terminating proxy that sets
# X-Forwarded-Proto) and HSTS is sent (SECURE_HSTS_SECONDS, default one year; 0 turns it off;
# SECURE_SSL_REDIRECT=0 turns the redirect off). /healthz and /readyz stay reachable over plain http for probes.
# /v1/* and /mcp are never redirected (the redirected request would already have carried the key): over plain
# http they answer 403 https_required (core.https).
if BASE_URL.startswith("https://"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_SSL_HOST = urlparse(BASE_URL).netloc
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^v1(/|$)", r"^mcp(/|$)"]
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
# HTML pages: scripts and everything else from this origin only (no inline scripts); inline styles are allowed
# (the console's one stylesheet is inline). /docs (Swagger UI, Redoc) is exempt: core.middleware.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                           "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
                           "base-uri 'none'; frame-ancestors 'none'")

DATA_DIR.mkdir(parents=True, exist_ok=True)

# --- Django -----------------------------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc served from the package: /docs works offline, pinned
    "django_celery_beat",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "core",
    "accounts",
    "billing",
    "leads",
    "leads.verification",
    "sending",
    "campaigns",
    "deliverability",
    "replies",
    "llmproxy",
    "mcpserver",
    "webhooks",
    "console",
]

MIDDLEWARE = [
    "core.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "config.urls"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.service",
            ],
        },
    }
]

ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None

DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        # IMMEDIATE: a write transaction takes the write lock at BEGIN, so two writers queue on the
        # busy timeout instead of failing with "database is locked" when upgrading a read lock.
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    DATABASES["default"].setdefault("OPTIONS", {})
# Test databases are per process, so parallel test runs on one machine never drop each other's database.
# SQLite's is a file, not :memory:, so tests that race real threads see one database with real locking.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    import tempfile

    DATABASES["default"]["TEST"] = {
        "NAME": env("TEST_DATABASE_NAME", os.path.join(tempfile.gettempdir(), f"service-test-{os.getpid()}.sqlite3"))
    }
else:
    DATABASES["default"]["TEST"] = {"NAME": env("TEST_DATABASE_NAME", f"test_service_{os.getpid()}")}

if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "service"}}

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS: list = []
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # `collectstatic` fills it in production; empty is fine
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Static files come straight from the apps' folders (no collectstatic step), indexed once at start-up;
# re-scanning on every request (autorefresh) is for DJANGO_DEBUG=1 development only.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# CONTRACT section 2: bodies up to 16 MiB.
MAX_BODY_BYTES = 16 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES
DATA_UPLOAD_MAX_NUMBER_FIELDS = 100_000

# --- mail -------------------------------------------------------------------------------------------
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", f"no-reply@{BASE_HOST}")
# The name console mail greets with and signs as ("Hello from …", the From display name, the subject prefix).
SITE_NAME = env("SITE_NAME", "Outbound service")
if SANDBOX:
    EMAIL_BACKEND = "core.mail.MaildirEmailBackend"
else:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = env("EMAIL_HOST", "localhost")
    EMAIL_PORT = env_int("EMAIL_PORT", 587)
    EMAIL_HOST_USER = env("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)

# --- DRF and OpenAPI --------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "core.errors.drf_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Outbound service API",
    "DESCRIPTION": (
        "Prepaid-credit API for the outbound sales loop: find leads, intent signals, enrichment, "
        "verification, sending capacity, campaigns, replies and LLM passthrough, metered from one balance. "
        "Every verb response is `{result, service}`; every error is `{error: {code, message, request_id}}`."
    ),
    "VERSION": "1.0.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SERVERS": [{"url": BASE_URL}],
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["core.openapi.only_public_paths"],
    "APPEND_COMPONENTS": {
        "securitySchemes": {"ApiKey": {"type": "http", "scheme": "bearer", "bearerFormat": "service_sk_live_…"}}
    },
    "SECURITY": [{"ApiKey": []}],
    # one name for the intent signal types wherever they appear (else a warning on every /openapi.json)
    "ENUM_NAME_OVERRIDES": {"SignalEnum": "leads.providers.base.SIGNAL_TYPES",
                            "HostProviderEnum": "sending.models.HOST_PROVIDERS",
                            "HealthStateEnum": "sending.models.HEALTH_STATES",
                            "HealthReasonEnum": "sending.models.HEALTH_REASONS",
                            "DnsCheckEnum": "sending.models.DNS_CHECK_RESULTS",
                            "CampaignStateEnum": "campaigns.verbs.STATES",
                            "AnswerStateEnum": "replies.verbs.ANSWER_STATES"},
}

# --- allauth (console sign-in: passwordless) ----------------------------------------------------------
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_LOGIN_BY_CODE_ENABLED = True
ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS = 3
ACCOUNT_LOGIN_BY_CODE_TIMEOUT = 600
ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED = True
ACCOUNT_PASSWORD_REQUIRED = False
ACCOUNT_RATE_LIMITS = {"login": "30/m/ip", "login_failed": "10/m/ip,5/5m/key", "confirm_email": "1/3m/key"}
LOGIN_URL = "/console/auth/login/"
LOGIN_REDIRECT_URL = "/console/"
ACCOUNT_LOGOUT_REDIRECT_URL = "/console/auth/login/"
SOCIALACCOUNT_ONLY = False
SOCIALACCOUNT_PROVIDERS: dict = {}
if env("OIDC_CLIENT_ID") and env("OIDC_SERVER_URL"):
    SOCIALACCOUNT_PROVIDERS["openid_connect"] = {
        "APPS": [
            {
                "provider_id": env("OIDC_PROVIDER_ID", "oidc"),
                "name": env("OIDC_PROVIDER_NAME", "Single sign-on"),
                "client_id": env("OIDC_CLIENT_ID"),
                "secret": env("OIDC_CLIENT_SECRET", ""),
                "settings": {"server_url": env("OIDC_SERVER_URL")},
            }
        ]
    }

# --- Celery -----------------------------------------------------------------------------------------
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Webhook deliveries have a lane of their own: the `webhooks` queue, consumed by its own workers (Procfile
# `webhooks`, compose `webhooks`, a second worker under `manage.py serve`), so slow receivers never hold the
# workers that send campaigns, ingest replies and provision. Everything else is on the default `celery` queue.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {"webhooks.tasks.*": {"queue": "webhooks"}}
BROKER_DIR = DATA_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
else:
    CELERY_BROKER_URL = "filesystem://localhost/"  # a host named: kombu warns "No hostname was supplied" on every connection otherwise
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "tmp_folder": str(BROKER_DIR / "tmp"),  # messages are written here whole, then renamed into queue/
        "control_folder": str(BROKER_DIR / "control"),  # kombu's default is ./control in the working directory
        "store_processed": False,
    }
CELERY_BEAT_SCHEDULE = {
    "billing-release-expired-holds": {"task": "billing.tasks.release_expired_holds", "schedule": 60.0},
    "billing-purge-idempotency": {"task": "billing.tasks.purge_idempotency_records", "schedule": 3600.0},
    "accounts-expire-tokens": {"task": "accounts.tasks.expire_confirmation_tokens", "schedule": 60.0},
}

# Holds of requests that crashed are released after this long.
HOLD_TTL_SECONDS = env_int("HOLD_TTL_SECONDS", 3600)
IDEMPOTENCY_TTL_HOURS = env_int("IDEMPOTENCY_TTL_HOURS", 24)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {"django.request": {"level": "ERROR"}},
}


# =====================================================================================================
# App settings. Each app appends its own block below (append only; keep each block self-contained).
# =====================================================================================================

# --- sending: mailbox secrets, provisioning, upkeep -------------------------------------------
# Fernet key(s) for mailbox secrets at rest (comma-separated for rotation); derived from SECRET_KEY when unset.
MAILBOX_SECRET_KEY = env("MAILBOX_SECRET_KEY", "")  # required when SANDBOX=0 (checked with SECRET_KEY above)
# Which provider buys domains and mailboxes: "sandbox" (SANDBOX=1) or a vendor adapter name.
SENDING_PROVIDER = env("SENDING_PROVIDER", "sandbox" if SANDBOX else "")
SENDING_SMTP_TLS_INSECURE = env_bool("SENDING_SMTP_TLS_INSECURE", False)  # tests with self-signed local peers only


# --- leads: provider waterfalls -----------------------------------------------------------
# Comma-separated provider names (or dotted paths to provider classes), asked in this order. Providers that
# are not configured (no key / URL) or not installed are skipped. See docs/leads.md.
def _leads_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in (env(name, default) or "").split(",") if item.strip()]


LEADS_SEARCH_PROVIDERS = _leads_list("LEADS_SEARCH_PROVIDERS", "local,apollo")
LEADS_ENRICH_PROVIDERS = _leads_list("LEADS_ENRICH_PROVIDERS", "local,hunter")
LEADS_INTENT_PROVIDERS = _leads_list("LEADS_INTENT_PROVIDERS", "local,greenhouse,dns_technology")
# Modules imported before the first provider lookup, so their register_provider() calls have run.
LEADS_PROVIDER_MODULES = _leads_list("LEADS_PROVIDER_MODULES", "leads.providers.local,leads.providers.vendors")
# Vendor adapters: each is enabled only when its key / URL is set.
LEADS_HUNTER_API_KEY = env("HUNTER_API_KEY")
LEADS_HUNTER_BASE_URL = env("HUNTER_BASE_URL", "https://api.hunter.io/v2")
LEADS_APOLLO_API_KEY = env("APOLLO_API_KEY")
LEADS_APOLLO_BASE_URL = env("APOLLO_BASE_URL", "https://api.apollo.io/api/v1")
LEADS_GREENHOUSE_BASE_URL = env("GREENHOUSE_BOARDS_URL")  # e.g. https://boards-api.greenhouse.io/v1/boards
LEADS_PROVIDER_TIMEOUT_SECONDS = env_int("LEADS_PROVIDER_TIMEOUT_SECONDS", 10)
LEADS_ENRICH_CACHE_DAYS = 90
LEADS_EMAIL_FRESH_DAYS = 30
LEADS_INTENT_WINDOW_DAYS = 90

# --- console: sign-in adapter, throttles, top-ups --------------------------------------------
ACCOUNT_ADAPTER = "accounts.console_auth.ConsoleAccountAdapter"
ACCOUNT_RATE_LIMITS = {
    **ACCOUNT_RATE_LIMITS,
    # Code requests: per client IP and per address (the key is the email).
    "request_login_code": "20/m/ip,3/m/key",
    "signup": "20/m/ip",
}
ACCOUNT_EMAIL_SUBJECT_PREFIX = f"[{SITE_NAME}] "
ACCOUNT_LOGIN_BY_CODE_MAX_RESEND_COUNT = 3
ACCOUNT_PREVENT_ENUMERATION = True
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_LOGIN_ON_GET = False
# Single sign-on's HTTP calls (discovery, token, user info, key set) go through core.outbound (accounts.sso): each is
# done within this many seconds in all, connect to the last byte.
SOCIALACCOUNT_ADAPTER = "accounts.sso.SocialAccountAdapter"
SOCIALACCOUNT_REQUESTS_TIMEOUT = 5
# A code after every sign-in would be a second email round-trip after single sign-on; no passwords exist, so
# only the (absent) password method would need one. The emailed code remains the way to sign in by email.
ACCOUNT_LOGIN_BY_CODE_REQUIRED = {"password"}
# Codes are derived from a random seed (the session stores the seed, never the code): see accounts.console_auth.
ACCOUNT_FORMS = {
    "confirm_login_code": "accounts.console_auth.ConfirmLoginCodeForm",
    "confirm_email_verification_code": "accounts.console_auth.ConfirmEmailVerificationCodeForm",
}
# Top-ups: 1 credit is about 0.01 USD. Packs as (credits, price in cents).
TOPUP_PACKS = [(1_000, 1_000), (5_000, 5_000), (25_000, 25_000)]
TOPUP_CENTS_PER_CREDIT = 1
TOPUP_MIN_CREDITS = env_int("TOPUP_MIN_CREDITS", 500)
TOPUP_MAX_CREDITS = env_int("TOPUP_MAX_CREDITS", 1_000_000)
STRIPE_API_BASE = env("STRIPE_API_BASE", "https://api.stripe.com")
STRIPE_WEBHOOK_TOLERANCE_SECONDS = env_int("STRIPE_WEBHOOK_TOLERANCE_SECONDS", 300)
SANDBOX_TOPUP_MAX_CREDITS = env_int("SANDBOX_TOPUP_MAX_CREDITS", 100_000)
CELERY_BEAT_SCHEDULE["accounts-purge-signin-links"] = {"task": "accounts.console_auth.purge_signin_links", "schedule": 3600.0}
TEMPLATES[0]["OPTIONS"]["context_processors"].append("accounts.console_views.console_context")

# --- verification: SMTP verifier tuning and DNS technology signals ---------------------------------
# Delay before the single retry of a greylisted (4xx) probe; concurrent probes per MX host in one process.
VERIFIER_GREYLIST_RETRY_SECONDS = float(env("VERIFIER_GREYLIST_RETRY_SECONDS", "3"))
VERIFIER_MAX_CONNECTIONS_PER_HOST = env_int("VERIFIER_MAX_CONNECTIONS_PER_HOST", 4)
# How long a domain's catch-all probe is remembered; how long a conclusive result is reused by verify_email
# (0: always probe again); how old a reply may be and still count as evidence of delivery.
VERIFIER_CATCH_ALL_TTL_SECONDS = env_int("VERIFIER_CATCH_ALL_TTL_SECONDS", 86400)
VERIFIER_REUSE_SECONDS = env_int("VERIFIER_REUSE_SECONDS", 86400)
VERIFIER_EVIDENCE_MAX_AGE_DAYS = env_int("VERIFIER_EVIDENCE_MAX_AGE_DAYS", 365)
# The dns_technology intent provider: on by default, except in sandbox mode without VERIFIER_NAMESERVERS
# (then nothing would be asked but the internet's DNS). A domain is re-scanned at most every N seconds.
DNS_TECHNOLOGY_ENABLED = env_bool("DNS_TECHNOLOGY_ENABLED", not SANDBOX or bool(VERIFIER_NAMESERVERS))
DNS_TECHNOLOGY_RESCAN_SECONDS = env_int("DNS_TECHNOLOGY_RESCAN_SECONDS", 3600)
if "leads.verification.intent" not in LEADS_PROVIDER_MODULES:
    LEADS_PROVIDER_MODULES.append("leads.verification.intent")

# --- sending: periodic provisioning sweep and monthly upkeep ------------------------------------
CELERY_BEAT_SCHEDULE["sending-operations-sweep"] = {
    "task": "sending.tasks.operations_sweep", "schedule": float(max(1, SANDBOX_PROVISION_SECONDS) if SANDBOX else 60),
}
CELERY_BEAT_SCHEDULE["sending-upkeep-sweep"] = {"task": "sending.tasks.upkeep_sweep", "schedule": 60.0 if SANDBOX else 900.0}
# Extra CA bundle trusted for bring-your-own SMTP/IMAP servers (a private CA); empty: system store only.
SENDING_TLS_CA_FILE = env("SENDING_TLS_CA_FILE", "")

# --- campaigns: the send scheduler ---------------------------------------------------------
# One tick every SCHEDULER_TICK_SECONDS dispatches due campaign sends; at most this many leads per tick.
CAMPAIGNS_TICK_BATCH = env_int("CAMPAIGNS_TICK_BATCH", 1000)
# A dispatched lead's lease (its task lost with a dead worker: dispatched again after this), a claim that never
# reached SMTP (released after this) and a row in `sending` (reported, never re-sent, after this). Lower them only
# where a crash must be recovered from quickly (the production-shape test does).
CAMPAIGNS_LEASE_SECONDS = env_int("CAMPAIGNS_LEASE_SECONDS", 600)
CAMPAIGNS_CLAIM_RELEASE_SECONDS = env_int("CAMPAIGNS_CLAIM_RELEASE_SECONDS", 600)
CAMPAIGNS_STUCK_SECONDS = env_int("CAMPAIGNS_STUCK_SECONDS", 900)
# `verify_leads` campaigns: leads verified in parallel at launch (PostgreSQL; SQLite verifies one at a time).
CAMPAIGNS_VERIFY_CONCURRENCY = env_int("CAMPAIGNS_VERIFY_CONCURRENCY", 8)
CELERY_BEAT_SCHEDULE["campaigns-scheduler-tick"] = {
    "task": "campaigns.tasks.scheduler_tick",
    "schedule": float(SCHEDULER_TICK_SECONDS),
}

# --- verification: overall probe budget, retention, periodic rescans -----------------------
# A verification gives up (unknown, reason timeout) once this many seconds passed, whatever the MX count.
VERIFIER_TOTAL_TIMEOUT_SECONDS = float(env("VERIFIER_TOTAL_TIMEOUT_SECONDS", "45"))
VERIFIER_RESULT_RETENTION_DAYS = env_int("VERIFIER_RESULT_RETENTION_DAYS", 180)
CELERY_BEAT_SCHEDULE["verification-technology-rescan"] = {
    "task": "leads.verification.tasks.technology_rescan", "schedule": 3600.0,
}
CELERY_BEAT_SCHEDULE["verification-prune"] = {"task": "leads.verification.tasks.verification_prune", "schedule": 86400.0}
# Namecheap domain adapter (SENDING_PROVIDER=namecheap); NAMECHEAP_REGISTRANT is a JSON object with FirstName,
# LastName, Address1, City, StateProvince, PostalCode, Country, Phone, EmailAddress.
NAMECHEAP_BASE_URL = env("NAMECHEAP_BASE_URL", "https://api.namecheap.com/xml.response")
NAMECHEAP_API_USER = env("NAMECHEAP_API_USER", "")
NAMECHEAP_API_KEY = env("NAMECHEAP_API_KEY", "")
NAMECHEAP_USERNAME = env("NAMECHEAP_USERNAME", "")
NAMECHEAP_CLIENT_IP = env("NAMECHEAP_CLIENT_IP", "")
NAMECHEAP_TIMEOUT_SECONDS = env_int("NAMECHEAP_TIMEOUT_SECONDS", 30)
NAMECHEAP_REGISTRANT = __import__("json").loads(env("NAMECHEAP_REGISTRANT", "{}") or "{}")
# Google Workspace mailboxes (SENDING_PROVIDER=google_workspace, docs/sending.md): a service account with
# domain-wide delegation acting as a Workspace admin; domains are registered and their DNS written by the registrar.
GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE = env("GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE", "")
GOOGLE_WORKSPACE_ADMIN_EMAIL = env("GOOGLE_WORKSPACE_ADMIN_EMAIL", "")
GOOGLE_WORKSPACE_CUSTOMER_ID = env("GOOGLE_WORKSPACE_CUSTOMER_ID", "my_customer")
GOOGLE_WORKSPACE_REGISTRAR = env("GOOGLE_WORKSPACE_REGISTRAR", "namecheap")
GOOGLE_WORKSPACE_DMARC_RUA = env("GOOGLE_WORKSPACE_DMARC_RUA", "")
GOOGLE_WORKSPACE_MX_HOST = env("GOOGLE_WORKSPACE_MX_HOST", "smtp.google.com")
GOOGLE_WORKSPACE_DELETE_GRACE_DAYS = env_int("GOOGLE_WORKSPACE_DELETE_GRACE_DAYS", 30)
GOOGLE_WORKSPACE_TIMEOUT_SECONDS = env_int("GOOGLE_WORKSPACE_TIMEOUT_SECONDS", 30)
GOOGLE_WORKSPACE_TOKEN_URL = env("GOOGLE_WORKSPACE_TOKEN_URL", "https://oauth2.googleapis.com/token")
GOOGLE_WORKSPACE_DIRECTORY_URL = env("GOOGLE_WORKSPACE_DIRECTORY_URL", "https://admin.googleapis.com/admin/directory/v1")
GOOGLE_WORKSPACE_SITE_VERIFICATION_URL = env("GOOGLE_WORKSPACE_SITE_VERIFICATION_URL",
                                             "https://www.googleapis.com/siteVerification/v1")
# Microsoft 365 mailboxes (SENDING_PROVIDER=microsoft365 or setup_sending provider "microsoft", docs/sending.md):
# an Entra app registration (client credentials) with Graph and Exchange Online application permissions; domains
# are registered and their DNS written by the registrar.
MICROSOFT365_TENANT_ID = env("MICROSOFT365_TENANT_ID", "")
MICROSOFT365_CLIENT_ID = env("MICROSOFT365_CLIENT_ID", "")
MICROSOFT365_CLIENT_SECRET = env("MICROSOFT365_CLIENT_SECRET", "")
MICROSOFT365_LICENSE_SKU = env("MICROSOFT365_LICENSE_SKU", "")
MICROSOFT365_USAGE_LOCATION = env("MICROSOFT365_USAGE_LOCATION", "US")
MICROSOFT365_REGISTRAR = env("MICROSOFT365_REGISTRAR", "namecheap")
MICROSOFT365_DMARC_RUA = env("MICROSOFT365_DMARC_RUA", "")
MICROSOFT365_REFERENCE_ATTRIBUTE = env("MICROSOFT365_REFERENCE_ATTRIBUTE", "extensionAttribute15")
MICROSOFT365_DELETE_GRACE_DAYS = env_int("MICROSOFT365_DELETE_GRACE_DAYS", 30)
MICROSOFT365_TIMEOUT_SECONDS = env_int("MICROSOFT365_TIMEOUT_SECONDS", 30)
MICROSOFT365_TOKEN_URL = env("MICROSOFT365_TOKEN_URL", "")  # empty: login.microsoftonline.com/<tenant>/oauth2/v2.0/token
MICROSOFT365_GRAPH_URL = env("MICROSOFT365_GRAPH_URL", "https://graph.microsoft.com/v1.0")

# --- replies: IMAP poll of live mailboxes, classification sweeper ------------------------------------
# Every SCHEDULER_TICK_SECONDS each active mailbox with IMAP details is polled (sandbox mailboxes get replies over
# the inbound SMTP listener instead); a message still unclassified a minute after arrival is classified by the sweep.
REPLIES_IMAP_TIMEOUT_SECONDS = env_int("REPLIES_IMAP_TIMEOUT_SECONDS", 30)
REPLIES_IMAP_BATCH = env_int("REPLIES_IMAP_BATCH", 200)
CELERY_BEAT_SCHEDULE["replies-imap-poll"] = {"task": "replies.tasks.imap_poll_all", "schedule": float(SCHEDULER_TICK_SECONDS)}
CELERY_BEAT_SCHEDULE["replies-classify-sweep"] = {"task": "replies.tasks.classify_sweep", "schedule": 60.0}
# answers to replies: a queued answer whose first attempt failed for a temporary reason is retried; one found
# stuck mid-send is reported as send_unknown (never re-sent)
CELERY_BEAT_SCHEDULE["replies-answers-sweep"] = {"task": "replies.tasks.answers_sweep", "schedule": float(SCHEDULER_TICK_SECONDS)}

# --- MCP server: /mcp streamable HTTP -------------------------------------------------------------
# Concurrent tool calls per web process (each runs the sync pipeline in a worker thread); extra Host / Origin
# values the DNS-rebinding protection admits besides the BASE_URL host and localhost (comma-separated,
# "host:*" for any port), e.g. an internal load-balancer name.
MCP_WORKER_THREADS = env_int("MCP_WORKER_THREADS", 32)
# At most this many /mcp requests of one key run at once in a web process; more are 429.
MCP_MAX_CONCURRENT_PER_KEY = env_int("MCP_MAX_CONCURRENT_PER_KEY", 16)
MCP_ALLOWED_HOSTS = [h.strip() for h in (env("MCP_ALLOWED_HOSTS", "") or "").split(",") if h.strip()]
MCP_ALLOWED_ORIGINS = [o.strip() for o in (env("MCP_ALLOWED_ORIGINS", "") or "").split(",") if o.strip()]
MCP_INCLUDE_TEST_VERBS = False  # tests only: expose tests/testverbs.py verbs as tools
# OAuth 2.1 for /mcp: lifetimes of access and refresh tokens; how long a fetched client ID metadata
# document is trusted; OAUTH_ALLOW_PRIVATE_NETWORKS=1 (tests only) lets those fetches reach loopback/private
# addresses (and plain http), which the outbound guard otherwise refuses.
OAUTH_ACCESS_TOKEN_SECONDS = env_int("OAUTH_ACCESS_TOKEN_SECONDS", 3600)
OAUTH_REFRESH_TOKEN_DAYS = env_int("OAUTH_REFRESH_TOKEN_DAYS", 30)
OAUTH_CLIENT_METADATA_CACHE_SECONDS = env_int("OAUTH_CLIENT_METADATA_CACHE_SECONDS", 3600)
OAUTH_ALLOW_PRIVATE_NETWORKS = env_bool("OAUTH_ALLOW_PRIVATE_NETWORKS", False)

# --- Webhooks (docs/webhooks.md) --------------------------------------------------------------------
# WEBHOOKS_ALLOW_PRIVATE_NETWORKS=1 lets deliveries reach loopback/private addresses (trusted networks only), as
# the verifier's setting does for SMTP; WEBHOOKS_ALLOW_LOOPBACK admits loopback receivers alone, on by default in
# sandbox mode (no real traffic leaves the machine) so a local receiver can be tried as is. Retries back off exponentially from WEBHOOK_RETRY_BASE_SECONDS for
# WEBHOOK_RETRY_HOURS; a worker that dies mid-delivery leaves a lease the sweep takes over after WEBHOOK_LEASE_SECONDS.
WEBHOOKS_ALLOW_PRIVATE_NETWORKS = env_bool("WEBHOOKS_ALLOW_PRIVATE_NETWORKS", False)
WEBHOOKS_ALLOW_LOOPBACK = env_bool("WEBHOOKS_ALLOW_LOOPBACK", SANDBOX)
WEBHOOK_TIMEOUT_SECONDS = float(env("WEBHOOK_TIMEOUT_SECONDS", "10"))
WEBHOOK_RETRY_HOURS = env_int("WEBHOOK_RETRY_HOURS", 24)
WEBHOOK_RETRY_BASE_SECONDS = env_int("WEBHOOK_RETRY_BASE_SECONDS", 30)
WEBHOOK_LEASE_SECONDS = env_int("WEBHOOK_LEASE_SECONDS", 60)
# A delivery is queued once at a time; the sweep queues it again only after this long (a message the broker lost).
WEBHOOK_QUEUED_STALE_SECONDS = env_int("WEBHOOK_QUEUED_STALE_SECONDS", 3600)
CELERY_BEAT_SCHEDULE["webhooks-sweep"] = {"task": "webhooks.tasks.sweep", "schedule": float(SCHEDULER_TICK_SECONDS)}
WEBHOOK_RETENTION_DAYS = env_int("WEBHOOK_RETENTION_DAYS", 30)  # events and their delivery log are kept this long
CELERY_BEAT_SCHEDULE["webhooks-purge"] = {"task": "webhooks.tasks.purge", "schedule": 3600.0}
CELERY_BEAT_SCHEDULE["accounts-oauth-purge"] = {"task": "accounts.tasks.oauth_purge", "schedule": 3600.0}
# Dynamic client registrations (POST /oauth/register) per client IP per minute.
OAUTH_REGISTRATIONS_PER_MINUTE = env_int("OAUTH_REGISTRATIONS_PER_MINUTE", 20)
# /oauth/authorize, /oauth/token and /oauth/revoke: requests per client address per minute, each endpoint its own.
OAUTH_REQUESTS_PER_MINUTE = env_int("OAUTH_REQUESTS_PER_MINUTE", 120)
# A client ID metadata document's whole fetch (connect to last byte), on at most this many threads per web process
# apart from the OAuth database thread, so a slow document server holds only the request that named it.
OAUTH_CLIENT_METADATA_TIMEOUT_SECONDS = float(env("OAUTH_CLIENT_METADATA_TIMEOUT_SECONDS", "5"))
OAUTH_METADATA_FETCH_THREADS = env_int("OAUTH_METADATA_FETCH_THREADS", 8)
# replies, continued: optional LLM classifier for person-written replies; an id from LLM_MODELS_FILE,
# empty = off. Its upstream calls are the operator's cost, never charged to a workspace.
REPLIES_LLM_MODEL = env("REPLIES_LLM_MODEL", "auto")  # auto: the first live (non-echo) allowlisted model; off
REPLIES_LLM_TIMEOUT_SECONDS = env_int("REPLIES_LLM_TIMEOUT_SECONDS", 20)
# draft_reply (and the console's "Suggest a reply"): the model used when the call names none; empty: the first model
# of the LLM allowlist. Billed to the workspace like /v1/llm/chat.
REPLIES_DRAFT_MODEL = env("REPLIES_DRAFT_MODEL", "")


# --- llmproxy: async-capable WhiteNoise, quiet httpx ----------------------------------------------
# core.middleware.WhiteNoiseMiddleware is WhiteNoise made async capable, so under ASGI an async view (the
# streaming LLM passthrough) runs on the event loop end to end instead of inside a parked worker thread.
MIDDLEWARE = [
    "core.middleware.WhiteNoiseMiddleware" if m == "whitenoise.middleware.WhiteNoiseMiddleware" else m
    for m in MIDDLEWARE
]
# httpx logs every request at INFO: one line per upstream call of every LLM stream.
LOGGING["loggers"].setdefault("httpx", {"level": "WARNING"})
# Bring-your-own SMTP/IMAP hosts on loopback/private/link-local addresses: allowed in sandbox only by default.
SENDING_ALLOW_PRIVATE_NETWORKS = env_bool("SENDING_ALLOW_PRIVATE_NETWORKS", SANDBOX)

# --- PostgreSQL connection pool ---------------------------------------------------------------------
# With CONN_MAX_AGE=0 every request (and every step of an LLM stream) opened a new PostgreSQL connection, i.e.
# a new server process: the largest per-call cost under load. Django's psycopg pool keeps up to
# DATABASE_POOL_MAX connections per process (0 turns the pool off); a request waits for a free one.
DATABASE_POOL_MAX = env_int("DATABASE_POOL_MAX", 20)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and DATABASE_POOL_MAX > 0:
    DATABASES["default"]["OPTIONS"]["pool"] = {"min_size": 1, "max_size": DATABASE_POOL_MAX, "timeout": 30}

# --- LLM passthrough hot path -----------------------------------------------------------------------
# Seconds a successfully authenticated API key is reused by one process on the LLM routes without a query. A key
# revoked through accounts.services.key_revoke in the same process stops at once; elsewhere within this many
# seconds. 0 = look the key up on every call.
# One per-process cache of valid API keys for both doors (REST verbs and the LLM routes): a revoked key is dropped
# at once in the process that revoked it, and within API_KEY_CACHE_SECONDS everywhere else. 0 turns it off.
# LLM_KEY_CACHE_SECONDS is its former name (LLM door only), still read.
API_KEY_CACHE_SECONDS = env_int("API_KEY_CACHE_SECONDS", env_int("LLM_KEY_CACHE_SECONDS", 5))
LLM_KEY_CACHE_SECONDS = API_KEY_CACHE_SECONDS
# The REST verbs' fast door (api.door): worker threads that run the verb pipeline, each keeping its database
# connection (SQLite) between calls; API_FAST_DOOR=0 sends every REST call through Django's handler instead.
API_FAST_DOOR = env_bool("API_FAST_DOOR", True)
API_THREADS = env_int("API_THREADS", 16)  # below DATABASE_POOL_MAX: each running verb may hold a connection
# Money statements (holds, settlements) running at once per web process on PostgreSQL, settlements first (api.dbwork.
# write); SQLite always runs one.
API_MONEY_WRITERS = env_int("API_MONEY_WRITERS", 2)
# Threads running the LLM routes' database steps when served by llmproxy.asgi (SQLite: always 1, it has one writer).
LLM_DB_THREADS = env_int("LLM_DB_THREADS", 4)
# PostgreSQL: every metered call's hold and settle statements (api.pipeline: the LLM door's and every verb's)
# commit with synchronous_commit off (for those transactions only; docs/llm.md). Isolation is unchanged; a server
# crash can lose the last fraction of a second of charges, in the customer's favour. 0 = commit them synchronously.
LLM_ASYNC_COMMIT = env_bool("LLM_ASYNC_COMMIT", True)
# The provider request of an LLM call leaves while its rate-limit hit and its hold are being checked, when this
# process last saw the workspace's available balance cover the hold (and, to leave before the rate-limit hit too,
# the key valid and with requests left; api.early.EarlyStart, docs/llm.md). Nothing reaches the client
# before both are confirmed; a refusal abandons the provider request (402 or 429, nothing charged). Default on:
# measured in bench/RESULTS.md (ninth and tenth sessions).
LLM_EARLY_START = env_bool("LLM_EARLY_START", True)
# A metered call's answer (a REST verb, a non-streamed LLM call) leaves before its settlement commits when what
# the settlement will commit is known exactly (billing.services.promised_available); the settlement follows at
# once, on an API thread once the response is sent (verbs) or in the background (LLM). The body states exactly the charge the settlement
# commits, and the available balance after it as of the call's own hold. A crash in between leaves the hold to
# the expiry sweep (the charge is lost, in the customer's favour, and the sweep closes the record as failed); a
# read right after the answer may still show the hold instead of the charge. docs/llm.md, README,
# bench/RESULTS.md eleventh and twelfth sessions.
SETTLE_AFTER_RESPONSE = env_bool("SETTLE_AFTER_RESPONSE", True)

# --- sending: Google and Microsoft mailboxes connected by OAuth 2.0 (XOAUTH2), see docs/sending.md ---
# A provider's "Connect" button shows only when its client id is set. Defaults are the providers' real endpoints.
GOOGLE_OAUTH_CLIENT_ID = env("GOOGLE_OAUTH_CLIENT_ID", "")
GOOGLE_OAUTH_CLIENT_SECRET = env("GOOGLE_OAUTH_CLIENT_SECRET", "")
GOOGLE_OAUTH_AUTHORIZE_URL = env("GOOGLE_OAUTH_AUTHORIZE_URL", "https://accounts.google.com/o/oauth2/v2/auth")
GOOGLE_OAUTH_TOKEN_URL = env("GOOGLE_OAUTH_TOKEN_URL", "https://oauth2.googleapis.com/token")
GOOGLE_SMTP_HOST = env("GOOGLE_SMTP_HOST", "smtp.gmail.com")
GOOGLE_SMTP_PORT = env_int("GOOGLE_SMTP_PORT", 587)
GOOGLE_SMTP_SECURITY = env("GOOGLE_SMTP_SECURITY", "starttls")  # starttls | ssl | none (local test peers only)
GOOGLE_IMAP_HOST = env("GOOGLE_IMAP_HOST", "imap.gmail.com")
GOOGLE_IMAP_PORT = env_int("GOOGLE_IMAP_PORT", 993)
GOOGLE_IMAP_SECURITY = env("GOOGLE_IMAP_SECURITY", "ssl")
MICROSOFT_OAUTH_CLIENT_ID = env("MICROSOFT_OAUTH_CLIENT_ID", "")
MICROSOFT_OAUTH_CLIENT_SECRET = env("MICROSOFT_OAUTH_CLIENT_SECRET", "")
MICROSOFT_OAUTH_TENANT = env("MICROSOFT_OAUTH_TENANT", "common")
MICROSOFT_OAUTH_AUTHORIZE_URL = env(
    "MICROSOFT_OAUTH_AUTHORIZE_URL", f"https://login.microsoftonline.com/{MICROSOFT_OAUTH_TENANT}/oauth2/v2.0/authorize")
MICROSOFT_OAUTH_TOKEN_URL = env(
    "MICROSOFT_OAUTH_TOKEN_URL", f"https://login.microsoftonline.com/{MICROSOFT_OAUTH_TENANT}/oauth2/v2.0/token")
MICROSOFT_SMTP_HOST = env("MICROSOFT_SMTP_HOST", "smtp.office365.com")
MICROSOFT_SMTP_PORT = env_int("MICROSOFT_SMTP_PORT", 587)
MICROSOFT_SMTP_SECURITY = env("MICROSOFT_SMTP_SECURITY", "starttls")
MICROSOFT_IMAP_HOST = env("MICROSOFT_IMAP_HOST", "outlook.office365.com")
MICROSOFT_IMAP_PORT = env_int("MICROSOFT_IMAP_PORT", 993)
MICROSOFT_IMAP_SECURITY = env("MICROSOFT_IMAP_SECURITY", "ssl")
# Timeout of each call to a token endpoint; an access token is refreshed this long before it expires.
OAUTH_HTTP_TIMEOUT_SECONDS = env_int("OAUTH_HTTP_TIMEOUT_SECONDS", 15)
OAUTH_REFRESH_MARGIN_SECONDS = env_int("OAUTH_REFRESH_MARGIN_SECONDS", 300)
# Every console page says when an OAuth mailbox needs reconnecting and which campaigns wait for it.
TEMPLATES[0]["OPTIONS"]["context_processors"].append("campaigns.context_processors.mailbox_alerts")

# --- deliverability (CONTRACT 4.13, docs/deliverability.md): health of mailboxes and sending domains ------------
# Thresholds: an operator may lower them (stricter), never raise them (deliverability.services clamps each to its default).
DELIVERABILITY_BOUNCE_WINDOW = env_int("DELIVERABILITY_BOUNCE_WINDOW", 50)  # a mailbox's last N sends ...
DELIVERABILITY_BOUNCE_MIN_SENDS = env_int("DELIVERABILITY_BOUNCE_MIN_SENDS", 20)  # ... once it has this many
DELIVERABILITY_BOUNCE_WARNING = float(env("DELIVERABILITY_BOUNCE_WARNING", "0.03"))
DELIVERABILITY_BOUNCE_PAUSE = float(env("DELIVERABILITY_BOUNCE_PAUSE", "0.05"))
DELIVERABILITY_COMPLAINT_WARNING_COUNT = env_int("DELIVERABILITY_COMPLAINT_WARNING_COUNT", 1)  # per domain, 7 days
DELIVERABILITY_COMPLAINT_PAUSE_RATE = float(env("DELIVERABILITY_COMPLAINT_PAUSE_RATE", "0.003"))
DELIVERABILITY_COMPLAINT_PAUSE_RATE_MIN = env_int("DELIVERABILITY_COMPLAINT_PAUSE_RATE_MIN", 2)
DELIVERABILITY_COMPLAINT_PAUSE_COUNT = env_int("DELIVERABILITY_COMPLAINT_PAUSE_COUNT", 3)
DELIVERABILITY_DNS_GRACE_HOURS = float(env("DELIVERABILITY_DNS_GRACE_HOURS", "24"))
# DNS blocklists a sending domain is looked up in (`<domain>.<zone>`); answers a zone documents as errors are no listing.
DELIVERABILITY_DNSBL_ZONES = [z.strip().strip(".").lower()
                              for z in (env("DELIVERABILITY_DNSBL_ZONES", "dbl.spamhaus.org") or "").split(",") if z.strip()]
# DNS authentication and blocklist checks of each active sending domain, at most every N seconds. Off by default in
# sandbox mode (sandbox domains exist nowhere), unless VERIFIER_NAMESERVERS points at a DNS that knows them.
DELIVERABILITY_DNS_CHECKS = env_bool("DELIVERABILITY_DNS_CHECKS", not SANDBOX or bool(VERIFIER_NAMESERVERS))
DELIVERABILITY_CHECK_INTERVAL_SECONDS = env_int("DELIVERABILITY_CHECK_INTERVAL_SECONDS", 3600)
# The SPF mechanism(s) the sending path needs (`include:…`, `ip4:…`), comma-separated; empty: the provider's own
# (Google Workspace: include:_spf.google.com, Microsoft 365: include:spf.protection.outlook.com), else any SPF
# record that authorizes some sender passes.
DELIVERABILITY_SPF_REQUIRE = [s.strip() for s in (env("DELIVERABILITY_SPF_REQUIRE", "") or "").split(",") if s.strip()]
CELERY_BEAT_SCHEDULE["deliverability-sweep"] = {"task": "deliverability.tasks.sweep", "schedule": float(SCHEDULER_TICK_SECONDS)}
# Gmail Postmaster Tools API v2 (deliverability/postmaster.py): spam rate and compliance status of Google Workspace
# sending domains, read
# with the GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE service account acting as GOOGLE_WORKSPACE_ADMIN_EMAIL.
POSTMASTER_TOOLS_ENABLED = env_bool("POSTMASTER_TOOLS_ENABLED", False)
POSTMASTER_TOOLS_URL = env("POSTMASTER_TOOLS_URL", "https://gmailpostmastertools.googleapis.com")
