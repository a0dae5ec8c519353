"""The fake GitHub seeded with the 25 real vLLM PRs of tests/fixtures/cases/real (their
titles, authors, descriptions and real patches), on a base that carries vLLM's own
config (CODEOWNERS, .buildkite, the PR template), for the label view's browser test
and the README's screenshot.

What the cases do not hold is made up, and only that: the PRs' labels (the cases have
none; a label per hand-judged area, by vLLM's label names), ages (the cases' creation
dates moved so the newest is two days old, spacing kept), the three review remarks the
cases quote (put back as review comments by their reviewers), and the head builds'
states (spread over passed / failed / running / blocked).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.fakes.github_state import FakeFile, FakeGitHubState

ROOT = Path(__file__).resolve().parents[1]
REAL_CASES = ROOT / "tests" / "fixtures" / "cases" / "real" / "real_prs.json"
VLLM_CONFIG = ROOT / "tests" / "fixtures" / "vllm_config" / "0.34.0"
BUILD = "buildkite/ci/pr"
# Hand-judged areas -> vLLM's label of that area (areas without a label of their own
# get none: the digest's area labels still list them).
AREA_LABELS = {
    "ci": "ci/build", "frontend": "frontend", "multimodal": "multi-modality",
    "docs": "documentation", "spec-decode": "speculative-decoding",
    "structured-output": "structured-output", "quantization": "quantization",
    "compile": "torch.compile", "kernels": "kernels",
}
# (case, reviewer, where, what they said): the review remarks real_prs.json quotes.
REVIEWS = (
    ("pr52945", "jikunshang", "vllm/model_executor/models/vision.py",
     "I feel we should register in torch.ops.vllm._xpu_fused_input_norm"),
    ("pr55288", "DarkLight1337", "vllm/renderers/base.py",
     "I don't think we should assume this for every model. Better to override this on a "
     "per-model basis, or to automatically detect whether special tokens exist in the "
     "chat template"),
    ("pr55548", "jeejeelee", "tests/lora/test_lora_weights.py", "Can we simplify this script?"),
)
BUILD_STATES = ("success", "failure", "pending", "success", "pending")


def real_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(REAL_CASES.read_text(encoding="utf-8"))
    return cases


def _when(raw: str) -> datetime:
    return datetime.fromisoformat(raw.replace("Z", "+00:00"))


def seed_real_pulls(state: FakeGitHubState, repo: str, *,
                    now: datetime | None = None) -> list[int]:
    """Add the real PRs to `repo` (open, on a base with vLLM's config); their numbers."""
    now = now or datetime.now(UTC)
    base = state.add_commit(repo, {str(p.relative_to(VLLM_CONFIG)): p.read_text()
                                   for p in VLLM_CONFIG.rglob("*") if p.is_file()})
    cases = real_cases()
    newest = max(_when(c["event"]["pull_request"]["created_at"]) for c in cases)
    shift = now - timedelta(days=2) - newest
    numbers: list[int] = []
    for index, case in enumerate(cases):
        pr = case["event"]["pull_request"]
        labels = [AREA_LABELS[a] for a in case["areas_truth"] if a in AREA_LABELS]
        files = [FakeFile(f["filename"], status=f["status"], additions=f["additions"],
                          deletions=f["deletions"], patch=f.get("patch"))
                 for f in case["files"]]
        created = _when(pr["created_at"]) + shift
        pull = state.add_pull(repo, pr["number"], title=pr["title"], body=pr["body"] or "",
                              author=pr["user"]["login"], files=files, labels=labels,
                              updated_at=created)
        pull.created_at = created
        pull.base_sha = base
        state.set_status(repo, pull.head_sha, BUILD, BUILD_STATES[index % len(BUILD_STATES)])
        numbers.append(pr["number"])
    by_name = {case["name"]: case["event"]["pull_request"]["number"] for case in cases}
    for name, reviewer, path, said in REVIEWS:
        # vLLM's committers: only remarks by people with write access move the queue.
        state.set_permission(repo, reviewer, "write")
        state.add_review_comment(repo, by_name[name], reviewer, said, path=path)
    return numbers
