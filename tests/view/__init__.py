"""Tests of bot/view/."""
