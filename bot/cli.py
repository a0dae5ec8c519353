"""The `digest-bot` command line: serve, digest (offline or online), check-rules."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.core.findings import LANGS, Lang
from bot.settings import Settings

# The digest engine is imported by the commands that use it, not at start: `serve` must
# answer /healthz quickly and builds its engine on the worker thread (bot/service.py).

_PR_REF = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<number>\d+)$")


class UsageError(Exception):
    """Bad input from the command line: one line on stderr, exit code 2."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.run(args)
        return result
    except UsageError as exc:
        print(f"digest-bot: error: {exc}", file=sys.stderr)
        return 2
    except ValidationError as exc:
        if exc.title != Settings.__name__:
            raise
        for error in exc.errors():
            # The variable's name and why, never its value (it may be a secret).
            name = "DIGEST_" + "_".join(str(part) for part in error["loc"]).upper()
            message = str(error["msg"]).removeprefix("Value error, ")
            print(f"digest-bot: error: {name}: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="digest-bot", description="pr-digest: how to read each vLLM pull request."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the webhook service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(run=_run_serve)

    digest = sub.add_parser("digest", help="digest one PR, offline or through the API")
    digest.add_argument("pr", nargs="?", help="OWNER/REPO#N (online, through the API)")
    digest.add_argument("--event", type=Path, help="pull_request payload or PR object (JSON)")
    digest.add_argument("--files", type=Path, help="PR files as the PR-files endpoint returns")
    digest.add_argument("--format", choices=("markdown", "json"), default="markdown")
    digest.add_argument("--lang", choices=LANGS, default=None)
    digest.add_argument("--rules", type=Path, default=None, help="rules directory")
    digest.add_argument("--explain", action="store_true", help="open the rule trace")
    digest.add_argument("--post", action="store_true", help="online: write the sticky comment")
    digest.set_defaults(run=_run_digest)

    check = sub.add_parser("check-rules", help="validate rule files")
    check.add_argument("dir", nargs="?", type=Path, default=None)
    check.set_defaults(run=_run_check_rules)

    commands = sub.add_parser("commands", help="print the /digest command table (Markdown)")
    commands.add_argument("--lang", choices=LANGS, default="en")
    commands.set_defaults(run=_run_commands)

    schema = sub.add_parser("export-schema", help="write the rule files' JSON Schema")
    schema.add_argument("path", nargs="?", type=Path, default=None)
    schema.set_defaults(run=_run_export_schema)
    return parser


def _run_serve(args: argparse.Namespace) -> int:
    from bot.service import serve

    serve(Settings(), host=args.host, port=args.port)
    return 0


def _run_digest(args: argparse.Namespace) -> int:
    from bot.core.digest import build_digest, digest_json
    from bot.core.pr_object import (
        NotAPullRequest,
        changed_files,
        facts_from_pull_request,
        pull_request_object,
    )
    from bot.core.render import render_digest

    settings = Settings()
    lang: Lang = args.lang or settings.language
    rules_dir: Path = args.rules or settings.rules_dir
    if args.pr:
        match = _PR_REF.match(args.pr)
        if match is None or args.event is not None:
            raise UsageError("give either OWNER/REPO#N or --event PAYLOAD.json, not both")
        from bot.github.protocol import GitHubError
        from bot.online import digest_online

        try:
            markdown, payload = asyncio.run(
                digest_online(
                    settings, match["repo"], int(match["number"]), lang=lang,
                    rules_dir=rules_dir, post=args.post, explain=args.explain,
                )
            )
        except GitHubError as exc:
            raise UsageError(f"{args.pr}: {exc}") from None
        _emit(args.format, markdown, payload)
        return 0
    if args.event is None:
        raise UsageError("digest needs OWNER/REPO#N or --event PAYLOAD.json")
    if args.post:
        raise UsageError("--post needs OWNER/REPO#N")
    try:
        pr = pull_request_object(_read_json_object(args.event))
        files = changed_files(_read_json_list(args.files)) if args.files else ()
    except NotAPullRequest as exc:
        raise UsageError(str(exc)) from None
    rules = _load_rules(rules_dir)
    facts = facts_from_pull_request(pr, files)
    digest = build_digest(facts, rules, lang, explain=args.explain)
    markdown = render_digest(digest)
    _emit(args.format, markdown, digest_json(digest, markdown))
    return 0


def _run_check_rules(args: argparse.Namespace) -> int:
    from bot.rules_files import check_rules

    directory: Path = args.dir or Settings().rules_dir
    problems = check_rules(directory)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {directory}", file=sys.stderr)
        return 1
    print(f"{directory}: rules OK")
    return 0


def _run_commands(args: argparse.Namespace) -> int:
    from bot.core.commands import render_help_table
    from bot.handlers.command import ALL_COMMANDS

    print(render_help_table(ALL_COMMANDS, args.lang))
    return 0


def _run_export_schema(args: argparse.Namespace) -> int:
    from bot.rules_files import write_schema

    path: Path = args.path or Settings().rules_dir / "schema.json"
    write_schema(path)
    print(f"wrote {path}")
    return 0


def _load_rules(directory: Path) -> Any:
    from bot.core.rules import RuleFileError
    from bot.rules_files import load_rules

    try:
        return load_rules(directory)
    except RuleFileError as exc:
        raise UsageError(f"invalid rules in {directory}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read rules from {directory}: {exc.strerror}") from None


def _emit(fmt: str, markdown: str, payload: dict[str, Any]) -> None:
    if fmt == "json":
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(markdown)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None


def _read_json_object(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a JSON object (a pull_request payload or PR)")
    return data


def _read_json_list(path: Path) -> list[dict[str, Any]]:
    data = _read_json(path)
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise UsageError(f"{path}: expected a JSON list of PR-file objects")
    return data
