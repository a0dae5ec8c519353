"""The label view under 500 open PRs: server-side render time of the page, the API's first
page, and the stored size.

Digests are real: a dozen PR shapes go through the digest job (both languages) over the
in-memory fake GitHub, then each shape's stored digest is copied to the other numbers
with its own title, labels and update time, so sizes and summaries are those the job
produces. Requests go through the real routes over httpx's in-process ASGI transport;
the stylesheet route, served by the same app and transport, is the in-run baseline for
that transport's own cost.

    python -m bench.bench_view                 # 500 PRs, 40 timed requests per target
    python -m bench.bench_view --prs 100 --json out.json
    python -m bench.bench_view --prs 5000 --readers 4   # + acks while 4 readers load pages

With `--readers N` (needs wrk: `apt-get install wrk`), the stored file is then served by
a real `digest-bot serve` process: wrk posts signed deliveries over one connection for
`--seconds`, alone (the baseline, same run) and while another wrk keeps N connections
loading the label view, and the ack latencies of both are reported with the pages'.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from bot.core.label_view import Triage, build_label_view, summarize
from bot.core.vocabulary import LANGS
from bot.view.pages import render_label_view
from bot.view.store import PullState, StoredDigest
from tests.fakes.github_state import FakeFile
from tests.handler_env import COMPILE_FILES, REPO, UNTESTED_BODY
from tests.view_env import DOCS_FILES, FRONTEND_FILES, HOSTILE_TITLE, ViewEnv, view_env

LIMITS = {"page_ms": 50.0, "api_ms": 20.0, "stored_mb": 20.0, "first_page_ms": 150.0,
          "page_mb": 1.0, "served_page_ms": 200.0, "ack_p50_with_readers_ms": 25.0}
# The first page a fresh process serves over the stored file: the service's start-up
# thread has built the view (imports, templates: `start_ms`), the caches are empty.
_FIRST_PAGE = """
import asyncio, json, sys, time
started = time.perf_counter()
import httpx
from starlette.applications import Starlette
from bot.queue.ledger import Ledger
from bot.settings.model import Settings
from bot.view.lazy import LazyLabelView
from bot.view.store import DigestStore
ledger = Ledger(sys.argv[1])
view = LazyLabelView(DigestStore(ledger.writer, recent_seconds=7 * 86400),
                     Settings(language="en"))
view.prepare()
prepared = time.perf_counter()
app = Starlette(routes=view.routes())

async def first() -> float:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        at = time.perf_counter()
        response = await c.get(sys.argv[2])
        assert response.status_code == 200, response.status_code
        return (time.perf_counter() - at) * 1000

ms = asyncio.run(first())
ledger.close()
print(json.dumps({"first_page_ms": ms, "start_ms": (prepared - started) * 1000}))
"""
LABEL_POOL = [
    "torch.compile", "frontend", "documentation", "v1", "multi-modality", "ci/build",
    "speculative-decoding", "structured-output", "quantization", "rocm", "tpu", "cpu",
    "new-model", "performance", "bug", "ready", "kv-connector", "tool-calling",
    "llama", "qwen", "deepseek", "gpt-oss", "needs-rebase", "stale", "cuda-graph",
]
_SHAPES: list[tuple[str, str, list[FakeFile | str]]] = [
    ("[torch.compile] Fix graph break", UNTESTED_BODY, list(COMPILE_FILES)),
    (HOSTILE_TITLE, "Fixes the template.", list(FRONTEND_FILES)),
    ("Typo in the FAQ", "typo", list(DOCS_FILES)),
    ("[Attention] FlashInfer decode path", "## Test Result\nNot yet run",
     ["vllm/v1/attention/backends/flashinfer.py", "vllm/v1/attention/backends/utils.py"]),
    ("[Model] Add a new VLM", "adds the model",
     ["vllm/model_executor/models/newvlm.py", "vllm/model_executor/models/registry.py",
      "docs/models/supported_models.md", "tests/models/registry.py"]),
    ("[Kernel] Faster fused MoE", "2x faster",
     ["csrc/moe/fused_moe.cu", "vllm/model_executor/layers/fused_moe/layer.py"]),
    ("[CI] Split the test areas", "ci", [".buildkite/test-pipeline.yaml"]),
    ("[Spec decode] EAGLE tree", "tree", ["vllm/v1/spec_decode/eagle.py"]),
    ("[Quant] FP8 block scales", "fp8", ["vllm/model_executor/layers/quantization/fp8.py"]),
    ("[Frontend] Tool calling for a parser", "tools",
     ["vllm/entrypoints/openai/tool_parsers/new_parser.py", "tests/tool_use/test_new.py"]),
    ("[Misc] Logging tweak", "log", ["vllm/logger.py"]),
    ("[Structured output] xgrammar bump", "bump", ["vllm/v1/structured_output/backend.py",
                                                  "requirements/common.txt"]),
]


@dataclass
class Timing:
    target: str
    median_ms: float
    p90_ms: float
    min_ms: float
    runs: int


@dataclass
class Report:
    prs: int
    stored_bytes: int
    stored_mb: float
    bytes_per_pr: int
    timings: list[Timing]
    server_side_page_ms: float  # cold: full store read + grouping + every entry rendered
    first_page_ms: float  # a fresh process's first page (median of 3), the view built
    start_ms: float  # that process building the view: imports, templates
    load_average: float
    page_bytes: int  # the label view's first page, all PRs
    served: Served | None  # by a real service process, with --readers
    passed: dict[str, bool]


@dataclass
class Served:
    """The stored file served by `digest-bot serve`: acks alone and under readers."""

    readers: int
    page_ms_median: float  # one reader, the first page, after a warm-up load
    page_bytes: int
    ack_alone: dict[str, float]  # wrk: requests, p50/p90/p99/max in ms
    ack_with_readers: dict[str, float]
    reader_pages_per_second: float
    reader_latency_ms: dict[str, float]  # wrk's for the readers' page loads


async def _seed(env: ViewEnv, prs: int, rng: random.Random) -> None:
    shapes = len(_SHAPES)
    for number, (title, body, files) in enumerate(_SHAPES, start=1):
        env.state.add_pull(REPO, number, title=title, body=body, files=files,
                           labels=rng.sample(LABEL_POOL, rng.randint(1, 3)))
        await env.digest(number)
    templates = {
        number: {lang: (await env.store.entry(REPO, number, lang)) for lang in LANGS}
        for number in range(1, shapes + 1)
    }
    now = time.time()
    for number in range(shapes + 1, prs + 1):
        source = templates[rng.randint(1, shapes)]
        digests = []
        triage = _triage(rng, now)
        for lang, item in source.items():
            assert item is not None
            payload: dict[str, Any] = {**item.payload, "number": number}
            digests.append(StoredDigest(lang, payload, summarize(payload, triage=triage)))
        some = next(iter(source.values()))
        assert some is not None
        pull = PullState(
            repo=REPO, number=number, title=f"{some.entry.title} (#{number})",
            author=f"user{number % 97}", url=f"https://github.com/{REPO}/pull/{number}",
            labels=tuple(rng.sample(LABEL_POOL, rng.randint(1, 3))), draft=rng.random() < 0.1,
            state="open", merged=False, private=False,
            updated_at=now - rng.uniform(0, 30 * 86400),
        )
        await env.store.record(pull, tuple(digests))


OWNER_POOL = [f"reviewer{n}" for n in range(40)]
CI_STATES = ["", "not-started", "running", "blocked", "passed", "failed"]
STEP_STATES = ["passed", "failed", "pending", "blocked", "not-run"]


def _triage(rng: random.Random, now: float) -> Triage:
    """Triage fields spread as a real queue's: ages up to 60 days, a third not reviewed,
    CI in every state, a few narrow steps, some signals and risks, 1-6 owners."""
    created = now - rng.uniform(0, 60 * 86400)
    reviewed = rng.random() < 0.66
    return Triage(
        created_at=created,
        last_author_at=rng.uniform(created, now),
        last_reviewer_at=rng.uniform(created, now) if reviewed else None,
        reviewed=reviewed, changes_requested=reviewed and rng.random() < 0.2,
        additions=rng.randint(1, 3000), deletions=rng.randint(0, 800),
        files=rng.randint(1, 60), ci_state=rng.choice(CI_STATES),
        ci_steps=tuple((status, rng.randint(1, 5)) for status in STEP_STATES
                       if rng.random() < 0.4),
        risks=tuple((rid, sev) for rid, sev in (("missing-tests", "medium"),
                                                ("missing-gpu-eval", "high"))
                    if rng.random() < 0.3),
        signals=tuple(s for s in ("template-unfilled", "ai-assisted", "core-unexplained",
                                  "large-multi-area") if rng.random() < 0.1),
        owners=tuple(rng.sample(OWNER_POOL, rng.randint(1, 6))),
    )


async def _time(call: Callable[[], Awaitable[httpx.Response]], runs: int,
                target: str, prepare: Callable[[], Awaitable[None]] | None = None) -> Timing:
    samples: list[float] = []
    for _ in range(3):  # warm-up: template compilation, caches
        assert (await call()).status_code in (200, 304)
    for _ in range(runs):
        if prepare is not None:
            await prepare()
        started = time.perf_counter()
        response = await call()
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code in (200, 304), response.status_code
    samples.sort()
    return Timing(target, round(statistics.median(samples), 2),
                  round(samples[int(len(samples) * 0.9) - 1], 2), round(samples[0], 2), runs)


async def _server_side_ms(env: ViewEnv, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        entries = [row.entry for row in await env.store.entries(REPO, "en")]
        view = build_label_view(entries, now=time.time(), recent_seconds=7 * 86400)
        render_label_view(REPO, view, lang="en", default_lang="en", now=time.time())
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 2)


def _first_page_after_start(db: Path, page: str, starts: int = 3) -> tuple[float, float]:
    firsts, builds = [], []
    root = Path(__file__).resolve().parent.parent
    for _ in range(starts):
        out = subprocess.run(
            [sys.executable, "-c", _FIRST_PAGE, str(db), page], capture_output=True,
            text=True, check=True, cwd=root,
        )
        found = json.loads(out.stdout.strip().splitlines()[-1])
        firsts.append(found["first_page_ms"])
        builds.append(found["start_ms"])
    return round(statistics.median(firsts), 1), round(statistics.median(builds), 1)


_READER_LATENCY = "\n".join([
    "function done(summary, latency, requests)",
    "  io.write(string.format('WRK_JSON {\"requests\":%d,\"duration_us\":%d,' ..",
    "    '\"non_2xx\":%d,\"p50_us\":%d,\"p90_us\":%d,\"max_us\":%d}\\n',",
    "    summary.requests, summary.duration, summary.errors.status,",
    "    latency:percentile(50), latency:percentile(90), latency.max))",
    "end",
])


def _ms(result: dict[str, Any]) -> dict[str, float]:
    return {"requests": result["requests"],
            **{key.removesuffix("_us") + "_ms": round(result[key] / 1000, 2)
               for key in ("p50_us", "p90_us", "p99_us", "max_us") if key in result}}


def _serve(db: Path, readers: int, seconds: float, workdir: Path) -> Served:
    """Acks (wrk, one connection) against a real service on `db`, alone, then while
    `readers` connections keep loading the label view."""
    from bench.bench_intake_wrk import run_wrk, write_deliveries
    from bench.intake.targets import RunningServer, pr_digest_target

    secret = "bench-view-webhook-secret"
    target = pr_digest_target(secret, workdir)
    target.env["DIGEST_DB_PATH"] = str(db)
    deliveries = workdir / "deliveries"
    write_deliveries(deliveries, 200, secret, 20)
    reader_script = workdir / "reader.lua"
    reader_script.write_text(_READER_LATENCY + "\n")
    server = RunningServer(target, workdir / "serve.log")
    server.start()
    try:
        base = target.webhook_url.removesuffix("/webhook")
        page_url = f"{base}/view/{REPO}"
        with httpx.Client(timeout=60) as client:
            first = client.get(page_url)
            assert first.status_code == 200, first.status_code
            samples = []
            for _ in range(10):
                started = time.perf_counter()
                assert client.get(page_url).status_code == 200
                samples.append((time.perf_counter() - started) * 1000)
        run_wrk(target.webhook_url, deliveries, threads=1, connections=1, seconds=2,
                tag="warm")
        alone = run_wrk(target.webhook_url, deliveries, threads=1, connections=1,
                        seconds=seconds, tag="alone")
        reading = subprocess.Popen(
            ["wrk", "-t", str(min(readers, 2)), "-c", str(readers), "-d",
             f"{round(seconds) + 3}s", "--timeout", "10s", "-s", str(reader_script),
             page_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        loaded = run_wrk(target.webhook_url, deliveries, threads=1, connections=1,
                         seconds=seconds, tag="readers")
        out, _ = reading.communicate(timeout=seconds + 60)
        read = json.loads(next(line for line in out.splitlines()
                               if line.startswith("WRK_JSON ")).removeprefix("WRK_JSON "))
    finally:
        server.stop()
    return Served(
        readers=readers, page_ms_median=round(statistics.median(samples), 1),
        page_bytes=len(first.content), ack_alone=_ms(alone), ack_with_readers=_ms(loaded),
        reader_pages_per_second=round(read["requests"] / (read["duration_us"] / 1e6), 1),
        reader_latency_ms=_ms(read),
    )


async def run(prs: int, runs: int, seed: int, workdir: Path, readers: int = 0,
              seconds: float = 10.0) -> Report:
    rng = random.Random(seed)
    async with view_env(workdir) as env:
        await _seed(env, prs, rng)
        stored = await env.store.database_bytes()
        page = f"/view/{REPO}"
        touched = iter(range(10**6))

        async def one_pr_changed() -> None:
            # What a digest job does between two page loads: one PR written again.
            item = await env.store.entry(REPO, 1 + next(touched) % prs, "en")
            assert item is not None
            e = item.entry
            await env.store.record(PullState(
                REPO, e.number, e.title, e.author, e.url, e.pr_labels, e.draft, e.state,
                e.merged, False, time.time()))

        timings = [
            await _time(lambda: env.get("/static/view.css"), runs, "baseline: stylesheet"),
            await _time(lambda: env.get(page), runs, "label view, all PRs"),
            await _time(lambda: env.get(page), runs, "label view, after a job wrote",
                        prepare=one_pr_changed),
            await _time(lambda: env.get(page, params={"label": "frontend"}), runs,
                        "label view, ?label=frontend"),
            await _time(lambda: env.get(page, params={"sort": "oldest", "q": "fix"}), runs,
                        "label view, ?sort=oldest&q=fix"),
            await _time(lambda: env.get(page, params={"owner": "reviewer3"}), runs,
                        "label view, ?owner=reviewer3"),
        ]
        etag = (await env.get(page)).headers["etag"]  # after the writes above
        timings += [
            await _time(lambda: env.get(page, headers={"If-None-Match": etag}), runs,
                        "label view, 304 (ETag)"),
            await _time(lambda: env.get(f"/api/digests/{REPO}"), runs, "API first page (50)"),
            await _time(lambda: env.get(f"{page}/1"), runs, "one digest page"),
        ]
        page_bytes = len((await env.get(page)).content)
        server = await _server_side_ms(env, runs)
        first_page, start = await asyncio.to_thread(
            _first_page_after_start, workdir / "view.db", page)
    served = (await asyncio.to_thread(_serve, workdir / "view.db", readers, seconds, workdir)
              if readers else None)
    by_target = {t.target: t for t in timings}
    passed = {
        "page_ms": by_target["label view, all PRs"].median_ms < LIMITS["page_ms"],
        "api_ms": by_target["API first page (50)"].median_ms < LIMITS["api_ms"],
        "stored_mb": stored / 1e6 < LIMITS["stored_mb"],
        "first_page_ms": first_page < LIMITS["first_page_ms"],
        "page_mb": page_bytes / 1e6 < LIMITS["page_mb"],
    }
    if served is not None:
        passed["served_page_ms"] = served.page_ms_median < LIMITS["served_page_ms"]
        passed["ack_p50_with_readers_ms"] = (
            served.ack_with_readers["p50_ms"] <= LIMITS["ack_p50_with_readers_ms"])
    return Report(
        prs=prs, stored_bytes=stored, stored_mb=round(stored / 1e6, 2),
        bytes_per_pr=stored // prs, timings=timings, server_side_page_ms=server,
        first_page_ms=first_page, start_ms=start,
        load_average=round(os.getloadavg()[0], 2), page_bytes=page_bytes, served=served,
        passed=passed,
    )


def _print(report: Report) -> None:
    print(f"{report.prs} open PRs stored: {report.stored_mb} MB "
          f"({report.bytes_per_pr:,} bytes per PR, both languages); "
          f"load average {report.load_average}")
    print(f"{'target':34} {'median ms':>10} {'p90 ms':>8} {'min ms':>8}")
    for t in report.timings:
        print(f"{t.target:34} {t.median_ms:>10} {t.p90_ms:>8} {t.min_ms:>8}")
    print(f"cold page, no caches (full store read + grouping + every entry rendered): "
          f"{report.server_side_page_ms} ms median")
    print(f"first page after a start (fresh process, view built): {report.first_page_ms} ms "
          f"median of 3; building the view (imports, templates): {report.start_ms} ms")
    print(f"label view page (all PRs): {report.page_bytes:,} bytes")
    served = report.served
    if served is not None:
        print(f"served by `digest-bot serve`: page {served.page_bytes:,} bytes, "
              f"{served.page_ms_median} ms median (one reader)")
        print(f"acks alone:             {served.ack_alone}")
        print(f"acks with {served.readers} readers:   {served.ack_with_readers}")
        print(f"readers: {served.reader_pages_per_second} pages/s, "
              f"latency {served.reader_latency_ms}")
    print("limits:", ", ".join(f"{k} {'ok' if v else 'OVER'}" for k, v in report.passed.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_view")
    parser.add_argument("--prs", type=int, default=500)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--readers", type=int, default=0,
                        help="also serve the file and time acks under this many readers")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="length of each wrk run (with --readers)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
        report = asyncio.run(run(max(args.prs, len(_SHAPES)), args.runs, args.seed, Path(tmp),
                                 args.readers, args.seconds))
    _print(report)
    if args.json is not None:
        args.json.write_text(json.dumps(asdict(report), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
