"""The compiled-rules cache: one rules version's RuleSet, pickled, in the user's cache dir.

`digest-bot digest` spent ~85 ms of every run reading the rule YAML, validating it and
compiling globs and patterns; unpickling the result takes ~15 ms (RE2 patterns are
recompiled from their source on load, see `LinePattern.__reduce__`).

The key is a hash of everything the RuleSet is a function of: every rule file's name
and text, the engine's own code (the bytes of bot/core/**/*.py and of this module's
callers), the Python, pydantic and pathspec versions, and the format below. A changed
rule or a new checkout is a new key, so a stale entry is never read; old entries are
pruned.

Unpickling runs code, so a file is trusted only as far as the user's own files are:
it must be a regular file in a directory that belong to this user and that nobody
else can write, its header must name the key asked for and its payload must hash to
the digest in the header (a torn or corrupt write), and what comes out must be a
RuleSet of that rules version. Anything else is logged, ignored and rebuilt. Only
rule directories the operator names are cached: a repository's override
(.github/pr-digest.yml, i.e. a PR's content) never is.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pydantic

from bot.core.judging.risks import CompiledRiskSettings, compile_risk_settings, remember_compiled
from bot.core.rules import RuleSet
from bot.core.rules.parse import rules_version

log = logging.getLogger(__name__)

FORMAT = b"pr-digest compiled rules v2\n"
_DIGEST_BYTES = 32
_KEEP = 8  # entries kept per cache dir: a few checkouts or rule edits
_BOT_DIR = Path(__file__).resolve().parents[1]
# The code a RuleSet is built by and pickled from.
_CODE_ROOTS = (_BOT_DIR / "core",)
_CODE_FILES = (_BOT_DIR / "rulebook" / "files.py", Path(__file__).resolve())


def default_cache_dir() -> Path | None:
    """$XDG_CACHE_HOME/pr-digest, else ~/.cache/pr-digest; None without a home."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base and os.path.isabs(base):
        return Path(base) / "pr-digest"
    try:
        return Path.home() / ".cache" / "pr-digest"
    except RuntimeError:
        return None


def code_fingerprint() -> bytes:
    digest = hashlib.sha256()
    files = sorted({p for root in _CODE_ROOTS for p in root.rglob("*.py")} | set(_CODE_FILES))
    for path in files:
        digest.update(str(path.relative_to(_BOT_DIR)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.digest()


def _pathspec_mark() -> bytes:
    """pathspec's version file (its globs' regexes are in the pickle), read rather than
    imported: a cache hit needs no pathspec (~15 ms)."""
    spec = importlib.util.find_spec("pathspec")
    if spec is None or spec.origin is None:
        return b"no pathspec\0"
    package = Path(spec.origin).parent
    marker = package / "_version.py"
    return (marker if marker.is_file() else Path(spec.origin)).read_bytes() + b"\0"


def cache_key(sources: Mapping[str, str]) -> str:
    digest = hashlib.sha256(FORMAT)
    digest.update(f"{sys.version}\0{pydantic.VERSION}\0".encode())
    digest.update(_pathspec_mark())
    digest.update(code_fingerprint())
    for name in sorted(sources):
        digest.update(name.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(sources[name].encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


class RulesCache:
    """Load and store compiled rules under `directory` (None: no caching at all)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def path_for(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / f"rules-{key[:32]}.pickle"

    def load(self, sources: Mapping[str, str]) -> RuleSet | None:
        key = cache_key(sources)
        path = self.path_for(key)
        if path is None or self.directory is None:
            return None
        try:
            if not _private_dir(self.directory):
                return None
            data = _read_private(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("rules cache %s ignored: cannot read: %s; rebuilding", path, exc)
            return None
        if data is None:
            log.warning("rules cache %s ignored: not a private file of this user", path)
            return None
        rules = _decode(data, key, path)
        if rules is not None and rules.version != rules_version(sources):
            log.warning("rules cache %s ignored: holds rules version %s", path, rules.version)
            return None
        return rules

    def store(self, sources: Mapping[str, str], rules: RuleSet) -> None:
        """Best effort: a cache that cannot be written only costs the next run time."""
        key = cache_key(sources)
        path = self.path_for(key)
        if path is None or self.directory is None:
            return
        try:
            # The risk checks' compiled globs and patterns too: one pickle keeps their
            # settings the very object the rule set holds.
            entry = (rules, compile_risk_settings(rules.risks))
            payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            log.warning("rules cache not written: %s", exc)
            return
        data = FORMAT + key.encode() + b"\n" + hashlib.sha256(payload).digest() + payload
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not _private_dir(self.directory):
                return
            fd, temp = tempfile.mkstemp(prefix=".rules-", dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temp, path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
            self._prune(keep=path)
        except OSError as exc:
            log.debug("rules cache not written to %s: %s", self.directory, exc)

    def _prune(self, keep: Path) -> None:
        assert self.directory is not None
        entries = sorted(
            (p for p in self.directory.glob("rules-*.pickle") if p != keep),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in entries[_KEEP - 1 :]:
            old.unlink(missing_ok=True)


def _decode(data: bytes, key: str, path: Path) -> RuleSet | None:
    header = FORMAT + key.encode() + b"\n"
    if not data.startswith(header):
        log.warning("rules cache %s ignored: not an entry for this rules version; rebuilding",
                    path)
        return None
    digest = data[len(header) : len(header) + _DIGEST_BYTES]
    payload = data[len(header) + _DIGEST_BYTES :]
    if hashlib.sha256(payload).digest() != digest:
        log.warning("rules cache %s ignored: corrupt (checksum mismatch); rebuilding", path)
        return None
    try:
        # Our own private file, checksummed; see the module docstring.
        entry = pickle.loads(payload)  # noqa: S301
    except Exception as exc:  # a format our code no longer reads: rebuild, never crash
        log.warning("rules cache %s ignored: cannot unpickle (%s); rebuilding", path, exc)
        return None
    rules, risks = entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
    if not isinstance(rules, RuleSet):
        log.warning("rules cache %s ignored: holds %s; rebuilding", path, type(rules).__name__)
        return None
    if isinstance(risks, CompiledRiskSettings) and risks.settings is rules.risks:
        remember_compiled(risks)
    return rules


def _owned_and_closed(info: os.stat_result) -> bool:
    getuid = getattr(os, "getuid", None)
    owner_ok = getuid is None or info.st_uid == getuid()
    return owner_ok and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _private_dir(path: Path) -> bool:
    """A real directory (not a symlink) of this user that nobody else can write. The
    files in it are checked on their open descriptor (`_read_private`)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(info.st_mode) and _owned_and_closed(info):
        return True
    log.warning("rules cache dir %s not used: not a private directory of this user", path)
    return False


def _read_private(path: Path) -> bytes | None:
    """The file's bytes if it is a regular file of this user that nobody else can write
    (checked on the open file, so a swap between check and read cannot slip through);
    None otherwise. Never follows a symlink nor blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) and _owned_and_closed(info)):
            return None
        return handle.read()
