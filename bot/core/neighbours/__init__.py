"""The PR among the other open PRs (issue 42): which change the same code or fix the same
issue, what it waits for, and its live state on GitHub. Pure: the caller hands in the
other PRs' records and the states it read."""
