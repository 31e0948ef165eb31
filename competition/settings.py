"""Arena settings: one file, environment-driven, with working embedded defaults. A malformed value
stops start-up with a clear message; the variables are listed in the README."""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from bots.egress import parse_networks, parse_ports
from bots.sandbox import bound_folder
from competition.plumbing.logs import logging_config

# the package's own files (templates/, static/) live inside it, so that an installed wheel
# (package data, pyproject.toml) serves the same pages as a checkout
PACKAGE_DIR = Path(__file__).resolve().parent
BASE_DIR = PACKAGE_DIR.parent
DEFAULT_SECRET_KEY = "arena-insecure-development-key-change-me"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def envlist(name: str, default: str) -> list[str]:
    raw = os.environ.get(name, default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, "") or default
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


#: a SQLite connection kept from one request or batch to the next (Django's default closes it
#: at each one's end): opened again, it runs its pragmas, reads the schema and every page it
#: needs afresh (a writer process's batch read 62 pages from the file, against 4 kept)
SQLITE_KEPT = {"CONN_MAX_AGE": 60, "CONN_HEALTH_CHECKS": True}


def database_from_url(url: str) -> dict:
    """A ``DATABASES["default"]`` entry from ``sqlite:///…`` or ``postgres://…``."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute/path.db, as dj-database-url reads them
        path = unquote(parts.path)[1:]
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path or ":memory:",
            # IMMEDIATE: a transaction takes the write lock at BEGIN, waiting up to `timeout`
            # for it (several runner processes write), instead of failing "database is
            # locked" when it reads first and then writes
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
            **SQLITE_KEPT,
        }
    if parts.scheme in ("postgres", "postgresql", "pgsql"):
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parts.scheme!r} is not supported")


DEBUG = envbool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "") or DEFAULT_SECRET_KEY
if not DEBUG and SECRET_KEY == DEFAULT_SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is false")


def default_data_dir(code: Path = BASE_DIR) -> Path:
    """``var`` beside the code, unless the code lies where every uploaded bot reads (a system-wide
    install under /usr): then the user's own data folder (``$XDG_DATA_HOME/arena``)."""
    if bound_folder(code) is not None:
        home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
        return Path(home) / "arena"
    return code / "var"


DATA_DIR = Path(os.environ.get("ARENA_DATA_DIR", "") or default_data_dir())
# Metrics (competition/plumbing/metrics.py): every process of this machine writes its values
# to files here (prometheus-client's multiprocess mode, chosen before the client is imported);
# a served platform's start removes those of dead processes. /metrics answers staff, or
# ``Authorization: Bearer $ARENA_METRICS_TOKEN`` (no token: staff only); anyone else a 404.
ARENA_METRICS_DIR = Path(os.environ.get("ARENA_METRICS_DIR", "") or DATA_DIR / "metrics")
if bound_folder(ARENA_METRICS_DIR) is not None:
    # a data directory every sandbox reads: the server refuses to start there and makes nothing
    # in it (competition.plumbing.production.guard_start); its metrics go to a throwaway folder
    ARENA_METRICS_DIR = Path(tempfile.mkdtemp(prefix="arena-metrics-"))
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(ARENA_METRICS_DIR)
ARENA_METRICS_TOKEN = os.environ.get("ARENA_METRICS_TOKEN", "")
if ARENA_METRICS_TOKEN and len(ARENA_METRICS_TOKEN) < 16:
    raise ImproperlyConfigured("ARENA_METRICS_TOKEN must be at least 16 characters")
# a runner or Celery worker's own exporter (another machine than the web's): its port, or 0
ARENA_METRICS_PORT = envint("ARENA_METRICS_PORT", 0, minimum=0)
ARENA_METRICS_ADDRESS = os.environ.get("ARENA_METRICS_ADDRESS", "127.0.0.1")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

# No "daphne" app: `manage.py serve` runs daphne itself, and the app's import of Twisted
# (a third of a second) would be paid by every process (runners, bot servers, commands).
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    # the old plain-text tokens' table: migration 0029 hashed each one into ApiToken and
    # emptied it; no authentication class reads it
    "rest_framework.authtoken",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "django_structlog",
    "bots",
    "competition",
]

MIDDLEWARE = [
    # requests and latencies (django-prometheus), first and last
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # the site's 404 page with DEBUG=true as well (competition/web/sitepages.py)
    "competition.web.sitepages.NotFoundPageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # binds the request's id and user to every log line of the request (django-structlog),
    # a proxy's X-Request-ID only if it is a plain id (competition/plumbing/logs.py)
    "competition.plumbing.logs.RequestIdMiddleware",
    "django_structlog.middlewares.RequestMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # last: it locks out repeated failed log-ins (django-axes)
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Log-in throttling: after AXES_FAILURE_LIMIT failures for one user name from one address,
# that pair is locked out for AXES_COOLOFF_MINUTES.
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
AXES_LOCKOUT_CALLABLE = "competition.web.sitepages.locked_out"  # a page in the site's layout
# the address the sign-up and reset limits and the API throttles use too (not ipware's guess)
AXES_CLIENT_IP_CALLABLE = "competition.plumbing.ratelimit.axes_client_address"

# Content Security Policy (django-csp): everything from this origin, no inline code, no
# third party. Websockets go to this origin too ('self' covers ws:/wss: of the same host).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

ROOT_URLCONF = "competition.urls"
ASGI_APPLICATION = "competition.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # before the apps' own folders: its registration/ pages win over the admin's
        "DIRS": [PACKAGE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "competition.web.notifications.bell",
            ],
        },
    },
]

_database_url = os.environ.get("DATABASE_URL", "")
if _database_url:
    DATABASES = {"default": database_from_url(_database_url)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "arena.sqlite3",
            # WAL lets readers (pages, websockets) run beside the runner's writes
            # IMMEDIATE: a transaction takes the write lock when it begins, waiting up to
            # "timeout"; a deferred one that reads, then writes, fails at once ("database is
            # locked") when another process or thread committed in between (the demo's
            # showcases write turns all the time)
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",  # several writer processes (see above)
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
            **SQLITE_KEPT,
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": 10_000},
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# competition/static/ is the app's own static folder (AppDirectoriesFinder);
# each game's renderer comes from its folder (games/<slug>/renderer.js) as games/<slug>.js
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "competition.plumbing.staticfiles.GameRendererFinder",
]
STATIC_ROOT = DATA_DIR / "static"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# -- E-mail (password reset): the console by default, SMTP when configured ----------------

EMAIL_BACKEND = (
    os.environ.get("EMAIL_BACKEND", "") or "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "") or "localhost"
EMAIL_PORT = envint("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = envbool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL are mutually exclusive")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "") or "arena@localhost"
ARENA_SITE_URL = os.environ.get("ARENA_SITE_URL", "") or "http://127.0.0.1:8000"
ARENA_NOTIFY_DIGEST_SECONDS = envint("ARENA_NOTIFY_DIGEST_SECONDS", 86400, minimum=1)
ARENA_NOTIFY_INTERVAL = envint("ARENA_NOTIFY_INTERVAL", 30, minimum=1)

# -- Arena ------------------------------------------------------------------------------

ARENA_RUNNER = envchoice("ARENA_RUNNER", "embedded", ("embedded", "celery"))
#: what runs matches (``competition.matches.dispatch``), chosen by ARENA_RUNNER
ARENA_MATCH_BACKEND = {
    "embedded": "competition.runners.embedded.EmbeddedBackend",
    "celery": "competition.runners.tasks.CeleryBackend",
}[ARENA_RUNNER]
try:
    ARENA_BOT_ALLOW_NETWORKS = parse_networks(os.environ.get("ARENA_BOT_ALLOW_NETWORKS", ""))
except ValueError as exc:
    raise ImproperlyConfigured(f"ARENA_BOT_ALLOW_NETWORKS: {exc}") from None
try:
    ARENA_BOT_ALLOW_PORTS = parse_ports(
        os.environ.get("ARENA_BOT_ALLOW_PORTS", "") or "80,443,1024-65535"
    )
except ValueError as exc:
    raise ImproperlyConfigured(f"ARENA_BOT_ALLOW_PORTS: {exc}") from None
#: what one uploaded bot's sandbox may use in all (its cgroup: bots/confinement.py)
ARENA_SANDBOX_MEMORY_MB = envint("ARENA_SANDBOX_MEMORY_MB", 1024, minimum=64)
ARENA_SANDBOX_CPU_PERCENT = envint("ARENA_SANDBOX_CPU_PERCENT", 100, minimum=1)
#: a version's compile (bots/compiler.py): its sandbox's memory and its wall-clock (and CPU) limit
ARENA_COMPILE_MEMORY_MB = envint("ARENA_COMPILE_MEMORY_MB", 2048, minimum=256)
ARENA_COMPILE_SECONDS = envint("ARENA_COMPILE_SECONDS", 60, minimum=5)
ARENA_BOT_CA_BUNDLE = os.environ.get("ARENA_BOT_CA_BUNDLE", "")
ARENA_BOT_MAX_REPLY_BYTES = envint("ARENA_BOT_MAX_REPLY_BYTES", 1_048_576, minimum=1)
# request bodies, refused before they are read (competition/plumbing/admission.py: per route)
ARENA_MAX_BODY_BYTES = envint("ARENA_MAX_BODY_BYTES", 2_621_440, minimum=1024)
ARENA_MAX_UPLOAD_BYTES = envint("ARENA_MAX_UPLOAD_BYTES", 2_097_152, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = ARENA_MAX_BODY_BYTES
ARENA_LEASE_SECONDS = envint("ARENA_LEASE_SECONDS", 30, minimum=1)
#: how often each runner process and Celery worker renews its heartbeat row; /readyz says
#: "not ready" when the newest is older than three of these (competition/web/health.py)
ARENA_HEARTBEAT_SECONDS = envint("ARENA_HEARTBEAT_SECONDS", 10, minimum=1)
#: /readyz says "not ready" when the data directory's disk has less free space than this
ARENA_MIN_FREE_MB = envint("ARENA_MIN_FREE_MB", 200, minimum=0)
ARENA_MAX_PLATFORM_FAILURES = envint("ARENA_MAX_PLATFORM_FAILURES", 3, minimum=1)
ARENA_DB_THREADS = envint("ARENA_DB_THREADS", 8, minimum=1)
#: a runner process (``manage.py runmatches``, serve's runners) stores through a writer process
#: of its own, off its GIL (competition/matches/writer.py); off: on its database thread
ARENA_WRITER_PROCESS = envbool("ARENA_WRITER_PROCESS", True)
ARENA_GIL_SWITCH_US = envint("ARENA_GIL_SWITCH_US", 1000, minimum=100)
ARENA_EMBEDDED_CONCURRENCY = envint("ARENA_EMBEDDED_CONCURRENCY", 64, minimum=1)
#: runner processes ``manage.py serve`` starts beside the web process (0: it plays matches)
ARENA_RUNNER_PROCESSES = envint("ARENA_RUNNER_PROCESSES", max(1, os.cpu_count() or 1), minimum=0)
ARENA_RUNNER_NICE = min(19, envint("ARENA_RUNNER_NICE", 5, minimum=0))
#: serve bench/naive_fanout.py at ws/naive/matches/<id>/ (bench/fanout.py only: not shipped)
ARENA_BENCH_NAIVE_FANOUT = envbool("ARENA_BENCH_NAIVE_FANOUT", False)
#: how far a spectator's websocket may fall behind (bytes written while its buffer is full)
#: before it is dropped; its page reconnects and gets a fresh snapshot (competition/plumbing/frames.py)
ARENA_SPECTATOR_BACKLOG_BYTES = envint(
    "ARENA_SPECTATOR_BACKLOG_BYTES", 4 * 1024 * 1024, minimum=65536
)
ARENA_SERVE_STATIC = envbool("ARENA_SERVE_STATIC", False)
ARENA_SAFETY_TIMEOUT_MS = envint("ARENA_SAFETY_TIMEOUT_MS", 60_000, minimum=1)
ARENA_BOT_HEALTH_FORFEITS = envint("ARENA_BOT_HEALTH_FORFEITS", 3, minimum=0)
ARENA_MATCH_MAX_TURNS = envint("ARENA_MATCH_MAX_TURNS", 5000, minimum=1)
ARENA_MATCH_MAX_SECONDS = envint("ARENA_MATCH_MAX_SECONDS", 3600, minimum=1)
ARENA_MATCH_MAX_BYTES = envint("ARENA_MATCH_MAX_BYTES", 64 * 1024 * 1024, minimum=1)
# a match's turn rows compacted into one compressed document when it ends (matches.history)
ARENA_COMPACT_ON_END = envbool("ARENA_COMPACT_ON_END", True)
# Per-user caps on matches queued or running at once: the ones a user starts (challenges,
# forks, the bench; 429 beyond), and the standing ladder's matches of one owner's bots (the
# matchmaker pairs none of that owner's bots beyond it, so slow bots of one account cannot
# hold the runners)
ARENA_MAX_ACTIVE_MATCHES = envint("ARENA_MAX_ACTIVE_MATCHES", 5, minimum=1)
ARENA_MAX_ACTIVE_LADDER_MATCHES = envint("ARENA_MAX_ACTIVE_LADDER_MATCHES", 2, minimum=1)
ARENA_CHALLENGES_PER_TARGET_HOUR = envint("ARENA_CHALLENGES_PER_TARGET_HOUR", 10, minimum=0)
# seconds a challenge of a bot whose owner is asked waits for the answer (then it never plays)
ARENA_CHALLENGE_EXPIRY = envint("ARENA_CHALLENGE_EXPIRY", 24 * 3600, minimum=1)
# challenges one user has waiting for their owners' answers at once (each may wait a day)
ARENA_MAX_PENDING_CHALLENGES = envint("ARENA_MAX_PENDING_CHALLENGES", 10, minimum=1)
ARENA_ALLOW_LOCAL_BOTS = envbool("ARENA_ALLOW_LOCAL_BOTS", False)
# The standing ladder of each game (competition/events/ladder.py; README "The standing ladder")
ARENA_LADDER = envbool("ARENA_LADDER", True)
ARENA_LADDER_INTERVAL = envint("ARENA_LADDER_INTERVAL", 5, minimum=1)
ARENA_LADDER_MATCHES_PER_MINUTE = envint("ARENA_LADDER_MATCHES_PER_MINUTE", 30, minimum=0)
ARENA_LADDER_MATCHES_PER_HOUR = envint("ARENA_LADDER_MATCHES_PER_HOUR", 12, minimum=1)
ARENA_LADDER_MAX_QUEUED = envint("ARENA_LADDER_MAX_QUEUED", 4, minimum=1)
ARENA_LADDER_HOUSE_BOTS = envbool("ARENA_LADDER_HOUSE_BOTS", True)
ARENA_LADDER_HOUSE_RANKED = envbool("ARENA_LADDER_HOUSE_RANKED", True)
ARENA_LADDER_EXPLORE_MATCHES = envint("ARENA_LADDER_EXPLORE_MATCHES", 5, minimum=0)
ARENA_LADDER_EXPLORE_PERCENT = min(100, envint("ARENA_LADDER_EXPLORE_PERCENT", 10, minimum=0))
# a new bot's, and each new version's, first ladder matches: played one after the other, before
# the hourly cap (competition.events.ladder.place)
ARENA_LADDER_PLACEMENT_MATCHES = envint("ARENA_LADDER_PLACEMENT_MATCHES", 5, minimum=0)
# a new version's report: the previous version's latest lost and drawn ladder matches replayed
# with the new one in its seat, unrated (competition.events.replays; 0 turns it off)
ARENA_VERSION_REPORT_MATCHES = min(50, envint("ARENA_VERSION_REPORT_MATCHES", 10, minimum=0))
ARENA_PROXY_HEADERS = envbool("ARENA_PROXY_HEADERS", False)
# a new start widens a rated bot's uncertainty (sigma; variances add, never past a new bot's
# 8.33): a new version by this (competition.ratings.services.begin_version), a new season of
# the standing ladder by the season's own figure
ARENA_RATING_VERSION_WIDEN = envint("ARENA_RATING_VERSION_WIDEN_TENTHS", 20, minimum=0) / 10
ARENA_RATING_SEASON_WIDEN = envint("ARENA_RATING_SEASON_WIDEN_TENTHS", 30, minimum=0) / 10
# Seasons of the standing ladder (competition/events/seasons.py): the top places of an ended
# season earn a badge on the bot's and its owner's pages
ARENA_SEASON_BADGES = envint("ARENA_SEASON_BADGES", 3, minimum=0)

# Sign-up and password-reset limits (competition/plumbing/ratelimit.py) count in this cache: Redis
# when configured (shared by every web node), else this process's memory (the embedded
# default is one process).
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "arena-ratelimit",
        }
        if REDIS_URL
        else {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "arena-ratelimit",
        }
    ),
}

# -- REST API (competition/api) ---------------------------------------------------------

ARENA_API_THROTTLE_SCALE = envint("ARENA_API_THROTTLE_SCALE", 1, minimum=1)
# web and API challenges alike (competition.matches.challenges.challenge)
ARENA_CHALLENGES_PER_MINUTE = envint(
    "ARENA_CHALLENGES_PER_MINUTE", 30 * ARENA_API_THROTTLE_SCALE, minimum=1
)
# uploaded code, on every upload route (web, API and the CLI, admin): a user's uploads a
# minute (competition.bots.services.charge_upload), the versions a bot keeps and a user's
# bytes of uploaded code (competition.models.bots.check_storage); an old version no match played can be
# deleted to make room
ARENA_UPLOADS_PER_MINUTE = envint("ARENA_UPLOADS_PER_MINUTE", 10, minimum=1)
ARENA_VERSIONS_PER_BOT = envint("ARENA_VERSIONS_PER_BOT", 20, minimum=1)
ARENA_CODE_BYTES_PER_USER = envint("ARENA_CODE_BYTES_PER_USER", 50 * 1024 * 1024, minimum=1)
# seconds between two test calls of one bot (competition.bots.services.claim_test_call)
ARENA_TEST_CALL_INTERVAL = envint("ARENA_TEST_CALL_INTERVAL", 2, minimum=1)
# Reverse proxies in front of the web nodes: a client's address (sign-up, reset and API
# limits, log-in lock-out: competition.plumbing.ratelimit.client_address) is the X-Forwarded-For entry
# this many hops from the end (the one our proxy wrote); 0 (the embedded default, no proxy)
# ignores the header, which any client can write.
ARENA_NUM_PROXIES = envint("ARENA_NUM_PROXIES", 0, minimum=0)

REST_FRAMEWORK = {
    # token first: an unauthenticated request gets 401 with ``WWW-Authenticate: Token``
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "competition.api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "competition.api.schema.ArenaAutoSchema",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "competition.api.parsers.LimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "competition.api.exceptions.exception_handler",
    "NUM_PROXIES": ARENA_NUM_PROXIES,
    # per user (or address when anonymous), on write endpoints only
    "DEFAULT_THROTTLE_RATES": {
        scope: f"{per_minute * ARENA_API_THROTTLE_SCALE}/min"
        for scope, per_minute in {"writes": 60, "simulate": 120}.items()
    },
}

# API tokens (competition.models.accounts.ApiToken): django-rest-knox keeps a SHA-512 digest
# only; each token's lifetime is chosen when it is made (the TTL here is knox's default only)
KNOX_TOKEN_MODEL = "competition.ApiToken"
# knox's own migrations make its AuthToken table even when the model is swapped for ApiToken
# (they name no "swappable"); that idle table's key to auth_user then stops PostgreSQL's flush
# (TRUNCATE) between tests. Without migrations, the swapped model gets no table at all.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {"TOKEN_TTL": timedelta(days=90), "AUTH_HEADER_PREFIX": "Token"}

SPECTACULAR_SETTINGS = {
    "TITLE": "Arena API",
    "VERSION": "1.0.0",
    "DESCRIPTION": (
        "Games (rules, options, protocol, and a stateless engine to test bots against the real "
        "rules), bots (owners manage their own), matches (turns since N, replays, owners' logs, "
        "challenges), events, standings and leaderboards. Session authentication for the site, "
        "`Authorization: Token <key>` for scripts (make one on your profile page, with `POST /api/tokens/login/`, or with `arena login`)."
    ),
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # the docs pages work offline: their assets come from drf-spectacular-sidecar
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "competition.api.schema.conditional_fields",
    ],
    "ENUM_NAME_OVERRIDES": {
        "MatchStatusEnum": "competition.models.choices.MatchStatus",
        "EventStatusEnum": "competition.models.choices.EventStatus",
        "EventFormatEnum": "competition.models.choices.EventFormat",
        "BotStatusEnum": "competition.models.bots.BotStatus",
        "EndpointKindEnum": "competition.models.bots.EndpointKind",
    },
}

# -- Celery (ARENA_RUNNER=celery) ---------------------------------------------------------

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# the worker logs through LOGGING (structured, a match's id on its lines), not Celery's format
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# -- Production hardening (DEBUG=false) --------------------------------------------------

if ARENA_PROXY_HEADERS:
    # only behind a proxy that sets it: otherwise any client could claim to be on HTTPS
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if not DEBUG:
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"

# JSON lines in production, readable ones in development; a request's id (X-Request-ID or a
# new one) and user, a match's id in the runners (competition/plumbing/logs.py)
LOGGING = logging_config(json=not DEBUG, level=os.environ.get("LOG_LEVEL", "INFO"))
DJANGO_STRUCTLOG_IP_LOGGING_ENABLED = False  # the address is ratelimit's to judge, not ipware's
# a proxy's X-Request-ID if it is a plain id (plumbing.logs.RequestIdMiddleware), else a new one
DJANGO_STRUCTLOG_TRUST_UPSTREAM_REQUEST_ID = True
