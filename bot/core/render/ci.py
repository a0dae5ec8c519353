"""The CI part of the digest: what the base's pipeline runs for this PR, in a few lines.

Visible: one line of the steps the PR's own paths reach (grouped by job file; first
those whose commands run the change's tests, then its module's; for a change only one
platform executes, only that platform's steps, or that none runs it); when the head's
statuses were read, one line of the build on the head (its state; the listed steps
that failed, did not run or wait for an unblock, by name; how many passed); one line of
what the PR build will not give (nightly-only steps, steps waiting for an unblock,
changed tests no step runs). Collapsed: every step with its devices, and each device's
status on the head. A CUDA step and its AMD mirror share a name and are shown once with
both devices ("LoRA (H200 MIG 35GB, MI355 DPX)").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.core.findings import CiPlan, CiStepRef, Digest
from bot.core.render.escape import escape_code, escape_text, sanitize_trusted
from bot.core.render.i18n import t
from bot.core.vocabulary import Lang

TEST_AREAS_DIR = ".buildkite/test_areas/"
VISIBLE_FILES = 2
VISIBLE_STEPS_PER_FILE = 2
MAX_LISTED = 200  # steps in the collapsed list; the rest are counted
# A dependency entry more steps than this list is a shared folder (vLLM 0.34: a spec
# decode or quantization folder is listed by 6-14 steps, `vllm/v1/` by 46, `vllm/config/`
# by 62, counting AMD mirrors).
SHARED_STEPS = 14
_AMD_DEVICE = re.compile(r"mi\d")
_AMD_MIRROR = "AMD: "  # ci-infra's label of a generated AMD mirror: "AMD: <label> (<device>)"


@dataclass(frozen=True)
class _Named:
    name: str
    devices: tuple[str, ...]
    directness: tuple[int, int, int, int]  # CiStepRef.directness of its most direct device
    statuses: tuple[str, ...] = ()  # per device, on the head ("" when not read)


def split_label(label: str) -> tuple[str, str]:
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


def _name(step: CiStepRef) -> tuple[str, str]:
    """(name, device from the label): an AMD mirror's generated label ("AMD: LoRA
    (mi325_1)") names its device, which the step's device already says: the name is
    the mirrored step's, so the two are shown once ("LoRA (h200_35gb, mi325_1)")."""
    name, label_device = split_label(step.label)
    suffix = f" ({step.device})"
    if step.device and name.startswith(_AMD_MIRROR) and name.endswith(suffix):
        name = name[len(_AMD_MIRROR):-len(suffix)].strip() or name
    return name, label_device


def _device(step: CiStepRef, from_label: str) -> str:
    device = from_label or step.device or "GPU"
    if step.pipeline == "intel" and "intel" not in device.lower():
        device = f"Intel {device}"  # `(BMG)` alone does not say which pipeline runs it
    return f"{device} ×{step.gpus}" if step.gpus > 1 and "×" not in device else device


def step_title(step: CiStepRef) -> str:
    """`LoRA (H200 MIG 35GB)`: the step's name and device, as the digest shows it."""
    name, label_device = _name(step)
    return f"{name} ({_device(step, label_device)})"


def _file_name(path: str) -> str:
    if path.startswith(TEST_AREAS_DIR):
        return path[len(TEST_AREAS_DIR):]
    return path.removeprefix(".buildkite/")


def _grouped(steps: Sequence[CiStepRef]) -> list[tuple[str, list[_Named]]]:
    """Steps by job file, mirrors merged by name; files and steps most direct first: a
    step that runs the PR's changed tests, then one an entry few steps share reaches
    (blind judges called a line led by steps reached through a shared folder, the step
    running the change's tests in "+N more", misdirected on 20 tuned corpus PRs)."""
    files: dict[str, dict[str, _Named]] = {}
    for step in steps:
        name, label_device = _name(step)
        named = files.setdefault(step.file, {})
        device = _device(step, label_device)
        rank = step.directness
        old = named.get(name)
        if old is None:
            named[name] = _Named(name, (device,), rank, (step.status,))
        elif device not in old.devices:
            named[name] = _Named(name, (*old.devices, device), min(rank, old.directness),
                                 (*old.statuses, step.status))
    grouped = [
        (file, sorted(named.values(), key=lambda n: n.directness))
        for file, named in files.items()
    ]
    grouped.sort(key=lambda item: min(n.directness for n in item[1]))
    return grouped


def _step_text(named: _Named, lang: Lang | None = None) -> str:
    """`LoRA (H200, MI355 DPX)`; with `lang`, each device's status on the head too."""
    if lang is not None and any(named.statuses):
        colon = t(lang, "render.colon")
        devices = ", ".join(
            f"{device}{colon}{t(lang, f'render.ci.status.{status}')}" if status else device
            for device, status in zip(named.devices, named.statuses, strict=True))
        return sanitize_trusted(f"{named.name} ({devices})", 240)
    devices = ", ".join(named.devices)
    return sanitize_trusted(f"{named.name} ({devices})", 160)


def _count(lang: Lang, key: str, count: int) -> str:
    return t(lang, f"{key}.one") if count == 1 else t(lang, key, count=count)


def _through(steps: Sequence[CiStepRef]) -> str:
    """The shared entries that reached steps, the least shared first, at most three."""
    entries: dict[str, int] = {}
    for step in steps:
        for entry in step.matched:
            name = entry.rstrip("/")
            if "/" in name:  # a top-level folder (`vllm/`) is the broad tail's to name
                entries.setdefault(name if "." in name.rsplit("/", 1)[1] else name + "/",
                                   step.shared_by)
    shown = sorted(entries, key=lambda e: (entries[e], e))[:3]
    return ", ".join(escape_code(e, 60) for e in shown)


def _listed(plan: CiPlan) -> tuple[CiStepRef, ...]:
    """The steps the visible line counts: the main pipeline's and, for a change only XPU
    executes, Intel's (for any other change they stay in the collapsed list, as hardware
    mirrors do, and do not crowd the line)."""
    return (*plan.steps, *plan.intel_steps) if plan.platform == "xpu" else plan.steps


def _reached_line(plan: CiPlan, lang: Lang) -> str:
    """By job file, the steps whose commands run this change's tests or its module's,
    then those an entry few steps list reaches; the rest are counted. For a change only
    one platform executes, which of its steps can run it, or that none can."""
    lead = _count(lang, "render.ci.steps", len(_listed(plan)))
    head = f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}{lead}"
    if plan.prose_only:  # naming steps would suggest they test it (judged misdirected)
        return f"{head}{t(lang, 'render.comma')}{t(lang, 'render.ci.prose_only')}" + _broad_tail(
            plan, lang)
    if plan.platform:
        return f"{head}{t(lang, 'render.comma')}{_platform_text(plan, lang)}" + _broad_tail(
            plan, lang)
    # The steps whose commands run its tests lead (CiStepRef.directness); steps an entry
    # few steps list reaches follow; those only a shared folder reaches are counted.
    named = [s for s in plan.steps if _pointed(s)]
    others = [s for s in plan.steps if not _pointed(s)]
    if not named:
        return (f"{head}{t(lang, 'render.comma')}"
                + t(lang, "render.ci.all_shared", through=_through(others))
                + _broad_tail(plan, lang))
    text = _by_file(named, lang)
    if not any(s.exercises_change or own_step(s) for s in named):
        # named only for their labels: they may test the module, but not its tests
        text += t(lang, "render.ci.platform_untested")
    if others:
        merged = {(s.file, _name(s)[0]) for s in others}
        text += "; " + t(lang, "render.ci.shared", count=len(merged), through=_through(others))
    return f"{head} — {text}" + _broad_tail(plan, lang)


def _by_file(steps: Sequence[CiStepRef], lang: Lang) -> str:
    """`file`: step, step, +N more; `file`: step; +N in M more job files."""
    comma = t(lang, "render.comma")
    grouped = _grouped(steps)
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
        key = "render.ci.more_in_files.one" if len(rest) == 1 else "render.ci.more_in_files"
        text += "; " + t(lang, key, count=sum(len(n) for _, n in rest), files=len(rest))
    return text


# The CUDA architecture (major version) of the GPUs behind vLLM's Buildkite device names,
# by prefix: the pipeline names the queue, not the architecture.
_DEVICE_SM_MAJOR = (("gh200", 9), ("h100", 9), ("h200", 9), ("gb200", 10), ("b200", 10),
                    ("b300", 10), ("gb300", 10), ("dgx-spark", 12), ("gb10", 12),
                    ("l4", 8), ("a100", 8), ("a10", 8))


def _sm_major(platform: str) -> int | None:
    """The major version of a CUDA-architecture platform (`sm12` -> 12), else None."""
    return int(platform[2:]) if platform.startswith("sm") and platform[2:].isdigit() else None


def on_platform(step: CiStepRef, platform: str) -> bool:
    """Whether the step runs on the platform (rocm | xpu | tpu | sm<major> | gpu:<a
    device name>), by its device."""
    device = step.device.lower()
    if platform.startswith("gpu:"):
        # `NVIDIA_H200` is run by an `h200_35gb` step, `NVIDIA_H20-3e` by none of them
        model = platform[4:].lower().removeprefix("nvidia_").split("_")[0].split("-")[0]
        return bool(model) and re.split(r"[_-]", device)[0] == model
    if platform == "rocm":
        return bool(_AMD_DEVICE.match(device))
    if platform == "xpu":
        return "xpu" in device or device == "intel_gpu"
    if (wanted := _sm_major(platform)) is not None:
        return any(device.startswith(prefix) and major == wanted
                   for prefix, major in _DEVICE_SM_MAJOR)
    return platform in device


def platform_name(platform: str, lang: Lang) -> str:
    if platform.startswith("gpu:"):
        return sanitize_trusted(platform[4:].replace("_", " "), 80)
    if (major := _sm_major(platform)) is not None:
        return t(lang, "render.ci.platform.sm", major=major)
    return t(lang, f"render.ci.platform.{platform}")


def _platform_text(plan: CiPlan, lang: Lang) -> str:
    """Which of the steps can run code only one platform executes: CUDA and CPU steps
    never take an XPU branch (judged misdirected when they were offered as its CI)."""
    name = platform_name(plan.platform, lang)
    files = t(lang, "render.comma").join(escape_code(f, 80) for f in plan.platform_files[:2])
    if len(plan.platform_files) > 2:
        files += t(lang, "render.comma") + t(lang, "render.more",
                                             count=len(plan.platform_files) - 2)
    on = [s for s in _listed(plan) if s.pipeline or on_platform(s, plan.platform)]
    if not on and plan.platform == "xpu" and plan.intel_broad_count:
        # Intel's steps run on XPU, reached only through what almost any change reaches
        through = t(lang, "render.comma").join(
            escape_code(b, 60) for b in plan.intel_broad_through[:3])
        key = ("render.ci.platform_intel_all" if plan.intel_run_all
               else "render.ci.platform_intel_broad")
        return t(lang, key, platform=name, files=files,
                 count=plan.intel_broad_count, through=through or "—")
    if not on:
        return t(lang, "render.ci.platform_none", platform=name, files=files)
    text = t(lang, "render.ci.platform_steps", platform=name, files=files,
             steps=_names(on, lang))
    if not any(s.exercises_change for s in on):
        text += t(lang, "render.ci.platform_untested")
    return text


def _broad_tail(plan: CiPlan, lang: Lang) -> str:
    if not plan.broad_count:
        return ""
    through = t(lang, "render.comma").join(escape_code(b, 60) for b in plan.broad_through[:3])
    return " · " + t(lang, "render.ci.broad", count=plan.broad_count, through=through or "—")


def _pointed(step: CiStepRef) -> bool:
    """Whether the "CI to run" line may name the step: it tests the change, its label
    names the changed module, or an entry few steps list reaches it."""
    return step.exercises_change or step.names_changed_module or own_step(step)


def own_step(step: CiStepRef) -> bool:
    """Whether an entry few steps list reached the step: one reached only through a
    folder dozens of steps share (`vllm/v1/`, `vllm/config/`, `vllm/envs.py`) runs for
    almost any change there (unknown sharing counts as own)."""
    return step.shared_by <= SHARED_STEPS


def _not_run_line(plan: CiPlan, lang: Lang) -> str | None:
    """What the PR build will not give, visible only when a reviewer can act on it: an
    optional step whose own commands run this change's tests (or its module's own test
    file; a test elsewhere in the module's folder runs for any change there: judged
    misdirected on 2 of 3 spec-decode PRs) waiting for a manual unblock, or a changed
    test no step runs. Nightly-only steps alone are the
    norm for most of `vllm/` (judged noise on 15 of 25 real PRs); they stay in the
    collapsed list, and so do optional steps its paths merely reach (a 2-node or a
    DeepSeek offload step on any model change: judged noise on 12 of 21 blind-judged
    corpus PRs that showed the line)."""
    # A change only one platform runs is run by none of another platform's steps (a
    # CUDA config sweep offered to a ROCm-only fusion pattern: judged misdirected).
    optional = [s for s in plan.optional
                if (s.runs_changed_tests or s.runs_module_test_file
                    or (s.names_changed_module and s.lists_changed_file))
                and (not plan.platform or s.pipeline or on_platform(s, plan.platform))]
    if not (optional or plan.tests_without_step):
        return None
    parts: list[str] = []
    if plan.nightly:
        names = {_name(s)[0] for s in plan.nightly}
        parts.append(_count(lang, "render.ci.nightly", len(names)))
    if optional:
        waiting = list(dict.fromkeys(
            _name(s)[0] for s in sorted(optional, key=lambda s: s.directness)))
        shown = ", ".join(waiting[:3])
        parts.append(_count(lang, "render.ci.optional", len(waiting))
                     + f" ({sanitize_trusted(shown, 160)})")
    if plan.tests_without_step:
        comma = t(lang, "render.comma")
        how = {p: comma.join(escape_code(h, 60) for h in ways[:3])
               for p, ways in plan.tests_selected_out}
        tests = comma.join(
            escape_code(p, 100) + (t(lang, "render.ci.selected_out", how=how[p])
                                   if p in how else "")
            for p in plan.tests_without_step[:3])
        parts.append(_count(lang, "render.ci.no_step", len(plan.tests_without_step)) + f" {tests}")
    if not parts:
        return None
    return f"- {t(lang, 'render.ci.not_run')}{t(lang, 'render.colon')}" + "; ".join(parts)


# A step's status on the head, in the order the head line names them.
_NAMED_STATUSES = ("failed", "not-run", "blocked")
VISIBLE_NAMED = 3  # steps named per status on the head line; the rest are counted


def _names(steps: Sequence[CiStepRef], lang: Lang) -> str:
    """Steps by name, mirrors merged (`LoRA (H200, MI355 DPX)`), the most specific
    first, at most VISIBLE_NAMED."""
    merged: dict[str, list[str]] = {}
    for step in sorted(steps, key=lambda s: s.directness):
        name, label_device = _name(step)
        devices = merged.setdefault(name, [])
        device = _device(step, label_device)
        if device not in devices:
            devices.append(device)
    shown = [sanitize_trusted(f"{name} ({', '.join(devices)})", 160)
             for name, devices in list(merged.items())[:VISIBLE_NAMED]]
    if len(merged) > VISIBLE_NAMED:
        shown.append(t(lang, "render.more", count=len(merged) - VISIBLE_NAMED))
    return t(lang, "render.comma").join(shown)


def _head_line(plan: CiPlan, lang: Lang) -> str | None:
    """The build on the head and how the listed steps fared: one line."""
    run = plan.run
    if run is None:
        return None
    colon = t(lang, "render.colon")
    line = f"- {t(lang, 'render.ci.head')}{colon}{t(lang, f'render.ci.state.{run.state}')}"
    if run.state == "unreadable":
        return line + t(lang, "render.paren", text=escape_text(run.problem, 120))
    if run.state == "not-started":
        return line
    listed = [s for s in (*plan.steps, *plan.optional) if s.status]
    parts = []
    for status in _NAMED_STATUSES:
        steps = [s for s in listed if s.status == status]
        if steps:
            parts.append(f"{t(lang, f'render.ci.status.{status}')}{colon}{_names(steps, lang)}")
    for status, key in (("pending", "render.ci.pending_count"),
                        ("unknown", "render.ci.unknown_count")):
        count = sum(1 for s in listed if s.status == status)
        if count:
            parts.append(t(lang, key, count=count))
    passed = sum(1 for s in listed if s.status == "passed")
    if passed:
        parts.append(t(lang, "render.ci.passed_count", count=passed, total=len(listed)))
    return line + (" — " + "; ".join(parts) if parts else "")


def ci_lines(digest: Digest) -> Iterator[str]:
    """The visible CI lines (at most three)."""
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
        line = f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}{t(lang, 'render.ci.run_all')}"
        # every step runs, yet only those on its platform can take its code; of the rest,
        # those whose commands test it (or whose label names it) are what to watch (the
        # run-all line alone read the same on any csrc change: judged generic)
        own = [s for s in plan.steps if s.exercises_change or s.names_changed_module]
        if plan.platform:
            line += f"{t(lang, 'render.comma')}{_platform_text(plan, lang)}"
        elif own:
            line += t(lang, "render.ci.run_all_own", steps=_by_file(own, lang))
        yield line
    elif _listed(plan):
        yield _reached_line(plan, lang)
    elif plan.platform and (plan.broad_count or (plan.platform == "xpu"
                                                 and plan.intel_broad_count)):
        yield (f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}"
               + _platform_text(plan, lang) + _broad_tail(plan, lang))
    elif plan.broad_count:
        yield f"- {t(lang, 'render.ci')}{t(lang, 'render.colon')}" + _broad_tail(plan, lang)[3:]
    head = _head_line(plan, lang)
    if head:
        yield head
    not_run = _not_run_line(plan, lang)
    if not_run:
        yield not_run


def ci_detail_lines(digest: Digest) -> Iterator[str]:
    """The collapsed list: every narrow step by job file, then what the build will not run."""
    plan = digest.ci
    if plan is None or not (plan.steps or plan.nightly or plan.optional or plan.intel_steps):
        return
    lang = digest.lang
    yield f"<details><summary>{sanitize_trusted(t(lang, 'render.ci.detail'))}</summary>"
    yield ""
    listed = 0
    for title, steps in (("render.ci.detail_run", plan.steps),
                         ("render.ci.detail_nightly", plan.nightly),
                         ("render.ci.detail_optional", plan.optional),
                         ("render.ci.detail_intel", plan.intel_steps)):
        if not steps:
            continue
        yield f"{t(lang, title)}{t(lang, 'render.colon').rstrip()}"
        for file, named in _grouped(steps):
            if listed >= MAX_LISTED:
                break
            listed += len(named)
            names = "; ".join(_step_text(n, lang) for n in named)
            yield f"- {escape_code(_file_name(file), 80)}{t(lang, 'render.colon')}{names}"
    yield ""
    yield "</details>"


def ci_path(name: str) -> str:
    if "/" in name or name.endswith(".yaml"):
        return escape_code(name, 120)
    return escape_code(f".buildkite/test_areas/{name}.yaml", 120)
