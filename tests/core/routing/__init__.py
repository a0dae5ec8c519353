"""Tests of bot/core/routing/."""
