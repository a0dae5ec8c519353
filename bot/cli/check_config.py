"""`digest-bot check-config FILE`: a repository's `.github/pr-digest.yml`, checked against
the bundled rules through the same function the service applies it with, so a CI job on
the config PR catches what would otherwise only show up as a note on the next digest."""

from __future__ import annotations

import sys
from pathlib import Path

from bot.core.rules import RuleFileError
from bot.core.rules.parse import read_rule_files
from bot.core.rules.problems import RuleProblem
from bot.handlers.repo_rules import apply_override
from bot.rulebook.files import read_rule_sources


class CannotCheck(Exception):
    """FILE or the bundled rules could not be read: one line, exit code 2."""


def check_config(file: Path, rules_dir: Path, fmt: str) -> int:
    """Print the verdict on `file`; 0 when valid, 1 with one line per problem."""
    text = _read(file)
    try:
        files = read_rule_files(read_rule_sources(rules_dir))
    except (OSError, UnicodeDecodeError) as exc:
        raise CannotCheck(f"cannot read the bundled rules in {rules_dir}: {exc}") from None
    except RuleFileError as exc:
        more = len(exc.problems) - 1
        raise CannotCheck(
            f"the bundled rules in {rules_dir} are invalid (run `digest-bot check-rules`): "
            f"{exc.problems[0]}{f' (and {more} more)' if more else ''}"
        ) from None
    if not files.areas:
        raise CannotCheck(f"the bundled rules in {rules_dir} hold no area rule "
                          "(run `digest-bot check-rules`)")
    try:
        rules = apply_override(files, text, str(file))
    except RuleFileError as exc:
        for problem in exc.problems:
            if fmt == "github":
                print(github_annotation(problem))
            else:
                print(problem, file=sys.stderr)
        count = len(exc.problems)
        print(f"{count} problem{'' if count == 1 else 's'} in {file}", file=sys.stderr)
        return 1
    bundled = {rule.id for _, rule in files.areas}
    in_force = {area.id for area in rules.areas}
    replaced = {area.id for area in rules.areas if area.source == str(file)} & bundled
    print(
        f"{file}: override OK ({len(in_force)} areas in force: {len(in_force - bundled)} "
        f"added, {len(replaced)} replaced, {len(bundled - in_force)} disabled)"
    )
    return 0


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CannotCheck(f"{file}: no such file") from None
    except IsADirectoryError:
        raise CannotCheck(f"{file}: is a directory") from None
    except UnicodeDecodeError as exc:
        raise CannotCheck(f"{file}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise CannotCheck(f"{file}: cannot read: {exc.strerror}") from None


def _escape_data(text: str) -> str:
    # GitHub's workflow-command escaping: without it a newline or '%' in a message (a
    # pattern, a key from the file) would end the annotation early or be decoded.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(problem: RuleProblem) -> str:
    """`::error file=F,line=N::message`, one GitHub Actions annotation."""
    message = problem.message if problem.rule is None else (
        f"rule {problem.rule!r}: {problem.message}")
    return (f"::error file={_escape_property(problem.file)},line={problem.line}::"
            f"{_escape_data(message)}")
