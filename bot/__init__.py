"""pr-digest: tells vLLM reviewers how to read each pull request."""

__version__ = "0.1.0"
