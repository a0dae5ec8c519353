"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary directory as an
unprivileged user (PostgreSQL refuses to run as root), on a free port, its unix socket in
that directory, removed at the end. Tests get a fresh database each (`fresh_database`).

Found: Debian's binaries (/usr/lib/postgresql/<version>/bin) or `initdb` on PATH. Not
found: the PostgreSQL tests skip, loudly, except under CI=true, where they fail (CI must
run them: .ci/run installs Debian's `postgresql`).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SUPERUSER = "digest"
MISSING = ("PostgreSQL not found (no initdb under /usr/lib/postgresql/*/bin or on PATH): "
           "the PostgreSQL backend is NOT tested here; install Debian's `postgresql`")


def find_bin_dir() -> Path | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parent.parent.name)
                        if Path(p).parent.parent.name.isdigit() else 0)
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def missing_postgres() -> None:
    """Skip loudly, or fail under CI."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(MISSING + " (CI=true: these tests must run)")
    pytest.skip(MISSING)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    bin_dir: Path
    directory: Path
    port: int
    run_as: str | None
    # Tests: off (nothing to keep). The benchmark: on, so a commit is a durable write.
    durable: bool = False

    @property
    def socket_dir(self) -> str:
        return str(self.directory)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@localhost:{self.port}/{database}?host={self.directory}"

    def tcp_url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _cmd(self, *args: str) -> list[str]:
        if self.run_as is None:
            return list(args)
        return ["runuser", "-u", self.run_as, "--", *args]

    def start(self) -> None:
        data = self.directory / "data"
        subprocess.run(self._cmd(str(self.bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER,
                                 "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"),
                       check=True, capture_output=True)
        options = (f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
                   " -c max_connections=200")
        if not self.durable:
            options += " -c fsync=off -c full_page_writes=off"
        subprocess.run(self._cmd(str(self.bin_dir / "pg_ctl"), "-D", str(data), "-w", "-t", "60",
                                 "-l", str(self.directory / "server.log"), "-o", options, "start"),
                       check=True, capture_output=True)

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(self._cmd(str(self.bin_dir / "pg_ctl"), "-D",
                                     str(self.directory / "data"), "-m", "immediate", "-w",
                                     "stop"), check=False, capture_output=True, timeout=60)
        shutil.rmtree(self.directory, ignore_errors=True)

    def create_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _unprivileged_user() -> str | None:
    """None when not root; else a user PostgreSQL may run as."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and neither `postgres` nor `nobody` exists")


@contextlib.contextmanager
def running_cluster(*, durable: bool = False) -> Iterator[Cluster | None]:
    bin_dir = find_bin_dir()
    if bin_dir is None:
        yield None
        return
    run_as = _unprivileged_user()
    # Short: a unix socket path must fit in ~100 bytes.
    directory = Path(tempfile.mkdtemp(prefix="pgt-", dir="/tmp"))
    if run_as is not None:
        entry = pwd.getpwnam(run_as)
        os.chown(directory, entry.pw_uid, entry.pw_gid)
    cluster = Cluster(bin_dir, directory, _free_port(), run_as, durable)
    try:
        cluster.start()
    except subprocess.CalledProcessError as exc:
        log = directory / "server.log"
        detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL: {exc.stderr!r} {detail}") from exc
    try:
        yield cluster
    finally:
        cluster.stop()
