"""Tests of bot/repo_index/."""
