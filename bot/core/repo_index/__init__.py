"""Pure symbol-index logic: Python source text -> records, and the sibling, override and
caller queries the digest asks of an index. No I/O (bot/repo_index/ fetches and stores)."""
