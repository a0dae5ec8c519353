"""Issue 31, fail-fast start: what `digest-bot serve` cannot run with stops it at once,
exit 2, with ONE stderr line naming the setting (no traceback, no "listening" line);
what it can run with but was probably not meant (a misspelt DIGEST_* name) is one
warning line at start. Each case runs the real `python -m bot serve` process.

As root (these tests run as root) a chmod'ed directory is still writable, so the
database cases use paths that fail for root too: a path under a regular file, a
directory, a file that is no SQLite database, and a file in /proc (where not even root
can create one: sqlite3's bare "unable to open database file")."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.fakes.github_http import FakeGitHubServer
from tests.keys import PRIVATE_KEY_PEM
from tests.service_harness import (
    REPO,
    ServiceProcess,
    e2e_state,
    free_port,
    wait_until,
)

SECRET = "fail-fast-secret-0123456789"
# Started processes must stop on their own well within this (a start takes ~0.5 s);
# one that is still running has started serving, which is the failure being tested.
EXIT_WITHIN_SECONDS = 10.0
KEY_TEXT_MARK = "do-not-echo-this-key-text"


def _closed_port_url() -> str:
    # Never reached: every case below fails before anything talks to GitHub.
    return f"http://127.0.0.1:{free_port()}"


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update({"DIGEST_DB_PATH": str(tmp_path / "ok.db"), "DIGEST_LOG_LEVEL": "INFO",
                "PYTHONUNBUFFERED": "1"})
    env.update(settings)
    return env


def _app_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """Working App credentials (live), to which a case changes one thing."""
    working = {"DIGEST_APP_ID": "4242", "DIGEST_PRIVATE_KEY": PRIVATE_KEY_PEM,
               "DIGEST_WEBHOOK_SECRET": SECRET, "DIGEST_GITHUB_API_URL": _closed_port_url()}
    return _env(tmp_path, **{**working, **settings})


def _failed_start(env: dict[str, str], *args: str) -> tuple[int, list[str]]:
    """Run `serve` (or `args`); it must exit on its own, promptly. Its exit code and
    stderr lines."""
    command = list(args) or ["serve", "--host", "127.0.0.1", "--port", str(free_port())]
    started = time.monotonic()
    # A clean working directory: `serve` reads `.env` there, and a developer's own must
    # not change what the test sees.
    with tempfile.TemporaryDirectory() as clean:
        proc = subprocess.Popen([sys.executable, "-m", "bot", *command], cwd=clean, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(timeout=EXIT_WITHIN_SECONDS)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            try:
                out, err = proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
            pytest.fail(f"still running after {EXIT_WITHIN_SECONDS:.0f}s (it started); "
                        f"stderr: {err[-2000:]}")
    assert time.monotonic() - started < EXIT_WITHIN_SECONDS
    assert out == ""
    assert "Traceback" not in err, err
    assert "listening" not in err, err
    return proc.returncode, err.splitlines()


def _bad_setting(env: dict[str, str]) -> str:
    """The one `bad setting` line a failed start printed (exit code 2)."""
    code, lines = _failed_start(env)
    assert (code, len(lines)) == (2, 1), lines
    assert lines[0].startswith("digest-bot: bad setting: "), lines
    return lines[0].removeprefix("digest-bot: bad setting: ")


# --- 1. the database --------------------------------------------------------------------


def test_a_database_under_a_regular_file_stops_the_start(tmp_path: Path) -> None:
    # Before: a 30-line traceback ending in FileExistsError, exit 1.
    blocker = tmp_path / "data"
    blocker.write_text("a file where the database's directory should be\n")
    db = blocker / "pr-digest.db"
    assert _bad_setting(_env(tmp_path, DIGEST_DB_PATH=str(db))) == (
        f"DIGEST_DB_PATH={db}: cannot be created: {blocker} is a file, not a directory")


def test_a_database_path_that_is_a_directory_stops_the_start(tmp_path: Path) -> None:
    # Before: "sqlite3.OperationalError: unable to open database file", 29 lines.
    directory = tmp_path / "db-dir"
    directory.mkdir()
    assert _bad_setting(_env(tmp_path, DIGEST_DB_PATH=str(directory))) == (
        f"DIGEST_DB_PATH={directory}: is a directory, not a database file")


def test_a_corrupt_database_stops_the_start_and_is_left_as_it_was(tmp_path: Path) -> None:
    # Before: "sqlite3.DatabaseError: file is not a database", 28 lines.
    corrupt = tmp_path / "corrupt.db"
    junk = b"this is not SQLite\n" + bytes(range(256)) * 20
    corrupt.write_bytes(junk)
    assert _bad_setting(_env(tmp_path, DIGEST_DB_PATH=str(corrupt))) == (
        f"DIGEST_DB_PATH={corrupt}: not a SQLite database")
    assert corrupt.read_bytes() == junk
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.db"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_database_where_no_file_can_be_created_stops_the_start(tmp_path: Path) -> None:
    # A directory no one may create files in, root included: the failure a read-only
    # volume gives ("sqlite3.OperationalError: unable to open database file", 29 lines).
    db = Path("/proc") / f"pr-digest-{uuid.uuid4().hex}.db"
    line = _bad_setting(_env(tmp_path, DIGEST_DB_PATH=str(db)))
    assert line == (f"DIGEST_DB_PATH={db}: cannot create or open the file in /proc "
                    "(sqlite: unable to open database file)")


@pytest.mark.parametrize("command", [
    ("jobs", "list"), ("jobs", "list", "--parked"), ("previews",),
    ("jobs", "retry", "--all-parked"), ("jobs", "retry", "7"),
])
def test_the_operator_commands_report_a_corrupt_database_in_one_line(
    tmp_path: Path, command: tuple[str, ...],
) -> None:
    # Before: a 19-line traceback ending in "file is not a database", exit 1.
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"\x00garbage, not SQLite\n" * 100)
    code, lines = _failed_start(_env(tmp_path), *command, "--db", str(corrupt))
    assert (code, lines) == (2, [f"digest-bot: error: {corrupt}: not a SQLite database"])


# --- 2. the App's private key ----------------------------------------------------------


def _ec_key() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _encrypted_key() -> str:
    key = serialization.load_pem_private_key(PRIVATE_KEY_PEM.encode(), password=None)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.BestAvailableEncryption(b"passphrase")).decode()


KEY_FILES = {
    # name: (what the file holds, or None for no file; the line's message)
    "missing": (None, "cannot read the private key (No such file or directory)"),
    "truncated": (PRIVATE_KEY_PEM[: len(PRIVATE_KEY_PEM) // 2],
                  "not a PEM RSA private key (truncated, or not a key at all)"),
    "junk": (f"{KEY_TEXT_MARK}\n" * 20,
             "not a PEM RSA private key (truncated, or not a key at all)"),
    "a certificate request, not a key": (
        "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n",
        "not a PEM RSA private key (truncated, or not a key at all)"),
    "an EC key": (_ec_key(), "not an RSA private key (GitHub Apps sign with RS256)"),
    "encrypted": (_encrypted_key(),
                  "the private key is encrypted; give it without a passphrase"),
}


@pytest.mark.parametrize("case", sorted(KEY_FILES))
def test_an_unusable_key_file_stops_the_start(tmp_path: Path, case: str) -> None:
    # Before: the service started "(live: ...)", the reconcile task logged a ~30-line
    # traceback, /readyz stayed 503 while /healthz said healthy.
    content, message = KEY_FILES[case]
    key_path = tmp_path / "app.pem"
    if content is not None:
        key_path.write_text(content)
    env = _app_env(tmp_path, DIGEST_PRIVATE_KEY="", DIGEST_PRIVATE_KEY_PATH=str(key_path))
    line = _bad_setting(env)
    assert line == f"DIGEST_PRIVATE_KEY_PATH={key_path}: {message}"
    assert KEY_TEXT_MARK not in line


def test_an_unreadable_key_file_stops_the_start(tmp_path: Path) -> None:
    # chmod 000 does not stop root: a directory cannot be read as a key by anyone.
    key_dir = tmp_path / "keys"
    key_dir.mkdir()
    env = _app_env(tmp_path, DIGEST_PRIVATE_KEY="", DIGEST_PRIVATE_KEY_PATH=str(key_dir))
    assert _bad_setting(env) == (
        f"DIGEST_PRIVATE_KEY_PATH={key_dir}: cannot read the private key (Is a directory)")


def test_a_key_given_as_text_that_is_no_key_is_named_but_never_shown(tmp_path: Path) -> None:
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_TEXT_MARK}\n-----END RSA PRIVATE KEY-----\n"
    line = _bad_setting(_app_env(tmp_path, DIGEST_PRIVATE_KEY=text))
    assert line == ("DIGEST_PRIVATE_KEY=(hidden): not a PEM RSA private key "
                    "(truncated, or not a key at all)")


# --- 3. the API URL ---------------------------------------------------------------------


@pytest.mark.parametrize("url", ["api.github.com", "github.example.com/api/v3",
                                 "localhost:8080", "ftp://github.example.com"])
def test_an_api_url_without_an_http_scheme_stops_the_start(tmp_path: Path, url: str) -> None:
    # Before: it started, and every GitHub call failed, retried as a transient error.
    assert _bad_setting(_env(tmp_path, DIGEST_GITHUB_API_URL=url)) == (
        f"DIGEST_GITHUB_API_URL={url}: must be an http(s) URL with a host, "
        "e.g. https://api.github.com")


# --- 4. half of the App's credentials ----------------------------------------------------


def test_an_app_id_without_a_key_stops_the_start(tmp_path: Path) -> None:
    # Before: a silent dry-run ("no credentials: unauthenticated reads").
    line = _bad_setting(_env(tmp_path, DIGEST_APP_ID="4242", DIGEST_WEBHOOK_SECRET=SECRET))
    assert line == ("DIGEST_APP_ID=4242: set without the App's private key: set "
                    "DIGEST_PRIVATE_KEY or DIGEST_PRIVATE_KEY_PATH too (or unset "
                    "DIGEST_APP_ID for a dry-run)")


def test_an_app_id_without_a_key_stops_the_start_in_dry_run_too(tmp_path: Path) -> None:
    line = _bad_setting(_env(tmp_path, DIGEST_APP_ID="4242", DIGEST_DRY_RUN="1"))
    assert line.startswith("DIGEST_APP_ID=4242: set without the App's private key")


def test_a_key_file_without_an_app_id_stops_the_start(tmp_path: Path) -> None:
    key_path = tmp_path / "app.pem"
    key_path.write_text(PRIVATE_KEY_PEM)
    line = _bad_setting(_env(tmp_path, DIGEST_PRIVATE_KEY_PATH=str(key_path),
                             DIGEST_WEBHOOK_SECRET=SECRET))
    assert line == (f"DIGEST_PRIVATE_KEY_PATH={key_path}: set without DIGEST_APP_ID: set "
                    "DIGEST_APP_ID too (or unset the key for a dry-run)")


def test_a_key_text_without_an_app_id_stops_the_start_and_is_never_shown(
    tmp_path: Path,
) -> None:
    line = _bad_setting(_env(tmp_path, DIGEST_PRIVATE_KEY=PRIVATE_KEY_PEM))
    assert line == ("DIGEST_PRIVATE_KEY=(hidden): set without DIGEST_APP_ID: set "
                    "DIGEST_APP_ID too (or unset the key for a dry-run)")


def test_live_without_a_webhook_secret_stops_the_start(tmp_path: Path) -> None:
    # Before: it started live and answered every delivery 401.
    line = _bad_setting(_app_env(tmp_path, DIGEST_WEBHOOK_SECRET=""))
    assert line == ("DIGEST_WEBHOOK_SECRET: not set, but App credentials make the service "
                    "live, and live it refuses every delivery: set the App's webhook secret "
                    "(or DIGEST_DRY_RUN=1)")
    assert "BEGIN" not in line


def test_a_writer_url_without_a_model_stops_the_start(tmp_path: Path) -> None:
    # Else the writer would be silently off, or ask a server for a model it lacks.
    line = _bad_setting(_env(tmp_path, DIGEST_WRITER_URL="http://user:pw@vllm:8000/v1"))
    assert line == ("DIGEST_WRITER_URL=http://user:***@vllm:8000/v1: set without "
                    "DIGEST_WRITER_MODEL: name the model the endpoint serves (or unset "
                    "DIGEST_WRITER_URL: no writer)")


@pytest.mark.slow
def test_zero_config_still_starts_in_dry_run(tmp_path: Path) -> None:
    # No credentials at all: the zero-config dry-run, unchanged.
    with ServiceProcess(_closed_port_url(), tmp_path, secret="", extra_env={
            "DIGEST_APP_ID": "", "DIGEST_PRIVATE_KEY": "",
            "DIGEST_GITHUB_API_URL": ""}) as svc:
        assert svc.get("/healthz").status_code == 200
        assert svc.get("/readyz").status_code == 200
    messages = [str(r.get("msg", "")) for r in svc.log_records()]
    assert any("(dry-run: no credentials: unauthenticated reads, no writes)" in m
               for m in messages), messages
    assert not [r for r in svc.log_records() if r.get("level") in ("warning", "error")]


# --- 5. the port --------------------------------------------------------------------------


def test_a_port_in_use_stops_the_start_before_any_listening_line(tmp_path: Path) -> None:
    # Before: 7 lines, the first "pr-digest listening on ...", then uvicorn's
    # "[Errno 98] ... address already in use", exit 3.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, lines = _failed_start(_env(tmp_path), "serve", "--host", "127.0.0.1",
                                    "--port", str(port))
    assert (code, lines) == (2, [
        f"digest-bot: error: port {port} on 127.0.0.1 is taken (address already in use): "
        "stop what listens there or choose another port with --port"])


# --- 6. misspelt names ------------------------------------------------------------------


@pytest.mark.slow
def test_a_misspelt_setting_is_warned_about_once_at_start_naming_the_real_one(
    tmp_path: Path,
) -> None:
    # Before: ignored without a word. A name close to a safety setting stops the start
    # instead (the next test); these are close to other settings, or to none.
    typo_secret = "misspelt-secret-value-0123456789"
    extra = {"DIGEST_WEBHOOK_SECRT": typo_secret, "DIGEST_NOTHING_LIKE_IT": "1",
             "DIGEST_WORKER": "2"}
    with FakeGitHubServer(e2e_state()) as url, ServiceProcess(url, tmp_path,
                                                              extra_env=extra) as svc:
        wait_until(lambda: httpx.get(f"{svc.url}/readyz", timeout=2).status_code == 200,
                   timeout=10, message="never ready")
    records = svc.log_records()
    messages = [str(r.get("msg", "")) for r in records]
    unknown = [r for r in records if "not a setting" in str(r.get("msg", ""))]
    assert [(r["level"], r["msg"]) for r in unknown] == [
        ("warning", "DIGEST_NOTHING_LIKE_IT: not a setting, ignored; "
                    "`digest-bot settings-table` lists them"),
        ("warning", "DIGEST_WEBHOOK_SECRT: not a setting, ignored; "
                    "did you mean DIGEST_WEBHOOK_SECRET?"),
        ("warning", "DIGEST_WORKER: not a setting, ignored; did you mean DIGEST_WORKERS?"),
    ]
    listening = next(i for i, m in enumerate(messages) if m.startswith("pr-digest listening"))
    assert max(records.index(r) for r in unknown) < listening
    assert "(live: App credentials" in messages[listening]
    assert typo_secret not in svc.log_path.read_text()


@pytest.mark.slow
@pytest.mark.parametrize(("typo", "meant"), [
    ("DIGEST_DRYRUN", "DIGEST_DRY_RUN"),
    ("digest_dry_rnu", "DIGEST_DRY_RUN"),
    ("DIGEST_RECONCILE_ON_START", "DIGEST_RECONCILE_ON_STARTUP"),
    ("DIGEST_WRITE_INTERVAL", "DIGEST_WRITE_INTERVAL_SECONDS"),
])
def test_a_misspelt_safety_setting_stops_the_start_before_any_github_call(
    tmp_path: Path, typo: str, meant: str,
) -> None:
    # Before (issue 38, item 9): `DIGEST_DRYRUN=1` with App credentials only warned and
    # started live; its start-up sweep wrote to every open PR.
    state = e2e_state()
    state.add_pull(REPO, 7, title="An open PR the start-up sweep would digest")
    with FakeGitHubServer(state) as url:
        code, lines = _failed_start(_app_env(tmp_path, DIGEST_GITHUB_API_URL=url,
                                             **{typo: "1"}))
        assert state.calls == []
    assert (code, lines) == (2, [
        f"digest-bot: bad setting: {typo}: not a setting; did you mean {meant}? It holds "
        "writes back, so `serve` does not start while it may be misspelt"])
