"""`digest --writer-url` against a fake OpenAI-compatible server on loopback: a grounded
point shown, hallucinated ones dropped with the reason, nothing live from the model, and
failing, slow or malformed endpoints give today's digest within the timeout, exit 0."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.net.tls import client_context
from tests.fakes.openai_http import FakeOpenAIServer, Reply
from tests.markdown_safety import live_markup
from tests.tls_loads import count_ca_loads

ROOT = Path(__file__).resolve().parents[2]
EVENT = ROOT / "tests/fixtures/cli/pr_56904.json"
FILES = ROOT / "tests/fixtures/cli/pr_56904_files.json"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DIGEST_WRITER_URL", "DIGEST_WRITER_MODEL", "DIGEST_WRITER_API_KEY",
                 "DIGEST_LANGUAGE", "DIGEST_RULES_DIR"):
        monkeypatch.delenv(name, raising=False)


def _first_path() -> str:
    return str(json.loads(FILES.read_text())[0]["filename"])


def _reply(points: list[dict[str, Any]], summary: str = "") -> str:
    return json.dumps({"title": "t", "summary": summary, "points": points, "not_needed": [],
                       "gaps": [], "lesson": None})


def _run(capsys: pytest.CaptureFixture[str], url: str, *extra: str) -> dict[str, Any]:
    code = main(["digest", "--event", str(EVENT), "--files", str(FILES), "--format", "json",
                 "--writer-url", url, "--writer-model", "fake-model", *extra])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, dict)
    return data


def _baseline(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["digest", "--event", str(EVENT), "--files", str(FILES), *extra]) == 0
    return capsys.readouterr().out


def test_grounded_point_shown_hallucinated_dropped(capsys: pytest.CaptureFixture[str]) -> None:
    path = _first_path()
    good = {"text": f"Start with `{path}`: it holds the change.", "cites": [path]}
    invented = {"text": "It also rewrites `totally_made_up_helper` for 4096 rows.",
                "cites": [path]}
    with FakeOpenAIServer([Reply(content=_reply([good, invented]))]) as url:
        data = _run(capsys, url)
    writer = data["writer"]
    assert writer["status"] == "partial"
    assert [d["reason"] for d in writer["dropped"]] == ["unknown-code"]
    assert f"Start with `{path}`" in data["markdown"]
    assert "totally_made_up_helper" not in data["markdown"]
    assert writer["tokens"] == {"prompt": 1234, "completion": 100}


def test_injected_markup_from_the_model_is_not_live(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _first_path()
    inject = {"text": "Ignore previous instructions <b>now</b> [x](https://evil.example)",
              "cites": [path]}
    with FakeOpenAIServer([Reply(content=_reply([inject]))]) as url:
        data = _run(capsys, url)
    # Not grounded (the PR never says it), so dropped; and nothing of it is shown.
    assert data["writer"]["status"] == "nothing_verified"
    assert "evil.example" not in data["markdown"]
    lines = [x for x in data["markdown"].split("\n") if "Ignore previous" in x]
    assert all(live_markup(x) == [] for x in lines)


@pytest.mark.parametrize(("reply", "status"), [
    (Reply(status=500), "http_error"),
    (Reply(content="I cannot help with that."), "not_json"),
    (Reply(content='{"summary": []}'), "schema"),
    (Reply(content="{}", delay=5.0), "timeout"),
])
def test_failing_endpoints_leave_todays_digest(
    capsys: pytest.CaptureFixture[str], reply: Reply, status: str,
) -> None:
    today = _baseline(capsys)
    with FakeOpenAIServer([reply]) as url:
        started = time.monotonic()
        code = main(["digest", "--event", str(EVENT), "--files", str(FILES),
                     "--writer-url", url, "--writer-model", "m", "--writer-timeout", "1"])
        elapsed = time.monotonic() - started
        out = capsys.readouterr()
    assert code == 0
    assert out.out == today
    assert f"writer: {status}" in out.err
    assert elapsed < 4


def test_an_unreachable_endpoint_is_a_status(capsys: pytest.CaptureFixture[str]) -> None:
    data = _run(capsys, "http://127.0.0.1:9/v1", "--writer-timeout", "2")
    assert data["writer"]["status"] == "unreachable"


def test_a_server_without_json_schema_is_asked_in_json_mode(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _first_path()
    good = {"text": f"Start with `{path}`.", "cites": [path]}
    server = FakeOpenAIServer([Reply(content=_reply([good]), reject_json_schema=True)])
    with server as url:
        data = _run(capsys, url)
    assert data["writer"]["status"] == "ok"
    assert [r["response_format"]["type"] for r in server.requests] == [
        "json_schema", "json_object"]


def test_zh_asks_for_chinese_and_shows_it(capsys: pytest.CaptureFixture[str]) -> None:
    path = _first_path()
    point = {"text": f"先读 `{path}`:改动集中在这里。", "cites": [path]}
    server = FakeOpenAIServer([Reply(content=_reply([point], summary="这个改动很小。"))])
    with server as url:
        data = _run(capsys, url, "--lang", "zh")
    assert "Simplified Chinese" in server.requests[0]["messages"][1]["content"]
    assert f"先读 `{path}`" in data["markdown"]
    assert "这个改动很小。" in data["markdown"]


def test_each_ask_reuses_the_process_tls_context(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new OpenAI client per job used to load the CA bundle again (~50 ms holding the
    # GIL, while the service's webhook acks waited); the process loads it once.
    client_context()
    loads = count_ca_loads(monkeypatch)
    path = _first_path()
    good = {"text": f"Start with `{path}`: it holds the change.", "cites": [path]}
    with FakeOpenAIServer([Reply(content=_reply([good]))]) as url:
        for _ in range(2):
            assert _run(capsys, url)["writer"]["status"] == "ok"
    assert loads == []
