"""Tests of bot/github/."""
