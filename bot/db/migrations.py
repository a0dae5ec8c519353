"""The PostgreSQL schema, as versioned forward-only migrations.

Applied at start by every replica (and by `digest-bot db migrate`) under one session
advisory lock, so replicas starting together apply each migration once: the second waits
for the first and then finds nothing left to do. A migration is never edited once
released; a change is a new one at the end. Each runs in its own transaction with its
row in `schema_migrations`, so a failed one leaves the database at the previous version.
Migrations only add (tables, columns with defaults, indexes): a replica still running the
previous release keeps working on the new schema during a rolling deploy.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from bot.db.pool import Conn, DatabaseUnreachable, describe_error
from bot.db.url import redact_url

# Any 64-bit number that nothing else in the database uses as an advisory lock.
MIGRATION_LOCK = 0x70726469676573  # "prdiges"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "delivery inbox and job queue", """
CREATE TABLE deliveries (
    delivery_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    action TEXT,
    received_at DOUBLE PRECISION NOT NULL,
    outcome TEXT NOT NULL,
    job_id BIGINT
);
CREATE INDEX deliveries_received ON deliveries (received_at);
CREATE TABLE jobs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    installation_id BIGINT,
    repo TEXT NOT NULL,
    number INTEGER,
    payload TEXT NOT NULL,
    delivery_id TEXT,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before DOUBLE PRECISION NOT NULL,
    lease_until DOUBLE PRECISION,
    last_error TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX jobs_due ON jobs (not_before, id) WHERE state IN ('queued', 'failed');
CREATE INDEX jobs_key ON jobs (key, state);
CREATE INDEX jobs_pr ON jobs (repo, number, state);
CREATE INDEX jobs_running ON jobs (lease_until) WHERE state = 'running';
CREATE INDEX jobs_finished ON jobs (updated_at) WHERE state = 'done';
CREATE TABLE health (
    id INTEGER PRIMARY KEY,
    checked_at DOUBLE PRECISION NOT NULL
);
"""),
    Migration(2, "ledger: converged fingerprints, open heads, dry-run previews", """
CREATE TABLE pr_state (
    repo TEXT NOT NULL,
    number INTEGER NOT NULL,
    installation_id BIGINT,
    fingerprint TEXT NOT NULL,
    converged_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, number)
);
CREATE TABLE pr_heads (
    repo TEXT NOT NULL,
    number INTEGER NOT NULL,
    head_sha TEXT NOT NULL,
    PRIMARY KEY (repo, number)
);
CREATE INDEX pr_heads_sha ON pr_heads (repo, head_sha);
CREATE TABLE previews (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo TEXT NOT NULL,
    number INTEGER,
    action TEXT NOT NULL,
    detail TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
"""),
    # The ack path in one statement (bot/queue/store_pg.py `_accept_op`): claim the
    # delivery id, then enqueue or merge its job, as the Python path does in six round
    # trips. Merging payloads: lists are unions in arrival order, scalars newest wins
    # (bot/queue/store.py `merge_payloads`).
    Migration(3, "ack in one statement: digest_accept(_many), digest_merge_payload", r"""
CREATE FUNCTION digest_merge_payload(old_text TEXT, new_text TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    old JSONB := old_text::jsonb;
    merged JSONB := old;
    item RECORD;
BEGIN
    FOR item IN SELECT key, value FROM jsonb_each(new_text::jsonb) LOOP
        IF jsonb_typeof(item.value) = 'array'
                AND jsonb_typeof(merged -> item.key) = 'array' THEN
            merged := merged || jsonb_build_object(item.key, (merged -> item.key) || COALESCE(
                (SELECT jsonb_agg(e.value ORDER BY e.n)
                   FROM jsonb_array_elements(item.value) WITH ORDINALITY AS e(value, n)
                  WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(merged -> item.key)
                                    AS o(value) WHERE o.value = e.value)),
                '[]'::jsonb));
        ELSE
            merged := merged || jsonb_build_object(item.key, item.value);
        END IF;
    END LOOP;
    IF merged = old THEN
        RETURN old_text;
    END IF;
    RETURN merged::text;
END $$;

CREATE FUNCTION digest_accept(
    p_delivery TEXT, p_event TEXT, p_action TEXT, p_now DOUBLE PRECISION,
    p_kind TEXT, p_key TEXT, p_installation BIGINT, p_repo TEXT, p_number INTEGER,
    p_payload TEXT, p_delay DOUBLE PRECISION
) RETURNS TABLE (outcome TEXT, job_id BIGINT, due_at DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    seen BIGINT;
    pending RECORD;
    found_id BIGINT;
    due DOUBLE PRECISION;
BEGIN
    INSERT INTO deliveries AS d (delivery_id, event, action, received_at, outcome, job_id)
    VALUES (p_delivery, p_event, p_action, p_now, 'accepted', NULL)
    ON CONFLICT (delivery_id) DO UPDATE SET event = excluded.event, action = excluded.action,
        received_at = excluded.received_at, outcome = 'accepted'
    WHERE d.job_id IS NULL;
    IF NOT FOUND THEN
        SELECT d.job_id INTO seen FROM deliveries d WHERE d.delivery_id = p_delivery;
        UPDATE jobs SET state = 'queued', attempts = 0, not_before = p_now, updated_at = p_now
         WHERE id = seen AND state IN ('failed', 'parked');
        IF FOUND THEN
            RETURN QUERY SELECT 'requeued'::TEXT, seen, p_now;
        ELSE
            RETURN QUERY SELECT 'duplicate'::TEXT, seen, p_now;
        END IF;
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended(p_key, 0));
    IF p_kind = 'command' THEN
        due := p_now;
        SELECT j.id INTO found_id FROM jobs j WHERE j.key = p_key AND j.state <> 'parked'
         LIMIT 1;
    ELSE
        SELECT j.id, j.payload, j.not_before INTO pending FROM jobs j
         WHERE j.key = p_key AND j.state IN ('queued', 'failed') ORDER BY j.id LIMIT 1
           FOR UPDATE;
        IF FOUND THEN
            found_id := pending.id;
            IF p_kind = 'index' THEN
                -- Throttled, not debounced: the pending refresh keeps its time.
                due := pending.not_before;
                UPDATE jobs SET payload = digest_merge_payload(pending.payload, p_payload),
                       updated_at = p_now,
                       installation_id = COALESCE(p_installation, installation_id)
                 WHERE id = found_id;
            ELSE
                due := p_now + p_delay;
                UPDATE jobs SET payload = digest_merge_payload(pending.payload, p_payload),
                       state = 'queued', not_before = due, updated_at = p_now,
                       installation_id = COALESCE(p_installation, installation_id)
                 WHERE id = found_id;
            END IF;
        ELSE
            due := p_now + p_delay;
        END IF;
    END IF;
    IF found_id IS NULL THEN
        INSERT INTO jobs (kind, key, installation_id, repo, number, payload, delivery_id,
                          state, attempts, not_before, created_at, updated_at)
        VALUES (p_kind, p_key, p_installation, p_repo, p_number, p_payload, p_delivery,
                'queued', 0, due, p_now, p_now)
        RETURNING id INTO found_id;
    END IF;
    UPDATE deliveries SET job_id = found_id WHERE delivery_id = p_delivery;
    RETURN QUERY SELECT 'accepted'::TEXT, found_id, due;
END $$;

-- The acks one replica's event loop takes during one tick, in one transaction (group
-- commit, as the SQLite store does): row i answers element i of the arrays.
CREATE FUNCTION digest_accept_many(
    p_delivery TEXT[], p_event TEXT[], p_action TEXT[], p_now DOUBLE PRECISION,
    p_kind TEXT[], p_key TEXT[], p_installation BIGINT[], p_repo TEXT[], p_number INTEGER[],
    p_payload TEXT[], p_delay DOUBLE PRECISION[]
) RETURNS TABLE (i INTEGER, outcome TEXT, job_id BIGINT, due_at DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
BEGIN
    FOR k IN 1 .. coalesce(array_length(p_delivery, 1), 0) LOOP
        RETURN QUERY SELECT k, a.outcome, a.job_id, a.due_at FROM digest_accept(
            p_delivery[k], p_event[k], p_action[k], p_now, p_kind[k], p_key[k],
            p_installation[k], p_repo[k], p_number[k], p_payload[k], p_delay[k]) AS a;
    END LOOP;
END $$;
"""),
    # The label view's copy of each converged digest (bot/view/store_pg.py). Repository
    # names compare without case, as GitHub's do: `repo_key` is the lower-cased name.
    Migration(4, "label view: repositories, PRs, digests", """
CREATE TABLE view_repos (
    repo_key TEXT PRIMARY KEY,
    repo TEXT NOT NULL,
    private BOOLEAN NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE view_prs (
    repo_key TEXT NOT NULL,
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    url TEXT NOT NULL,
    pr_labels TEXT NOT NULL,
    labels TEXT NOT NULL,
    draft BOOLEAN NOT NULL,
    state TEXT NOT NULL,
    merged BOOLEAN NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    closed_at DOUBLE PRECISION,
    changed_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo_key, number)
);
CREATE INDEX view_prs_updated ON view_prs (repo_key, updated_at);
CREATE INDEX view_prs_changed ON view_prs (repo_key, changed_at);
CREATE TABLE view_digests (
    repo_key TEXT NOT NULL,
    number INTEGER NOT NULL,
    lang TEXT NOT NULL,
    summary TEXT NOT NULL,
    payload BYTEA NOT NULL,
    stored_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo_key, number, lang)
);
"""),
    # The symbol index stays a per-replica SQLite cache; the commit an index job indexed
    # is shared, so every replica's periodic sync builds the same (bot/handlers/processor.py).
    Migration(5, "the commit each repository's symbol index is at", """
CREATE TABLE index_commits (
    repo TEXT PRIMARY KEY,
    installation_id BIGINT,
    commit_sha TEXT NOT NULL,
    indexed_at DOUBLE PRECISION NOT NULL
);
"""),
    # A job's fencing token: every claim and every requeue bumps it, and a run proves it
    # still holds the lease, by its generation, before each GitHub write
    # (bot/queue/store_pg.py `fence`; docs/architecture.md, "Several replicas").
    Migration(6, "jobs: a fencing generation per claim", """
ALTER TABLE jobs ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
"""),
    # Maintainers first (issue 38, item 6): a command from someone without write access
    # is claimed after everything else (bot/queue/store.py, CLAIM_ORDER). Older
    # releases never read the column; its default keeps their inserts valid.
    Migration(7, "jobs.outsider: outsiders' commands are claimed last", """
ALTER TABLE jobs ADD COLUMN outsider BOOLEAN NOT NULL DEFAULT false;
"""),
    # The reviewers requested on GitHub, shown on a label-view row (issue 43, item 4):
    # JSON like `pr_labels`. An older release's upsert leaves it as it was.
    Migration(8, "view_prs.requested: the PR's requested reviewers", """
ALTER TABLE view_prs ADD COLUMN requested TEXT NOT NULL DEFAULT '[]';
"""),
    # The writer's results keyed by (packet, model, prompt version), shared by replicas
    # so a packet is written once; its claims (status 'writing') and the hour's token
    # spend (issue 41; bot/queue/writer_cache_pg.py).
    Migration(9, "writer_results and writer_spend: the writer's cache and budget", """
CREATE TABLE writer_results (
    packet_sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    written_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (packet_sha256, model, prompt_version)
);
CREATE INDEX writer_results_written ON writer_results (written_at);
CREATE TABLE writer_spend (
    id BIGSERIAL PRIMARY KEY,
    spent_at DOUBLE PRECISION NOT NULL,
    tokens INTEGER NOT NULL
);
"""),
    # Each open PR's files, changed functions and fixed issues (issue 42): a digest names
    # the other open PRs it shares them with, from here, without a call per PR.
    Migration(10, "open_prs: the open PRs' records and their keys", """
CREATE TABLE open_prs (
    repo TEXT NOT NULL,
    number INTEGER NOT NULL,
    record TEXT NOT NULL,
    stored_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, number)
);
CREATE TABLE open_pr_keys (
    repo TEXT NOT NULL,
    key TEXT NOT NULL,
    number INTEGER NOT NULL,
    PRIMARY KEY (repo, key, number)
);
"""),
)

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)"""


@dataclass(frozen=True)
class SchemaStatus:
    applied: tuple[int, ...]
    pending: tuple[Migration, ...]
    # Versions applied by a newer release than this one (a rolling deploy's new half).
    unknown: tuple[int, ...]

    @property
    def current(self) -> int:
        return max(self.applied, default=0)


def _applied(conn: Conn) -> list[int]:
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return []
    return [int(row[0]) for row in conn.execute(
        "SELECT version FROM schema_migrations ORDER BY version")]


def _status_of(applied: list[int]) -> SchemaStatus:
    known = {m.version for m in MIGRATIONS}
    return SchemaStatus(
        applied=tuple(applied),
        pending=tuple(m for m in MIGRATIONS if m.version not in set(applied)),
        unknown=tuple(v for v in applied if v not in known),
    )


def _connect(url: str) -> Conn:
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        raise DatabaseUnreachable(f"DIGEST_DATABASE_URL={redact_url(url)}: cannot connect "
                                  f"({describe_error(url, exc)})") from None


def schema_status(url: str) -> SchemaStatus:
    with _connect(url) as conn:
        return _status_of(_applied(conn))


def migrate(url: str) -> list[Migration]:
    """Apply what is pending, in order; returns what this call applied."""
    with _connect(url) as conn:
        try:
            return _migrate(conn)
        except psycopg.Error as exc:
            raise DatabaseUnreachable(
                f"DIGEST_DATABASE_URL={redact_url(url)}: cannot migrate the schema "
                f"({describe_error(url, exc)})") from None


def _migrate(conn: Conn) -> list[Migration]:
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        conn.execute(_CREATE_TABLE)
        done: list[Migration] = []
        for migration in _status_of(_applied(conn)).pending:
            with conn.transaction():
                # Several statements in one: sent unprepared (the simple protocol).
                conn.execute(sql.SQL(migration.sql), prepare=False)
                conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                             (migration.version, migration.name))
            done.append(migration)
        return done
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
