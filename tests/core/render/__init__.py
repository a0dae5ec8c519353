"""Tests of bot/core/render/."""
