"""The one way tests build App settings and a session factory against the fake GitHub."""

from __future__ import annotations

from bot.github.retry import RetryPolicy
from bot.github.session import GitHubSessionFactory
from bot.observe.metrics import Metrics
from bot.settings.model import Settings
from tests.keys import PRIVATE_KEY_PEM


def make_settings(url: str, **overrides: object) -> Settings:
    """App credentials of the fake (app id 4242, the test key), fast pacing and timeouts."""
    values: dict[str, object] = {
        "app_id": 4242, "private_key": PRIVATE_KEY_PEM, "github_api_url": url,
        "write_interval_seconds": 0.01, "max_retry_wait_seconds": 5.0,
        "http_timeout_seconds": 0.5,
    }
    values.update(overrides)
    return Settings.model_validate(values)


def factory_for(settings: Settings, metrics: Metrics | None = None) -> GitHubSessionFactory:
    """A factory whose retries back off in milliseconds, so fault tests stay fast."""
    policy = RetryPolicy(max_wait=settings.max_retry_wait_seconds, backoff_base=0.01)
    return GitHubSessionFactory(settings, metrics or Metrics(), retry_policy=policy)


def make_factory(url: str, metrics: Metrics | None = None, **overrides: object
                 ) -> GitHubSessionFactory:
    return factory_for(make_settings(url, **overrides), metrics)
