"""What a job does: unpack it, fetch facts once, call the core, execute its plan."""
