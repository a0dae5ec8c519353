"""Tests of bot/core/reading/."""
