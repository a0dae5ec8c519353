"""Prometheus metrics, defined once. Each service instance gets its own registry."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


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
            "digest_github_calls_total", "GitHub API calls", ["endpoint", "status"], registry=r,
        )
        self.rate_limit_remaining = Gauge(
            "digest_github_rate_limit_remaining", "Last X-RateLimit-Remaining seen",
            ["installation"], registry=r,
        )
        self.comment_writes = Counter(
            "digest_comment_writes_total", "Sticky comment writes", ["action"], registry=r,
        )
