"""PostgreSQL: the shared database several replicas use (DIGEST_DATABASE_URL)."""
