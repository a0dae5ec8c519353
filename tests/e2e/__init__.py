"""Tests of the real service process against the fake GitHub, end to end."""
