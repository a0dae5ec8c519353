"""Tests of bot/handlers/."""
