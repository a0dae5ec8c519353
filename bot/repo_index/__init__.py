"""Fetch, store and refresh the default branch's symbol index (its logic: bot/core/)."""
