"""The index build's CPU-heavy half, in a child process: `python -m bot.repo_index.worker`.

`tarfile` decompression and the parser hold the GIL for a whole call, so run in the
service's interpreter they would delay webhook acks. The service downloads the archive
into a temporary file, starts a generation, and runs this module; it reads one JSON
request on stdin, fills that generation through its own SQLite connection (WAL +
busy_timeout, like every other writer), and prints one JSON line: the finished
generation, or the reason the build was refused. Anything else (a crash, a kill, no
line) is the parent's to turn into a refusal.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
from dataclasses import asdict
from typing import Any

from bot.repo_index import store
from bot.repo_index.build import BuildLimit, Limits, index_tarball


def request(*, db: str, archive: str, repo: str, commit: str, gen: int,
            limits: Limits) -> bytes:
    return json.dumps({
        "db": db, "archive": archive, "repo": repo, "commit": commit, "gen": gen,
        "limits": asdict(limits),
    }).encode()


def run(req: dict[str, Any]) -> dict[str, Any]:
    limits = Limits(**req["limits"])
    with store.opened(req["db"]) as conn:
        writer = store.IndexWriter(conn, req["repo"], req["commit"], gen=int(req["gen"]))
        try:
            with open(req["archive"], "rb") as archive:
                index_tarball(archive, writer, limits)
        except BuildLimit as exc:
            writer.abort()
            return {"refused": str(exc)}
        except BaseException:
            writer.abort()
            raise
        generation = writer.finish()
    return {"files": generation.files, "skipped": generation.skipped}


def cap_memory(limit: int) -> None:
    """At most `limit` bytes of address space for this process (POSIX), where allowed:
    a hostile file then fails its own parse instead of swelling the child (issue 32)."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main() -> int:
    # Below the service in the CPU queue: on a small box the acks come first.
    with contextlib.suppress(OSError):
        os.nice(10)
    try:
        req = json.loads(sys.stdin.buffer.read())
        cap_memory(int(req["limits"]["max_memory_bytes"]))
        outcome = run(req)
    except Exception as exc:
        outcome = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    sys.stdout.write(json.dumps(outcome) + "\n")
    sys.stdout.flush()
    return 0 if "error" not in outcome else 1


if __name__ == "__main__":
    raise SystemExit(main())
