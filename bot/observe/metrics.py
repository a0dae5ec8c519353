"""Prometheus metrics, defined once. Each service instance gets its own registry.

Also the tally of one job's GitHub calls (`count_github_calls`), which the worker
writes on the job's log line instead of a line per call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# The `status` label of a GitHub call that got no answer (refused, timed out, DNS).
CALL_ERROR = "error"


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.deliveries = Counter(
            "digest_deliveries_total", "Webhook deliveries", ["event", "action", "outcome"],
            registry=r,
        )
        self.ack_seconds = Histogram(
            "digest_webhook_ack_seconds", "Time to acknowledge a delivery", registry=r,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
        )
        self.queue_depth = Gauge("digest_queue_depth", "Jobs waiting or running", registry=r)
        self.parked_jobs = Gauge("digest_parked_jobs", "Jobs parked after failing", registry=r)
        self.job_seconds = Histogram(
            "digest_job_seconds", "Job duration", ["kind", "outcome"], registry=r,
        )
        self.github_calls = Counter(
            "digest_github_calls_total",
            "GitHub API calls by templated endpoint and HTTP status"
            f" ({CALL_ERROR!r}: no answer, e.g. refused, timed out, DNS)",
            ["endpoint", "status"], registry=r,
        )
        self.rate_limit_remaining = Gauge(
            "digest_github_rate_limit_remaining", "Last X-RateLimit-Remaining seen",
            ["installation"], registry=r,
        )
        self.comment_writes = Counter(
            "digest_comment_writes_total", "Sticky comment writes", ["action"], registry=r,
        )


def status_class(status: int | None) -> str:
    """`200` -> `2xx`; None (no answer) -> `error`."""
    return CALL_ERROR if status is None else f"{status // 100}xx"


@dataclass
class GitHubCallTally:
    """The GitHub calls made inside one job: counts by `METHOD status-class`, their
    total time, and the last X-RateLimit-Remaining seen."""

    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    rate_limit_remaining: int | None = None

    def add(self, method: str, status: int | None, seconds: float,
            remaining: int | None = None) -> None:
        key = f"{method} {status_class(status)}"
        self.counts[key] = self.counts.get(key, 0) + 1
        self.seconds += max(seconds, 0.0)
        if remaining is not None:
            self.rate_limit_remaining = remaining

    def log_fields(self) -> dict[str, object]:
        """For the job's log line (None values are left out of the line)."""
        return {
            "github_calls": dict(sorted(self.counts.items())),
            "github_ms": round(self.seconds * 1000, 1),
            "rate_limit_remaining": self.rate_limit_remaining,
        }


_tally: ContextVar[GitHubCallTally | None] = ContextVar("pr_digest_github_calls", default=None)


@contextmanager
def count_github_calls() -> Iterator[GitHubCallTally]:
    """Tally the GitHub calls made inside the block (this task and the tasks it starts)."""
    tally = GitHubCallTally()
    token = _tally.set(tally)
    try:
        yield tally
    finally:
        _tally.reset(token)


def note_github_call(method: str, status: int | None, seconds: float,
                     remaining: int | None = None) -> None:
    """Add one call to the tally of the job it is made in, if any."""
    tally = _tally.get()
    if tally is not None:
        tally.add(method, status, seconds, remaining)
