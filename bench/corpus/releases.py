"""vLLM's PyPI source releases, one git commit and tag `vX.Y.Z` per release.

The repository lets `git grep` place a PR between two releases and `git diff` cut its
blocks.  Sdists are found through pip's own index machinery (pip cannot download them
normally: reading their metadata would build vLLM) and checked against the index's sha256.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

INDEX_URL = "https://pypi.org/simple"
PROJECT = "vllm"
REPO_NAME = "vllm-releases"
_ENV_CACHE = "PR_DIGEST_CORPUS_DIR"


def cache_dir(override: str | None = None) -> Path:
    """The shared cache: --cache, else $PR_DIGEST_CORPUS_DIR, else ~/.cache/pr-digest/corpus."""
    raw = override or os.environ.get(_ENV_CACHE) or "~/.cache/pr-digest/corpus"
    return Path(raw).expanduser()


def repo_dir(cache: Path) -> Path:
    return cache / REPO_NAME


@dataclass(frozen=True)
class Sdist:
    version: str
    url: str
    filename: str
    sha256: str


class ReleaseError(Exception):
    """A release that cannot be fetched or verified; the message says which and why."""


def find_sdists(versions: list[str]) -> dict[str, Sdist]:
    """The sdist link of each version on the index (pip internals; run with pip 23.2, 26.3)."""
    from pip._internal.index.collector import LinkCollector
    from pip._internal.index.package_finder import PackageFinder
    from pip._internal.models.search_scope import SearchScope
    from pip._internal.models.selection_prefs import SelectionPreferences
    from pip._internal.network.session import PipSession

    session = PipSession()
    scope = SearchScope.create(find_links=[], index_urls=[INDEX_URL], no_index=False)
    finder = PackageFinder.create(
        link_collector=LinkCollector(session=session, search_scope=scope),
        selection_prefs=SelectionPreferences(allow_yanked=False),
    )
    wanted = set(versions)
    found: dict[str, Sdist] = {}
    for candidate in finder.find_all_candidates(PROJECT):
        version = str(candidate.version)
        link = candidate.link
        if version not in wanted or not link.filename.endswith(".tar.gz"):
            continue
        if link.hash_name != "sha256" or not link.hash:
            raise ReleaseError(f"{link.filename}: the index gives no sha256")
        found[version] = Sdist(version, link.url, link.filename, link.hash)
    return found


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(sdist: Sdist, into: Path) -> Path:
    """The verified tarball, downloaded unless a verified copy is already there."""
    from pip._internal.network.session import PipSession

    target = into / sdist.filename
    if target.exists() and _sha256(target) == sdist.sha256:
        return target
    into.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with PipSession().get(sdist.url, stream=True, timeout=180) as response:
        response.raise_for_status()
        with partial.open("wb") as handle:
            for chunk in response.iter_content(1 << 20):
                handle.write(chunk)
    actual = _sha256(partial)
    if actual != sdist.sha256:
        partial.unlink()
        raise ReleaseError(f"{sdist.filename}: sha256 {actual} is not the index's {sdist.sha256}")
    partial.replace(target)
    return target


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    return result.stdout.strip()


def tags(repo: Path) -> list[str]:
    """The release versions in the repository, oldest first."""
    if not (repo / ".git").exists():
        return []
    names = _git(repo, "tag", "--list", "v*").split()
    return sorted((name[1:] for name in names), key=Version)


def _init(repo: Path) -> None:
    if (repo / ".git").exists():
        return
    repo.mkdir(parents=True, exist_ok=True)
    _git(repo, "init", "-q", "-b", "releases")
    _git(repo, "config", "user.name", "pr-digest corpus")
    _git(repo, "config", "user.email", "corpus@pr-digest.invalid")
    _git(repo, "config", "gc.auto", "0")


def commit_release(repo: Path, tarball: Path, version: str, sha256: str) -> None:
    """One commit holding exactly the sdist's tree, tagged vVERSION, parented on the
    newest older release so `git log` reads in release order."""
    _init(repo)
    with tempfile.TemporaryDirectory(dir=repo.parent) as scratch:
        with tarfile.open(tarball) as archive:
            archive.extractall(scratch, filter="data")
        (top,) = Path(scratch).iterdir()
        index = Path(scratch) / "index"
        env = {"GIT_INDEX_FILE": str(index), "GIT_WORK_TREE": str(top)}
        _git(repo, "add", "-A", "-f", ".", env=env)
        tree = _git(repo, "write-tree", env=env)
    older = [v for v in tags(repo) if Version(v) < Version(version)]
    parent = ["-p", f"v{older[-1]}"] if older else []
    message = f"vllm {version}\n\nsdist {tarball.name} sha256 {sha256}"
    commit = _git(repo, "commit-tree", tree, *parent, "-m", message)
    _git(repo, "tag", f"v{version}", commit)
    newest = tags(repo)[-1]
    _git(repo, "update-ref", "refs/heads/releases", f"v{newest}^{{commit}}")


def build(versions: list[str], cache: Path, log: Callable[[str], None] = print) -> list[str]:
    """Fetch, verify and commit each version not yet tagged; returns the versions added."""
    repo = repo_dir(cache)
    have = set(tags(repo))
    missing = [v for v in versions if v not in have]
    if not missing:
        return []
    links = find_sdists(missing)
    absent = [v for v in missing if v not in links]
    if absent:
        log(f"not on the index as sdists, skipped: {' '.join(absent)}")
    added: list[str] = []
    for version in missing:
        if version not in links:
            continue
        sdist = links[version]
        tarball = download(sdist, cache / "sdists")
        commit_release(repo, tarball, version, sdist.sha256)
        log(f"v{version}: {sdist.filename} sha256 {sdist.sha256[:12]}… committed")
        added.append(version)
    return added


def checkout_newest(repo: Path) -> None:
    """A working tree of the newest release, for people who browse the cache."""
    _git(repo, "symbolic-ref", "HEAD", "refs/heads/releases")
    _git(repo, "reset", "-q", "--hard")


__all__ = ["ReleaseError", "Sdist", "build", "cache_dir", "checkout_newest", "repo_dir", "tags"]
