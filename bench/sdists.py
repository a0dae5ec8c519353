"""vLLM release source trees for the tests and benches that read a whole real tree.

They are too big for the repository (~40 MB each). The folder is `$PR_DIGEST_SDISTS`, else
the corpus cache's `sdists/` (bench/corpus/releases.py), which `python -m bench corpus
releases 0.33.0 0.34.0` fills with the PyPI tarballs. A tarball is unpacked on first use
next to itself (`vllm-0.34.0.tar.gz` -> `vllm-0.34.0/`); a folder already unpacked there is
used as it is.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from pathlib import Path

from bench.corpus.releases import cache_dir

ENV = "PR_DIGEST_SDISTS"
FILL_COMMAND = "python -m bench corpus releases 0.33.0 0.34.0"


def sdists_dir() -> Path:
    """$PR_DIGEST_SDISTS, else the corpus cache's sdists folder."""
    raw = os.environ.get(ENV)
    return Path(raw).expanduser() if raw else cache_dir() / "sdists"


def tarball(version: str, folder: Path | None = None) -> Path:
    return (folder or sdists_dir()) / f"vllm-{version}.tar.gz"


def release_tree(version: str, folder: Path | None = None) -> Path | None:
    """The unpacked `vllm-VERSION/` tree, unpacking its tarball once; None without either."""
    folder = folder or sdists_dir()
    tree = folder / f"vllm-{version}"
    if tree.is_dir():
        return tree
    archive = tarball(version, folder)
    if not archive.is_file():
        return None
    # Unpack beside the target and rename, so a concurrent or interrupted run never
    # sees half a tree; the data filter refuses links and paths leaving the folder.
    with tempfile.TemporaryDirectory(dir=folder, prefix=f".unpack-{version}-") as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        unpacked = Path(tmp) / f"vllm-{version}"
        if not unpacked.is_dir():
            raise ValueError(f"{archive}: no top-level vllm-{version}/ folder")
        try:
            unpacked.rename(tree)
        except OSError:
            if not tree.is_dir():
                raise
    return tree


def missing_message(*versions: str, folder: Path | None = None) -> str:
    """Why a test or bench skips: what is missing, the variable, the command that fills it."""
    wanted = " and ".join(f"vllm-{v}.tar.gz" for v in versions)
    return (f"no vLLM source release ({wanted}) in {folder or sdists_dir()}: "
            f"run `{FILL_COMMAND}`, "
            f"or set {ENV} to a folder holding them (or unpacked vllm-VERSION/ folders)")


def release_trees(*versions: str) -> list[Path] | None:
    """Every version's tree, or None when any is missing."""
    trees = [release_tree(version) for version in versions]
    return [tree for tree in trees if tree is not None] if None not in trees else None
