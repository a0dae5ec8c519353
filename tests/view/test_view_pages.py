"""The label view's pages, API and feed over digests the real digest job stored.

Jobs run against the in-memory fake GitHub; the routes answer through httpx's ASGI
transport. Assertions are on what a reader or a client gets: status, headers, text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.settings.model import Settings
from bot.view.app import CSP, TOKEN_COOKIE
from tests.handler_env import REPO
from tests.view_env import FRONTEND_FILES, HOSTILE_TITLE, add_sample_pulls, view_env

PAGE = f"/view/{REPO}"
API = f"/api/digests/{REPO}"
ATOM = "{http://www.w3.org/2005/Atom}"


def group_labels(html: str) -> list[str]:
    return re.findall(r'<section class="group" data-label="([^"]*)"', html)


def entry_numbers(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'data-number="(\d+)"', html)]


def entry_html(html: str, number: int) -> str:
    start = html.index(f'data-number="{number}"')
    end = html.find('<li class="entry', start)
    return html[start:end if end >= 0 else len(html)]


async def test_the_page_lists_each_open_pr_once_with_quiet_ones_collapsed(
        tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.pull(REPO, 1).labels.append("v1")
        for number in (1, 2, 3):
            await env.digest(number)
        page = await env.get(PAGE)
    assert page.status_code == 200
    html = page.text
    assert group_labels(html) == [""]  # the "all" view: one list, labels as chips
    assert entry_numbers(html) == [1, 2, 3]  # #1 carries two labels, listed once
    assert 'class="label" href="/view/vllm-project/vllm?label=v1"' in entry_html(html, 1)
    quiet = html[html.index('<details class="group quiet"'):]
    assert entry_numbers(quiet) == [3]
    # Counts of what the page shows; the documentation chip counts the quiet PR.
    assert "3 of 3 open PRs" in html
    assert re.search(r'label=documentation"[^>]*>documentation <span class="n">1</span>', html)
    assert "<details class=\"group quiet\" data-label=\"quiet\" open" not in html
    deep = entry_html(html, 1)
    assert '<span class="verdict-chip v-deep-read">deep read</span>' in deep
    assert "missing-gpu-eval" in deep  # the open high risk
    assert "ContextVar" in deep  # a focus question: what to check
    assert 'href="https://github.com/vllm-project/vllm/pull/1"' in deep
    assert "torch.compile / Dynamo / Inductor" in deep  # who should read it
    assert "Suggested reviewers:" in deep


async def test_a_hostile_title_is_text_everywhere(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        await env.digest(2)
        responses = [await env.get(path) for path in
                     (PAGE, f"{PAGE}/2", f"{PAGE}/feed.atom", f"{PAGE}?lang=zh")]
    for response in responses:
        assert response.status_code == 200
        assert "<script" not in response.text
        assert "<img" not in response.text
        assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in response.text
    api = await _api_items(tmp_path)
    assert api[0]["title"] == HOSTILE_TITLE  # JSON keeps the text as it is


async def _api_items(tmp_path: Path) -> list[dict[str, object]]:
    async with view_env(tmp_path / "api") as env:
        add_sample_pulls(env.state)
        await env.digest(2)
        response = await env.get(API)
    items: list[dict[str, object]] = response.json()
    return items


async def test_filters_by_label_and_verdict(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        for number in (1, 2, 3):
            await env.digest(number)
        by_label = await env.get(PAGE, params={"label": "frontend"})
        by_verdict = await env.get(PAGE, params={"verdict": "deep-read"})
        nothing = await env.get(PAGE, params={"label": "no-such-label"})
        bad = await env.get(PAGE, params={"verdict": "urgent"})
    assert group_labels(by_label.text) == ["frontend"]
    assert entry_numbers(by_label.text) == [2]
    assert 'class="chip active"' in by_label.text
    assert entry_numbers(by_verdict.text) == [1]
    assert "No open PR matches these filters." in nothing.text
    assert bad.status_code == 400
    assert "verdict must be one of" in bad.text


async def test_the_language_switch_shows_the_chinese_digest(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        english = await env.get(PAGE)
        chinese = await env.get(PAGE, params={"lang": "zh"})
        page_zh = await env.get(f"{PAGE}/1", params={"lang": "zh"})
        bad = await env.get(PAGE, params={"lang": "fr"})
    assert 'href="/view/vllm-project/vllm?lang=zh"' in english.text
    assert "标签视图" in chinese.text
    assert "需要精读" in chinese.text  # the digest itself, built in Chinese
    assert 'href="/view/vllm-project/vllm"' in chinese.text  # back to the default
    assert "需要精读" in page_zh.text
    assert bad.status_code == 400


async def test_default_language_comes_from_the_settings(tmp_path: Path) -> None:
    async with view_env(tmp_path, settings=Settings(language="zh")) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        page = await env.get(PAGE)
    assert "需要精读" in page.text
    assert 'href="/view/vllm-project/vllm?lang=en"' in page.text


async def test_headers_and_etag(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        first = await env.get(PAGE)
        etag = first.headers["etag"]
        again = await env.get(PAGE, headers={"If-None-Match": etag})
        other_query = await env.get(PAGE, params={"lang": "zh"},
                                    headers={"If-None-Match": etag})
        await env.digest(2)
        after_a_job = await env.get(PAGE, headers={"If-None-Match": etag})
        css = await env.get("/static/view.css")
    assert first.headers["content-security-policy"] == CSP
    assert "script-src" not in CSP
    assert "'unsafe-inline'" not in CSP
    assert first.headers["x-content-type-options"] == "nosniff"
    assert first.headers["cache-control"] == "public, no-cache"
    assert again.status_code == 304
    assert again.content == b""
    assert other_query.status_code == 200
    assert after_a_job.status_code == 200
    assert entry_numbers(after_a_job.text) == [1, 2]  # deep read first
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")


async def test_unknown_repositories_and_prs_are_404(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        answers = {
            path: (await env.get(path)).status_code
            for path in (
                "/view/vllm-project/other", "/view/someone/vllm", f"{PAGE}/99",
                f"{PAGE}/{'9' * 5000}", f"{PAGE}/abc", "/api/digests/vllm-project/other",
                "/view/vllm-project/other/feed.atom", "/view/bad%20owner/vllm",
            )
        }
        api_missing = await env.get("/api/digests/vllm-project/other")
        unknown = await env.get("/view/vllm-project/other")
        missing_pr = await env.get(f"{PAGE}/99")
    assert set(answers.values()) == {404}, answers
    assert api_missing.json() == {"error": "not found"}
    # A repository's view says how digests get there (and the same for a private one).
    assert "No digest is stored for vllm-project/other" in unknown.text
    assert "installed on the repository" in unknown.text
    assert "No digest is stored" not in missing_pr.text


async def test_a_private_repository_needs_the_view_token(tmp_path: Path) -> None:
    settings = Settings(language="en", view_token="s3cret-view")
    async with view_env(tmp_path, settings=settings) as env:
        add_sample_pulls(env.state)
        env.state.repos[REPO].private = True
        await env.digest(1)
        anonymous = await env.get(PAGE)
        wrong = await env.get(PAGE, headers={"Authorization": "Bearer nope"})
        bearer = await env.get(PAGE, headers={"Authorization": "Bearer s3cret-view"})
        api = await env.get(API, headers={"Authorization": "Bearer s3cret-view"})
        api_anonymous = await env.get(API)
        feed = await env.get(f"{PAGE}/feed.atom", params={"token": "s3cret-view"})
        via_query = await env.get(PAGE, params={"token": "s3cret-view", "label": "x"})
    assert anonymous.status_code == 404
    assert wrong.status_code == 404
    assert api_anonymous.status_code == 404
    assert bearer.status_code == 200
    assert bearer.headers["cache-control"] == "private, no-cache"
    assert "s3cret" not in bearer.text
    assert api.status_code == 200
    assert feed.status_code == 200
    assert "s3cret" not in feed.text
    # ?token= moves into an HttpOnly cookie and out of the URL.
    assert via_query.status_code == 303
    assert via_query.headers["location"] == f"{PAGE}?label=x"
    cookie = via_query.headers["set-cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}=s3cret-view")
    assert "httponly" in cookie.lower()
    assert "samesite=strict" in cookie.lower()


async def test_a_token_in_a_public_pages_link_is_never_planted_as_a_cookie(
    tmp_path: Path,
) -> None:
    """Issue 32, item 3: before, any `?token=` on a public page came back as
    `Set-Cookie: digest_view_token=<the link's value>`."""
    settings = Settings(language="en", view_token="s3cret-view")
    async with view_env(tmp_path, settings=settings) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        planted = await env.get(PAGE, params={"token": "attacker-chosen", "label": "x"})
        on_pr = await env.get(f"{PAGE}/1", params={"token": "attacker-chosen"})
        valid = await env.get(PAGE, params={"token": "s3cret-view"})
    async with view_env(tmp_path / "unset") as env:  # no view token configured at all
        add_sample_pulls(env.state)
        await env.digest(1)
        unset = await env.get(PAGE, params={"token": "attacker-chosen"})
    for answer in (planted, on_pr, unset):
        # Still taken out of the URL, but not kept.
        assert answer.status_code == 303
        assert "token" not in answer.headers["location"]
        assert "set-cookie" not in answer.headers
    assert planted.headers["location"] == f"{PAGE}?label=x"
    assert valid.headers["set-cookie"].startswith(f"{TOKEN_COOKIE}=s3cret-view")


async def test_a_private_repository_is_404_without_a_configured_token(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.repos[REPO].private = True
        await env.digest(1)
        answer = await env.get(PAGE, headers={"Authorization": "Bearer anything"})
    assert answer.status_code == 404


async def test_the_digest_page_renders_the_markdown_sanitised(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.pull(REPO, 1).files[0].filename = 'vllm/<script>alert(1)</script>.py'
        await env.digest(1)
        page = await env.get(f"{PAGE}/1")
    html = page.text
    assert page.status_code == 200
    assert "<h3>" in html
    assert "<details>" in html
    assert "<!--" not in html  # the marker comment is not shown
    assert "<script" not in html
    assert "Risk checklist" in html


async def test_the_api_lists_contract_keys_and_pages(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        for number in (1, 2, 3):
            await env.digest(number)
        everything = await env.get(API)
        first = await env.get(API, params={"per_page": "2"})
        second = await env.get(first.headers["link"].split(">")[0].lstrip("<"))
        by_label = await env.get(API, params={"label": "torch.compile"})
        future = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        since = await env.get(API, params={"since": future})
        bad_since = await env.get(API, params={"since": "yesterday"})
        bad_page = await env.get(API, params={"per_page": "1000"})
    items = everything.json()
    assert sorted(item["number"] for item in items) == [1, 2, 3]
    contract = {"verdict", "reading_minutes", "areas", "risks", "reviewers", "labels",
                "markdown"}
    extra = {"title", "author", "url", "pr_labels", "draft", "state", "updated_at",
             "view_url"}
    assert all(contract | extra <= set(item) for item in items)
    assert len(first.json()) == 2
    assert first.headers["link"].count("rel=") == 1  # next only: no page before it
    assert 'rel="next"' in first.headers["link"]
    assert len(second.json()) == 1
    # The last page links back, and to the first, keeping per_page; nothing after it.
    assert 'rel="next"' not in second.headers["link"]
    assert '?per_page=2&page=1>; rel="prev"' in second.headers["link"]
    assert '?per_page=2&page=1>; rel="first"' in second.headers["link"]
    assert {i["number"] for i in first.json()} | {i["number"] for i in second.json()} == {1, 2, 3}
    assert [item["number"] for item in by_label.json()] == [1]
    assert since.json() == []
    assert bad_since.status_code == 400
    assert "since must be an ISO 8601 time" in bad_since.json()["error"]
    assert bad_page.status_code == 400


async def test_the_feed_lists_the_area_and_skips_quiet_prs(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.pull(REPO, 2).title += " \x01\x1b[31m"  # control characters XML forbids
        for number in (1, 2, 3):
            await env.digest(number)
        feed = await env.get(f"{PAGE}/feed.atom")
        labelled = await env.get(f"{PAGE}/feed.atom", params={"label": "torch.compile"})
    assert feed.headers["content-type"].startswith("application/atom+xml")
    root = ET.fromstring(feed.content)  # noqa: S314 - our own output
    titles = [e.findtext(f"{ATOM}title") or "" for e in root.iter(f"{ATOM}entry")]
    assert len(titles) == 2
    assert not any("Typo in the FAQ" in title for title in titles)
    one = ET.fromstring(labelled.content)  # noqa: S314 - our own output
    assert [e.findtext(f"{ATOM}id") for e in one.iter(f"{ATOM}entry")] == [
        "http://testserver/view/vllm-project/vllm/1"
    ]


async def test_closed_prs_leave_and_merged_ones_show_as_recently_merged(
        tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        for number in (1, 2):
            await env.digest(number)
        merged, closed = env.state.pull(REPO, 1), env.state.pull(REPO, 2)
        merged.state, merged.merged = "closed", True
        closed.state = "closed"
        for number in (1, 2):
            await env.digest(number)
        page = await env.get(PAGE)
    html = page.text
    assert group_labels(html) == []
    recent = html[html.index('<details class="group merged"'):]
    assert entry_numbers(recent) == [1]
    assert 'data-number="2"' not in html


async def test_a_repository_without_digests_says_what_to_do(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        env.state.add_pull(REPO, 5, title="WIP", draft=True)
        await env.digest(5)  # drafts get no digest: the repository is known, empty
        page = await env.get(PAGE)
    assert page.status_code == 200
    assert "No digest is stored for vllm-project/vllm yet." in page.text
    assert "Install the App" in page.text


async def test_the_api_keeps_any_text_as_valid_json(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.pull(REPO, 1).title = "修复 \ud800 lone surrogate \u2028 and \"quotes\""
        await env.digest(1)
        english = await env.get(API)
        chinese = await env.get(API, params={"lang": "zh"})
    assert english.headers["content-type"] == "application/json"
    [item] = english.json()
    assert item["title"].startswith("修复 \ufffd")
    assert item["title"].endswith(' lone surrogate \u2028 and "quotes"')
    assert item["lang"] == "en"
    assert chinese.json()[0]["lang"] == "zh"
    assert "需要精读" in chinese.json()[0]["markdown"]


async def test_a_changed_pr_is_shown_changed_once(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.pull(REPO, 1).labels.append("v1")
        for number in (1, 2):
            await env.digest(number)
        before = await env.get(PAGE)
        env.state.pull(REPO, 1).title = "[torch.compile] Renamed title"
        await env.digest(1)
        after = await env.get(PAGE)
        zh = await env.get(PAGE, params={"lang": "zh"})
    assert before.text.count("Fix graph break") == 1  # two labels, one row
    assert "Fix graph break" not in after.text
    assert after.text.count("Renamed title") == 1
    assert zh.text.count("Renamed title") == 1
    assert entry_numbers(after.text).count(2) == 1


async def test_dry_run_stores_the_digest_it_did_not_post(tmp_path: Path) -> None:
    from bot.github.dry_run import DryRunGitHub, RecordedWrite
    from bot.handlers.digest import sync_pull_request

    recorded: list[RecordedWrite] = []

    async def keep(write: RecordedWrite) -> None:
        recorded.append(write)

    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        dry = DryRunGitHub(env.gh, keep, "pr-digest[bot]")
        await sync_pull_request(dry, env.ctx, REPO, 1)
        page = await env.get(PAGE)
    assert env.state.comments_on(REPO, 1) == []  # nothing posted
    assert [w.action for w in recorded if w.action == "create_comment"] == ["create_comment"]
    assert entry_numbers(page.text) == [1]


async def test_each_pr_shows_how_many_asks_were_answered(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.set_permission(REPO, "reviewer", "write")
        env.state.add_review(REPO, 1, "reviewer", "COMMENTED",
                             body="Can you add docs? Please rebase too.")
        env.state.add_comment(REPO, 1, "alice", "Rebased on main.")
        for number in (1, 2):
            await env.digest(number)
        page = await env.get(PAGE)
        api = await env.get(API)
    html = page.text
    first = entry_html(html, 1)
    assert "asks: 1 open · 1 answered" in first
    assert "waiting on author" in first  # an ask is open
    assert "first review" not in first  # a person reviewed it
    assert "reviewer &lt;1 min ago" in first
    second = entry_html(html, 2)
    assert "asks:" not in second
    # One state, not three saying the same: nobody with write access has reviewed.
    assert re.findall(r'<span class="waiting [^"]*">([^<]*)</span>', second) == [
        "waiting on first review"]
    assert 'data-waiting="first-review"' in second
    for said_before in ("needs first review", "no reviewer yet", "waiting on reviewer"):
        assert said_before not in second
    assert "waiting on first review 1 · reviewer 0 · author 1 · CI 0" in html
    (one,) = [item for item in api.json() if item["number"] == 1]
    assert [(a["kind"], a["status"]) for a in one["asks"]] == [("docs", "open"),
                                                              ("rebase", "answered")]
    assert one["waiting_on"] == "author"
    assert one["needs_first_review"] is False


async def test_sort_search_and_owner_narrow_the_queue_and_its_counts(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.add_pull(REPO, 4, title="[Frontend] Stream usage", body="streams usage",
                           files=FRONTEND_FILES, labels=["frontend"], author="dave")
        for number in (1, 2, 3, 4):
            await env.digest(number)
        by_size = await env.get(PAGE, params={"sort": "size"})
        newest = await env.get(PAGE, params={"sort": "newest"})
        searched = await env.get(PAGE, params={"q": "DAVE"})
        by_number = await env.get(PAGE, params={"q": "#1"})
        # A frontend pool member (rules/routing.yaml) owns the frontend PRs.
        mine = await env.get(PAGE, params={"owner": "njhill"})
        nobody = await env.get(PAGE, params={"owner": "nobody-at-all"})
        only_quiet = await env.get(PAGE, params={"verdict": "quiet"})
        bad = [await env.get(PAGE, params=params) for params in (
            {"sort": "random"}, {"q": "x" * 201}, {"owner": "no spaces"})]
    assert entry_numbers(by_size.text)[:3] == [1, 4, 2]  # 30+ lines each, #1 largest
    assert entry_numbers(newest.text) == [4, 2, 1, 3]  # quiet #3 listed apart, last
    assert entry_numbers(searched.text) == [4]
    assert "1 of 4 open PRs" in searched.text
    assert 'value="DAVE"' in searched.text  # the search box shows what was typed
    assert entry_numbers(by_number.text) == [1]
    assert entry_numbers(mine.text) == [4, 2]
    assert "Areas of njhill" in mine.text
    assert "2 of 4 open PRs" in mine.text
    assert re.search(r'label=frontend&amp;owner=njhill"[^>]*>frontend <span class="n">2', mine.text)
    assert "No open PR matches these filters." in nobody.text
    assert '<details class="group quiet" data-label="quiet" open>' in only_quiet.text
    assert entry_numbers(only_quiet.text) == [3]
    assert [b.status_code for b in bad] == [400, 400, 400]
    assert "sort must be one of" in bad[0].text


async def test_chinese_page_has_chinese_chips_and_states(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        for number in (1, 2, 3):
            await env.digest(number)
        page = await env.get(PAGE, params={"lang": "zh"})
    html = page.text
    bar = html[html.index('id="verdict-filter"'):html.index('id="sort-filter"')]
    assert "需要精读" in bar
    assert ">deep read<" not in html
    assert "等待首次评审" in html
    assert "尚无人评审" not in html  # the old badge, said again by the state
    assert "个未关闭 PR 中的" in html


async def test_the_digest_pages_task_list_is_disabled_checkboxes(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        page = await env.get(f"{PAGE}/1")
    html = page.text
    assert '<li class="task"><input type="checkbox" disabled="">' in html
    assert "<li>[ ]" not in html
    assert "[ ] " not in re.sub(r"<[^>]+>", "", html)


async def test_the_api_entries_carry_the_triage_keys(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.add_pull(REPO, 4, title="Draft", body="", files=FRONTEND_FILES,
                           labels=["frontend"], draft=True)
        env.ctx = replace(env.ctx, skip_drafts=False)
        for number in (1, 2, 4):
            await env.digest(number)
        items = {item["number"]: item for item in (await env.get(API)).json()}
    one = items[1]
    assert one["created_at"] is not None
    assert one["last_activity_at"] == one["created_at"]  # nobody spoke since
    assert one["waiting_on"] == "reviewer"
    assert one["needs_first_review"] is True
    assert one["size"] == {"additions": one["additions"], "deletions": one["deletions"],
                           "files": one["files_total"]}
    assert one["signals"] == []
    assert items[4]["draft"] is True
    assert items[4]["waiting_on"] == "author"
    assert items[4]["signals"] == ["template-unfilled"]  # an empty description


def _href(html: str, rel: str) -> str:
    found = re.search(rf'<a rel="{rel}" href="([^"]+)"', html)
    assert found is not None, rel
    return found.group(1).replace("&amp;", "&")


async def test_the_page_shows_50_rows_with_counts_over_all_and_links_keeping_filters(
        tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        await env.copy_digest(1, range(2, 121))
        first = (await env.get(PAGE)).text
        last = (await env.get(PAGE, params={"page": "3"})).text
        beyond = (await env.get(PAGE, params={"page": "9"})).text
        even = await env.get(PAGE, params={"label": "even", "sort": "oldest"})
        even_next = await env.get(_href(even.text, "next"))
        even_back = await env.get(_href(even_next.text, "prev"))
        bad = await env.get(PAGE, params={"page": "0"})
    assert len(entry_numbers(first)) == 50
    assert "120 of 120 open PRs" in first  # the counts are over every row
    assert '<span class="count">120</span>' in first
    assert "Page 1 of 3" in first
    assert 'rel="prev"' not in first
    assert len(entry_numbers(last)) == 20
    assert 'rel="next"' not in last
    assert set(entry_numbers(first)).isdisjoint(entry_numbers(last))
    assert entry_numbers(beyond) == entry_numbers(last)  # past the end: the last page
    # Filters and sort survive the pager: 60 even PRs, oldest first, 50 then 10.
    assert _href(even.text, "next") == f"{PAGE}?label=even&sort=oldest&page=2"
    assert entry_numbers(even.text) == list(range(120, 20, -2))
    assert entry_numbers(even_next.text) == list(range(20, 0, -2))
    assert "Page 2 of 2" in even_next.text
    assert _href(even_next.text, "prev") == f"{PAGE}?label=even&sort=oldest"
    assert entry_numbers(even_back.text) == entry_numbers(even.text)
    assert bad.status_code == 400
