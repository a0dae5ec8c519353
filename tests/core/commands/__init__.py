"""Tests of bot/core/commands/."""
