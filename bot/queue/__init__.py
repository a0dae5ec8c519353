"""The durable inbox and the worker that drains it: store, writer thread, jobs, ledger."""
