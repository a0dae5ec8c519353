"""The repository config of one release (tests/fixtures/vllm_config/<release>/), from the sdist.

Exactly the files the service reads at a base commit: the release's `.buildkite/` and
`.github/` go through the service's own reader (bot/handlers/repo_config.py), and what it
read is written out. So the fixture cannot drift from what a digest of that base sees.
"""

from __future__ import annotations

import asyncio
import io
import subprocess
import tarfile
import tempfile
from pathlib import Path

from bench.corpus.cut import CutError, ReleaseRepo
from bot.handlers.repo_config import DirectorySource, read_config_files

CONFIG_ROOT = Path(__file__).resolve().parents[2] / "tests/fixtures/vllm_config"
_FOLDERS = (".buildkite", ".github")


def config_texts(repo: ReleaseRepo, release: str) -> dict[str, str]:
    """path -> text of every config file the service reads at `release`."""
    archive = subprocess.run(
        ["git", "-C", str(repo.path), "archive", "--format=tar", f"v{release}", "--", *_FOLDERS],
        capture_output=True,
    )
    if archive.returncode != 0:
        raise CutError(f"v{release}: {archive.stderr.decode(errors='replace').strip()}")
    with tempfile.TemporaryDirectory() as scratch:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(scratch, filter="data")
        files = asyncio.run(read_config_files(DirectorySource(Path(scratch)), f"v{release}"))
    if files.problems:
        raise CutError(f"v{release}: the config reader reported: {'; '.join(files.problems)}")
    return dict(files.texts)


def write_config(repo: ReleaseRepo, release: str, root: Path = CONFIG_ROOT) -> list[Path]:
    target = root / release
    written = []
    for path, text in sorted(config_texts(repo, release).items()):
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        written.append(out)
    return written
