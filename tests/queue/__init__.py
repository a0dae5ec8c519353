"""Tests of bot/queue/."""
