"""Thin handlers: unpack a job, fetch facts once, call the core, execute its plan."""
