"""Does the digest show what reviewers asked for, and what does reading the thread cost?

Run: python -m bench conversation [--cases DIR ...] [--json PATH]

1. Reviewers' asks. The cases are `reviewer_asks.json` and `real_prs.json` (found in
   the `--cases` folders, by default tests/fixtures/cases and tests/fixtures/cases/real; a file
   found in none is reported missing, not guessed). A case counts when its thread is
   known: at least one ask is true or false, or an evidence quote is given. Its thread
   is rebuilt from the quotes in `evidence` (every key, `other` included): each
   `"quote", login (where), date` becomes one remark by that login at that date: a
   review comment when `where` says "review thread", a review when it says "review",
   else an issue comment. Evidence without a quoted sentence (a follow-up PR's body)
   is left out.

   The truth is the case's own `asks`: a key that is true is one named ask. Each case
   is digested twice in-process: BEFORE from the description alone, AFTER with the
   rebuilt thread. A named ask is *shown* BEFORE when the digest's own matching item
   fires ("anticipated": ANTICIPATES below); AFTER when an ask of its kind is shown
   (open or answered) or the item fires. Duplicates (AFTER): an ask shown next to the
   digest's own item for the same thing, in the JSON (`asks[].kind` against
   `risks[].id`) or the Markdown (the item's `**id** ·` line). An ask shown that the
   case does not name (its kind is not a true key, and no `other` entry speaks of a
   rebase, a merge conflict or a split) is *unasked*: the precision count.

2. GitHub calls per PR event, BEFORE (the digest read no conversation and no comment or
   review event ran a job) and AFTER, through the real adapter against the fake GitHub
   server on loopback (HTTP, ETags, 304s): one PR, one event after another, each a
   digest job as the service runs it. Calls are counted from the fake's log; "charged"
   leaves out 304s, which GitHub does not count against the rate limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, Conversation, PullRequestFacts, Remark
from bot.core.findings import Digest
from bot.core.judging.conversation import ASK_RISK
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.rules import RuleSet
from bot.core.vocabulary import Ask
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "rules"
DEFAULT_CASES = (ROOT / "tests/fixtures/cases", ROOT / "tests/fixtures/cases/real")
CASE_FILES = ("reviewer_asks.json", "real_prs.json")
# The cases' ask vocabulary -> the digest's ask kinds ("" : the digest has no such kind).
KIND_OF: dict[str, str] = {
    "gpu_eval": "gpu-eval", "tests": "tests", "test_results": "test-results",
    "perf_numbers": "numbers", "hardware_run": "hardware-run", "docs": "docs",
    "release_gate": "",
}
# The digest's own item that anticipates each named ask (release gates have one).
ANTICIPATES: dict[str, str] = {
    "gpu_eval": "missing-gpu-eval", "tests": "missing-tests",
    "test_results": "missing-test-results", "perf_numbers": "perf-claim-without-numbers",
    "hardware_run": "hardware-unverified", "release_gate": "release-branch", "docs": "",
}
# `other` entries that name an ask kind outside the named vocabulary.
_OTHER_KINDS = (("rebase", re.compile(r"merge conflict|rebase", re.I)),
                ("split", re.compile(r"\bsplit\b", re.I)))
_QUOTE = re.compile(
    r'"(?P<quote>.+?)",\s*(?P<login>[\w.-]{1,40})(?:\s*\((?P<where>[^)]{0,200})\))?,\s*'
    r"(?P<date>\d{4}-\d{2}-\d{2})"
)


@dataclass
class Case:
    source: str
    number: int
    facts: PullRequestFacts
    asks: dict[str, bool | None]
    other: list[str]
    thread: tuple[Remark, ...]

    @property
    def known(self) -> bool:
        return any(v is not None for v in self.asks.values()) or bool(self.thread)

    @property
    def named(self) -> list[str]:
        return [k for k, v in self.asks.items() if v is True]

    def expected_kinds(self) -> set[str]:
        kinds = {KIND_OF[k] for k in self.named if KIND_OF.get(k)}
        for kind, pattern in _OTHER_KINDS:
            if any(pattern.search(text) for text in self.other):
                kinds.add(kind)
        return kinds


@dataclass
class Scored:
    cases: int = 0
    named: int = 0
    before_shown: int = 0
    after_shown: int = 0
    after_asked: int = 0
    after_answered: int = 0
    after_anticipated: int = 0
    shown_asks: int = 0
    unasked: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    per_kind: Counter[str] = field(default_factory=Counter)
    per_kind_before: Counter[str] = field(default_factory=Counter)
    per_kind_after: Counter[str] = field(default_factory=Counter)
    by_source: Counter[str] = field(default_factory=Counter)


def _files(raw: Sequence[dict[str, Any]]) -> tuple[ChangedFile, ...]:
    return tuple(
        ChangedFile(filename=f["filename"], status=f.get("status") or "modified",
                    additions=f.get("additions") or 0, deletions=f.get("deletions") or 0,
                    patch=f.get("patch"))
        for f in raw
    )


def thread_of(evidence: dict[str, str], number: int) -> tuple[Remark, ...]:
    """One remark per quoted sentence of the case's evidence (every key)."""
    remarks: list[Remark] = []
    for text in evidence.values():
        for found in _QUOTE.finditer(text or ""):
            where = (found["where"] or "").lower()
            kind = ("review_comment" if "review thread" in where
                    else "review" if "review" in where else "comment")
            ident = 10_000 + len(remarks)
            fragment = {"comment": "issuecomment-", "review": "pullrequestreview-",
                        "review_comment": "discussion_r"}[kind]
            remarks.append(Remark(
                kind=kind, id=ident, author=found["login"], body=found["quote"],
                created_at=datetime.fromisoformat(found["date"]).replace(tzinfo=UTC),
                url=f"https://github.com/vllm-project/vllm/pull/{number}#{fragment}{ident}",
                review_state="COMMENTED" if kind == "review" else "",
            ))
    return tuple(remarks)


def load_cases(folders: Sequence[Path]) -> tuple[list[Case], list[str]]:
    cases: list[Case] = []
    missing: list[str] = []
    for name in CASE_FILES:
        path = next((folder / name for folder in folders if (folder / name).exists()), None)
        if path is None:
            missing.append(name)
            continue
        for raw in json.loads(path.read_text(encoding="utf-8")):
            pr = (raw.get("event") or {}).get("pull_request") or raw
            number = int(pr["number"])
            facts = PullRequestFacts(
                number=number, title=pr.get("title") or "", body=pr.get("body") or "",
                author=(pr.get("user") or {}).get("login") or pr.get("author") or "",
                labels=tuple(raw.get("labels") or ()), base_ref=raw.get("base_ref") or "main",
                files=_files(raw.get("files") or ()),
            )
            asks = dict(raw.get("asks") or {})
            other = [str(o) for o in asks.pop("other", None) or ()]
            cases.append(Case(name, number, facts, asks, other,
                              thread_of(raw.get("evidence") or {}, number)))
    return cases, missing


def _item_lines(markdown: str) -> set[str]:
    return set(re.findall(r"^- \[[ xX]\] \*\*([\w.-]+)\*\* · ", markdown, re.MULTILINE))


def score(cases: Sequence[Case], rules: RuleSet) -> Scored:
    s = Scored()
    for case in cases:
        if not case.known:
            continue
        s.cases += 1
        s.by_source[case.source] += 1
        before = build_digest(case.facts, rules, "en")
        after = build_digest(case.facts, rules, "en",
                             conversation=Conversation(remarks=case.thread))
        before_risks = {r.id for r in before.risks}
        after_risks = {r.id for r in after.risks}
        asked: dict[str, Ask] = {a.kind: a for a in after.asks}
        for key in case.named:
            s.named += 1
            s.per_kind[key] += 1
            item = ANTICIPATES.get(key, "")
            if item and item in before_risks:
                s.before_shown += 1
                s.per_kind_before[key] += 1
            ask = asked.get(KIND_OF.get(key, ""))
            if ask is not None:
                s.after_shown += 1
                s.per_kind_after[key] += 1
                if ask.status == "answered":
                    s.after_answered += 1
                else:
                    s.after_asked += 1
            elif item and item in after_risks:
                s.after_shown += 1
                s.after_anticipated += 1
                s.per_kind_after[key] += 1
            else:
                quotes = [r.body[:90] for r in case.thread]
                s.misses.append(f"#{case.number} {key}: {quotes[:1]}")
        s.duplicates.extend(_duplicates(case, after))
        expected = case.expected_kinds()
        for ask in after.asks:
            s.shown_asks += 1
            if ask.kind not in expected:
                s.unasked.append(f"#{case.number} {ask.kind}: “{ask.quote[:90]}”")
    return s


def _duplicates(case: Case, digest: Digest) -> list[str]:
    markdown = render_digest(digest)
    data = digest_json(digest, markdown)
    risks = {r["id"] for r in data["risks"]} | _item_lines(markdown)
    return [f"#{case.number} {ask['kind']} and {ASK_RISK[ask['kind']]}"
            for ask in data["asks"]
            if ask["kind"] in ASK_RISK and ASK_RISK[ask["kind"]] in risks]


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def format_asks(s: Scored, missing: Sequence[str]) -> str:
    sources = ", ".join(f"{name} {n}" for name, n in sorted(s.by_source.items()))
    lines = [
        "== Reviewers' asks (bench.bench_conversation) ==",
        f"cases with a known thread: {s.cases} ({sources}); named asks: {s.named}",
        *(f"missing case file: {name}" for name in missing),
        f"shown BEFORE (description only, anticipated by an item): "
        f"{_share(s.before_shown, s.named)}",
        f"shown AFTER (with the thread): {_share(s.after_shown, s.named)} -- asked (open) "
        f"{s.after_asked}, answered {s.after_answered}, anticipated {s.after_anticipated}",
        "per kind (before -> after / named): " + ", ".join(
            f"{k} {s.per_kind_before[k]}->{s.per_kind_after[k]}/{n}"
            for k, n in sorted(s.per_kind.items())),
        f"duplicates (an ask and its own item both shown): {len(s.duplicates)}",
        f"asks shown that the case does not name: {len(s.unasked)} of {s.shown_asks} shown",
        *(f"  unasked {u}" for u in s.unasked),
        *(f"  duplicate {d}" for d in s.duplicates),
        *(f"  missed {m}" for m in s.misses),
    ]
    return "\n".join(lines)


# --- GitHub calls per PR event -------------------------------------------------------

EVENTS = ("opened", "comment: LGTM", "review: asks for tests", "author replies",
          "synchronize (new head)", "labeled (nothing else changed)")


@dataclass
class CallCount:
    event: str
    ran: bool
    calls: int
    charged: int
    routes: dict[str, int]


async def count_calls(read_conversation: bool) -> list[CallCount]:
    # The fakes live with the tests; the bench drives them as the e2e tests do.
    from bot.handlers.context import HandlerContext
    from bot.handlers.digest import sync_pull_request
    from bot.handlers.repo_rules import RulesProvider
    from bot.observe.metrics import Metrics
    from bot.rulebook.files import read_rule_sources
    from tests.fakes.github_http import FakeGitHubServer
    from tests.fakes.github_state import FakeFile, FakeGitHubState
    from tests.github_env import make_factory
    from tests.keys import PUBLIC_KEY_PEM

    repo, number = "vllm-project/vllm", 7
    state = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    state.installations = {1: "vllm-project"}
    state.add_repo(repo)
    state.add_pull(repo, 6, title="An earlier attempt", author="author", state="closed")
    state.set_permission(repo, "maint", "write")
    state.add_comment(repo, 6, "maint", "We should not do it this way. Closing.")
    body = ("Supersedes #6.\n\n## Purpose\nTidy the chat path.\n\n## Test Plan\nCI\n\n"
            "## Test Result\nCI green\n")
    chat = FakeFile("vllm/entrypoints/openai/serving_chat.py", additions=12, deletions=2,
                    patch="@@ -1,2 +1,3 @@ def create():\n+    x = 1\n")
    pull = state.add_pull(repo, number, title="[Frontend] Tidy chat", body=body,
                          author="author", files=[chat])
    counts: list[CallCount] = []
    with FakeGitHubServer(state) as url:
        factory = make_factory(url)
        ctx = HandlerContext(bot_login="pr-digest[bot]", metrics=Metrics(),
                             rules=RulesProvider(read_rule_sources(RULES_DIR)),
                             read_conversation=read_conversation)
        for event in EVENTS:
            if event == "review: asks for tests":
                state.add_review(repo, number, "reviewer", "COMMENTED",
                                 body="Can you add a unit test?")
            elif event == "comment: LGTM":
                state.add_comment(repo, number, "someone", "LGTM")
            elif event == "author replies":
                state.add_comment(repo, number, "author", "Added a test in tests/test_chat.py.")
            elif event == "synchronize (new head)":
                pull.head_sha = "e" * 40
            elif event == "labeled (nothing else changed)":
                pull.labels.append("documentation")
            # Before, only pull_request events ran a job: comments and reviews were ignored.
            runs = read_conversation or not event.startswith(("comment", "review", "author"))
            start = len(state.calls)
            if runs:
                async with factory.for_installation(1) as gh:
                    await sync_pull_request(gh, ctx, repo, number)
            made = [c for c in state.calls[start:] if not c.route.startswith("/app")]
            counts.append(CallCount(
                event, runs, len(made), sum(1 for c in made if c.status != 304),
                dict(Counter(f"{c.method} {c.route} {c.status}" for c in made))))
    return counts


def format_calls(before: list[CallCount], after: list[CallCount]) -> str:
    lines = ["", "== GitHub calls per PR event (real adapter, fake GitHub over HTTP) ==",
             f"{'event':34} {'before':>14} {'after':>14}",
             f"{'':34} {'calls/charged':>14} {'calls/charged':>14}"]
    for b, a in zip(before, after, strict=True):
        left = f"{b.calls}/{b.charged}" if b.ran else "no job"
        lines.append(f"{b.event:34} {left:>14} {f'{a.calls}/{a.charged}':>14}")
    total_b = sum(c.calls for c in before), sum(c.charged for c in before)
    total_a = sum(c.calls for c in after), sum(c.charged for c in after)
    lines.append(f"{'all six events':34} {f'{total_b[0]}/{total_b[1]}':>14} "
                 f"{f'{total_a[0]}/{total_a[1]}':>14}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench conversation")
    parser.add_argument("--cases", type=Path, action="append", default=None,
                        help="a folder with reviewer_asks.json / real_prs.json (repeatable)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args(argv)
    rules = load_rules(RULES_DIR)
    cases, missing = load_cases(args.cases or DEFAULT_CASES)
    scored = score(cases, rules)
    print(format_asks(scored, missing))
    before = asyncio.run(count_calls(read_conversation=False))
    after = asyncio.run(count_calls(read_conversation=True))
    print(format_calls(before, after))
    if args.json is not None:
        args.json.write_text(json.dumps({
            "cases": scored.cases, "named": scored.named, "before_shown": scored.before_shown,
            "after_shown": scored.after_shown, "after_asked": scored.after_asked,
            "after_answered": scored.after_answered,
            "after_anticipated": scored.after_anticipated,
            "duplicates": scored.duplicates, "unasked": scored.unasked,
            "misses": scored.misses, "missing_files": list(missing),
            "calls": {"before": [c.__dict__ for c in before],
                      "after": [c.__dict__ for c in after]},
        }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
