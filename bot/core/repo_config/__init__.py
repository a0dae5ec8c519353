"""The repository's own configuration, read at the PR's base."""
