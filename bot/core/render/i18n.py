"""The one string catalogue (English and Chinese). Code refers to keys, never to prose.

Sections are grouped by the module that uses them; keep every key in both languages
(a test checks that). Parameters use str.format names: "{minutes}".
"""

from __future__ import annotations

from bot.core.render.zh_text import full_width, space_mixed
from bot.core.vocabulary import Lang

CATALOGUE: dict[str, dict[Lang, str]] = {
    # --- digest assembly (bot/core/digest.py, bot/handlers/) ----------------
    "note.files_truncated": {
        "en": "GitHub lists only {listed:,} of this PR's {total:,} changed files; the digest "
        "reads those.",
        "zh": "GitHub 只列出了本 PR {total:,} 个改动文件中的 {listed:,} 个;摘要仅基于这些文件。",
    },
    "note.no_files": {
        "en": "No file list was available; areas come from the title, body and labels only.",
        "zh": "没有拿到文件列表;领域仅根据标题、正文和标签判断。",
    },
    "note.text_scan_partial": {
        "en": "The title and description are too costly to scan with every rule pattern: "
        "some rules did not look at them.",
        "zh": "标题和描述用全部规则模式扫描的代价过高:部分规则没有检查它们。",
    },
    "note.added_scan_partial": {
        "en": "The added lines are too large to scan in full: rules that look at them saw "
        "only part of the diff.",
        "zh": "新增代码行过多,无法全部扫描:检查新增行的规则只看到了部分 diff。",
    },
    "note.repo_config_invalid": {
        "en": "The repository's pr-digest config is invalid, so the bundled rules were used: "
        "{problem}",
        "zh": "仓库中的 pr-digest 配置无效,已改用内置规则:{problem}",
    },
    # --- verdicts (bot/core/judging/verdict.py) -------------------------------------
    # No criticality word: it belongs to the area, not to the change, and blind judges
    # read "Critical" on a seven-line fallback or a docstring edit as inflation. The
    # verdict above it already says how closely to read.
    "verdict.reason.area": {
        "en": "{area} change{touches}, {size}{kind}{risks}",
        "zh": "{area}改动{touches},{size}{kind}{risks}",
    },
    "verdict.touches": {"en": " in {names}", "zh": "（涉及 {names}）"},
    "verdict.reason.quiet": {
        "en": "Only {areas} changes, {size}{risks}",
        "zh": "仅涉及{areas},{size}{risks}",
    },
    "verdict.context": {
        "en": "; the code around it has findings",
        "zh": ";改动周边的代码有发现",
    },
    "verdict.reason.no-areas": {
        "en": "No area rule matched, {size}{risks}",
        "zh": "没有匹配到任何领域规则,{size}{risks}",
    },
    "verdict.more-areas": {"en": " (+{count} more)", "zh": "(另有 {count} 个领域)"},
    "verdict.size.one": {
        "en": "+{additions}/−{deletions} in {files} file",
        "zh": "{files} 个文件 +{additions}/−{deletions}",
    },
    "verdict.size.many": {
        "en": "+{additions}/−{deletions} in {files} files",
        "zh": "{files} 个文件 +{additions}/−{deletions}",
    },
    "verdict.size-unknown.none": {"en": "size unknown", "zh": "改动规模未知"},
    "verdict.size-unknown.one": {
        "en": "1 file of unknown size",
        "zh": "1 个文件(改动行数未知)",
    },
    "verdict.size-unknown.many": {
        "en": "{files} files of unknown size",
        "zh": "{files} 个文件(改动行数未知)",
    },
    "verdict.kind.tests": {"en": ", tests only", "zh": ",仅测试"},
    "verdict.kind.new": {"en": ", all new files", "zh": ",全部为新文件"},
    "verdict.kind.removal": {"en": ", mostly deletions", "zh": ",以删除为主"},
    "verdict.risks.high": {
        "en": ", with open high-severity risks",
        "zh": ",存在未解决的高风险项",
    },
    "verdict.risks.open": {"en": ", with {count} open risks", "zh": ",有 {count} 个待解决风险项"},
    "verdict.risks.open.one": {"en": ", with 1 open risk", "zh": ",有 1 个待解决风险项"},
    # --- risks (bot/core/judging/risks.py) ------------------------------------------
    "risk.missing-gpu-eval": {
        "en": "Numerics-sensitive change ({areas}) with no GPU accuracy evaluation in the "
        "description: post lm_eval (e.g. gsm8k) before/after on the target hardware.",
        "zh": "该改动可能影响数值结果({areas}),但描述中没有 GPU 精度评测:请贴出目标硬件上"
        "改动前后的 lm_eval(如 gsm8k)结果。",
    },
    "risk.missing-gpu-eval.no-evidence": {
        "en": "no accuracy/benchmark results in the body",
        "zh": "正文中没有精度或基准测试结果",
    },
    "risk.kernels": {"en": "kernels/quantization", "zh": "内核/量化"},
    "risk.missing-test-results": {
        "en": "No test results in the description: paste the output of the test plan "
        "(or link the CI run on this head commit).",
        "zh": "描述中没有测试结果:请贴出测试计划的运行输出(或当前 head 提交的 CI 运行链接)。",
    },
    "risk.missing-test-results.empty-body": {"en": "empty description", "zh": "描述为空"},
    "risk.missing-test-results.empty-section": {
        "en": "empty Test Result section",
        "zh": "Test Result 部分为空",
    },
    "risk.missing-test-results.empty-sections": {
        "en": "empty Test Plan and Test Result sections",
        "zh": "Test Plan 与 Test Result 部分均为空",
    },
    "risk.missing-test-results.no-result-section": {
        "en": "no Test Result section",
        "zh": "没有 Test Result 部分",
    },
    "risk.missing-test-results.empty-named": {
        "en": "empty {section} section",
        "zh": "{section} 部分为空",
    },
    "risk.missing-test-results.no-result-in": {
        "en": "no results in the {section} section",
        "zh": "{section} 部分没有结果",
    },
    "risk.missing-test-results.device-only": {
        "en": "the changed code runs only where {section}: a run on such a device",
        "zh": "改动的代码只在 {section} 时运行:需要在这类设备上运行",
    },
    "risk.missing-test-results.device-entry": {
        "en": "the change only adds table entries for device {section}: a run on that device",
        "zh": "改动只为设备 {section} 添加表项:需要在该设备上运行",
    },
    "risk.missing-test-results.no-sections": {
        "en": "no Test Plan or Test Result section",
        "zh": "没有 Test Plan 或 Test Result 部分",
    },
    "risk.missing-tests": {
        "en": "{count} source files changed without any test change: add a regression test "
        "that fails before the fix, in the Buildkite area that covers it.",
        "zh": "改动了 {count} 个源文件却没有改动任何测试:请补充一个修复前会失败的回归测试,"
        "并放在覆盖它的 Buildkite 测试区域中。",
    },
    "risk.missing-tests.one": {
        "en": "1 source file changed without any test change: add a regression test "
        "that fails before the fix, in the Buildkite area that covers it.",
        "zh": "改动了 1 个源文件却没有改动任何测试:请补充一个修复前会失败的回归测试,"
        "并放在覆盖它的 Buildkite 测试区域中。",
    },
    "risk.release-branch": {
        "en": "Release-branch change ({reason}): re-run the equivalent gates on the release "
        "branch, not only on main.",
        "zh": "发布分支改动({reason}):请在发布分支上重新运行对应的 CI 关卡,而不仅是 main。",
    },
    "risk.large-diff": {
        "en": "Large change: +{additions}/−{deletions} in {files} files; consider splitting it, "
        "or read it in the order of the symbols below.",
        "zh": "改动较大:{files} 个文件 +{additions}/−{deletions};可考虑拆分,或按下方符号顺序阅读。",
    },
    "risk.large-diff.truncated": {
        "en": "Very large change: GitHub lists only {listed} of {files} files "
        "(+{additions}/−{deletions}); the digest saw a partial list.",
        "zh": "改动非常大:GitHub 只列出了 {files} 个文件中的 {listed} 个"
        "(+{additions}/−{deletions});摘要只看到了部分文件。",
    },
    "risk.new-model-checklist": {
        "en": "New model without the full checklist: {missing} must change in the same PR.",
        "zh": "新模型缺少完整清单:{missing} 需要在同一个 PR 中更新。",
    },
    "risk.perf-claim-without-numbers": {
        "en": "Performance claim without numbers: add a before/after benchmark naming the "
        "model, GPU, batch size and max_model_len.",
        "zh": "有性能提升的说法但没有数据:请补充改动前后的基准测试,注明模型、GPU、批大小和 "
        "max_model_len。",
    },
    "risk.hardware-unverified": {
        "en": "{platforms} code changed, but the description reports no run on that hardware.",
        "zh": "改动了 {platforms} 相关代码,但描述中没有在该硬件上运行的记录。",
    },
    "risk.hardware-unverified.unnamed": {
        "en": "no {platform} hardware named in the description",
        "zh": "描述中没有提到任何 {platform} 硬件",
    },
    "risk.relevant-ci-not-run": {
        "en": "{count} CI steps this change reaches on special hardware did not run on its "
        "head commit (build {state}): unblock or re-run them before merging, or say why "
        "they are not needed.",
        "zh": "该改动触发的 {count} 个特殊硬件 CI 步骤没有在 head 提交上运行(构建{state}):"
        "合并前请解除阻塞或重新运行,或说明为何不需要。",
    },
    "risk.relevant-ci-not-run.one": {
        "en": "1 CI step this change reaches on special hardware did not run on its head "
        "commit (build {state}): unblock or re-run it before merging, or say why it is "
        "not needed.",
        "zh": "该改动触发的 1 个特殊硬件 CI 步骤没有在 head 提交上运行(构建{state}):"
        "合并前请解除阻塞或重新运行,或说明为何不需要。",
    },
    # --- rendering (bot/core/render/comment.py) -------------------------------------
    "render.verdict.deep-read": {"en": "🔎 Deep read", "zh": "🔎 需要精读"},
    "render.verdict.read": {"en": "📖 Read", "zh": "📖 值得一读"},
    "render.verdict.skim": {"en": "👀 Skim", "zh": "👀 浏览即可"},
    "render.verdict.quiet": {
        "en": "💤 Nothing for reviewers here",
        "zh": "💤 评审者无需关注",
    },
    "render.minutes": {"en": "~{minutes} min", "zh": "约 {minutes} 分钟"},
    "render.who": {"en": "Who should read it", "zh": "谁应该读"},
    "render.files_count": {"en": "{count:,} files", "zh": "{count:,} 个文件"},
    "render.files_count.one": {"en": "1 file", "zh": "1 个文件"},
    "render.check": {"en": "What to check", "zh": "需要核实的内容"},
    "render.links": {"en": "Linked work", "zh": "关联工作"},
    # The writer's lines (bot/core/render/written.py): a language model worded them from
    # the digest's facts, each verified against the PR before it is shown.
    "render.written.gap": {"en": "Gap:", "zh": "缺口:"},
    "render.written.not_needed": {"en": "Need not be re-checked:", "zh": "无需重复核实:"},
    "render.written.lesson": {"en": "Lesson:", "zh": "经验:"},
    "render.written.by": {
        "en": "worded by {model} from the facts of this PR; every line checked against it",
        "zh": "由 {model} 根据本 PR 的事实撰写;每一行都已对照 PR 核对",
    },
    "render.quote": {"en": "“{quote}”", "zh": "“{quote}”"},
    "render.decision.by": {"en": "— author", "zh": "—— 作者原话"},
    # A Chinese reader's one-line gist of an English quote: what kind of choice it states
    # (shown in Chinese only; an English reader reads the quote).
    "render.decision.gist": {"en": "({kind}) ", "zh": "（{kind}）"},
    "decision.kind.design": {"en": "design", "zh": "设计说明"},
    "decision.kind.out-of-scope": {"en": "out of scope", "zh": "作者说明不在本 PR 范围内的部分"},
    "decision.kind.kept": {"en": "kept", "zh": "作者说明保持不变的部分"},
    "decision.kind.alternative": {"en": "alternative", "zh": "作者说明选择此方案而非另一方案"},
    "decision.kind.deliberate": {"en": "deliberate", "zh": "作者说明这是刻意的选择"},
    "decision.kind.fallback": {"en": "fallback", "zh": "作者说明回退路径"},
    "decision.kind.trade-off": {"en": "trade-off", "zh": "作者说明其中的权衡"},
    "decision.kind.reason": {"en": "reason", "zh": "作者说明改动的理由"},
    "decision.kind.scope": {"en": "scope", "zh": "作者说明改动所限定的范围"},
    "decision.kind.behaviour": {"en": "behaviour", "zh": "作者说明行为上的变化"},
    "render.list_sep": {"en": " · ", "zh": " · "},
    "render.comma": {"en": ", ", "zh": "、"},
    "render.paren": {"en": " ({text})", "zh": "（{text}）"},
    "trace.files": {"en": "{count:,} files", "zh": "{count:,} 个文件"},
    "trace.files.one": {"en": "1 file", "zh": "1 个文件"},
    "render.symbol.mentioned": {"en": "named in the description", "zh": "描述中提到"},
    # --- the patch read structurally (bot/core/reading/structure/read.py) ------------------
    "structure.reordered": {
        "en": "{symbol}: {a} now runs before {b}",
        "zh": "{symbol}：{a} 现在先于 {b} 执行",
    },
    "structure.condition": {
        "en": "{symbol}: condition changed from {a} to {b}",
        "zh": "{symbol}：条件由 {a} 改为 {b}",
    },
    "structure.raise-changed": {
        "en": "{symbol}: raises {b} instead of {a}; check callers that catch {a}",
        "zh": "{symbol}：改为抛出 {b}（原为 {a}）；请检查捕获 {a} 的调用方",
    },
    "structure.raise-added": {
        "en": "{symbol}: now raises {a}; an explicit error where it used to continue?",
        "zh": "{symbol}：新增抛出 {a}；原先是否会静默继续？",
    },
    "structure.raise-removed": {
        "en": "{symbol}: no longer raises {a}; what happens in that case now?",
        "zh": "{symbol}：不再抛出 {a}；这种情况现在如何处理？",
    },
    "structure.assert-changed": {
        "en": "{symbol}: assertion changed from {a} to {b}",
        "zh": "{symbol}：断言由 {a} 改为 {b}",
    },
    "structure.assert-added": {
        "en": "{symbol}: new {a}; can callers reach it with valid input?",
        "zh": "{symbol}：新增 {a}；合法输入会触发它吗？",
    },
    "structure.assert-removed": {
        "en": "{symbol}: {a} removed; what guards that case now?",
        "zh": "{symbol}：删除了 {a}；现在由什么保证这一点？",
    },
    "structure.decorator-added": {
        "en": "{symbol}: decorator {a} added",
        "zh": "{symbol}：新增装饰器 {a}",
    },
    "structure.decorator-removed": {
        "en": "{symbol}: decorator {a} removed",
        "zh": "{symbol}：移除了装饰器 {a}",
    },
    "structure.kwarg-removed": {
        "en": "{symbol}: no longer passes {a}",
        "zh": "{symbol}：不再传入关键字参数 {a}",
    },
    "structure.wrapped": {
        "en": "{symbol} is passed to {a}",
        "zh": "{symbol} 被传给 {a}",
    },
    "structure.todo": {
        "en": "{symbol}: TODO left for later: {a}",
        "zh": "{symbol}：留下了 TODO：{a}",
    },
    "structure.parametrize": {
        "en": "{symbol}: {n}-case parametrize matrix ({shape})",
        "zh": "{symbol}：参数化矩阵共 {n} 种组合（{shape}）",
    },
    "structure.parametrize.grew": {
        "en": "{symbol}: parametrize cases {before} → {n}",
        "zh": "{symbol}：参数化用例 {before} → {n} 个",
    },
    "structure.isolated": {
        "en": "{symbol}: runs in its own process ({a})",
        "zh": "{symbol}：在独立进程中运行（{a}）",
    },
    "value.change.field": {
        "en": "{field} for {entity}: {before} → {after}; check deployed configs",
        "zh": "{entity} 的 {field}：{before} → {after}；请检查已部署的配置",
    },
    "value.change": {
        "en": "{entity}: {before} → {after}; check deployed configs",
        "zh": "{entity}：{before} → {after}；请检查已部署的配置",
    },
    # --- linked work (bot/core/reading/links.py) --------------------------------------
    "link.supersedes": {"en": "supersedes", "zh": "取代"},
    "link.follow-up": {"en": "follow-up to", "zh": "后续工作，承接"},
    "link.part-of": {"en": "part of", "zh": "属于"},
    "link.depends-on": {"en": "depends on", "zh": "依赖"},
    "link.reverts": {"en": "reverts", "zh": "回滚"},
    "link.fixes": {"en": "fixes", "zh": "修复"},
    "link.related": {"en": "see", "zh": "参见"},
    "link.cherry-pick": {"en": "cherry-pick of", "zh": "挑选自"},
    "render.owners": {"en": "code owners", "zh": "代码负责人"},
    "render.other_owners": {"en": "Other code owners", "zh": "其他代码负责人"},
    "render.owners_cut": {
        "en": "Code owners of {files} are not shown: the base's CODEOWNERS has too many "
        "wildcard rules to match every changed file.",
        "zh": "{files}的代码负责人未列出:基准分支的 CODEOWNERS 通配规则过多,无法匹配全部改动文件。",
    },
    "render.ci": {"en": "CI to run", "zh": "需运行的 CI"},
    "render.ci.steps": {"en": "{count:,} steps through its paths",
                        "zh": "{count:,} 个步骤由改动路径触发"},
    "render.ci.steps.one": {"en": "1 step through its paths", "zh": "1 个步骤由改动路径触发"},
    "render.ci.more_in_files": {"en": "+{count:,} in {files:,} more job files",
                                "zh": "另有 {count:,} 个，位于 {files:,} 个任务文件"},
    "render.ci.more_in_files.one": {"en": "+{count:,} in 1 more job file",
                                    "zh": "另有 {count:,} 个，位于 1 个任务文件"},
    "render.ci.broad": {"en": "+{count:,} more through {through}",
                        "zh": "另有 {count:,} 个经由 {through}"},
    "render.ci.shared": {"en": "+{count:,} more only through paths many steps share ({through})",
                         "zh": "另有 {count:,} 个仅经由许多步骤共用的路径（{through}）"},
    "render.ci.platform.rocm": {"en": "ROCm", "zh": "ROCm"},
    "render.ci.platform.xpu": {"en": "XPU", "zh": "XPU"},
    "render.ci.platform.tpu": {"en": "TPU", "zh": "TPU"},
    "render.ci.platform.sm": {"en": "SM {major}.x", "zh": "SM {major}.x"},
    "render.ci.platform_none": {
        "en": "none runs on {platform}, where its changed code runs ({files}): no step of "
              "this build exercises the change",
        "zh": "没有一个在 {platform} 上运行，而改动的代码只在 {platform} 上执行（{files}）："
              "本次构建没有步骤覆盖这项改动"},
    "render.ci.platform_intel_broad": {
        "en": "none runs on {platform}, where its changed code runs ({files}); Intel's "
              "pipeline runs {count:,} {platform} steps only through {through}, none tied to "
              "a test of this change",
        "zh": "没有一个在 {platform} 上运行，而改动的代码只在 {platform} 上执行（{files}）；"
              "Intel 流水线仅经由 {through} 运行 {count:,} 个 {platform} 步骤，"
              "没有一个与本改动的测试对应"},
    "render.ci.platform_intel_all": {
        "en": "none runs on {platform}, where its changed code runs ({files}); Intel's "
              "pipeline runs all its {count:,} {platform} steps (its run-all patterns "
              "match {through})",
        "zh": "没有一个在 {platform} 上运行，而改动的代码只在 {platform} 上执行（{files}）；"
              "Intel 流水线运行全部 {count:,} 个 {platform} 步骤（其 run-all 规则匹配 {through}）"},
    "render.ci.platform_steps": {
        "en": "of which only the {platform} ones can run its changed {platform} code "
              "({files}): {steps}",
        "zh": "其中只有 {platform} 步骤能运行改动的 {platform} 代码（{files}）：{steps}"},
    "render.ci.platform_untested": {"en": "; none of them runs its tests",
                                    "zh": "；其中没有步骤运行其测试"},
    "render.ci.all_shared": {
        "en": "each reached only through paths many steps share ({through}); none is tied "
              "to a test this PR changes",
        "zh": "每个都仅经由许多步骤共用的路径（{through}）触发；没有步骤与本 PR 改动的测试对应"},
    "render.ci.prose_only": {
        "en": "its code changes only comments and docstrings, which no step tests",
        "zh": "其代码改动只有注释和文档字符串，没有步骤能测试它们"},
    "render.ci.docs_only": {"en": "none (docs-only change)", "zh": "无（仅文档改动）"},
    "render.ci.run_all_own": {"en": " — of them, those that test it: {steps}",
                              "zh": "——其中测试它的：{steps}"},
    "render.ci.run_all": {"en": "every step (a path matches the pipeline's run-all patterns)",
                          "zh": "全部步骤（有路径匹配流水线的 run-all 规则）"},
    "render.ci.not_run": {"en": "Not in this PR's build", "zh": "本 PR 的构建不会运行"},
    "render.ci.nightly": {"en": "{count:,} nightly-only steps",
                          "zh": "{count:,} 个仅夜间运行的步骤"},
    "render.ci.nightly.one": {"en": "1 nightly-only step", "zh": "1 个仅夜间运行的步骤"},
    "render.ci.optional": {"en": "{count:,} optional steps wait for an unblock",
                           "zh": "{count:,} 个可选步骤需手动解除阻塞"},
    "render.ci.optional.one": {"en": "1 optional step waits for an unblock",
                               "zh": "1 个可选步骤需手动解除阻塞"},
    "render.ci.no_step": {"en": "{count:,} changed tests no step runs:",
                          "zh": "{count:,} 个改动的测试没有步骤运行："},
    "render.ci.no_step.one": {"en": "1 changed test no step runs:",
                              "zh": "1 个改动的测试没有步骤运行："},
    "render.ci.selected_out": {"en": " (the steps whose pytest reaches it select {how})",
                               "zh": "（运行其所在目录的步骤用 {how} 选择测试）"},
    "render.ci.detail": {"en": "CI steps by job file", "zh": "按任务文件列出的 CI 步骤"},
    "render.ci.detail_run": {"en": "Run on this PR", "zh": "在本 PR 上运行"},
    "render.ci.detail_nightly": {"en": "Nightly only", "zh": "仅夜间"},
    "render.ci.detail_intel": {"en": "Run by Intel's pipeline (ci_config_intel.yaml)",
                               "zh": "由 Intel 流水线运行（ci_config_intel.yaml）"},
    "render.ci.detail_optional": {"en": "Optional (unblock to run)",
                                  "zh": "可选（解除阻塞后运行）"},
    # The build on the head commit (bot/core/repo_config/ci_status.py).
    "render.ci.head": {"en": "CI on this head", "zh": "当前 head 的 CI"},
    "render.ci.state.not-started": {"en": "no build yet", "zh": "尚未构建"},
    "render.ci.state.running": {"en": "running", "zh": "运行中"},
    "render.ci.state.blocked": {"en": "blocked", "zh": "已阻塞"},
    "render.ci.state.passed": {"en": "passed", "zh": "已通过"},
    "render.ci.state.failed": {"en": "failed", "zh": "失败"},
    "render.ci.state.error": {"en": "errored", "zh": "出错"},
    "render.ci.state.unreadable": {"en": "statuses could not be read",
                                   "zh": "无法读取状态"},
    "render.ci.status.passed": {"en": "passed", "zh": "通过"},
    "render.ci.status.failed": {"en": "failed", "zh": "失败"},
    "render.ci.status.pending": {"en": "pending", "zh": "等待中"},
    "render.ci.status.blocked": {"en": "waiting for an unblock", "zh": "等待解除阻塞"},
    "render.ci.status.not-run": {"en": "not run", "zh": "未运行"},
    "render.ci.status.unknown": {"en": "no status matched", "zh": "未匹配到状态"},
    "render.ci.passed_count": {"en": "{count:,} of {total:,} passed",
                               "zh": "{total:,} 个中 {count:,} 个通过"},
    "render.ci.pending_count": {"en": "{count:,} pending", "zh": "{count:,} 个等待中"},
    "render.ci.unknown_count": {"en": "{count:,} with no status matched",
                                "zh": "{count:,} 个未匹配到状态"},
    "render.start": {"en": "Where to start", "zh": "从哪里读起"},
    "render.symbol.added": {"en": "new", "zh": "新增"},
    "render.symbol.removed": {"en": "removed", "zh": "删除"},
    "render.symbols_count": {"en": "{count:,} symbols", "zh": "{count:,} 个符号"},
    "render.symbols_count.one": {"en": "1 symbol", "zh": "1 个符号"},
    "render.removed_files": {"en": "Removed files", "zh": "删除的文件"},
    "render.moved_files": {"en": "Moved", "zh": "移动的文件"},
    "render.more": {"en": "+{count:,} more", "zh": "另有 {count:,} 项"},
    "render.more_files": {"en": "and {count:,} more files", "zh": "另有 {count:,} 个文件"},
    "render.more_files.one": {"en": "and 1 more file", "zh": "另有 1 个文件"},
    "render.colon": {"en": ": ", "zh": "："},
    "render.risks": {"en": "Risk checklist", "zh": "风险清单"},
    "render.area_checklist": {
        "en": "More risks ({count:,} items)",
        "zh": "更多风险项({count:,} 项)",
    },
    "render.area_checklist.one": {"en": "More risks (1 item)", "zh": "更多风险项(1 项)"},
    "render.severity.high": {"en": "🔴", "zh": "🔴"},
    "render.severity.medium": {"en": "🟠", "zh": "🟠"},
    "render.severity.low": {"en": "🟡", "zh": "🟡"},
    "render.routing": {"en": "Routing", "zh": "路由"},
    "render.suggested_users": {"en": "Suggested reviewers", "zh": "建议评审者"},
    "render.suggested_teams": {"en": "Suggested teams", "zh": "建议团队"},
    "render.labels": {"en": "Labels", "zh": "标签"},
    "render.requested": {"en": "Requested", "zh": "已请求评审"},
    "render.skipped": {"en": "Skipped", "zh": "已跳过"},
    "render.explain": {
        "en": "Why: {fired} of {total} rules fired",
        "zh": "依据：{total} 条规则中 {fired} 条命中",
    },
    "render.explain.one": {
        "en": "Why: {fired} of 1 rule fired",
        "zh": "依据：1 条规则中 {fired} 条命中",
    },
    "render.fired": {"en": "fired", "zh": "命中"},
    "render.nothing_matched": {"en": "nothing matched", "zh": "没有任何匹配"},
    "render.near_miss": {"en": "near miss", "zh": "差一点命中"},
    "render.trace_trimmed": {
        "en": "Trace shortened to fit GitHub's comment limit; `/digest explain` shows the rules.",
        "zh": "为符合 GitHub 评论长度上限，依据已精简；`/digest explain` 可查看规则。",
    },
    "render.trace_omitted": {
        "en": "Trace omitted to fit GitHub's comment limit.",
        "zh": "为符合 GitHub 评论长度上限，已省略依据。",
    },
    "render.truncated": {
        "en": "Shortened to fit GitHub's comment limit.",
        "zh": "为符合 GitHub 评论长度上限，内容已截断。",
    },
    "render.notes": {"en": "Notes", "zh": "说明"},
    "render.footer": {
        "en": "pr-digest for {sha} · `/digest` refreshes · `/digest explain` shows why",
        "zh": "pr-digest 针对 {sha} · `/digest` 刷新 · `/digest explain` 查看依据",
    },
    "render.ai_assisted": {
        "en": "the author ticked the template's AI-assistance box",
        "zh": "作者勾选了模板中的“使用了 AI 辅助”",
    },
    "render.quiet_reason": {
        "en": "No area that needs a reviewer's attention matched this PR.",
        "zh": "此 PR 未命中任何需要评审者关注的领域。",
    },
    "render.evidence.path": {"en": "file", "zh": "文件"},
    "render.evidence.label": {"en": "label", "zh": "标签"},
    "render.evidence.title": {"en": "title", "zh": "标题"},
    "render.evidence.body": {"en": "description", "zh": "描述"},
    "render.evidence.added": {"en": "added line", "zh": "新增行"},
    "render.evidence.base": {"en": "base branch", "zh": "目标分支"},
    "render.evidence.author": {"en": "author", "zh": "作者"},
    "render.evidence.size": {"en": "size", "zh": "规模"},
    "render.evidence.mention": {"en": "named in the description", "zh": "描述中提到"},
    # --- commands and routing (bot/core/commands/parse.py, bot/core/routing.py) ----
    "commands.help.column.command": {"en": "Command", "zh": "命令"},
    "commands.help.column.summary": {"en": "What it does", "zh": "作用"},
    "commands.help.column.who": {"en": "Who may use it", "zh": "谁可以使用"},
    "commands.who.anyone-with-write": {
        "en": "maintainers (write access) and trusted users",
        "zh": "维护者（有写权限）和受信任用户",
    },
    "commands.who.author-or-write": {
        "en": "the PR author, maintainers (write access) and trusted users",
        "zh": "PR 作者、维护者（有写权限）和受信任用户",
    },
    "commands.summary.refresh": {
        "en": "Recompute the digest now",
        "zh": "立即重新生成摘要",
    },
    "commands.summary.explain": {
        "en": "Show which rule fired on which file, label or phrase",
        "zh": "显示哪条规则因哪个文件、标签或短语而触发",
    },
    "commands.summary.en": {"en": "Write the digest in English", "zh": "用英文撰写摘要"},
    "commands.summary.zh": {"en": "Write the digest in Chinese", "zh": "用中文撰写摘要"},
    "commands.summary.route": {
        "en": "Request reviews from the pools of the PR's labels",
        "zh": "按 PR 标签从对应的评审人池中请求评审",
    },
    "commands.summary.mute": {
        "en": "Stop updating the digest on this PR",
        "zh": "停止在此 PR 上更新摘要",
    },
    "commands.summary.unmute": {
        "en": "Resume updating the digest on this PR",
        "zh": "恢复在此 PR 上更新摘要",
    },
    "commands.summary.help": {"en": "Show this table", "zh": "显示此表"},
    "commands.refused.bot": {
        "en": "Commands from bot accounts are ignored.",
        "zh": "机器人账号的命令会被忽略。",
    },
    "commands.refused.unknown": {
        "en": "Unknown command {command}; see `/digest help`.",
        "zh": "未知命令 {command}；请查看 `/digest help`。",
    },
    "commands.refused.did-you-mean": {
        "en": "Did you mean {command}?",
        "zh": "您是想输入 {command} 吗？",
    },
    "commands.refused.known": {
        "en": "Known after `/digest`: {known}.",
        "zh": "`/digest` 之后可用：{known}。",
    },
    "commands.list-separator": {"en": ", ", "zh": "、"},
    "commands.refused.write-only": {
        "en": "{command} needs write access; ask a maintainer to run it.",
        "zh": "{command} 需要写权限；请让维护者来执行。",
    },
    "commands.refused.author-or-write": {
        "en": "{command} is for the PR author and maintainers; ask a maintainer to run it.",
        "zh": "{command} 仅限 PR 作者和维护者使用；请让维护者来执行。",
    },
    "commands.refused.rate-limited": {
        "en": "Too many `/digest` commands on this PR; try again in a minute.",
        "zh": "此 PR 上的 `/digest` 命令过多；请一分钟后再试。",
    },
    "routing.skipped.author": {"en": "PR author", "zh": "PR 作者"},
    "routing.skipped.away": {"en": "away", "zh": "暂时不在"},
    "routing.skipped.already-requested": {"en": "already requested", "zh": "已被请求评审"},
    "routing.skipped.already-reviewed": {"en": "already reviewed", "zh": "已评审"},
    "routing.skipped.removed-by-human": {
        "en": "review request removed by a person",
        "zh": "评审请求已被人工移除",
    },
    "routing.skipped.not-collaborator": {
        "en": "not a collaborator on this repository",
        "zh": "不是此仓库的协作者",
    },
    "routing.skipped.refused": {
        "en": "GitHub refused the review request",
        "zh": "GitHub 拒绝了评审请求",
    },
    "routing.skipped.cap-reached": {
        "en": "reviewer cap for this PR reached",
        "zh": "已达到此 PR 的评审人数上限",
    },
    # --- label view (bot/view/) ---------------------------------------------
    "view.title": {"en": "{repo} · label view", "zh": "{repo} · 标签视图"},
    "view.digest_title": {"en": "{repo}#{number} · digest", "zh": "{repo}#{number} · 摘要"},
    "view.counts": {
        "en": "Open PRs: {deep} deep-read · {read} read · {skim} skim · {quiet} quiet",
        "zh": "未关闭的 PR:{deep} 需要精读 · {read} 值得一读 · {skim} 浏览即可 · {quiet} 无需关注",
    },
    "view.filter.label": {"en": "Label", "zh": "标签"},
    "view.filter.verdict": {"en": "Verdict", "zh": "结论"},
    "view.filter.all": {"en": "all", "zh": "全部"},
    "view.group.unlabeled": {"en": "No label", "zh": "无标签"},
    "view.group.quiet": {"en": "Quiet ({count})", "zh": "无需关注({count})"},
    "view.group.merged": {"en": "Recently merged", "zh": "最近合并"},
    "view.checks": {"en": "Check", "zh": "检查"},
    "view.high_risks": {"en": "Open high risks", "zh": "未解决的高风险"},
    "view.reviewers": {"en": "Suggested reviewers", "zh": "建议评审人"},
    "view.written": {"en": "In short", "zh": "概要"},
    "view.requested": {"en": "Review requested from", "zh": "已请求评审"},
    "view.owner.box": {"en": "Owner", "zh": "负责人"},
    "view.owner.placeholder": {"en": "login or org/team", "zh": "用户名或 org/team"},
    "view.owner.go": {"en": "Show", "zh": "显示"},
    "view.owner.link": {"en": "PRs of {owner}", "zh": "{owner} 负责的 PR"},
    # Labels only pr-digest suggests (the PR does not carry them on GitHub).
    "view.label.predicted": {"en": "predicted by pr-digest, not on the PR",
                             "zh": "由 pr-digest 预测，PR 上并无此标签"},
    # The legend of the risk badges: one short line per id of bot/core/judging/risks.py.
    "view.legend": {"en": "What the badges mean", "zh": "徽章含义"},
    "view.legend.severity": {
        "en": "Red: high severity · amber: medium · grey: low. Dashed labels are predicted"
        " by pr-digest, not set on GitHub.",
        "zh": "红色：高风险 · 琥珀色：中风险 · 灰色：低风险。虚线框的标签由 pr-digest 预测，"
        "并未在 GitHub 上设置。",
    },
    "view.legend.risk.missing-gpu-eval": {
        "en": "numerics-sensitive change without a GPU accuracy evaluation",
        "zh": "可能影响数值结果的改动，缺少 GPU 精度评测",
    },
    "view.legend.risk.missing-test-results": {
        "en": "no test results in the description", "zh": "描述中没有测试结果"},
    "view.legend.risk.missing-tests": {
        "en": "source changed without any test change", "zh": "改动了源码但没有改动测试"},
    "view.legend.risk.release-branch": {
        "en": "targets a release branch or is a backport", "zh": "目标为发布分支或属于回移"},
    "view.legend.risk.large-diff": {
        "en": "large change: many lines or files", "zh": "改动较大：行数或文件数很多"},
    "view.legend.risk.new-model-checklist": {
        "en": "new model without the full checklist", "zh": "新模型缺少完整清单"},
    "view.legend.risk.perf-claim-without-numbers": {
        "en": "performance claim without benchmark numbers",
        "zh": "有性能提升的说法但没有基准数据",
    },
    "view.legend.risk.hardware-unverified": {
        "en": "platform code changed, no run on that hardware reported",
        "zh": "改动了平台相关代码，但没有报告在该硬件上的运行",
    },
    "view.legend.risk.relevant-ci-not-run": {
        "en": "CI steps on special hardware this change reaches did not run",
        "zh": "该改动触发的特殊硬件 CI 步骤没有运行",
    },
    "view.draft": {"en": "draft", "zh": "草稿"},
    "view.by": {"en": "by {author}", "zh": "作者 {author}"},
    "view.updated": {"en": "updated {when}", "zh": "更新于 {when}"},
    "view.merged_at": {"en": "merged {when}", "zh": "合并于 {when}"},
    "view.switch_language": {"en": "中文", "zh": "English"},
    "view.feed": {"en": "Atom feed", "zh": "Atom 订阅"},
    "view.feed_label": {"en": "Atom feed of {label}", "zh": "{label} 的 Atom 订阅"},
    "view.api": {"en": "JSON", "zh": "JSON"},
    "view.back": {"en": "Back to the label view", "zh": "返回标签视图"},
    "view.empty": {
        "en": "No digest is stored for {repo} yet.",
        "zh": "{repo} 还没有任何摘要。",
    },
    "view.empty.todo": {
        "en": "Install the App on the repository (or send the service a pull_request "
        "webhook): every digest a job converges is listed here within seconds.",
        "zh": "在该仓库上安装此 App(或向服务发送 pull_request webhook):"
        "每个任务生成的摘要会在几秒内出现在这里。",
    },
    "view.empty.filtered": {
        "en": "No open PR matches these filters.",
        "zh": "没有符合这些筛选条件的未关闭 PR。",
    },
    "view.empty.clear": {"en": "Show every label", "zh": "显示全部标签"},
    "view.not_found": {"en": "Not found", "zh": "未找到"},
    # The triage queue (bot/core/judging/triage.py, bot/view/templates/).
    "view.verdict.deep-read": {"en": "deep read", "zh": "需要精读"},
    "view.verdict.read": {"en": "read", "zh": "值得一读"},
    "view.verdict.skim": {"en": "skim", "zh": "浏览即可"},
    "view.verdict.quiet": {"en": "quiet", "zh": "无需关注"},
    "view.open_count": {"en": "{shown} of {total} open PRs",
                        "zh": "{total} 个未关闭 PR 中的 {shown} 个"},
    "view.group.all": {"en": "Open PRs", "zh": "未关闭的 PR"},
    "view.page": {"en": "Page {number} of {pages}", "zh": "第 {number} 页，共 {pages} 页"},
    "view.page.previous": {"en": "← Previous", "zh": "← 上一页"},
    "view.page.next": {"en": "Next →", "zh": "下一页 →"},
    "view.group.label": {"en": "Label {label}", "zh": "标签 {label}"},
    "view.filter.sort": {"en": "Sort", "zh": "排序"},
    "view.sort.verdict": {"en": "verdict", "zh": "结论"},
    "view.sort.oldest": {"en": "oldest", "zh": "最早"},
    "view.sort.newest": {"en": "newest", "zh": "最新"},
    "view.sort.size": {"en": "largest", "zh": "改动最大"},
    "view.search": {"en": "Search title, author or #number", "zh": "搜索标题、作者或 #编号"},
    "view.search.go": {"en": "Search", "zh": "搜索"},
    "view.owner": {"en": "Areas of {owner}", "zh": "{owner} 负责的领域"},
    "view.owner.clear": {"en": "everyone's", "zh": "所有人"},
    "view.query": {"en": "matching “{query}”", "zh": "匹配“{query}”"},
    # One state per row (bot/core/label_view.py, WAITING_STATES).
    "view.waiting.first-review": {"en": "waiting on first review", "zh": "等待首次评审"},
    "view.waiting.reviewer": {"en": "waiting on reviewer", "zh": "等待评审"},
    "view.waiting.author": {"en": "waiting on author", "zh": "等待作者"},
    "view.waiting.ci": {"en": "waiting on CI", "zh": "等待 CI"},
    "view.waiting_counts": {
        "en": "waiting on first review {first} · reviewer {reviewer} · author {author}"
        " · CI {ci}",
        "zh": "等待首次评审 {first} · 等待评审 {reviewer} · 等待作者 {author} · 等待 CI {ci}",
    },
    "view.opened": {"en": "opened {ago} ago", "zh": "{ago}前创建"},
    "view.author_active": {"en": "author {ago} ago", "zh": "作者 {ago}前"},
    "view.reviewer_active": {"en": "reviewer {ago} ago", "zh": "评审人 {ago}前"},
    "view.size": {"en": "+{additions} −{deletions} in {files} files",
                  "zh": "+{additions} −{deletions},{files} 个文件"},
    "view.size.one": {"en": "+{additions} −{deletions} in 1 file",
                      "zh": "+{additions} −{deletions},1 个文件"},
    "view.ago.now": {"en": "<1 min", "zh": "不到 1 分钟"},
    "view.ago.minutes": {"en": "{n} min", "zh": "{n} 分钟"},
    "view.ago.hours": {"en": "{n} h", "zh": "{n} 小时"},
    "view.ago.days": {"en": "{n} d", "zh": "{n} 天"},
    "view.ci": {"en": "CI", "zh": "CI"},
    "view.ci.state.not-started": {"en": "not started", "zh": "未开始"},
    "view.ci.state.running": {"en": "running", "zh": "运行中"},
    "view.ci.state.blocked": {"en": "blocked (needs an unblock)", "zh": "已阻塞(需手动放行)"},
    "view.ci.state.passed": {"en": "passed", "zh": "通过"},
    "view.ci.state.failed": {"en": "failed", "zh": "失败"},
    "view.ci.state.error": {"en": "error", "zh": "出错"},
    "view.ci.state.unreadable": {"en": "unreadable", "zh": "无法读取"},
    "view.ci.steps": {"en": "narrow steps: {summary}", "zh": "相关步骤:{summary}"},
    "view.ci.step.passed": {"en": "{n} passed", "zh": "{n} 通过"},
    "view.ci.step.failed": {"en": "{n} failed", "zh": "{n} 失败"},
    "view.ci.step.pending": {"en": "{n} pending", "zh": "{n} 进行中"},
    "view.ci.step.blocked": {"en": "{n} blocked", "zh": "{n} 阻塞"},
    "view.asks.state": {"en": "asks: {open} open · {answered} answered",
                        "zh": "评审要求:{open} 项未答复 · {answered} 项已答复"},
    "view.risks": {"en": "Open risks", "zh": "未解决的风险"},
    "view.signal.template-unfilled": {"en": "template not filled in", "zh": "模板未填写"},
    "view.signal.ai-assisted": {"en": "AI assistance used", "zh": "使用了 AI 辅助"},
    "view.signal.core-unexplained": {"en": "core change, no rationale",
                                     "zh": "改动核心代码但未说明理由"},
    "view.signal.large-multi-area": {"en": "very large, many areas", "zh": "改动很大且跨多个领域"},
    "view.labels": {"en": "Labels", "zh": "标签"},
    "view.digest": {"en": "digest", "zh": "摘要"},
    "view.empty.filtered.clear": {"en": "Clear every filter", "zh": "清除全部筛选"},
    "view.not_found.repo": {
        "en": "No digest is stored for {repo}, or it is a private repository's.",
        "zh": "{repo} 没有已存储的摘要,或者它是私有仓库。",
    },
    "view.not_found.todo": {
        "en": "Digests appear here once the App is installed on the repository and a pull "
        "request is opened or updated (the reconcile sweep also picks up open PRs every "
        "15 minutes). A private repository's view needs the view token.",
        "zh": "在该仓库安装此 App 后,PR 一旦被创建或更新,摘要就会出现在这里"
        "(对账任务每 15 分钟也会补上未关闭的 PR)。私有仓库的视图需要视图令牌。",
    },
    # --- a part whose read failed (bot/core/render/unavailable.py) ---------------
    "render.unavailable.conversation": {
        "en": "The conversation could not be read this time; a later run fills it in.",
        "zh": "本次未能读取讨论内容;稍后的运行会补上。",
    },
    "render.unavailable.linked": {
        "en": "The linked work could not be read this time; a later run fills it in.",
        "zh": "本次未能读取关联工作;稍后的运行会补上。",
    },
    "render.unavailable.index": {
        "en": "The code around the change could not be read this time; a later run fills "
        "it in.",
        "zh": "本次未能读取改动周边的代码;稍后的运行会补上。",
    },
    "render.unavailable.repo_config": {
        "en": "The repository's own config (CI steps, owners) could not be fully read this "
        "time; a later run fills it in.",
        "zh": "本次未能完整读取仓库自身的配置(CI 步骤、代码所有者);稍后的运行会补上。",
    },
    "render.unavailable.ci": {
        "en": "The CI statuses of the head could not be read this time; a later run fills "
        "them in.",
        "zh": "本次未能读取最新提交的 CI 状态;稍后的运行会补上。",
    },
    # --- the conversation (bot/core/render/conversation.py) -----------------------
    "render.conversation": {"en": "Since the description", "zh": "描述之后的讨论"},
    "ask.kind.tests": {"en": "tests", "zh": "测试"},
    "ask.kind.test-results": {"en": "test results", "zh": "测试结果"},
    "ask.kind.gpu-eval": {"en": "GPU eval", "zh": "GPU 评测"},
    "ask.kind.numbers": {"en": "numbers", "zh": "性能数据"},
    "ask.kind.hardware-run": {"en": "a hardware run", "zh": "硬件实测"},
    "ask.kind.docs": {"en": "docs", "zh": "文档"},
    "ask.kind.rebase": {"en": "a rebase", "zh": "rebase"},
    "ask.kind.split": {"en": "a split", "zh": "拆分 PR"},
    "ask.line": {
        "en": "{kind} — asked by {who} — {status}", "zh": "{kind}——{who} 提出——{status}",
    },
    "ask.open": {"en": "open", "zh": "未答复"},
    "ask.no-write-access": {"en": "no write access", "zh": "无写权限"},
    "ask.answered": {"en": "answered", "zh": "已答复"},
    "ask.answered.commit": {"en": "answered by a later commit", "zh": "已由后续提交答复"},
    "ask.where.comment": {"en": "comment", "zh": "评论"},
    "ask.where.review": {"en": "review", "zh": "评审"},
    "ask.where.review_comment": {"en": "review comment", "zh": "行内评审"},
    "ask.where.reply": {"en": "reply", "zh": "回复"},
    "ask.where.evidence": {"en": "evidence", "zh": "证据"},
    "later.cleared": {"en": "{risk} cleared by {who}", "zh": "{risk} 已由 {who} 解决"},
    "later.lowered": {"en": "{risk} lowered by {who}", "zh": "{risk} 已由 {who} 降级"},
    "render.conversation.more": {
        "en": "{count} more from the conversation", "zh": "讨论中的其余 {count} 条",
    },
    # --- neighbours: the PR among the other open PRs (bot/core/render/neighbours.py) ---
    "render.neighbours": {"en": "Other open PRs", "zh": "其他未合并的 PR"},
    "neighbours.conflicts": {
        "en": "Conflicts with its base branch (GitHub: `dirty`): it cannot merge until they "
        "are resolved.",
        "zh": "与目标分支存在合并冲突（GitHub：`dirty`）：解决之前无法合并。",
    },
    "neighbours.base_moved": {
        "en": "Its base branch has moved {count} commits since this PR's merge base: its CI "
        "ran against an older base.",
        "zh": "自本 PR 的合并基点以来，目标分支已前进 {count} 个提交：其 CI 基于较旧的"
        "目标分支运行。",
    },
    "neighbours.behind": {
        "en": "Behind its base branch (GitHub: `behind`): it needs the base merged in.",
        "zh": "落后于目标分支（GitHub：`behind`）：需要先合入目标分支的新提交。",
    },
    "neighbours.ci_failed": {
        "en": "The CI build on its head failed.", "zh": "最新提交上的 CI 构建失败。",
    },
    "neighbours.same-function": {
        "en": "{ref} by {author} also changes {shared}{facts}",
        "zh": "{author} 的 {ref} 也改动了 {shared}{facts}",
    },
    "neighbours.same-file": {
        "en": "{ref} by {author} also changes {shared}{facts}",
        "zh": "{author} 的 {ref} 也改动了 {shared}{facts}",
    },
    "neighbours.same-issue": {
        "en": "{ref} by {author} says it fixes the same issue {shared}: competing{facts}",
        "zh": "{author} 的 {ref} 也声称修复同一个 issue {shared}：相互竞争{facts}",
    },
    "neighbours.same-title": {
        "en": "{ref} by {author} has a near-identical title and file set: competing{facts}",
        "zh": "{author} 的 {ref} 标题和改动文件几乎相同：相互竞争{facts}",
    },
    "neighbours.more_shared": {"en": " and {count} more", "zh": " 等 {count} 处"},
    "neighbours.facts": {"en": " ({facts})", "zh": "（{facts}）"},
    "neighbours.facts_sep": {"en": ", ", "zh": "，"},
    "neighbours.opened": {"en": "opened {date}", "zh": "{date} 创建"},
    "neighbours.draft": {"en": "draft", "zh": "草稿"},
    "neighbours.approved": {"en": "approved", "zh": "已批准"},
    "neighbours.ci.passed": {"en": "CI passed", "zh": "CI 已通过"},
    "neighbours.ci.failed": {"en": "CI failed", "zh": "CI 失败"},
    "neighbours.ci.error": {"en": "CI failed", "zh": "CI 失败"},
    "neighbours.ci.running": {"en": "CI running", "zh": "CI 运行中"},
    "neighbours.more": {
        "en": "{count} more open PRs change the same code.",
        "zh": "另有 {count} 个未合并的 PR 改动了相同的代码。",
    },
    "neighbours.more.one": {
        "en": "1 more open PR changes the same code.",
        "zh": "另有 1 个未合并的 PR 改动了相同的代码。",
    },
    "neighbours.dependency": {
        "en": "Waits for {ref} ({cue}): {state}", "zh": "等待 {ref}（{cue}）：{state}",
    },
    "neighbours.cue.depends-on": {"en": "depends on", "zh": "依赖"},
    "neighbours.cue.after": {"en": "after", "zh": "在其之后"},
    "neighbours.cue.stacked-on": {"en": "stacked on", "zh": "叠加在其之上"},
    "neighbours.cue.blocked-by": {"en": "blocked by", "zh": "被其阻塞"},
    "neighbours.state.open": {"en": "still open", "zh": "仍未合并"},
    "neighbours.state.merged": {"en": "merged", "zh": "已合并"},
    "neighbours.state.closed": {"en": "closed unmerged", "zh": "已关闭未合并"},
    "neighbours.state.unknown": {"en": "state not read", "zh": "状态未读取"},
    "link.state.open": {"en": "open", "zh": "未关闭"},
    "link.state.merged": {"en": "merged", "zh": "已合并"},
    "link.state.closed": {"en": "closed unmerged", "zh": "已关闭未合并"},
    "link.state.closed_issue": {"en": "closed", "zh": "已关闭"},
    "view.neighbour.overlaps": {"en": "overlaps #{number}", "zh": "与 #{number} 重叠"},
    "view.neighbour.competes": {"en": "competes with #{number}", "zh": "与 #{number} 竞争"},
    "view.neighbour.conflicts": {"en": "conflicts", "zh": "有合并冲突"},
    "view.filter.neighbours": {"en": "Other open PRs", "zh": "其他 PR"},
    "view.filter.neighbours.any": {"en": "any", "zh": "任一"},
    "view.filter.neighbours.competes": {"en": "competing", "zh": "相互竞争"},
    "view.filter.neighbours.overlaps": {"en": "overlapping", "zh": "改动重叠"},
    "view.filter.neighbours.conflicts": {"en": "conflicts", "zh": "有合并冲突"},
    "view.asks": {"en": "Asked", "zh": "评审要求"},
    "view.asks.count": {
        "en": "{asked} asked / {answered} answered", "zh": "{asked} 项 / 已答复 {answered} 项",
    },
    # --- the code around the change (bot/core/render/repo_context.py) -----------
    "render.context": {"en": "Around the change", "zh": "改动周边的代码"},
    "render.context.siblings": {
        "en": "{changed} changed; look-alikes left untouched in {file}: {names} ({shape})",
        "zh": "{changed} 有改动;{file} 中形态相同但未改动的:{names}({shape})",
    },
    "render.context.shape.prefix": {
        "en": "same prefix {value} and parameters", "zh": "同前缀 {value} 且参数相近",
    },
    "render.context.shape.decorator": {
        "en": "same decorator {value} and parameters", "zh": "同装饰器 {value} 且参数相近",
    },
    "render.context.shape.signature": {"en": "same signature {value}", "zh": "同签名 {value}"},
    "render.context.overrides": {
        "en": "{count} subclasses override {method}: {files}",
        "zh": "{count} 个子类重写了 {method}:{files}",
    },
    "render.context.overrides.one": {
        "en": "1 subclass overrides {method}: {files}",
        "zh": "1 个子类重写了 {method}:{files}",
    },
    "render.context.overrides.nested": {
        "en": " (the change is inside its nested {names})",
        "zh": "(改动位于其内部嵌套的 {names})",
    },
    "render.context.overrides.tests": {
        "en": "; this PR's tests name {named} of them",
        "zh": ";本 PR 的测试提到其中 {named} 个",
    },
    "render.context.callers": {
        "en": "{function} changed its signature: {count} call sites outside this PR, in {files}",
        "zh": "{function} 的签名有改动:本 PR 之外有 {count} 处调用,位于 {files}",
    },
    "render.context.callers.one": {
        "en": "{function} changed its signature: 1 call site outside this PR, in {files}",
        "zh": "{function} 的签名有改动:本 PR 之外有 1 处调用,位于 {files}",
    },
    "render.context.unaffected.summary": {
        "en": "Compatible signature changes ({count})",
        "zh": "兼容的签名改动({count})",
    },
    "render.context.unaffected": {
        "en": "{function}: {count} call sites, unaffected (only parameters with defaults added)",
        "zh": "{function}:{count} 处调用,不受影响(只新增了带默认值的参数)",
    },
    "render.context.unaffected.one": {
        "en": "{function}: 1 call site, unaffected (only parameters with defaults added)",
        "zh": "{function}:1 处调用,不受影响(只新增了带默认值的参数)",
    },
}


# Chinese entries are written naturally; punctuation is made full-width once here so
# every sentence is consistent however it was typed.
for _entry in CATALOGUE.values():
    if "zh" in _entry:
        _entry["zh"] = full_width(_entry["zh"])


def t(lang: Lang, key: str, **params: object) -> str:
    """The text for `key` in `lang` (English when a translation is missing)."""
    entry = CATALOGUE[key]
    text = entry.get(lang) or entry["en"]
    text = text.format(**params) if params else text
    return space_mixed(text) if lang == "zh" else text
