"""The service's durable stores, on the backend the settings choose: the SQLite file
(DIGEST_DB_PATH, the zero-config default) or the PostgreSQL database several replicas
share (DIGEST_DATABASE_URL). psycopg is imported only for the latter."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.db.errors import DatabaseUnreachable as DatabaseUnreachable
from bot.queue.ledger import Ledger, LedgerStore
from bot.queue.store import ServiceStore, SqliteJobStore
from bot.queue.writer_cache import WriterCache, WriterCacheStore, writer_schema
from bot.settings.model import Settings
from bot.view.store import DigestStore, create_schema

if TYPE_CHECKING:
    from bot.db.pool import Database

log = logging.getLogger("bot.service.wiring")


@dataclass
class Stores:
    store: ServiceStore
    ledger: LedgerStore
    digests: DigestStore
    # The writer's results and token spend (issue 41), shared by replicas on PostgreSQL.
    writings: WriterCacheStore
    database: Database | None = None

    @property
    def backend(self) -> str:
        return "sqlite" if self.database is None else "postgresql"

    def close(self) -> None:
        self.store.close()
        self.ledger.close()
        if self.database is not None:
            self.database.close()


def open_stores(settings: Settings) -> Stores:
    """Raises CannotOpenDatabase / sqlite3.Error (SQLite) or DatabaseUnreachable
    (PostgreSQL: bad URL, host, credentials or schema), each shown as one line."""
    recent = settings.view_recent_days * 86400
    url = settings.postgres_url
    if url is None:
        store = SqliteJobStore.from_settings(settings)
        ledger = Ledger(store.writer)
        create_schema(settings.db_path)
        writer_schema(settings.db_path)
        return Stores(store, ledger, DigestStore(ledger.writer, recent_seconds=recent),
                      WriterCache(ledger.writer))
    from bot.db.migrations import migrate
    from bot.db.pool import Database
    from bot.queue.ledger_pg import PostgresLedger
    from bot.queue.store_pg import PostgresJobStore

    database = Database(url, max_size=settings.database_pool_size)
    database.open()
    try:
        applied = migrate(url)
    except Exception:
        database.close()
        raise
    for migration in applied:
        log.info("database schema migrated to version %d (%s)", migration.version,
                 migration.name)
    from bot.queue.writer_cache_pg import PostgresWriterCache
    from bot.view.store_pg import PostgresDigestStore

    return Stores(PostgresJobStore.from_settings(settings, database), PostgresLedger(database),
                  PostgresDigestStore(database, recent_seconds=recent),
                  PostgresWriterCache(database), database)
