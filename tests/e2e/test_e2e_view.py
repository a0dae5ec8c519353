"""The label view served by the real `digest-bot serve` after it digested PRs through the
fake GitHub, read over HTTP and in a real browser (Debian's Chromium driven by Playwright).

Without Chromium or Playwright the browser test skips with a loud reason; the HTTP
checks still run. The browser's screenshot is kept under test-artifacts/ (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.view.app import CSP
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    REPO,
    REPO_ROOT,
    ServiceProcess,
    e2e_state,
    pr_event,
    wait_until,
)
from tests.view_env import DOCS_FILES, FRONTEND_FILES, HOSTILE_TITLE

pytestmark = pytest.mark.slow

PAGE = f"/view/{REPO}"
PRIVATE_REPO = "vllm-project/secret-fork"
VIEW_TOKEN = "e2e-view-token"
ARTIFACTS = Path(os.environ.get("DIGEST_TEST_ARTIFACTS", REPO_ROOT / "test-artifacts"))
NUMBERS = (11, 12, 13, 14)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeGitHubState,
                                                                      ServiceProcess]]:
    state = e2e_state()
    state.add_pull(REPO, 11, title="[torch.compile] Fix graph break", body=UNTESTED_BODY,
                   files=COMPILE_FILES, labels=["torch.compile"], author="alice")
    state.add_pull(REPO, 12, title=HOSTILE_TITLE, body="Fixes the template.",
                   files=FRONTEND_FILES, labels=["frontend"], author="mallory")
    state.add_pull(REPO, 13, title="Typo in the FAQ", body="typo", files=DOCS_FILES,
                   labels=["documentation"], author="carol")
    state.add_pull(REPO, 14, title="[Frontend] Stream usage", body="streams usage",
                   files=FRONTEND_FILES, labels=["frontend"], author="dave")
    with FakeGitHubServer(state) as url, ServiceProcess(
        url, tmp_path_factory.mktemp("e2e-view"),
        extra_env={"DIGEST_VIEW_TOKEN": VIEW_TOKEN},
    ) as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        time.sleep(0.2)
        for number in NUMBERS:
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        for number in NUMBERS:
            svc.wait_for_job(pr=number, timeout=20)
        yield state, svc


def test_the_service_serves_the_view_of_what_it_digested(
        served: tuple[FakeGitHubState, ServiceProcess]) -> None:
    _, svc = served
    page = svc.get(PAGE)
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    for number in (11, 12, 14):
        assert f'data-number="{number}"' in page.text
    assert "&lt;script&gt;" in page.text
    assert "<script" not in page.text
    assert svc.get(f"{PAGE}/11").status_code == 200
    api = svc.get(f"/api/digests/{REPO}").json()
    assert sorted(item["number"] for item in api) == list(NUMBERS)
    assert svc.get("/view/vllm-project/unknown").status_code == 404


def test_a_private_repository_is_404_without_the_token(
        served: tuple[FakeGitHubState, ServiceProcess]) -> None:
    state, svc = served
    state.add_repo(PRIVATE_REPO)
    state.repos[PRIVATE_REPO].private = True
    state.add_pull(PRIVATE_REPO, 1, title="Secret", files=COMPILE_FILES, labels=["x"])
    event = pr_event("opened", 1)
    event["repository"]["full_name"] = PRIVATE_REPO
    assert svc.send("pull_request", event).status_code == 202
    svc.wait_for_job(pr=1, timeout=20)
    assert svc.get(f"/view/{PRIVATE_REPO}").status_code == 404
    assert svc.get(f"/api/digests/{PRIVATE_REPO}").status_code == 404
    with_token = svc.get(f"/api/digests/{PRIVATE_REPO}?token={VIEW_TOKEN}")
    assert with_token.status_code == 200
    assert [item["title"] for item in with_token.json()] == ["Secret"]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _browser_or_skip() -> tuple[Any, str]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - depends on the machine
        reason = f"BROWSER TESTS SKIPPED: playwright is not importable ({exc})"
        print(reason, file=sys.stderr)
        pytest.skip(reason)
    chromium = _chromium()
    if chromium is None:  # pragma: no cover - depends on the machine
        reason = ("BROWSER TESTS SKIPPED: no Chromium on PATH "
                  "(CI installs Debian's `chromium`; `apt-get install -y chromium`)")
        print(reason, file=sys.stderr)
        pytest.skip(reason)
    return sync_playwright, chromium


def test_in_a_browser_groups_filters_language_and_hostile_title(
        served: tuple[FakeGitHubState, ServiceProcess]) -> None:
    sync_playwright, chromium = _browser_or_skip()
    _, svc = served
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(svc.url + PAGE)

            groups = page.eval_on_selector_all(
                "section.group", "els => els.map(e => e.dataset.label)")
            assert groups == ["frontend", "torch.compile"]
            assert page.locator("details.quiet li.entry").count() == 1
            assert not page.locator("details.quiet li.entry").is_visible()  # collapsed
            # The hostile title is text: nothing it carries became an element or ran.
            assert page.evaluate("window.__pwned") is None
            assert page.evaluate("document.querySelectorAll('script, img').length") == 0
            link = page.locator('li[data-number="12"] a.pr-link').first
            assert HOSTILE_TITLE in link.inner_text()
            # Readable on a phone: nothing wider than the screen.
            assert page.evaluate(
                "document.documentElement.scrollWidth <= window.innerWidth + 1")
            page.set_viewport_size({"width": 1000, "height": 900})
            page.screenshot(path=str(ARTIFACTS / "label-view.png"), full_page=True)

            page.locator("#label-filter a", has_text="torch.compile").click()
            page.wait_for_url("**label=torch.compile**")
            assert page.eval_on_selector_all(
                "section.group", "els => els.map(e => e.dataset.label)") == ["torch.compile"]
            assert page.locator("li.entry").count() == 1

            page.locator("a.lang-switch").click()
            page.wait_for_url("**lang=zh**")
            assert "标签视图" in page.title()
            assert "需要精读" in page.locator('li[data-number="11"]').inner_text()
            assert "label=torch.compile" in page.url  # the filter survives the switch

            page.locator('li[data-number="11"] a.digest-link').click()
            page.wait_for_url("**/11?lang=zh")
            assert page.locator("article.digest h3").count() >= 1
            assert errors == []
        finally:
            browser.close()
    assert (ARTIFACTS / "label-view.png").stat().st_size > 10_000
