"""Issue 14 (for the people who run it): the operator's CLI, run as the console script
in a subprocess, asserting exit codes and output."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import parse_pr_ref
from bot.github.dry_run import RecordedWrite
from bot.queue.ledger import Ledger
from bot.queue.store import NewJob, SqliteJobStore, pr_key
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent / "digest-bot"
EVENT = ROOT / "tests/fixtures/cli/pr_56904.json"
FILES = ROOT / "tests/fixtures/cli/pr_56904_files.json"
REPO = "vllm-project/vllm"


def run(*args: str, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    clean.update(env or {})
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, env=clean,
                          cwd=cwd or ROOT, timeout=60, check=False)


# --- item 5: bad settings ------------------------------------------------------------

def test_bad_setting_is_one_line_naming_the_variable_and_exit_2() -> None:
    result = run("check-rules", env={"DIGEST_WORKERS": "0"})
    assert result.returncode == 2
    assert result.stderr.strip() == "digest-bot: bad setting: DIGEST_WORKERS=0: must be ≥ 1"
    assert "Traceback" not in result.stderr


def test_every_bad_setting_gets_its_own_line() -> None:
    result = run("serve", env={"DIGEST_APP_ID": "abc", "DIGEST_LOG_LEVEL": "loud",
                               "DIGEST_LANGUAGE": "fr"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    assert any(line.startswith("digest-bot: bad setting: DIGEST_APP_ID=abc: ") for line in lines)
    assert any("DIGEST_LOG_LEVEL=loud: must be one of DEBUG" in line for line in lines)
    assert any("DIGEST_LANGUAGE=fr: " in line for line in lines)


def test_a_secret_value_is_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.settings.errors import SettingsError, load_settings

    with pytest.raises(SettingsError) as caught:
        load_settings(github_token=["not", "a", "string"], workers="many")
    text = "\n".join(caught.value.lines)
    assert "DIGEST_GITHUB_TOKEN=(hidden)" in text
    assert "not" not in text.split("DIGEST_GITHUB_TOKEN=(hidden)")[1].split("\n")[0][:5]
    assert "DIGEST_WORKERS=many: " in text


# --- item 6: CLI rough edges ---------------------------------------------------------

def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("digest-bot ")
    assert result.stdout.split()[1][0].isdigit()


@pytest.mark.parametrize(("text", "expected"), [
    ("vllm-project/vllm#56904", (REPO, 56904)),
    ("https://github.com/vllm-project/vllm/pull/56904", (REPO, 56904)),
    ("https://github.com/vllm-project/vllm/pull/56904/files", (REPO, 56904)),
    ("vllm-project/vllm/pull/56904", (REPO, 56904)),
    ("vllm-project/vllm", None),
    ("https://github.com/vllm-project/vllm/issues/1", None),
])
def test_pr_references(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_pr_ref(text) == expected


def test_pr_url_is_accepted_online_and_a_bad_token_names_the_target() -> None:
    state = FakeGitHubState()
    state.add_repo(REPO)
    state.installations = {1: "vllm-project"}
    token, _ = state.issue_token(1)
    state.add_pull(REPO, 7, title="[torch.compile] fix", files=[
        FakeFile("vllm/compilation/decorators.py", additions=3, deletions=1)])
    with FakeGitHubServer(state) as url:
        result = run("digest", "https://github.com/vllm-project/vllm/pull/7", "--format", "json",
                     env={"DIGEST_GITHUB_API_URL": url, "DIGEST_GITHUB_TOKEN": token})
        revoked = run("digest", "vllm-project/vllm/pull/7",
                      env={"DIGEST_GITHUB_API_URL": url, "DIGEST_GITHUB_TOKEN": "ghs_" + "0" * 36})
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert "compile" in {area["id"] for area in data["areas"]}
    assert revoked.returncode == 2
    assert revoked.stderr.strip() == (
        f"digest-bot: error: {REPO}#7: GET {url}/repos/{REPO}/pulls/7: HTTP 401 (Bad credentials)")


def test_unreachable_github_names_the_url_and_the_cause() -> None:
    result = run("digest", "vllm-project/vllm#7",
                 env={"DIGEST_GITHUB_API_URL": "http://github.invalid"})
    assert result.returncode == 2
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(
        f"digest-bot: error: {REPO}#7: GET http://github.invalid/repos/{REPO}/pulls/7: "
        "cannot connect (")
    assert "RequestError" not in line


def test_a_reference_and_an_event_together_is_a_clear_error() -> None:
    result = run("digest", "vllm-project/vllm/pull/7", "--event", str(EVENT))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "digest-bot: error: give either a PR reference or --event PAYLOAD.json, not both")


def test_event_without_files_warns_and_says_files_are_unknown() -> None:
    result = run("digest", "--event", str(EVENT))
    assert result.returncode == 0
    assert "warning: no --files: the changed files are unknown" in result.stderr
    assert "No file list was available" in result.stdout
    assert "lists only" not in result.stdout
    assert "Very large" not in result.stdout


def test_piped_to_head_has_no_traceback() -> None:
    shell = f"'{BIN}' digest --event '{EVENT}' --files '{FILES}' --format json | head -n 1"
    result = subprocess.run(["/bin/sh", "-c", shell], capture_output=True, text=True,
                            timeout=60, check=False, cwd=ROOT)
    assert result.stdout.strip() == "{"
    assert "Traceback" not in result.stderr
    assert "BrokenPipeError" not in result.stderr


def test_export_schema_to_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "schema.json"
    result = run("export-schema", str(target))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"digest-bot: error: {target}: directory {target.parent} does not exist")


def test_serve_help_shows_defaults_and_points_to_the_settings() -> None:
    result = run("serve", "--help")
    assert result.returncode == 0
    assert "(default: 8000)" in result.stdout
    assert "(default: 127.0.0.1)" in result.stdout
    assert "settings-table" in result.stdout


def test_check_rules_counts_the_areas() -> None:
    areas = len([p for p in (ROOT / "rules").glob("*.yaml")
                 if p.stem not in ("routing", "risks")])
    result = run("check-rules", "rules/")
    assert result.returncode == 0
    assert f"rules OK ({areas} areas loaded)" in result.stdout


# --- item 1: previews ----------------------------------------------------------------

def test_previews_prints_the_stored_markdown_with_pr_and_time(tmp_path: Path) -> None:
    db = tmp_path / "svc.db"
    ledger = Ledger(db)

    async def record() -> None:
        await ledger.record_preview(RecordedWrite(REPO, 7, "create_comment", "### Seven\nbody"))
        await ledger.record_preview(RecordedWrite(REPO, 8, "create_comment", "### Eight"))
        await ledger.record_preview(RecordedWrite(REPO, 8, "add_labels", "ci/build"))

    asyncio.run(record())
    ledger.close()
    result = run("previews", "--db", str(db), "--pr", "7")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"## {REPO}#7 · create_comment · ")
    assert " UTC\n\n### Seven\nbody\n" in result.stdout
    assert "Eight" not in result.stdout
    linked = run("previews", "--db", str(db), "--pr", "7",
                 env={"DIGEST_PUBLIC_URL": "https://digest.example"})
    assert "\nview: https://digest.example/view/vllm-project/vllm/7\n" in linked.stdout
    assert "view:" not in result.stdout  # no public URL: no link
    last = run("previews", "--last", "1", env={"DIGEST_DB_PATH": str(db)})
    assert last.returncode == 0
    assert last.stdout.count("## ") == 1
    assert "add_labels" in last.stdout
    none = run("previews", "--db", str(db), "--pr", "99")
    assert none.returncode == 0
    assert none.stderr.strip() == "no dry-run previews stored for PR #99"


def test_previews_without_a_database_is_one_line(tmp_path: Path) -> None:
    result = run("previews", "--db", str(tmp_path / "none.db"))
    assert result.returncode == 2
    assert "no database" in result.stderr
    assert not (tmp_path / "none.db").exists()


# --- item 10: parked jobs --------------------------------------------------------------

def _park_two(db: Path) -> list[int]:
    store = SqliteJobStore(db, settle_seconds=0.0)

    async def park() -> list[int]:
        ids = []
        for number in (3, 4):
            ids.append(await store.enqueue(NewJob(
                kind="pr", key=pr_key(REPO, number), installation_id=1, repo=REPO,
                number=number)))
        for _ in ids:
            job = await store.claim()
            assert job is not None
            await store.fail(job.id, "BadCredentials: GET /app: HTTP 401", park=True)
        return ids

    try:
        return asyncio.run(park())
    finally:
        store.close()


def test_jobs_list_and_retry(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    first, second = _park_two(db)
    listed = run("jobs", "list", "--parked", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.strip().splitlines()[1:]
    assert [row.split("\t")[:2] for row in rows] == [[str(first), "parked"],
                                                     [str(second), "parked"]]
    assert "HTTP 401" in rows[0]

    retried = run("jobs", "retry", str(first), "--db", str(db))
    assert retried.returncode == 0
    assert retried.stdout.strip() == f"requeued job {first} ({REPO}#3)"
    again = run("jobs", "retry", str(first), "--db", str(db))
    assert again.returncode == 2
    assert f"job {first} is queued, not parked" in again.stderr

    everything = run("jobs", "retry", "--all-parked", "--db", str(db))
    assert everything.stdout.strip() == "requeued 1 parked job(s)"
    assert run("jobs", "list", "--parked", "--db", str(db)).stderr.strip() == "no parked jobs"
    pending = run("jobs", "list", "--db", str(db)).stdout
    assert pending.count("\tqueued\t") == 2
