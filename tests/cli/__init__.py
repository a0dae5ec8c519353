"""Tests of bot/cli/."""
