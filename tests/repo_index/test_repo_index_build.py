"""Building an index generation from a streamed tarball: the fixture tree gives the same
answers as parsing it directly, and hostile archives are skipped or refused with a
counted note: nothing crashes, nothing is written outside the database."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from bot.core.repo_index.context import repo_context
from bot.repo_index import store
from bot.repo_index.build import BuildLimit, Limits, index_tarball, safe_member_path
from bot.repo_index.refresh import IndexRefresher
from tests.core.repo_index.test_repo_index_context import EXPECTED
from tests.repo_index_tarballs import TOP, BytesArchive, members_tarball, tree_tarball
from tests.repo_index_tree import TREE, pr_facts

REPO = "vllm-project/vllm"


async def test_the_streamed_tree_answers_like_the_parsed_one(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    source = BytesArchive(tree_tarball(TREE), sha="f" * 40, chunk=777)
    outcome = await IndexRefresher(db).refresh(source, REPO)
    assert (outcome.action, outcome.commit, outcome.files) == ("built", "f" * 40, 17)
    assert dict(outcome.skipped) == {"syntax-error": 1}
    with store.opened(db) as conn:
        generation = store.latest(conn, REPO)
        assert generation is not None
        assert repo_context(store.SqliteIndexView(conn, generation), pr_facts()) == EXPECTED


async def test_an_indexed_commit_is_not_downloaded_again(tmp_path: Path) -> None:
    refresher = IndexRefresher(tmp_path / "index.db")
    source = BytesArchive(tree_tarball(TREE))
    assert (await refresher.refresh(source, REPO)).action == "built"
    assert (await refresher.refresh(source, REPO)).action == "current"
    assert source.downloads == 1


async def test_two_generations_are_kept(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    refresher = IndexRefresher(db)
    data = tree_tarball(TREE)
    for sha in ("1" * 40, "2" * 40, "3" * 40):
        assert (await refresher.refresh(BytesArchive(data, sha=sha), REPO)).action == "built"
    with store.opened(db) as conn:
        generations = store.generations(conn, REPO)
        assert [g.commit for g in generations] == ["3" * 40, "2" * 40]
        rows = conn.execute("SELECT DISTINCT gen FROM index_gen_files").fetchall()
        assert len(rows) == 2
        # The same tree three times: read once, then pointed at.
        assert [g.reused for g in generations] == [17, 17]
        assert conn.execute("SELECT COUNT(*) FROM index_records").fetchone()[0] == 17


async def test_a_push_reparses_only_the_files_whose_blob_changed(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    refresher = IndexRefresher(db)
    files = {p.relative_to(TREE).as_posix(): p.read_bytes() for p in TREE.rglob("*.py")}
    path = "vllm/utils/gpu_sync_debug.py"

    def tarball(edit: bytes) -> bytes:
        edited = {**files, path: files[path] + edit}
        return members_tarball([(f"{TOP}/{p}", data) for p, data in sorted(edited.items())])

    for sha, edit in (("1" * 40, b""), ("2" * 40, b"\ndef pushed(x):\n    return x\n"),
                      ("3" * 40, b"\ndef pushed_again(x):\n    return x\n")):
        assert (await refresher.refresh(BytesArchive(tarball(edit), sha=sha), REPO)).action == (
            "built")
    with store.opened(db) as conn:
        newest, previous = store.generations(conn, REPO)
        assert (newest.files, newest.reused, previous.reused) == (17, 16, 16)
        names = {f.name for f in store.SqliteIndexView(conn, newest).file(path).functions}  # type: ignore[union-attr]
        assert "pushed_again" in names
        assert "pushed" not in names
        # The first generation was pruned, and with it the one record only it named.
        assert conn.execute("SELECT COUNT(*) FROM index_records").fetchone()[0] == 16 + 2
        assert conn.execute(
            "SELECT COUNT(*) FROM index_calls WHERE rec NOT IN (SELECT id FROM index_records)"
        ).fetchone()[0] == 0


def _symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info


def _hardlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = target
    return info


async def test_hostile_members_are_skipped_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    generated = b"x = [\n" + b"    1,\n" * 8_000_000 + b"]\n"  # ~50 MB of generated code
    data = members_tarball([
        (f"{TOP}/vllm/ok.py", b"def fine(a, b):\n    return a\n"),
        (f"{TOP}/../escape.py", b"def evil(): pass\n"),
        ("/etc/cron.d/evil.py", b"def evil(): pass\n"),
        (f"{TOP}/vllm/a/../../../../escape2.py", b"def evil(): pass\n"),
        _symlink(f"{TOP}/vllm/link.py", "/etc/passwd"),
        _hardlink(f"{TOP}/vllm/hard.py", "/etc/shadow"),
        (f"{TOP}/vllm/blob.py", b"\x7fELF\x02\x01\x01\x00\x00\x00"),
        (f"{TOP}/vllm/latin1.py", b"s = '\xe9t\xe9'\n"),
        (f"{TOP}/vllm/generated.py", generated),
        (f"{TOP}/vllm/broken.py", b"def broken(:\n"),
        (f"{TOP}/README.md", b"# not python\n"),
    ])
    db = tmp_path / "index.db"
    outcome = await IndexRefresher(db).refresh(BytesArchive(data), REPO)
    assert outcome.action == "built"
    assert outcome.files == 1
    assert dict(outcome.skipped) == {
        "unsafe-path": 3, "symlink": 2, "binary": 1, "not-utf8": 1, "too-large": 1,
        "syntax-error": 1,
    }
    with store.opened(db) as conn:
        generation = store.latest(conn, REPO)
        assert generation is not None
        assert store.SqliteIndexView(conn, generation).paths() == ["vllm/ok.py"]
    # Nothing was extracted anywhere: the working directory and the temp dir hold only
    # the database.
    assert os.listdir(work) == []
    assert [n for n in sorted(os.listdir(tmp_path)) if not n.startswith("index.db")] == ["cwd"]


async def test_a_tarball_over_the_cap_is_refused_and_leaves_no_generation(
    tmp_path: Path,
) -> None:
    db = tmp_path / "index.db"
    data = tree_tarball(TREE)
    refresher = IndexRefresher(db, max_tarball_bytes=len(data) // 2)
    outcome = await refresher.refresh(BytesArchive(data, chunk=256), REPO)
    assert outcome.action == "refused"
    assert "larger than" in outcome.reason
    with store.opened(db) as conn:
        assert store.generations(conn, REPO) == []
        assert conn.execute("SELECT COUNT(*) FROM index_records").fetchone()[0] == 0


@pytest.mark.parametrize("data", [b"this is not a tarball at all" * 100, b"\x1f\x8b\x08garbage"])
async def test_a_corrupt_archive_is_refused(tmp_path: Path, data: bytes) -> None:
    outcome = await IndexRefresher(tmp_path / "index.db").refresh(BytesArchive(data), REPO)
    assert outcome.action == "refused"


async def test_a_good_index_survives_a_refused_refresh(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    refresher = IndexRefresher(db)
    await refresher.refresh(BytesArchive(tree_tarball(TREE), sha="1" * 40), REPO)
    refused = await refresher.refresh(BytesArchive(b"garbage" * 10, sha="2" * 40), REPO)
    assert refused.action == "refused"
    assert refresher.indexed_commit(REPO) == "1" * 40


def test_member_count_and_unpacked_size_are_bounded(tmp_path: Path) -> None:
    data = members_tarball([(f"{TOP}/m{i}.py", b"x = 1\n") for i in range(50)])
    with store.opened(tmp_path / "index.db") as conn:
        writer = store.IndexWriter(conn, REPO, "a" * 40)
        with pytest.raises(BuildLimit, match="members"):
            index_tarball(io.BytesIO(data), writer, Limits(max_members=10))
        writer.abort()
        writer = store.IndexWriter(conn, REPO, "b" * 40)
        with pytest.raises(BuildLimit, match="unpacked"):
            index_tarball(io.BytesIO(data), writer, Limits(max_unpacked_bytes=100))
        writer.abort()
        assert store.generations(conn, REPO) == []


@pytest.mark.parametrize(("name", "expected"), [
    (f"{TOP}/vllm/a.py", "vllm/a.py"),
    (f"{TOP}/./vllm/a.py", "vllm/a.py"),
    (f"{TOP}/../a.py", None),
    ("/abs/a.py", None),
    (f"{TOP}/a\\..\\b.py", None),
    (f"{TOP}/a\x00.py", None),
    (TOP, None),
])
def test_member_paths(name: str, expected: str | None) -> None:
    assert safe_member_path(name, strip_top=True) == expected
