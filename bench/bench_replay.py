"""End to end: replay a compressed day of vLLM pull-request traffic against the real
service (`python -m bot serve`) and the fake GitHub with injected latency, then report
event->comment latency, GitHub calls per event, writes per PR, peak RSS and the
invariants (no stale, duplicated or missing digest).

    python -m bench.bench_replay                     # 300 PRs, both write intervals
    python -m bench.bench_replay --quick             # ~30 PRs
    python -m bench.bench_replay --prs 8 --duration 6 --intervals 0.05 --json out.json

The day is seeded (`--seed`), built before the clock starts, and sent on schedule
from one thread. Before each delivery the fake PR is changed the way GitHub would
have changed it (new head SHA and files before `synchronize`, label added before
`labeled`, ...). The fake's state is subclassed here only to timestamp what it
already does: every call and every digest body written (see `TimedState`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from bot.core.render.marker import parse_marker
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeComment, FakeFile, FakeGitHubState
from tests.keys import PUBLIC_KEY_PEM
from tests.service_harness import (
    BOT,
    INSTALLATION_ID,
    REPO,
    WRITE_METHODS,
    ServiceProcess,
    comment_event,
    pr_event,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "cases" / "vllm_prs.json"
PR_56904_FILES = ROOT / "tests" / "fixtures" / "cli" / "pr_56904_files.json"
ROUTING = ROOT / "rules" / "routing.yaml"
MAINTAINER = "maintainer"
FILES_ROUTE = "/repos/{owner}/{repo}/pulls/{number}/files"
COMMENT_CREATE = ("POST", "/repos/{owner}/{repo}/issues/{number}/comments")
COMMENT_UPDATE = ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
# Labels a PR's area would carry in vLLM (Mergify adds them); all are routed pools.
AREA_LABELS = {
    "vllm/compilation": "torch.compile", "vllm/multimodal": "multi-modality",
    "vllm/model_executor/models": "new-model", "vllm/entrypoints": "frontend",
    "vllm/attention": "attention", "vllm/v1/attention": "attention",
    "docs/": "documentation", ".buildkite": "ci/build", "tests/": "ci/build",
}
TEMPLATE_BODY = (
    "<!-- markdownlint-disable -->\nPLEASE FILL IN THE PR DESCRIPTION HERE ENSURING ALL "
    "CHECKLIST ITEMS (AT THE BOTTOM) HAVE BEEN CONSIDERED.\n\n## Purpose\n\n## Test Plan\n\n"
    "## Test Result\n\n<details><summary>Essential Elements</summary>\n- [ ] Purpose\n"
    "- [ ] Test plan\n</details>\n"
)
CLEAN_BODY = (
    "## Purpose\n{title}\n\n## Test Plan\npytest tests/ -k {slug}\n\n## Test Result\n"
    "Passed locally on one H100.\n"
)


# --- the fake, timestamped -------------------------------------------------------


@dataclass(frozen=True)
class TimedCall:
    at: float  # time.time() when the fake answered
    method: str
    route: str
    path: str
    status: int


@dataclass(frozen=True)
class DigestWrite:
    at: float  # time.time() when the body became visible on the fake
    number: int
    comment_id: int
    body: str


@dataclass
class TimedState(FakeGitHubState):
    """The shared fake plus wall-clock timestamps of its calls and bot comment bodies
    (the shared `CallRecord` has no timestamp; this keeps the bench out of it)."""

    timed_calls: list[TimedCall] = field(default_factory=list)
    digest_writes: list[DigestWrite] = field(default_factory=list)

    def record(self, method: str, route: str, path: str, status: int,
               query: str = "") -> None:
        super().record(method, route, path, status, query)
        self.timed_calls.append(TimedCall(time.time(), method, route, path, status))

    def create_comment(self, repo: str, number: int, author: str, body: str,
                       *, author_type: str = "Bot") -> FakeComment:
        comment = super().create_comment(repo, number, author, body, author_type=author_type)
        self.digest_writes.append(DigestWrite(time.time(), number, comment.id, body))
        return comment

    def update_comment(self, repo: str, comment_id: int, body: str) -> FakeComment:
        comment = super().update_comment(repo, comment_id, body)
        self.digest_writes.append(DigestWrite(time.time(), comment.number, comment_id, body))
        return comment


def replay_state(latency: float) -> TimedState:
    """`tests.service_harness.e2e_state()`, on the timestamped state."""
    state = TimedState(app_public_key_pem=PUBLIC_KEY_PEM, latency=latency)
    state.installations = {INSTALLATION_ID: REPO.split("/", 1)[0]}
    state.add_repo(REPO)
    return state


# --- the day -----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    at: float  # seconds from the start of the replay
    number: int
    action: str  # opened | edited | synchronize | labeled | ready_for_review | closed | digest
    head_sha: str = ""
    files: tuple[int, ...] = ()  # indexes into the day's file pool
    label: str = ""


@dataclass(frozen=True)
class PlannedPR:
    number: int
    title: str
    author: str
    draft: bool  # opened as a draft
    files: tuple[int, ...]


@dataclass(frozen=True)
class Day:
    prs: tuple[PlannedPR, ...]
    steps: tuple[Step, ...]
    file_pool: tuple[tuple[str, int, int], ...]  # (path, additions, deletions)


def _file_pool() -> tuple[list[tuple[str, str]], list[tuple[str, int, int]]]:
    cases: list[dict[str, Any]] = json.loads(CASES.read_text())
    extra: list[dict[str, Any]] = json.loads(PR_56904_FILES.read_text())
    pool: dict[str, tuple[str, int, int]] = {}
    titles: list[tuple[str, str]] = []
    for case in cases:
        if not case["files"]:
            continue
        titles.append((str(case["title"]), str(case["files"][0]["filename"])))
        for f in case["files"]:
            pool.setdefault(f["filename"], (f["filename"], f.get("additions") or 12,
                                            f.get("deletions") or 3))
    for f in extra:
        pool.setdefault(f["filename"], (f["filename"], f["additions"], f["deletions"]))
    return titles, sorted(pool.values())


def _sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(160):040x}"


def _label_for(paths: Iterable[str]) -> str | None:
    for path in paths:
        for prefix, label in AREA_LABELS.items():
            if path.startswith(prefix):
                return label
    return None


def build_day(prs: int, duration: float, seed: int, pace: float = 1.0) -> Day:
    """PRs opened at a steady rate over `duration` seconds, each with its follow-ups.
    Human-speed follow-ups (the body cleanup, force-push bursts) keep real seconds,
    times `pace` (below 1 only for smoke tests, with a settle window scaled alike)."""
    rng = random.Random(seed)
    titles, pool = _file_pool()
    paths = [p for p, _, _ in pool]
    index = {p: i for i, p in enumerate(paths)}
    planned: list[PlannedPR] = []
    steps: list[Step] = []
    for k in range(prs):
        number = 60000 + k
        start = k * duration / max(1, prs)
        title, first = rng.choice(titles)
        files = {index[first]} | {rng.randrange(len(paths)) for _ in range(rng.randint(0, 3))}
        draft = rng.random() < 0.10
        pr = PlannedPR(number, title, f"contrib{k % 97}", draft, tuple(sorted(files)))
        planned.append(pr)
        head = _sha(rng)
        steps.append(Step(start, number, "opened", head, pr.files))
        steps.append(Step(start + pace * rng.uniform(1, 3), number, "edited"))
        closes = rng.random() < 0.04
        if not closes and rng.random() < 0.30:  # a force-push burst
            t = start + pace * rng.uniform(5, 20)
            current = set(files)
            for _ in range(rng.randint(2, 5)):
                t += pace * rng.uniform(0.2, 0.5)
                current = (current - {rng.choice(sorted(current))} if len(current) > 1
                           and rng.random() < 0.3 else current | {rng.randrange(len(paths))})
                steps.append(Step(t, number, "synchronize", _sha(rng), tuple(sorted(current))))
        label = _label_for(paths[i] for i in files)
        if label is not None and rng.random() < 0.5:
            steps.append(Step(start + pace * rng.uniform(4, 15), number, "labeled", label=label))
        if rng.random() < 0.10:
            steps.append(Step(start + pace * rng.uniform(6, 25), number, "digest"))
        if draft:
            steps.append(Step(start + pace * rng.uniform(8, 25), number, "ready_for_review"))
        if closes:
            steps.append(Step(start + pace * rng.uniform(26, 32), number, "closed"))
    steps.sort(key=lambda s: (s.at, s.number))
    return Day(tuple(planned), tuple(steps), tuple(pool))


def naive_runs(day: Day) -> int:
    """What a bot without settle/coalescing/diffing does: one full run (a files read
    and a comment write) per delivery that can change a digest."""
    return sum(1 for s in day.steps if s.action != "closed")


# --- replay ------------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    at: float  # time.time() when the 202 arrived
    step: Step
    status: int
    head_sha: str  # the PR's head when the delivery was sent
    wants_digest: bool  # open and ready at send time (a draft waits, by design)


def _fake_files(day: Day, indexes: Iterable[int]) -> list[FakeFile]:
    out = []
    for i in indexes:
        path, additions, deletions = day.file_pool[i]
        patch = "".join(f"+line {n}\n" for n in range(min(additions, 40)))
        out.append(FakeFile(path, additions=additions, deletions=deletions,
                            patch=f"@@ -1,{deletions} +1,{additions} @@\n{patch}"))
    return out


def _apply_and_send(state: FakeGitHubState, svc: ServiceProcess, day: Day, step: Step,
                    titles: dict[int, str]) -> int:
    pull = state.pull(REPO, step.number) if step.action != "opened" else None
    if step.action == "opened":
        pr = next(p for p in day.prs if p.number == step.number)
        state.add_pull(REPO, step.number, title=pr.title, body=TEMPLATE_BODY, author=pr.author,
                       files=_fake_files(day, pr.files), head_sha=step.head_sha, draft=pr.draft)
        titles[step.number] = pr.title
        payload = pr_event("opened", step.number, head_sha=step.head_sha, draft=pr.draft,
                           author=pr.author)
    elif step.action == "digest":
        comment = state.add_comment(REPO, step.number, MAINTAINER, "Looks stale?\n/digest\n")
        return svc.send("issue_comment", comment_event(
            step.number, comment.id, comment.body, author=MAINTAINER,
            association="MEMBER")).status_code
    else:
        assert pull is not None
        changes: dict[str, Any] | None = None
        if step.action == "edited":
            old = pull.body
            slug = titles[step.number].split()[-1].strip("`()").lower()
            pull.body = CLEAN_BODY.format(title=titles[step.number], slug=slug)
            changes = {"body": {"from": old}}
        elif step.action == "synchronize":
            pull.files = _fake_files(day, step.files)
            pull.head_sha = step.head_sha
        elif step.action == "labeled":
            state.add_labels(REPO, step.number, [step.label])
        elif step.action == "ready_for_review":
            pull.draft = False
        elif step.action == "closed":
            pull.state = "closed"
        payload = pr_event(step.action, step.number, head_sha=pull.head_sha,
                           draft=pull.draft, author=pull.author,
                           label=step.label or None, changes=changes)
        if step.action == "closed":
            payload["pull_request"]["state"] = "closed"
    return svc.send("pull_request", payload).status_code


def replay(state: FakeGitHubState, svc: ServiceProcess, day: Day) -> list[Sent]:
    titles: dict[int, str] = {}
    sent: list[Sent] = []
    start = time.monotonic()
    for step in day.steps:
        delay = start + step.at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        status = _apply_and_send(state, svc, day, step, titles)
        pull = state.pull(REPO, step.number)
        sent.append(Sent(time.time(), step, status, pull.head_sha,
                         pull.state == "open" and not pull.draft))
    return sent


def digests_on(state: FakeGitHubState, number: int) -> list[str]:
    return [b for b in state.bot_comments(REPO, number, BOT) if parse_marker(b) is not None]


def last_sent(sent: list[Sent]) -> dict[int, float]:
    out: dict[int, float] = {}
    for s in sent:
        out[s.step.number] = max(out.get(s.step.number, 0.0), s.at)
    return out


def job_done_times(svc: ServiceProcess) -> dict[int, list[float]]:
    done: dict[int, list[float]] = defaultdict(list)
    for r in svc.job_records():
        if isinstance(r.get("pr"), int) and isinstance(r.get("ts"), str):
            done[r["pr"]].append(datetime.fromisoformat(r["ts"]).timestamp())
    return done


def unsettled(state: FakeGitHubState, svc: ServiceProcess, sent: list[Sent]) -> list[int]:
    """PRs whose last delivery has no finished job after it, or whose digest (if any)
    is not of the current head while the PR is open."""
    done = job_done_times(svc)
    out = []
    for number, at in last_sent(sent).items():
        pull = state.pull(REPO, number)
        found = digests_on(state, number)
        marker = parse_marker(found[0]) if found else None
        if not any(t >= at - 0.001 for t in done[number]) or (
                pull.state == "open" and marker is not None
                and marker.head_sha != pull.head_sha):
            out.append(number)
    return out


def drain(state: TimedState, svc: ServiceProcess, sent: list[Sent], timeout: float) -> float:
    """Wait until every PR's last delivery has been worked off (and its digest, if it
    has one, shows the current head) and the fake has been quiet for longer than the
    settle window. Returns the seconds waited, negative on timeout."""
    began = time.monotonic()
    try:
        wait_until(lambda: not unsettled(state, svc, sent), timeout, interval=1.0,
                   message="every PR's last delivery worked off")
    except AssertionError:
        return -(time.monotonic() - began)  # the report's invariants say what is wrong
    quiet = svc.settle_seconds + 2.0

    def quiet_long_enough() -> bool:
        last = state.timed_calls[-1].at if state.timed_calls else 0.0
        return time.time() - last > quiet

    wait_until(quiet_long_enough, timeout, interval=0.25, message="the fake went quiet")
    return time.monotonic() - began


# --- measurements ----------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """Nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def peak_per_minute(times: list[float]) -> int:
    ordered = sorted(times)
    best = start = 0
    for end, at in enumerate(ordered):
        while ordered[start] <= at - 60.0:
            start += 1
        best = max(best, end - start + 1)
    return best


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def _pr_number(path: str) -> int | None:
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in ("pulls", "issues") and parts[i + 1].isdigit():
            return int(parts[i + 1])
    return None


@dataclass
class Result:
    label: str
    write_interval: float
    settle: float
    latency_s: float
    prs: int
    deliveries: int
    rejected: int
    replay_seconds: float
    drain_seconds: float
    reflected: int  # events answered by a digest write of their state or newer
    unreflected: int  # no later digest write was needed (body already right, closed, draft)
    latency_p50: float
    latency_p99: float
    latency_max: float
    job_latency_p50: float
    job_latency_p99: float
    calls_by_route: dict[str, int]
    calls_total: int
    files_reads: int
    comment_writes: int
    writes_total: int
    min_files_reads: int  # PRs that were ever open and ready
    min_comment_writes: int  # PRs that end with a digest
    floor_files_reads: int
    floor_comment_writes: int
    naive_runs: int
    max_comment_writes_per_pr: int
    peak_writes_per_minute: int  # most writes the fake saw in any 60 s window
    peak_rss_mib: float
    stale: list[int]
    duplicated: list[int]
    missing: list[int]  # unsettled: last delivery never worked off
    without_digest: int  # quiet, draft or closed: no digest wanted
    extra: dict[str, Any] = field(default_factory=dict)


def _sha_order(sent: list[Sent]) -> dict[int, dict[str, int]]:
    order: dict[int, dict[str, int]] = defaultdict(dict)
    for s in sent:
        order[s.step.number].setdefault(s.head_sha, len(order[s.step.number]))
    return order


def event_latencies(state: TimedState, sent: list[Sent]) -> tuple[list[float], int]:
    """Per delivery to an open, ready PR: seconds from its 202 to the first digest
    write on that PR whose marker SHA is the PR's head at send time or a later one.
    Also returns how many such deliveries no later write answered (the digest was
    already right, or the PR is quiet)."""
    order = _sha_order(sent)
    writes: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for w in state.digest_writes:
        marker = parse_marker(w.body)
        if marker is not None:
            writes[w.number].append((w.at, order[w.number].get(marker.head_sha, -1)))
    out: list[float] = []
    unanswered = 0
    for s in sent:
        if not s.wants_digest:
            continue
        need = order[s.step.number][s.head_sha]
        hit = next((at for at, rank in writes[s.step.number] if at >= s.at and rank >= need),
                   None)
        if hit is None:
            unanswered += 1
        else:
            out.append(hit - s.at)
    return out, unanswered


def job_latencies(svc: ServiceProcess, sent: list[Sent]) -> list[float]:
    """Per delivery: seconds from its 202 to the next finished job for that PR."""
    done = job_done_times(svc)
    out = []
    for s in sent:
        after = [t for t in done[s.step.number] if t >= s.at - 0.001]
        if after:
            out.append(min(after) - s.at)
    return out


def settled_changes(day: Day, settle: float) -> dict[int, list[list[Step]]]:
    """Per PR, its deliveries grouped the way an ideal debouncer sees them: a new
    change starts when the gap since the previous delivery exceeds `settle`."""
    groups: dict[int, list[list[Step]]] = defaultdict(list)
    last: dict[int, float] = {}
    for s in day.steps:  # sorted by time
        if s.number not in last or s.at - last[s.number] > settle:
            groups[s.number].append([])
        groups[s.number][-1].append(s)
        last[s.number] = s.at
    return groups


def floor_counts(day: Day, state: FakeGitHubState, settle: float) -> tuple[int, int]:
    """The ideal coalescing bot, from the event list: one files read per settled change
    while the PR is open and ready (a draft or closed PR needs no files), and at most
    one comment write per settled change on PRs that end with a digest."""
    drafts = {pr.number for pr in day.prs if pr.draft}
    reads = writes = 0
    for number, changes in settled_changes(day, settle).items():
        draft = number in drafts
        has_digest = bool(digests_on(state, number))
        for change in changes:
            actions = {s.action for s in change}
            draft = draft and "ready_for_review" not in actions
            if draft or actions == {"closed"}:
                continue
            reads += 1
            writes += has_digest
    return reads, writes


def measure(label: str, day: Day, state: TimedState, svc: ServiceProcess, sent: list[Sent],
            replay_seconds: float, drain_seconds: float, rss_kib: int) -> Result:
    latencies, unanswered = event_latencies(state, sent)
    jobs = job_latencies(svc, sent)
    routes = Counter(f"{c.method} {c.route}" for c in state.timed_calls)
    comment_writes = Counter(_pr_number(c.path) if (c.method, c.route) == COMMENT_CREATE
                             else None for c in state.timed_calls
                             if (c.method, c.route) in (COMMENT_CREATE, COMMENT_UPDATE))
    per_pr_writes: Counter[int] = Counter()
    for w in state.digest_writes:
        per_pr_writes[w.number] += 1
    stale: list[int] = []
    duplicated: list[int] = []
    without_digest = 0
    for pr in day.prs:
        found = digests_on(state, pr.number)
        pull = state.pull(REPO, pr.number)
        if len(found) > 1:
            duplicated.append(pr.number)
        if found:
            marker = parse_marker(found[0])
            if marker is None or (pull.state == "open" and marker.head_sha != pull.head_sha):
                stale.append(pr.number)
        else:
            without_digest += 1
    missing = unsettled(state, svc, sent)
    floor_reads, floor_writes = floor_counts(day, state, svc.settle_seconds)
    return Result(
        label=label, write_interval=svc.write_interval_seconds, settle=svc.settle_seconds,
        latency_s=state.latency, prs=len(day.prs), deliveries=len(sent),
        rejected=sum(1 for s in sent if s.status != 202),
        replay_seconds=replay_seconds, drain_seconds=drain_seconds,
        reflected=len(latencies), unreflected=unanswered,
        latency_p50=percentile(latencies, 50), latency_p99=percentile(latencies, 99),
        latency_max=max(latencies, default=float("nan")),
        job_latency_p50=percentile(jobs, 50), job_latency_p99=percentile(jobs, 99),
        calls_by_route=dict(routes.most_common()), calls_total=len(state.timed_calls),
        files_reads=sum(1 for c in state.timed_calls if c.route == FILES_ROUTE),
        comment_writes=sum(comment_writes.values()),
        writes_total=sum(1 for c in state.timed_calls if c.method in WRITE_METHODS),
        min_files_reads=len({s.step.number for s in sent if s.wants_digest}),
        min_comment_writes=sum(1 for pr in day.prs if digests_on(state, pr.number)),
        floor_files_reads=floor_reads, floor_comment_writes=floor_writes,
        naive_runs=naive_runs(day),
        max_comment_writes_per_pr=max(per_pr_writes.values(), default=0),
        peak_writes_per_minute=peak_per_minute(
            [c.at for c in state.timed_calls if c.method in WRITE_METHODS]),
        peak_rss_mib=rss_kib / 1024, stale=stale, duplicated=duplicated, missing=missing,
        without_digest=without_digest,
    )


def run_once(day: Day, *, write_interval: float, settle: float, latency: float,
             workdir: Path, drain_timeout: float, label: str) -> Result:
    state = replay_state(latency)
    for login in _pool_users():
        state.set_permission(REPO, login, "write")
    state.set_permission(REPO, MAINTAINER, "write")
    with FakeGitHubServer(state) as url, ServiceProcess(
        url, workdir, settle_seconds=settle, write_interval_seconds=write_interval,
        name=label,
    ) as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        time.sleep(0.2)
        began = time.monotonic()
        sent = replay(state, svc, day)
        replay_seconds = time.monotonic() - began
        drain_seconds = drain(state, svc, sent, drain_timeout)
        assert svc.pid is not None
        rss = peak_rss_kib(svc.pid)
        return measure(label, day, state, svc, sent, replay_seconds, drain_seconds, rss)


def _pool_users() -> set[str]:
    routing: dict[str, Any] = yaml.safe_load(ROUTING.read_text())
    return {u for pool in routing["pools"].values() for u in pool.get("users", [])}


# --- report --------------------------------------------------------------------


def table(results: list[Result]) -> str:
    rows: list[tuple[str, ...]] = [
        ("", *(f"interval {r.write_interval:g}s" for r in results)),
        ("PRs / deliveries (non-202)", *(f"{r.prs} / {r.deliveries} ({r.rejected})"
                                         for r in results)),
        ("replay / drain s", *(f"{r.replay_seconds:.0f} / {r.drain_seconds:.0f}"
                               for r in results)),
        ("event->comment p50 / p99 s", *(f"{r.latency_p50:.2f} / {r.latency_p99:.2f}"
                                         for r in results)),
        ("event->comment max s", *(f"{r.latency_max:.2f}" for r in results)),
        ("ready-PR events reflected / no write due", *(f"{r.reflected} / {r.unreflected}"
                                              for r in results)),
        ("event->job done p50 / p99 s", *(f"{r.job_latency_p50:.2f} / {r.job_latency_p99:.2f}"
                                          for r in results)),
        ("GitHub calls / delivery", *(f"{r.calls_total / max(1, r.deliveries):.2f}"
                                      for r in results)),
        ("files reads: bot / min / settled / naive", *(
            f"{r.files_reads} / {r.min_files_reads} / {r.floor_files_reads} / {r.naive_runs}"
            for r in results)),
        ("comment writes: bot / min / settled / naive", *(
            f"{r.comment_writes} / {r.min_comment_writes} / {r.floor_comment_writes} / "
            f"{r.naive_runs}" for r in results)),
        ("comment writes per PR: mean / max", *(
            f"{r.comment_writes / max(1, r.prs):.2f} / {r.max_comment_writes_per_pr}"
            for r in results)),
        ("all writes (incl. reactions, reviewers)", *(str(r.writes_total) for r in results)),
        ("peak writes in any 60 s", *(str(r.peak_writes_per_minute) for r in results)),
        ("service peak RSS MiB (VmHWM)", *(f"{r.peak_rss_mib:.1f}" for r in results)),
        ("PRs without a digest (quiet/draft/closed)", *(str(r.without_digest)
                                                        for r in results)),
        ("stale / duplicated / unsettled PRs", *(
            f"{len(r.stale)} / {len(r.duplicated)} / {len(r.missing)}" for r in results)),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
             for row in rows]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    routes = sorted({k for r in results for k in r.calls_by_route})
    lines += ["", "| calls per delivery, by route | " + " | ".join(
        f"{r.write_interval:g}s" for r in results) + " |",
        "| --- |" + " ---: |" * len(results)]
    for route in routes:
        lines.append(f"| `{route}` | " + " | ".join(
            f"{r.calls_by_route.get(route, 0) / max(1, r.deliveries):.3f}"
            for r in results) + " |")
    return "\n".join(lines)


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
            f"load average {os.getloadavg()[0]:.2f}")


def main(argv: list[str] | None = None) -> list[Result]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prs", type=int, default=300)
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds over which PRs are opened (default 90, quick 20)")
    parser.add_argument("--quick", action="store_true", help="~30 PRs over 20 s")
    parser.add_argument("--seed", type=int, default=56904)
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds the fake GitHub waits before every answer")
    parser.add_argument("--pace", type=float, default=1.0,
                        help="scale of the follow-ups' real-time gaps (smoke runs: <1)")
    parser.add_argument("--settle", type=float, default=3.0,
                        help="DIGEST_SETTLE_SECONDS (production: 3)")
    parser.add_argument("--intervals", default="1.0,0.05",
                        help="DIGEST_WRITE_INTERVAL_SECONDS values, one run each")
    parser.add_argument("--drain-timeout", type=float, default=900.0)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep the service logs and databases here (default: a temp dir)")
    args = parser.parse_args(argv)
    prs = 30 if args.quick and args.prs == 300 else args.prs
    duration = args.duration if args.duration is not None else (20.0 if args.quick else 90.0)
    day = build_day(prs, duration, args.seed, args.pace)
    print(f"machine: {machine()}")
    print(f"day: {prs} PRs opened over {duration:g}s, {len(day.steps)} deliveries "
          f"(seed {args.seed}), fake latency {args.latency * 1000:g} ms, "
          f"settle {args.settle:g}s")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
        for interval in (float(v) for v in args.intervals.split(",") if v):
            label = f"replay-{interval:g}".replace(".", "_")
            result = run_once(day, write_interval=interval, settle=args.settle,
                              latency=args.latency, workdir=args.workdir or Path(tmp),
                              drain_timeout=args.drain_timeout, label=label)
            print(f"  done: interval {interval:g}s, drain {result.drain_seconds:.0f}s",
                  flush=True)
            results.append(result)
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
    return results


if __name__ == "__main__":
    main()
