"""What every outbound HTTP client of the process shares (GitHub's and the writer's)."""
