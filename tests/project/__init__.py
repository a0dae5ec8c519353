"""Tests of the project as a user meets it: README, examples, packaging."""
