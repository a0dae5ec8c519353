"""The CI part of the digest: what the base's pipeline runs for this PR, in a few lines.

Visible: one line of the steps the PR's own paths reach (grouped by job file, the
most specific first), one line of what the PR build will not give (nightly-only steps,
steps waiting for an unblock, changed tests no step runs). Collapsed: every step with
its devices. A CUDA step and its AMD mirror share a name and are shown once with both
devices ("LoRA (H200 MIG 35GB, MI355 DPX)").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.core.findings import CiPlan, CiStepRef, Digest
from bot.core.render.escape import escape_code, sanitize_trusted
from bot.core.render.i18n import t
from bot.core.vocabulary import Lang

TEST_AREAS_DIR = ".buildkite/test_areas/"
VISIBLE_FILES = 2
VISIBLE_STEPS_PER_FILE = 2
MAX_LISTED = 200  # steps in the collapsed list; the rest are counted


@dataclass(frozen=True)
class _Named:
    name: str
    devices: tuple[str, ...]
    specificity: int  # the longest dependency entry that reached it


def _split_label(label: str) -> tuple[str, str]:
    """(name, device) of a label like ":nvidia: (H200 MIG 35GB) LoRA"; device "" if none."""
    rest = label.strip()
    while rest.startswith(":"):
        end = rest.find(":", 1)
        if end <= 1 or " " in rest[1:end]:
            break
        rest = rest[end + 1:].lstrip()
    device = ""
    if rest.startswith("("):
        end = rest.find(")")
        if end > 0:
            device, rest = rest[1:end].strip(), rest[end + 1:].strip()
    return rest or label.strip(), device


def _device(step: CiStepRef, from_label: str) -> str:
    device = from_label or step.device or "GPU"
    return f"{device} ×{step.gpus}" if step.gpus > 1 and "×" not in device else device


def _file_name(path: str) -> str:
    if path.startswith(TEST_AREAS_DIR):
        return path[len(TEST_AREAS_DIR):]
    return path.removeprefix(".buildkite/")


def _grouped(steps: Sequence[CiStepRef]) -> list[tuple[str, list[_Named]]]:
    """Steps by job file, mirrors merged by name; files and steps most specific first."""
    files: dict[str, dict[str, _Named]] = {}
    for step in steps:
        name, label_device = _split_label(step.label)
        named = files.setdefault(step.file, {})
        device = _device(step, label_device)
        depth = max((len(m.rstrip("/")) for m in step.matched), default=0)
        old = named.get(name)
        if old is None:
            named[name] = _Named(name, (device,), depth)
        elif device not in old.devices:
            named[name] = _Named(name, (*old.devices, device), max(depth, old.specificity))
    grouped = [
        (file, sorted(named.values(), key=lambda n: -n.specificity))
        for file, named in files.items()
    ]
    grouped.sort(key=lambda item: -max(n.specificity for n in item[1]))
    return grouped


def _step_text(named: _Named) -> str:
    devices = ", ".join(named.devices)
    return sanitize_trusted(f"{named.name} ({devices})", 160)


def _count(lang: Lang, key: str, count: int) -> str:
    return t(lang, f"{key}.one") if count == 1 else t(lang, key, count=count)


def _reached_line(plan: CiPlan, lang: Lang) -> str:
    comma = t(lang, "render.comma")
    grouped = _grouped(plan.steps)
    parts = []
    for file, named in grouped[:VISIBLE_FILES]:
        shown = [_step_text(n) for n in named[:VISIBLE_STEPS_PER_FILE]]
        if len(named) > VISIBLE_STEPS_PER_FILE:
            shown.append(t(lang, "render.more", count=len(named) - VISIBLE_STEPS_PER_FILE))
        parts.append(f"{escape_code(_file_name(file), 80)}{t(lang, 'render.colon')}"
                     + comma.join(shown))
    text = "; ".join(parts)
    if len(grouped) > VISIBLE_FILES:
        rest = grouped[VISIBLE_FILES:]
        text += "; " + t(lang, "render.ci.more_in_files", count=sum(len(n) for _, n in rest),
                         files=len(rest))
    lead = _count(lang, "render.ci.steps", len(plan.steps))
    line = f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}{lead} — {text}"
    return line + _broad_tail(plan, lang)


def _broad_tail(plan: CiPlan, lang: Lang) -> str:
    if not plan.broad_count:
        return ""
    through = t(lang, "render.comma").join(escape_code(b, 60) for b in plan.broad_through[:3])
    return " · " + t(lang, "render.ci.broad", count=plan.broad_count, through=through or "—")


def _not_run_line(plan: CiPlan, lang: Lang) -> str | None:
    parts: list[str] = []
    if plan.nightly:
        names = {_split_label(s.label)[0] for s in plan.nightly}
        parts.append(_count(lang, "render.ci.nightly", len(names)))
    if plan.optional:
        names = {_split_label(s.label)[0] for s in plan.optional}
        shown = ", ".join(sorted(names)[:3])
        parts.append(_count(lang, "render.ci.optional", len(names))
                     + f" ({sanitize_trusted(shown, 160)})")
    if plan.tests_without_step:
        tests = t(lang, "render.comma").join(
            escape_code(p, 100) for p in plan.tests_without_step[:3])
        parts.append(_count(lang, "render.ci.no_step", len(plan.tests_without_step)) + f" {tests}")
    if not parts:
        return None
    return f"- {t(lang, 'render.ci.not_run')}{t(lang, 'render.colon')}" + "; ".join(parts)


def ci_lines(digest: Digest) -> Iterator[str]:
    """The visible CI lines (at most two)."""
    lang = digest.lang
    plan = digest.ci
    if plan is None:
        if digest.ci_areas:
            comma = t(lang, "render.comma")
            yield f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}" + comma.join(
                map(ci_path, digest.ci_areas))
        return
    if plan.docs_only:
        yield f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}{t(lang, 'render.ci.docs_only')}"
        return
    if plan.run_all:
        yield f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}{t(lang, 'render.ci.run_all')}"
    elif plan.steps:
        yield _reached_line(plan, lang)
    elif plan.broad_count:
        yield f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}" + _broad_tail(plan, lang)[3:]
    not_run = _not_run_line(plan, lang)
    if not_run:
        yield not_run


def ci_detail_lines(digest: Digest) -> Iterator[str]:
    """The collapsed list: every narrow step by job file, then what the build will not run."""
    plan = digest.ci
    if plan is None or not (plan.steps or plan.nightly or plan.optional):
        return
    lang = digest.lang
    yield f"<details><summary>{sanitize_trusted(t(lang, 'render.ci.detail'))}</summary>"
    yield ""
    listed = 0
    for title, steps in (("render.ci.detail_run", plan.steps),
                         ("render.ci.detail_nightly", plan.nightly),
                         ("render.ci.detail_optional", plan.optional)):
        if not steps:
            continue
        yield f"{t(lang, title)}{t(lang, 'render.colon').rstrip()}"
        for file, named in _grouped(steps):
            if listed >= MAX_LISTED:
                break
            listed += len(named)
            names = "; ".join(_step_text(n) for n in named)
            yield f"- {escape_code(_file_name(file), 80)}{t(lang, 'render.colon')}{names}"
    yield ""
    yield "</details>"


def ci_path(name: str) -> str:
    if "/" in name or name.endswith(".yaml"):
        return escape_code(name, 120)
    return escape_code(f".buildkite/test_areas/{name}.yaml", 120)
