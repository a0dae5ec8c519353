"""`digest-bot index build|show` and the offline digest's `--index`: the symbol index
from the command line (bot/cli/main.py registers these; kept apart so it stays small)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The index modules (and the settings model, and asyncio) are imported by the commands
# that use them: bot/cli/main.py registers these commands for every command line, `serve`
# and a local `digest` included, which must start quickly.
if TYPE_CHECKING:
    from bot.core.facts import PullRequestFacts
    from bot.core.repo_index.findings import RepoContext

Usage = type[Exception]


def add_index_parser(sub: Any, usage_error: Usage) -> None:
    index = sub.add_parser("index", help="the default branch's symbol index")
    actions = index.add_subparsers(dest="index_command", required=True)
    build = actions.add_parser("build", help="build the index from GitHub or a local checkout")
    source = build.add_mutually_exclusive_group(required=True)
    source.add_argument("--repo", help="OWNER/REPO: the default branch's head, through the API")
    source.add_argument("--path", type=Path, help="a local checkout (offline)")
    build.add_argument("--name", help="with --path: the repository name to store it under")
    build.add_argument("--db", type=Path, default=None, help="database (default DIGEST_DB_PATH)")
    build.set_defaults(run=lambda args: _run_build(args, usage_error))
    show = actions.add_parser("show", help="where a symbol is defined, overridden and called")
    show.add_argument("symbol", help="NAME, CLASS or CLASS.METHOD")
    show.add_argument("--repo", default=None, help="OWNER/REPO (default: the newest index)")
    show.add_argument("--db", type=Path, default=None, help="database (default DIGEST_DB_PATH)")
    show.set_defaults(run=lambda args: _run_show(args, usage_error))


def _db(args: argparse.Namespace) -> Path:
    from bot.settings.model import Settings

    return args.db if args.db is not None else Settings().db_path


def _run_build(args: argparse.Namespace, usage_error: Usage) -> int:
    from bot.repo_index import store
    from bot.repo_index.build import index_directory

    db = _db(args)
    size_before = db.stat().st_size if db.exists() else 0
    started = time.perf_counter()
    if args.path is not None:
        root: Path = args.path
        if not root.is_dir():
            raise usage_error(f"{root}: not a directory")
        name = args.name or f"local/{root.resolve().name}"
        with store.opened(db) as conn:
            writer = store.IndexWriter(conn, name, _local_commit(root))
            try:
                index_directory(root, writer)
            except BaseException:
                writer.abort()
                raise
            generation = writer.finish()
        files, skipped, commit = generation.files, generation.skipped, generation.commit
        if generation.reused:
            print(f"{generation.reused} of {files} files unchanged since an indexed commit:"
                  " their records are shared, not parsed again")
    else:
        import asyncio

        from bot.cli.online import build_index_online
        from bot.settings.model import Settings

        if "/" not in args.repo:
            raise usage_error("--repo needs OWNER/REPO")
        outcome = asyncio.run(build_index_online(Settings(), args.repo, db))
        if outcome.action == "refused":
            raise usage_error(f"{args.repo}: index refused: {outcome.reason}")
        files, skipped, commit = outcome.files, dict(outcome.skipped), outcome.commit
        if outcome.action == "current":
            print(f"{args.repo}@{commit[:12]} is indexed already")
            return 0
    size_after = db.stat().st_size if db.exists() else 0
    skipped_text = ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items())) or "none"
    print(
        f"indexed {files} files at {commit[:12]} in {time.perf_counter() - started:.1f} s;"
        f" skipped: {skipped_text}; database {db}: {size_before:,} -> {size_after:,} bytes"
    )
    return 0


def _local_commit(root: Path) -> str:
    """The checkout's HEAD commit when it is a git checkout, else a name for the tree."""
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            ref = head[5:]
            loose = git / ref
            if loose.exists():
                return loose.read_text().strip()
            for line in (git / "packed-refs").read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split()[0]
        elif head:
            return head
    except OSError:
        pass
    return f"local-{int(time.time())}"


def _run_show(args: argparse.Namespace, usage_error: Usage) -> int:
    from bot.core.repo_index.show import describe_symbol
    from bot.repo_index import store

    db = _db(args)
    if not db.exists():
        raise usage_error(f"{db}: no index database (run `digest-bot index build` first)")
    with store.opened(db) as conn:
        generation = store.latest(conn, args.repo)
        if generation is None:
            raise usage_error(f"{db}: no index{' of ' + args.repo if args.repo else ''}")
        view = store.SqliteIndexView(conn, generation)
        lines = describe_symbol(view, view.records(), args.symbol)
    print(f"# {generation.repo}@{generation.commit[:12]} ({generation.files} files)")
    if not lines:
        print(f"{args.symbol}: not found", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def offline_context(
    index: Path, facts: PullRequestFacts, usage_error: Usage
) -> RepoContext | None:
    """`digest --index`: a checkout directory is parsed now; a file is an index database."""
    from bot.core.repo_index.context import repo_context
    from bot.repo_index import store
    from bot.repo_index.lookup import memory_index

    if index.is_dir():
        return repo_context(memory_index(index), facts)
    if not index.is_file():
        raise usage_error(f"{index}: no such directory or index database")
    with store.opened(index) as conn:
        generation = store.latest(conn, facts.repo) or store.latest(conn)
        if generation is None:
            return None
        return repo_context(store.SqliteIndexView(conn, generation), facts)
