"""The label view served by the real `digest-bot serve` after it digested PRs through the
fake GitHub, read over HTTP and in a real browser (Debian's Chromium driven by Playwright).

Without Chromium or Playwright the browser test skips with a loud reason; the HTTP
checks still run. The browser's screenshot is kept under test-artifacts/ (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.view.app import CSP
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import COMPILE_FILES
from tests.service_harness import (
    REPO,
    REPO_ROOT,
    ServiceProcess,
    e2e_state,
    pr_event,
    service_for,
)
from tests.view_env import FRONTEND_FILES, HOSTILE_TITLE
from tests.view_real import real_cases, seed_real_pulls

pytestmark = pytest.mark.slow

PAGE = f"/view/{REPO}"
ESCAPES = "vllm-project/escapes"  # the hostile title lives apart from the real PRs
PRIVATE_REPO = "vllm-project/secret-fork"
VIEW_TOKEN = "e2e-view-token"
ARTIFACTS = Path(os.environ.get("DIGEST_TEST_ARTIFACTS", REPO_ROOT / "test-artifacts"))
HOSTILE = 12


def _event(repo: str, number: int) -> dict[str, Any]:
    event = pr_event("opened", number)
    event["repository"]["full_name"] = repo
    return event


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeGitHubState,
                                                                      ServiceProcess]]:
    state = e2e_state()
    numbers = seed_real_pulls(state, REPO)
    state.add_pull(ESCAPES, HOSTILE, title=HOSTILE_TITLE, body="Fixes the template.",
                   files=FRONTEND_FILES, labels=["frontend"], author="mallory")
    with FakeGitHubServer(state) as url, service_for(state,
        url, tmp_path_factory.mktemp("e2e-view"),
        extra_env={"DIGEST_VIEW_TOKEN": VIEW_TOKEN},
    ) as svc:
        for number in numbers:
            assert svc.send("pull_request", _event(REPO, number)).status_code == 202
        assert svc.send("pull_request", _event(ESCAPES, HOSTILE)).status_code == 202
        for number in (*numbers, HOSTILE):
            svc.wait_for_job(pr=number, timeout=60)
        yield state, svc


def _api(svc: ServiceProcess) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = svc.get(f"/api/digests/{REPO}?per_page=100").json()
    return items


def test_the_service_serves_the_view_of_what_it_digested(
        served: tuple[FakeGitHubState, ServiceProcess]) -> None:
    _, svc = served
    page = svc.get(PAGE)
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    cases = real_cases()
    for case in cases:
        assert f'data-number="{case["event"]["pull_request"]["number"]}"' in page.text
    hostile = svc.get(f"/view/{ESCAPES}")
    assert "&lt;script&gt;" in hostile.text
    assert "<script" not in hostile.text
    assert svc.get(f"{PAGE}/{cases[0]['event']['pull_request']['number']}").status_code == 200
    api = _api(svc)
    assert sorted(item["number"] for item in api) == sorted(
        case["event"]["pull_request"]["number"] for case in cases)
    for item in api:  # the triage keys, from the real patches and conversation
        assert item["waiting_on"] in ("author", "reviewer", "ci")
        real = next(c for c in cases if c["event"]["pull_request"]["number"] == item["number"])
        assert item["size"] == {
            "additions": sum(f["additions"] for f in real["files"]),
            "deletions": sum(f["deletions"] for f in real["files"]),
            "files": len(real["files"])}
        assert item["created_at"] is not None
        assert isinstance(item["signals"], list)
    reviewed = {item["number"] for item in api if not item["needs_first_review"]}
    assert reviewed == {52945, 55288, 55548}  # the three with a reviewer's remark
    unknown = svc.get("/view/vllm-project/unknown")
    assert unknown.status_code == 404
    assert "No digest is stored for vllm-project/unknown" in unknown.text


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


def _owned_by(login: str, item: dict[str, Any], pools: dict[str, Any]) -> bool:
    """What ?owner= promises, from the API's own keys: the login owns changed files
    (CODEOWNERS), is a suggested reviewer, or sits in the pool of one of the labels."""
    folded = login.casefold()
    owners = item.get("owners") or {}
    if folded in {u.casefold() for u in owners.get("users", ())}:
        return True
    if folded in {u.casefold() for u in item["reviewers"]["users"]}:
        return True
    labels = {x.casefold() for x in (*item["pr_labels"], *item["labels"])}
    return any(label.casefold() in labels and folded in {u.casefold() for u in pool["users"]}
               for label, pool in pools.items())


def _listed(page: Any) -> list[int]:
    return [int(n) for n in page.eval_on_selector_all(
        "li.entry", "els => els.map(e => e.dataset.number)")]


def _count_text(page: Any) -> str:
    return str(page.locator("#counts").inner_text())


def test_in_a_browser_the_triage_queue_of_real_prs(
        served: tuple[FakeGitHubState, ServiceProcess]) -> None:
    sync_playwright, chromium = _browser_or_skip()
    _, svc = served
    api = _api(svc)
    total = len(api)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(svc.url + PAGE)

            # One row per PR, quiet ones collapsed apart; the counts say so.
            listed = page.locator("section.group li.entry")
            quiet = page.locator("details.quiet li.entry")
            assert listed.count() + quiet.count() == total
            assert len(set(_listed(page))) == total
            assert not quiet.first.is_visible()  # collapsed
            assert f"{total} of {total} open PRs" in _count_text(page)
            verdicts = {v: sum(1 for i in api if i["verdict"] == v)
                        for v in ("deep-read", "read", "skim", "quiet")}
            chip = page.locator("#verdict-filter a.v-deep-read .n")
            assert int(chip.inner_text()) == verdicts["deep-read"]
            # Readable on a phone: nothing wider than the screen.
            assert page.evaluate(
                "document.documentElement.scrollWidth <= window.innerWidth + 1")
            assert page.evaluate("document.querySelectorAll('script').length") == 0
            page.set_viewport_size({"width": 1000, "height": 900})
            page.screenshot(path=str(ARTIFACTS / "label-view.png"), full_page=False)

            # A label: only its PRs, every chip and count for that filter.
            frontend = sorted(i["number"] for i in api
                              if "frontend" in (*i["pr_labels"], *i["labels"]))
            page.locator("#label-filter a.chip", has_text="frontend").click()
            page.wait_for_url("**label=frontend**")
            assert sorted(_listed(page)) == frontend
            assert f"{len(frontend)} of {total} open PRs" in _count_text(page)
            in_label = sum(1 for i in api if i["number"] in frontend
                           and i["verdict"] == "read")
            assert int(page.locator("#verdict-filter a.v-read .n").inner_text()) == in_label

            # Sort by size: the largest change first, within the label.
            page.locator("#sort-filter a", has_text="largest").click()
            page.wait_for_url("**sort=size**")
            sizes = {i["number"]: i["size"]["additions"] + i["size"]["deletions"] for i in api}
            shown = [n for n in _listed(page) if n in frontend]
            assert [sizes[n] for n in shown] == sorted((sizes[n] for n in shown), reverse=True)
            assert "label=frontend" in page.url  # the filter survives the sort

            # Oldest first over everything.
            page.goto(svc.url + PAGE + "?sort=oldest")
            created = {i["number"]: i["created_at"] for i in api}
            rows = [n for n in _listed(page)
                    if page.locator(f'section.group li[data-number="{n}"]').count()]
            assert [created[n] for n in rows] == sorted(created[n] for n in rows)

            # Search from the form (no script: a GET form back to the page).
            page.goto(svc.url + PAGE)
            page.fill("form.search input[name=q]", "redact")
            page.locator("form.search button").click()
            page.wait_for_url("**q=redact**")
            wanted = sorted(i["number"] for i in api if "redact" in i["title"].casefold())
            assert wanted  # two real PRs redact secrets
            assert sorted(_listed(page)) == wanted
            page.goto(svc.url + PAGE + "?q=%23" + str(wanted[0]))
            assert _listed(page) == [wanted[0]]

            # Nothing matches: the empty state says so and clears every filter.
            page.goto(svc.url + PAGE + "?q=no+such+change+anywhere&label=frontend")
            assert page.locator("section.empty").is_visible()
            assert "No open PR matches these filters." in page.locator("section.empty").inner_text()
            page.locator("section.empty a").click()
            page.wait_for_url(svc.url + PAGE)
            assert len(_listed(page)) == total

            # My areas.
            pools = yaml.safe_load((REPO_ROOT / "rules" / "routing.yaml").read_text())["pools"]
            mine = sorted(i["number"] for i in api if _owned_by("DarkLight1337", i, pools))
            assert mine
            page.goto(svc.url + PAGE + "?owner=DarkLight1337")
            assert sorted(_listed(page)) == mine
            assert f"{len(mine)} of {total} open PRs" in _count_text(page)

            # Chinese throughout, filters kept.
            page.goto(svc.url + PAGE + "?label=frontend")
            page.locator("a.lang-switch").click()
            page.wait_for_url("**lang=zh**")
            assert "标签视图" in page.title()
            assert "label=frontend" in page.url
            verdict_bar = page.locator("#verdict-filter").inner_text()
            assert "值得一读" in verdict_bar
            assert "read" not in verdict_bar.replace("Verdict", "")
            assert "等待" in page.locator("li.entry").first.inner_text()
            assert page.evaluate(
                "document.documentElement.scrollWidth <= window.innerWidth + 1")

            # A digest page: its task list is disabled checkboxes, not "[ ]".
            first = _listed(page)[0]
            page.locator(f'li[data-number="{first}"] a.digest-link').click()
            page.wait_for_url(f"**/{first}?lang=zh")
            assert page.locator("article.digest h3").count() >= 1
            boxes = page.locator("article.digest input[type=checkbox]")
            if boxes.count():
                assert boxes.first.is_disabled()
            assert "[ ]" not in page.locator("article.digest").inner_text()

            # The hostile title is text: nothing it carries became an element or ran.
            page.goto(svc.url + f"/view/{ESCAPES}")
            assert page.evaluate("window.__pwned") is None
            assert page.evaluate("document.querySelectorAll('script, img').length") == 0
            link = page.locator(f'li[data-number="{HOSTILE}"] a.pr-link').first
            assert HOSTILE_TITLE in link.inner_text()
            assert errors == []
        finally:
            browser.close()
    assert (ARTIFACTS / "label-view.png").stat().st_size > 10_000
