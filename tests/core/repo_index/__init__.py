"""Tests of bot/core/repo_index/."""
