"""Tests of bot/rulebook/."""
