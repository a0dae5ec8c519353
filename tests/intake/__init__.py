"""Tests of bot/intake/."""
