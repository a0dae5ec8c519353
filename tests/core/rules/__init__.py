"""Tests of bot/core/rules/."""
