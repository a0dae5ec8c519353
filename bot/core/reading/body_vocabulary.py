"""The words a PR description uses: heading names, admissions, claims and result shapes.

These are the *choices* (what counts as a Test Plan heading, which phrases admit a test
was not run, what a benchmark result looks like), kept apart from the parsing in
bot/core/reading/body.py so a new phrase is a one-line change that cannot break the scanner.
"""

from __future__ import annotations

import re

# Normalized heading -> section kind. Unknown headings keep their lower-cased name.
SECTION_KINDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "purpose",
            "summary",
            "motivation",
            "description",
            "overview",
            "what this pr does",
            "what does this pr do",
            "pr description",
            "background",
            "problem",
        ),
        "purpose",
    ),
    **dict.fromkeys(
        (
            "test plan",
            "testing plan",
            "test plans",
            "testing",
            "tests",
            "test",
            "validation",
            "verification",
            "how was this tested",
            "how to test",
            "how it was tested",
            "test commands",
            "testing done",
            "unit tests",
        ),
        "test_plan",
    ),
    **dict.fromkeys(
        (
            "test result",
            "test results",
            "results",
            "result",
            "testing results",
            "test output",
            "test outcome",
            "outcome",
        ),
        "test_result",
    ),
    **dict.fromkeys(
        (
            "model evaluation",
            "evaluation",
            "evaluations",
            "eval",
            "evals",
            "accuracy",
            "accuracy test",
            "accuracy tests",
            "accuracy results",
            "accuracy evaluation",
            "lm eval",
            "benchmark",
            "benchmarks",
            "benchmark results",
            "benchmarking",
            "performance",
            "perf",
            "performance results",
            "e2e accuracy",
        ),
        "evaluation",
    ),
}

_HW = (
    r"(?:gpus?|cuda|rocm|cdna\d?|amd|nvidia|tpus?|xpus?|hpus?|gaudi\d?|h100|h200|h20|b200"
    r"|b300|gb200|a100|l40s?|mi3\d\dx?|gfx9\d\d|multi-gpu|hardware)"
)
# The devices vLLM contributors name when they report a run (GPUs, TPUs, CPUs, images).
HW_NAME = re.compile(
    r"\b(?:h100|h200|h20|h800|b200|b300|gb200|gb300|a100|a800|a10g?|l40s?|l4|t4|v100"
    r"|rtx\s?(?:pro\s?)?\d{4}|mi\d{2,3}x?|cdna\d?|gfx\d{3,4}|rdna\d?"
    r"|tpu\s?v?\d{0,2}[ep]?|trillium|gaudi\s?\d?|hpu|xeon|epyc|graviton\d?|apple\s+m\d"
    r"|arc\s?[ab]?\d{0,3}|bmg|battlemage|max\s?1[15]\d0|pvc|ponte\s+vecchio"
    r"|vllm-openai(?:-cpu|-rocm|-xpu|-tpu)?(?::[\w.-]{1,40})?|rocm/vllm(?:-dev)?)(?![\w-])"
)
# The patterns below scan whole bodies. They are written in lower case and run on a
# lower-cased copy without IGNORECASE or a leading \b/lookbehind, which lets the regex
# engine skip ahead by first character (several times faster on megabyte bodies); the
# word boundary before a match is checked by `_scan` in bot/core/reading/body.py.
# Admissions that mean the same wherever they appear.
STRONG_NOT_RUN = re.compile(
    r"(?:not\s+yet\s+(?:been\s+)?(?:run|tested|verified|evaluated|benchmarked)"
    r"|(?:have|has)(?:n't|n’t|\s+not)\s+(?:yet\s+)?(?:been\s+)?(?:run|tested|verified|evaluated)"
    r"|(?:did|could)(?:n't|n’t|\s+not)\s+(?:yet\s+)?(?:run|test|verify|evaluate|benchmark)"
    r"|unable\s+to\s+(?:run|test|verify)|untested|unverified|tbd|tbc"
    r"|not\s+(?:been\s+)?(?:run|tested|verified|evaluated|benchmarked)\s+yet"
    r"|(?:yet\s+to\s+be|still\s+need\s+to\s+be)\s+(?:run|tested|verified|evaluated)"
    r"|will\s+(?:add|post|run|share|attach|update)\s+(?:the\s+)?(?:unit\s+|e2e\s+|more\s+)?"
    r"(?:tests?|results?|evals?|evaluations?|benchmarks?|numbers)\s+(?:later|soon|afterwards"
    r"|in\s+a\s+follow-?up|once|when|after)"
    r"|(?:have|has)(?:n't|n’t|\s+not)\s+had\s+(?:a\s+)?(?:chance|time)\s+to\s+(?:run|test|verify)"
    r"|to\s+be\s+confirmed(?:\s+by\s+ci)?|to\s+be\s+(?:run|tested|verified|evaluated)"
    r"|(?:runtime\s+|hardware\s+)?(?:verification|validation)\s+(?:needs|requires)\s+"
    r"(?:a\s+|an\s+)?[\w-]{1,12}(?:\s+(?:box|machine|gpu|run|node|hardware))?"
    r"|needs?\s+(?:a\s+|an\s+)?" + _HW + r"\s+(?:run|box|machine|node|test(?:ing|s)?"
    r"|verification|validation|eval(?:uation)?)"
    r"|(?:verification|validation|evaluation|eval|results?)\s+(?:is\s+|are\s+)?pending"
    r"|pending\s+(?:verification|validation|evaluation|ci|gpu\s+run|results?)"
    r"|(?:no|without)\s+access\s+to\s+(?:a\s+|an\s+)?"
    + _HW
    + r"|(?:don't|don’t|do\s+not)\s+have\s+(?:access\s+to\s+)?(?:a\s+|an\s+)?"
    + _HW
    + r")\b"
)
# Words that admit a gap only inside a Test/Result/Evaluation section.
WEAK_NOT_RUN = re.compile(
    r"(?:not\s+(?:been\s+)?(?:run|tested|verified|evaluated|benchmarked)|n/a|pending"
    r"|will\s+add(?:\s+(?:later|soon|tests?|results?))?|will\s+be\s+added|to\s+be\s+added"
    r"|requires?\s+(?:a\s+|an\s+)?(?:[\w-]{1,12}\s+)?(?:hardware|gpus?)(?:/ci)?)(?![\w/])"
)
# The lookbehind stops a scan from restarting inside a long digit run (quadratic).
PERF_NUMBER = re.compile(
    r"(?<![\d.,])\d{1,9}(?:[.,]\d{1,4})?[ \t]{0,2}"
    r"(?:ms|µs|us|tok/s|toks/s|tokens/s|token/s|req/s|reqs/s|requests/s|it/s|gb/s|tflops|%|x|×)"
    r"(?![\w/])"
)
PERF_TABLE_ROW = re.compile(
    r"^[ \t]{0,3}\|[^\n]{0,400}?\b(?:before|after|baseline|speedup|this pr)\b[^\n]{0,200}",
    re.MULTILINE,
)
PERF_CLAIM = re.compile(
    r"(?<![\d.])\d{1,4}(?:\.\d{1,2})?\s?(?:x|×|%)\s{1,3}(?:faster|speed-?ups?|speed\s+up)\b"
    r"|(?:faster|speed-?ups?|speed\s+up)\b"
    r"|(?:improves?|improved|improving|increases?|increased|boosts?|boosted|higher|better)\s+"
    r"(?:the\s+)?(?:end-to-end\s+|e2e\s+|decode\s+|prefill\s+|overall\s+)?"
    r"(?:throughput|performance|latency|tpot|ttft)"
    r"|(?:reduces?|reduced|reducing|lowers?|lowered|lower|cuts?)\s+(?:the\s+)?"
    r"(?:end-to-end\s+|e2e\s+|decode\s+|prefill\s+|overall\s+|kernel\s+)?"
    r"(?:latency|overhead|ttft|tpot|itl)"
    r"|performance\s+(?:improvement|gain|boost)s?\b"
)
PLACEHOLDER = re.compile(
    r"tbd|tba|tbc|n/?a|none|todo|wip|pending|coming soon|will add(?: later| soon)?"
    r"|will be added|to be added|to be confirmed(?: by ci)?|to be determined|see above"
    r"|same as above|not applicable|nothing|\.\.\.|-"
)
BOX_UNCHECKED = re.compile(r"\s{0,8}[-*+]\s{1,4}\[ \]")
# Outcome words (past tense): "reproduces the failure" is a plan, "3 failed" a result.
OUTCOME = re.compile(r"(?:pass(?:ed|es)?|failed|succeeded|ok|works|worked|green|verified)\b|✅")
LM_EVAL_HEADER = re.compile(r"\|\s{0,3}tasks\s{0,3}\|\s{0,3}version\s{0,3}\|")
BENCH_OUTPUT = re.compile(
    r"(?:request|output\s+token|total\s+token|input\s+token)\s+throughput\s{0,3}"
    r"(?:\([\w/ ]{1,20}\))?\s{0,3}:\s{0,20}\d"
    r"|\b(?:mean|median|p\d{2})\s+(?:ttft|tpot|itl|e2el)\s+\(ms\)\s{0,3}:\s{0,20}\d"
    r"|\bthroughput:\s{0,3}\d{1,9}(?:\.\d{1,4})?\s{0,3}requests/s"
)
EVAL_WORD = re.compile(
    r"(?:gsm8k|mmlu(?:_pro)?|humaneval|gpqa|arc_challenge|hellaswag|mmmu|chartqa|aime\d{0,2}"
    r"|math500|lm_eval|lm-eval|exact_match|accuracy|acc(?:_norm)?|perplexity|ppl)\b"
)
SCORE = re.compile(r"(?<![\w.])\d{1,3}\.\d{1,4}(?![\d.])|(?<![\w.])\d{1,3}(?:\.\d{1,2})?\s?%")
# A score stated as a result: after a colon or equals sign, or beside before/after.
SCORED_RESULT = re.compile(
    r"[:=]\s{0,3}(?:\d{1,3}\.\d{1,4}|\d{1,3}(?:\.\d{1,2})?\s?%)"
    r"|(?:\d\.\d{1,4}|\d{1,3}(?:\.\d{1,2})?\s?%)\s{0,3}\(?(?:before|after|baseline|main)\b"
    r"|\b(?:before|after|baseline|main)\)?\s{0,3}[:=]?\s{0,3}\d{1,3}\.\d{1,4}"
)
COMMAND_STARTS = ("lm_eval", "vllm ", "python", "pytest", "$ ", "export ", "bash ", "torchrun")
# Evidence written in other shapes than a result table (all lower case, one line each).
# A ticked checklist line that reports a check ("- [x] Verified Voxtral on <image>").
VERIFIED_BOX = re.compile(
    r"^[ \t]{0,8}[-*+][ \t]{1,4}\[[xX]\][ \t]{0,4}[^\n]{0,40}?"
    r"\b(?:verified|tested|validated|ran|run|checked|confirmed|passe[sd]|reproduced|benchmarked"
    r"|evaluated|compared)\b[^\n]{0,200}",
    re.MULTILINE,
)
# With a device name on the same line, a run report: "tested on H100", "verified on
# `vllm-openai-cpu:v0.28.0`", "ran it on 8xMI300X".
RUN_VERB = re.compile(
    r"(?:tested|verified|validated|ran|running|benchmarked|evaluated|measured|reproduced"
    r"|profiled|checked)\b"
)
# Output compared with a reference: "24-layer encoder parity", "matches HF", "max abs diff".
PARITY = re.compile(
    r"(?:parity|bit-?exact|bitwise\s+identical|identical\s+(?:outputs?|results?|logits|tokens)"
    r"|outputs?\s+(?:are\s+|is\s+)?identical"
    r"|match(?:es|ed|ing)?\s+(?:the\s+)?(?:hf|huggingface|transformers|reference|baseline"
    r"|original|upstream)(?:'s)?\s+(?:outputs?|logits|results?|generations?|tokens)"
    r"|max(?:imum)?\s+abs(?:olute)?\s+(?:diff|error)|allclose)\b"
)
# A line that denies what it mentions: "does not claim full HF parity".
NEGATION = re.compile(r"\b(?:not|no|without|never|cannot)\b|n't|n’t")
# A link to a CI run: Buildkite builds (vLLM's CI, the AMD and other hardware pipelines).
CI_LINK = re.compile(r"buildkite\.com/[\w-]{1,40}/[\w-]{1,60}/builds/\d{1,9}")

# The PR template's <details> checklist: boilerplate, never the author's words. Only a
# fallback for when the base's own template was not read (offline, or a failed read):
# with it, the body is compared with the template's text (bot/core/reading/template.py).
# vLLM's template up to 0.31 and since 0.32.
TEMPLATE_CHECKLISTS = (
    "essential elements of an effective pr description checklist",
    "pull request checklist",
)
# The template's footer: GitHub Actions removes it and everything below it, so nothing
# there is the author's (vLLM: "**BEFORE SUBMITTING, PLEASE READ <docs> (anything
# written below this line will be removed by GitHub Actions)**").
TEMPLATE_FOOTER = "before submitting, please read"
# The template's first line, an instruction to the author.
TEMPLATE_PREAMBLE = "please fill in the pr description here"
