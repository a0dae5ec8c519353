"""Service settings, read once from the environment (prefix DIGEST_) and passed in."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIN_WEBHOOK_SECRET_CHARS = 16
DEFAULT_RULES_DIR = Path(__file__).resolve().parent.parent / "rules"


class Settings(BaseSettings):
    # hide_input_in_errors: a validation error must never print a secret's value.
    model_config = SettingsConfigDict(env_prefix="DIGEST_", extra="ignore",
                                      hide_input_in_errors=True)

    app_id: int | None = None
    private_key: SecretStr | None = None  # PEM text
    private_key_path: Path | None = None
    webhook_secret: SecretStr | None = Field(default=None, description=(
        "webhook secret(s), separated by commas to rotate (every listed one is accepted;"
        f" each at least {MIN_WEBHOOK_SECRET_CHARS} characters, so no secret may contain"
        " a comma)"))
    github_api_url: str = "https://api.github.com"
    github_token: SecretStr | None = None  # plain token, for the CLI
    db_path: Path = Path("pr-digest.db")
    dry_run: bool = False
    rules_dir: Path = DEFAULT_RULES_DIR
    language: Literal["en", "zh"] = "en"
    repo_config_path: str = ".github/pr-digest.yml"

    skip_drafts: bool = True
    # vLLM's body-cleanup workflow edits every PR seconds after `opened`, and
    # force-pushes arrive in bursts: wait this long after the last event of a PR.
    settle_seconds: float = 3.0
    workers: int = Field(default=4, ge=1, le=64)
    max_attempts: int = Field(default=8, ge=1)
    # First retry delay of a failed job; it doubles per attempt (capped, jittered).
    # Tests shorten it; in production 5 s keeps a flapping GitHub from being hammered.
    backoff_base_seconds: float = Field(default=5.0, gt=0)
    lease_seconds: float = Field(default=300.0, gt=0, description=(
        "How long a running job's claim lasts without a heartbeat; the worker renews it"
        " while the job runs, and a job whose worker died runs again after it."))
    drain_seconds: float = 20.0
    reconcile_interval_seconds: float = 900.0
    reconcile_on_startup: bool = True
    # GitHub asks for at least one second between content-creating requests.
    write_interval_seconds: float = 1.0
    max_retry_wait_seconds: float = 60.0
    # GitHub gives up on a request after 10 s: a comment create we never heard back
    # from has either landed or failed by then, so the retry re-lists after this long.
    uncertain_write_recheck_seconds: float = Field(default=15.0, ge=0)
    http_timeout_seconds: float = 10.0
    max_body_bytes: int = 25 * 1024 * 1024
    header_timeout_seconds: float = Field(default=10.0, gt=0, description=(
        "a connection must finish sending its request headers within this long"
        " (slow-header attacks); the reverse proxy should enforce its own, shorter one"))
    body_timeout_seconds: float = Field(default=30.0, gt=0, description=(
        "a webhook body must arrive completely within this long, or 408"))
    max_connections: int = Field(default=512, ge=8, description=(
        "open HTTP connections beyond this are closed at once (file-descriptor bound)"))
    command_runs_per_minute: int = 6
    bot_login: str | None = None  # normally learned from GET /app
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
        description="Keep a symbol index of each repository's default branch (refreshed on"
        " push) and add siblings, overrides and callers to the digest",
    )
    index_settle_seconds: float = Field(
        default=600.0, ge=0,
        description="At most one index refresh per repository per this many seconds: pushes"
        " in between are folded into the pending refresh (vLLM merges many PRs an hour)",
    )
    index_max_tarball_bytes: int = Field(
        default=300 * 1024 * 1024, gt=0,
        description="Largest default-branch tarball the index downloads; a bigger one is"
        " refused with a logged note",
    )
    log_level: str = "INFO"

    @field_validator(
        "private_key", "webhook_secret", "github_token", "view_token", mode="before"
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
        """Dry-run when asked to, and always when there is nothing to write with."""
        return self.dry_run or not (self.has_app_credentials or self.github_token)
