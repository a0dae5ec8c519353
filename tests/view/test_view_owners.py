"""Issue 43, item 4: for area owners, the owner box and links, the reviewers requested on
GitHub, one waiting state per row, a legend for the risk badges, and labels only the bot
predicts marked as such. Every test runs on both stores (tests/view/conftest.py)."""

from __future__ import annotations

import re
import sqlite3
from html import unescape
from pathlib import Path

import psycopg

from bot.core.label_view import RISK_IDS
from bot.db.migrations import migrate
from bot.view.store import create_schema
from tests import view_env as view_env_module
from tests.handler_env import REPO
from tests.view_env import FRONTEND_FILES, add_sample_pulls, view_env

PAGE = f"/view/{REPO}"
API = f"/api/digests/{REPO}"
HOSTILE_LOGIN = '"><script>alert(1)</script>'


def entry_html(html: str, number: int) -> str:
    start = html.index(f'data-number="{number}"')
    end = html.find('<li class="entry', start)
    return html[start:end if end >= 0 else len(html)]


def entry_numbers(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'data-number="(\d+)"', html)]


def owner_links(row: str) -> dict[str, str]:
    return {unescape(name): unescape(href) for href, name in
            re.findall(r'<a class="owner" href="([^"]+)"[^>]*>([^<]+)</a>', row)}


async def test_requested_reviewers_are_stored_shown_and_link_to_their_filter(
        tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        pull = env.state.pull(REPO, 2)
        pull.requested_users = ["WoosukKwon", HOSTILE_LOGIN]
        pull.requested_teams = ["ci-team"]
        for number in (1, 2, 3):
            await env.digest(number)
        stored = await env.store.entry(REPO, 2, "en")
        # What GitHub shows after the job: the requests it found plus routing's own.
        on_github = (*pull.requested_users, *(f"vllm-project/{t}" for t in pull.requested_teams))
        page = (await env.get(PAGE)).text
        links = owner_links(entry_html(page, 2))
        by_team = await env.get(links["vllm-project/ci-team"])
        by_user = await env.get(links["WoosukKwon"])
        api = {item["number"]: item for item in (await env.get(API)).json()}
        # The PR's requests change without a new digest: the row follows.
        pull.requested_users = []
        pull.requested_teams = []
        pull.state = "closed"  # a job that stops early stores only the PR's state
        await env.digest(2)
        after = await env.store.entry(REPO, 2, "en")
    assert stored is not None
    assert stored.entry.requested == on_github
    assert stored.entry.requested[:2] == ("WoosukKwon", HOSTILE_LOGIN)
    assert len(on_github) > 3  # routing asked a frontend pool member in this job
    row = entry_html(page, 2)
    assert "Review requested from:" in row
    assert set(links) >= {"WoosukKwon", "vllm-project/ci-team", HOSTILE_LOGIN}
    assert links["vllm-project/ci-team"] == f"{PAGE}?owner=vllm-project%2Fci-team"
    assert "<script>" not in page  # outside text, escaped in the text and the link
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in row
    # A requested reviewer's link keeps that PR: requests count as ownership.
    assert entry_numbers(by_team.text) == [2]
    assert entry_numbers(by_user.text) == [2]
    assert "Areas of WoosukKwon" in by_user.text
    assert api[2]["requested_reviewers"] == list(on_github)
    assert api[1]["requested_reviewers"] == []
    assert after is not None
    assert after.entry.requested == ()


async def test_each_suggested_reviewer_links_to_the_prs_it_owns(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        for number in (1, 2, 3):
            await env.digest(number)
        page = (await env.get(PAGE)).text
        zh = (await env.get(PAGE, params={"lang": "zh"})).text
        links = owner_links(entry_html(page, 2))
        followed = await env.get(links["njhill"])
    assert links["njhill"] == f"{PAGE}?owner=njhill"
    assert entry_numbers(followed.text) == [2]
    # The Chinese page's links keep its language.
    assert owner_links(entry_html(zh, 2))["njhill"] == f"{PAGE}?owner=njhill&lang=zh"


async def test_the_owner_box_is_a_get_form_keeping_the_other_filters(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.add_pull(REPO, 4, title="[Frontend] Stream usage", body="streams usage",
                           files=FRONTEND_FILES, labels=["frontend"], author="dave")
        for number in (1, 2, 3, 4):
            await env.digest(number)
        filtered = (await env.get(PAGE, params={
            "label": "frontend", "sort": "oldest", "verdict": "read", "lang": "zh"})).text
        form = filtered[filtered.index('<form class="search"'):filtered.index("</form>")]
        # What the browser sends when the box is filled in and submitted.
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
        submitted = await env.get(PAGE, params={**fields, "q": "", "owner": "@njhill"})
        cleared = await env.get(PAGE, params={**fields, "q": "", "owner": ""})
        shown = (await env.get(PAGE, params={"owner": "njhill"})).text
    assert 'method="get"' in form
    assert 'name="owner"' in form
    assert 'aria-label="负责人"' in form
    assert fields == {"label": "frontend", "verdict": "read", "sort": "oldest", "lang": "zh"}
    assert submitted.status_code == 200
    assert entry_numbers(submitted.text) == [2, 4]  # oldest first, frontend, njhill's
    assert "njhill 负责的领域" in submitted.text
    assert entry_numbers(cleared.text) == [2, 4]  # an empty box is no owner filter
    assert "负责的领域" not in cleared.text
    box = re.search(r'<input type="text" name="owner"[^>]*>', shown)
    assert box is not None
    assert 'value="njhill"' in box.group(0)


async def test_labels_only_the_bot_predicts_are_marked_predicted(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        # No label on GitHub: the digest's area label is only predicted.
        env.state.add_pull(REPO, 4, title="Chat fix", body="Fixes the chat template.",
                           files=FRONTEND_FILES, labels=[], author="dave")
        for number in (2, 4):
            await env.digest(number)
        page = (await env.get(PAGE)).text
        zh = (await env.get(PAGE, params={"lang": "zh"})).text
        stored = await env.store.entry(REPO, 4, "en")
    assert stored is not None
    assert stored.entry.pr_labels == ()
    predicted = re.findall(r'<a class="label predicted" href="[^"]+" title="([^"]+)">([^<]+)</a>',
                           entry_html(page, 4))
    assert predicted == [("predicted by pr-digest, not on the PR", "frontend")]
    # The same label carried on GitHub is a plain label.
    real = entry_html(page, 2)
    assert '<a class="label" href="/view/vllm-project/vllm?label=frontend">frontend</a>' in real
    assert "predicted" not in real
    assert 'title="由 pr-digest 预测，PR 上并无此标签"' in entry_html(zh, 4)
    css = (Path(__file__).parents[2] / "bot/view/static/view.css").read_text()
    assert re.search(r"a\.label\.predicted \{[^}]*border-style: dashed", css)


async def test_the_legend_explains_every_risk_badge_in_both_languages(tmp_path: Path) -> None:
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        await env.digest(1)
        pages = {lang: (await env.get(PAGE, params={"lang": lang})).text
                 for lang in ("en", "zh")}
    for lang, html in pages.items():
        legend = html[html.index('<details class="legend"'):]
        legend = legend[:legend.index("</details>")]
        meanings = dict(re.findall(r'<dt><code class="risk">([^<]+)</code></dt><dd>([^<]+)</dd>',
                                   legend))
        assert list(meanings) == list(RISK_IDS), lang
        assert all(meanings.values()), lang
        assert len(set(meanings.values())) == len(RISK_IDS), lang  # each its own meaning
        # A badge on a row carries its meaning too.
        badge = re.search(r'<code class="risk sev-high" title="([^"]+)">missing-gpu-eval<',
                          entry_html(html, 1))
        assert badge is not None, lang
        assert badge.group(1) == meanings["missing-gpu-eval"], lang
    assert "What the badges mean" in pages["en"]
    assert "徽章含义" in pages["zh"]
    assert "精度评测" in pages["zh"]


async def test_a_view_store_from_before_requested_reviewers_keeps_its_rows(
        tmp_path: Path, view_backend: str) -> None:
    """Forward only: the SQLite file gains the column; PostgreSQL's migration 8 adds it."""
    async with view_env(tmp_path) as env:
        add_sample_pulls(env.state)
        env.state.pull(REPO, 1).requested_users = ["alice2"]
        await env.digest(1)
        _drop_requested(tmp_path / "view.db", view_backend)
        old_store = env.store
        if view_backend == "sqlite":
            create_schema(tmp_path / "view.db")  # as the next start does
        else:
            assert view_env_module.DATABASE_URL is not None
            applied = migrate(view_env_module.DATABASE_URL)
            assert [m.version for m in applied] == [8]
        kept = await old_store.entry(REPO, 1, "en")
        await env.digest(1)
        again = await env.store.entry(REPO, 1, "en")
    assert kept is not None
    assert kept.entry.requested == ()
    assert again is not None
    assert again.entry.requested == ("alice2",)


def _drop_requested(sqlite_path: Path, backend: str) -> None:
    """The store as an older release left it: no `requested` column."""
    if backend == "sqlite":
        lite = sqlite3.connect(sqlite_path)
        try:
            lite.execute("ALTER TABLE view_prs DROP COLUMN requested")
            lite.commit()
        finally:
            lite.close()
        return
    assert view_env_module.DATABASE_URL is not None
    with psycopg.connect(view_env_module.DATABASE_URL, autocommit=True) as conn:
        conn.execute("ALTER TABLE view_prs DROP COLUMN requested")
        conn.execute("DELETE FROM schema_migrations WHERE version = 8")
