"""Tests of bot/settings/."""
