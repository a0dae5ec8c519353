"""The durable inbox and the worker that drains it: store, SQLite writer, jobs, ledger."""
