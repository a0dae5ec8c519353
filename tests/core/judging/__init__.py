"""Tests of bot/core/judging/."""
