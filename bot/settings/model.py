"""Service settings, read once from the environment (prefix DIGEST_) and passed in."""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.settings.defaults import DEFAULT_LANGUAGE, ENV_PREFIX
from bot.settings.defaults import DEFAULT_RULES_DIR as DEFAULT_RULES_DIR

MIN_WEBHOOK_SECRET_CHARS = 16
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# The login used until `GET /app` says the App's own (or `DIGEST_BOT_LOGIN` does).
DEFAULT_BOT_LOGIN = "pr-digest[bot]"
DEFAULT_GITHUB_API_URL = "https://api.github.com"
# The settings that hold writes back: all of them (dry run), the start-up sweep's, their
# pace. A misspelt name of one of these stops `serve` (bot/settings/errors.py) instead of
# being ignored, which would leave the service writing more than its operator meant.
WRITE_SAFETY_SETTINGS = ("dry_run", "reconcile_on_startup", "write_interval_seconds")


class Settings(BaseSettings):
    # hide_input_in_errors: a validation error must never print a secret's value.
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore",
                                      hide_input_in_errors=True)

    # Every field's description is its row in docs/settings.md's table
    # (`digest-bot settings-table`; tests/project/test_readme.py checks the page has it).
    app_id: int | None = Field(
        default=None, description="the GitHub App's id; with a private key, the service runs live"
    )
    private_key: SecretStr | None = Field(
        default=None, description="the App's private key (PEM text)"
    )
    private_key_path: Path | None = Field(
        default=None, description="a file holding the App's private key (instead of the text)"
    )
    webhook_secret: SecretStr | None = Field(default=None, description=(
        "webhook secret(s), separated by commas to rotate (every listed one is accepted;"
        f" each at least {MIN_WEBHOOK_SECRET_CHARS} characters, so no secret may contain"
        " a comma); unset: unsigned deliveries are accepted only without any credential"))
    github_api_url: str = Field(
        default=DEFAULT_GITHUB_API_URL, description="GitHub (Enterprise) API"
    )
    github_token: SecretStr | None = Field(
        default=None,
        description="a plain token: authenticated reads (CLI and dry-run service); never "
        "makes the service live",
    )
    db_path: Path = Field(
        default=Path("pr-digest.db"),
        description="SQLite file (jobs, deliveries, dry-run previews, the label view's"
        " digests, the symbol index); with DIGEST_DATABASE_URL only the symbol index",
    )
    database_url: SecretStr | None = Field(default=None, description=(
        "`postgresql://user:password@host:5432/db`: keep jobs, deliveries, the ledger and"
        " the label view in PostgreSQL, shared by every replica (migrated at start);"
        " unset: the SQLite file"))
    database_pool_size: int = Field(default=8, ge=2, le=100, description=(
        "PostgreSQL connections each replica keeps at most (with DIGEST_DATABASE_URL)"))
    index_sync_seconds: float = Field(default=60.0, gt=0, description=(
        "with DIGEST_DATABASE_URL: how often a replica brings its own symbol index (a"
        " local cache) to the commit another replica's index job indexed"))
    dry_run: bool = Field(
        default=False,
        description="read GitHub but write nothing (writes are logged and stored; "
        "`digest-bot previews` shows them); always on without App credentials",
    )
    rules_dir: Path = Field(default=DEFAULT_RULES_DIR, description="bundled rules")
    language: Literal["en", "zh"] = Field(
        default=DEFAULT_LANGUAGE, description="`en` or `zh` (per PR: `/digest zh`)"
    )
    repo_config_path: str = Field(
        default=".github/pr-digest.yml",
        description="a repository's override of the rules, read from its default branch",
    )

    delivery: Literal["comment", "check", "both"] = Field(default="comment", description=(
        "where the digest goes: `comment` (one sticky PR comment), `check` (a neutral"
        " check run `pr-digest` on the head commit: no notification to subscribers) or"
        " `both`; a repository's override may set `delivery:`; `/digest` replies stay"
        " comments"))
    skip_drafts: bool = Field(
        default=True, description="no digest on drafts until `ready_for_review`"
    )
    read_conversation: bool = Field(
        default=True, description="read each PR's reviews and review comments for reviewers' "
        "asks and evidence posted later (2 more list reads a job, conditional)",
    )
    # vLLM's body-cleanup workflow edits every PR seconds after `opened`, and
    # force-pushes arrive in bursts: wait this long after the last event of a PR.
    settle_seconds: float = Field(
        default=3.0, ge=0, description="wait after a PR's last event before running (bursts)"
    )
    refill_seconds: float = Field(
        default=60.0, gt=0,
        description="a digest posted with a part unavailable (its read failed) is re-run"
        " after this long to fill it in; the wait doubles per re-run, at most 5 in a row",
    )
    workers: int = Field(default=4, ge=1, le=64, description="concurrent jobs")
    max_attempts: int = Field(
        default=8, ge=1, description="failures before a job is parked (`digest-bot jobs list`)"
    )
    # Tests shorten it; in production 5 s keeps a flapping GitHub from being hammered.
    backoff_base_seconds: float = Field(
        default=5.0, gt=0,
        description="first retry delay of a failed job; doubles per attempt (capped, jittered)",
    )
    lease_seconds: float = Field(default=300.0, gt=0, description=(
        "how long a running job's claim lasts without a heartbeat; the worker renews it"
        " every third of it while the job runs, so only a dead worker's job runs again"))
    drain_seconds: float = Field(
        default=20.0, ge=0,
        description="on SIGTERM, how long running jobs may finish (`docker stop` must wait "
        "longer)",
    )
    reconcile_interval_seconds: float = Field(
        default=900.0, gt=0, description="reconcile sweep period (also at startup)"
    )
    reconcile_on_startup: bool = Field(
        default=True, description="run the reconcile sweep once at startup"
    )
    # GitHub asks for at least one second between content-creating requests.
    write_interval_seconds: float = Field(
        default=1.0, ge=0, description="minimum gap between writes per installation"
    )
    max_retry_wait_seconds: float = Field(
        default=60.0, ge=0,
        description="longest rate-limit wait inside a job; longer ones reschedule",
    )
    # GitHub gives up on a request after 10 s: a comment create we never heard back
    # from has either landed or failed by then, so the retry re-lists after this long.
    uncertain_write_recheck_seconds: float = Field(
        default=15.0, ge=0,
        description="after a comment create with no answer, wait this long before re-listing",
    )
    http_timeout_seconds: float = Field(
        default=10.0, gt=0, description="timeout of one GitHub request"
    )
    max_body_bytes: int = Field(
        default=25 * 1024 * 1024, ge=1, description="largest webhook body accepted (413 above)"
    )
    header_timeout_seconds: float = Field(default=10.0, gt=0, description=(
        "a connection must finish sending its request headers within this long"
        " (slow-header attacks); the reverse proxy should enforce its own, shorter one"))
    body_timeout_seconds: float = Field(default=30.0, gt=0, description=(
        "a webhook body must arrive completely within this long, or 408"))
    max_connections: int = Field(default=512, ge=8, description=(
        "open HTTP connections (file-descriptor bound): a new one beyond this closes the"
        " oldest idle one, and is refused only when none is idle"))
    max_idle_connections: int = Field(default=128, ge=1, description=(
        "idle keep-alive HTTP connections beyond this are closed, oldest first; keep a"
        " proxy's upstream keep-alive pool below it"))
    bot_login: str | None = Field(
        default=None,
        description="the bot's login, e.g. `my-app[bot]`; normally learned from `GET /app`",
    )
    view_token: SecretStr | None = Field(
        default=None,
        description="bearer token that opens a private repository's label view "
        "(unset: private repositories' views answer 404)",
    )
    view_recent_days: float = Field(
        default=7.0, ge=0,
        description="how long a merged PR stays in the label view's recently-merged section",
    )
    public_url: str | None = Field(
        default=None,
        description="the service's public base URL, for absolute links to the label view",
    )
    index_enabled: bool = Field(
        default=True,
        description="keep a symbol index of each repository's default branch (refreshed on"
        " push) and add siblings, overrides and callers to the digest",
    )
    index_settle_seconds: float = Field(
        default=600.0, ge=0,
        description="at most one index refresh per repository per this many seconds: pushes"
        " in between are folded into the pending refresh (vLLM merges many PRs an hour)",
    )
    index_max_tarball_bytes: int = Field(
        default=300 * 1024 * 1024, gt=0,
        description="largest default-branch tarball the index downloads; a bigger one is"
        " refused with a logged note",
    )
    ci_status_context: str = Field(
        default="buildkite/ci/pr", max_length=200,
        description="the commit-status context of the CI pipeline's PR build (its steps"
        " report as `<context>/<step>`): the digest reads the head's statuses for it, and a"
        " `status` event of this context re-runs the digest; empty: neither",
    )
    writer_url: str | None = Field(
        default=None,
        description="the writer (issue 41): an OpenAI-compatible base URL such as"
        " `http://vllm:8000/v1` (`vllm serve MODEL`); unset: no language model is asked and"
        " the digest is what the rules write",
    )
    writer_model: str | None = Field(
        default=None, max_length=200, description="the model name the writer asks for"
    )
    writer_api_key: SecretStr | None = Field(
        default=None, description="the writer endpoint's API key, if it wants one"
    )
    writer_timeout: float = Field(
        default=60.0, gt=0, le=600,
        description="seconds the writer waits for one reply before the digest stays as the"
        " rules wrote it",
    )
    writer_max_tokens: int = Field(
        default=2048, gt=0, le=32768, description="the most tokens the writer's reply may use"
    )
    writer_tokens_per_hour: int = Field(
        default=200_000, gt=0, le=100_000_000,
        description="the writer's budget, shared by every replica: tokens (request and reply)"
        " it may spend in any hour; past it a PR keeps the rules' digest (writer status"
        " `budget`) and its next digest run an hour later asks again",
    )
    log_level: str = Field(
        default="INFO", description="`DEBUG`, `INFO`, `WARNING` or `ERROR`"
    )
    log_format: Literal["json", "console"] | None = Field(
        default=None,
        description="`json` (one object a line) or `console` (for people); unset: console "
        "when stderr is a terminal, else JSON",
    )

    @field_validator("app_id", "private_key_path", "bot_login", "log_format", "writer_url",
                     "writer_model", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        # `DIGEST_APP_ID=` in an env file means "not set", not "an invalid integer".
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("github_api_url", mode="before")
    @classmethod
    def _api_url_with_scheme(cls, value: object) -> object:
        # `api.github.com` (no scheme) used to fail on first use only, each time retried
        # as a transient error.
        if not isinstance(value, str):
            return value
        if not value.strip():
            return DEFAULT_GITHUB_API_URL
        return _http_url(value, DEFAULT_GITHUB_API_URL)

    @field_validator("writer_url")
    @classmethod
    def _writer_url_with_scheme(cls, value: str | None) -> str | None:
        return None if value is None else _http_url(value, "http://vllm:8000/v1")

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in _LOG_LEVELS:
            raise ValueError("must be one of " + ", ".join(_LOG_LEVELS))
        return level

    @field_validator(
        "private_key", "webhook_secret", "github_token", "view_token", "database_url",
        "writer_api_key", mode="before"
    )
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("webhook_secret")
    @classmethod
    def _secrets_long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        # A short part (e.g. "k,<real secret>") would accept HMACs anyone can brute-force.
        # The message must never echo the secret.
        if value is not None:
            parts = [p.strip() for p in value.get_secret_value().split(",")]
            if any(len(p) < MIN_WEBHOOK_SECRET_CHARS for p in parts):
                raise ValueError(
                    f"each comma-separated secret must be at least"
                    f" {MIN_WEBHOOK_SECRET_CHARS} characters")
        return value

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: SecretStr | None) -> SecretStr | None:
        # The message names the scheme only: the URL may carry a password.
        if value is not None:
            scheme = urlsplit(value.get_secret_value().strip()).scheme
            if scheme not in ("postgresql", "postgres"):
                raise ValueError(
                    "must be a postgresql:// URL, e.g. postgresql://user:password@host:5432/db"
                    f" (got scheme {scheme[:20]!r})")
        return value

    @property
    def postgres_url(self) -> str | None:
        """The PostgreSQL URL when the shared database is configured; None: SQLite."""
        return None if self.database_url is None else self.database_url.get_secret_value()

    def webhook_secrets(self) -> list[bytes]:
        if self.webhook_secret is None:
            return []
        raw = self.webhook_secret.get_secret_value()
        return [s.strip().encode() for s in raw.split(",") if s.strip()]

    def private_key_text(self) -> str | None:
        if self.private_key is not None:
            return self.private_key.get_secret_value()
        if self.private_key_path is not None:
            return self.private_key_path.read_text()
        return None

    @property
    def has_app_credentials(self) -> bool:
        return self.app_id is not None and (
            self.private_key is not None or self.private_key_path is not None
        )

    @property
    def has_any_credentials(self) -> bool:
        return self.has_app_credentials or self.github_token is not None

    @property
    def effective_dry_run(self) -> bool:
        """Dry-run when asked to, and always without App credentials: a plain token
        only authenticates reads (the service cannot verify deliveries or act as an App)."""
        return self.dry_run or not self.has_app_credentials

    def credential_problems(self) -> list[str]:
        """What keeps the credentials from making sense together, one line each naming
        the variables (never a secret): half of the App's credentials (which would
        silently run dry), or live without a webhook secret (every delivery refused).
        `serve` refuses to start on any; none at all is the zero-config dry-run."""
        key_set = self.private_key is not None or self.private_key_path is not None
        if self.app_id is not None and not key_set:
            return [f"DIGEST_APP_ID={self.app_id}: set without the App's private key: set "
                    "DIGEST_PRIVATE_KEY or DIGEST_PRIVATE_KEY_PATH too (or unset "
                    "DIGEST_APP_ID for a dry-run)"]
        if self.app_id is None and key_set:
            given = ("DIGEST_PRIVATE_KEY=(hidden)" if self.private_key is not None
                     else f"DIGEST_PRIVATE_KEY_PATH={self.private_key_path}")
            return [f"{given}: set without DIGEST_APP_ID: set DIGEST_APP_ID too (or unset "
                    "the key for a dry-run)"]
        if not self.effective_dry_run and self.webhook_secret is None:
            return ["DIGEST_WEBHOOK_SECRET: not set, but App credentials make the service "
                    "live, and live it refuses every delivery: set the App's webhook secret "
                    "(or DIGEST_DRY_RUN=1)"]
        return []

    def mode_reason(self) -> str:
        """Why the service runs live or in dry-run, for the startup line."""
        if self.dry_run:
            return "DIGEST_DRY_RUN is set"
        if self.has_app_credentials:
            return "App credentials (DIGEST_APP_ID and a private key) are set"
        if self.github_token is not None:
            return ("only DIGEST_GITHUB_TOKEN is set: authenticated reads, no writes; "
                    "live needs DIGEST_APP_ID and DIGEST_PRIVATE_KEY(_PATH)")
        return "no credentials: unauthenticated reads, no writes"


def _http_url(value: str, example: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"must be an http(s) URL with a host, e.g. {example}")
    return value.strip()
