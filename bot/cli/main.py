"""The `digest-bot` command line: serve, digest (offline or online), check-rules,
check-config, export-schema, and the operator's commands (previews, jobs, settings-table)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from bot.cli.ops import OpsError, add_operator_commands
from bot.cli.problems import BadOverride
from bot.core.vocabulary import LANGS, Lang
from bot.settings.errors import SettingsError, load_settings, settings_error_lines

if TYPE_CHECKING:
    from bot.core.facts import Conversation
    from bot.core.neighbours.record import Neighbourhood
    from bot.core.repo_config.config import RepoConfig
    from bot.core.routing.config import RoutingConfig

# The digest engine is imported by the commands that use it, not at start: `serve` must
# answer /healthz quickly and builds its engine on the worker thread (bot/service/wiring.py).

# OWNER/REPO#N, OWNER/REPO/pull/N, or the PR's URL (any GitHub host, trailing parts allowed).
_PR_REFS = (
    re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<number>\d+)$"),
    re.compile(r"^(?:https?://[^/\s]+/)?(?P<repo>[\w.-]+/[\w.-]+)/pulls?/(?P<number>\d+)"
               r"(?:[/?#].*)?$"),
)


class UsageError(Exception):
    """Bad input from the command line: one line on stderr, exit code 2."""


def main(argv: Sequence[str] | None = None) -> int:
    return _main(_parser().parse_args(argv))


def run() -> None:
    """The console script and `python -m bot`: `main` in a process of its own.

    Such a process ends when the command does, so two costs of a big digest are skipped
    (~100 ms of a 3,000-file PR's 0.5 s): the collector's full passes over the
    thousands of objects the imports and the rule set made (frozen before the digest,
    `_run_digest`), and the interpreter's teardown, which frees every object one by one
    after the output is written. In-process callers (tests, other code) use `main`."""
    args = _parser().parse_args()
    args.own_process = True
    code = _main(args)
    if code == 0 and args.quick_exit:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:  # the reader left: the normal exit says so (141)
            raise SystemExit(_main_broken_pipe()) from None
        if "logging" in sys.modules:
            sys.modules["logging"].shutdown()
        os._exit(0)
    raise SystemExit(code)


def _main(args: argparse.Namespace) -> int:
    try:
        result: int = args.run(args)
        sys.stdout.flush()
        return result
    except (UsageError, OpsError) as exc:
        print(f"digest-bot: error: {exc}", file=sys.stderr)
        return 2
    except BadOverride as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return 2
    except SettingsError as exc:
        _print_bad_settings(exc.lines)
        return 2
    except ValidationError as exc:
        # Settings() built outside load_settings (e.g. by a subcommand's module).
        if exc.title != "Settings":
            raise
        _print_bad_settings(settings_error_lines(exc))
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _main_broken_pipe()


def _main_broken_pipe() -> int:
    # `digest-bot ... | head`: the reader left. Point stdout at /dev/null so the
    # interpreter's final flush does not raise again, and exit like other tools.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


def _print_bad_settings(lines: list[str]) -> None:
    for line in lines:
        print(f"digest-bot: bad setting: {line}", file=sys.stderr)


def parse_pr_ref(text: str) -> tuple[str, int] | None:
    """`("owner/repo", n)` from OWNER/REPO#N, OWNER/REPO/pull/N or a PR URL."""
    for pattern in _PR_REFS:
        match = pattern.match(text.strip())
        if match is not None:
            return match["repo"], int(match["number"])
    return None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pr-digest")
    except PackageNotFoundError:
        return "unknown"


class _VersionAction(argparse.Action):
    """`--version`, reading the installed version only when asked: the package metadata
    costs every other command ~5 ms."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="digest-bot", description="pr-digest: how to read each vLLM pull request."
    )
    parser.add_argument("--version", action=_VersionAction)
    # `own_process`: run() is the whole process; `quick_exit`: the command leaves nothing
    # to clean up once its output is written (see `run`).
    parser.set_defaults(own_process=False, quick_exit=False)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve", help="run the webhook service",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Run the webhook service. Everything else is configured with DIGEST_* "
        "environment variables: see docs/settings.md, "
        "or print it with `digest-bot settings-table`.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.set_defaults(run=_run_serve)

    digest = sub.add_parser("digest", help="digest one PR, offline or through the API")
    digest.add_argument(
        "pr", nargs="?",
        help="OWNER/REPO#N, OWNER/REPO/pull/N or the PR's URL (online, through the API)",
    )
    digest.add_argument("--event", type=Path, help="pull_request payload or PR object (JSON)")
    digest.add_argument("--files", type=Path, help="PR files as the PR-files endpoint returns")
    digest.add_argument("--format", choices=("markdown", "json"), default="markdown")
    digest.add_argument("--lang", choices=LANGS, default=None)
    digest.add_argument("--rules", type=Path, default=None, help="rules directory")
    digest.add_argument("--explain", action="store_true", help="open the rule trace")
    digest.add_argument(
        "--repo-dir", type=Path, default=None, metavar="DIR",
        help="offline: read the repository's own config (CODEOWNERS, .buildkite/, "
        ".github/) from this checkout, as the service reads it at the PR's base, and apply "
        "its .github/pr-digest.yml as the service applies the default branch's")
    digest.add_argument(
        "--conversation", type=Path, default=None, metavar="FILE",
        help="offline: the PR's comments, reviews, review comments and linked work as "
        'JSON in GitHub\'s REST shapes ({"issue_comments", "reviews", "review_comments", '
        '"linked"}), read as the service reads them')
    digest.add_argument(
        "--open-prs", type=Path, default=None, metavar="FILE",
        help="offline: the other open PRs, a JSON list of PR objects as GET /pulls/N "
        "returns them, each with its `files` as GET /pulls/N/files returns them: the "
        "digest names those that compete with or overlap this one")
    digest.add_argument("--post", action="store_true", help="online: write the sticky comment")
    digest.add_argument(
        "--index", type=Path, default=None,
        help="offline: a symbol index (a checkout DIR, or a DB built by `index build`)",
    )
    digest.add_argument(
        "--writer-dry-run", action="store_true",
        help="print the request the writer would send to a language model (the packet and "
        "the prompt) as JSON, without sending it")
    digest.add_argument("--writer-url", default=None, metavar="URL",
                        help="an OpenAI-compatible base URL, e.g. http://vllm:8000/v1")
    digest.add_argument("--writer-model", default=None, metavar="NAME")
    digest.add_argument("--writer-timeout", type=float, default=None, metavar="S")
    digest.add_argument("--writer-max-tokens", type=int, default=None, metavar="N")
    digest.set_defaults(run=_run_digest, quick_exit=True)

    from bot.cli.index import add_index_parser

    add_index_parser(sub, UsageError)

    check = sub.add_parser("check-rules", help="validate rule files")
    check.add_argument("dir", nargs="?", type=Path, default=None)
    check.add_argument(
        "--repo-dir", type=Path, default=None, metavar="DIR",
        help="also warn about routing pool members the checkout's CODEOWNERS does not name",
    )
    check.set_defaults(run=_run_check_rules)

    commands = sub.add_parser("commands", help="print the /digest command table (Markdown)")
    commands.add_argument("--lang", choices=LANGS, default="en")
    commands.set_defaults(run=_run_commands)

    endpoints = sub.add_parser("endpoints", help="print the HTTP endpoint table (Markdown)")
    endpoints.set_defaults(run=_run_endpoints)

    check_config = sub.add_parser(
        "check-config", help="validate a repository's .github/pr-digest.yml",
        description="Validate FILE as a repository's override (.github/pr-digest.yml) of "
        "the bundled rules, the way the service applies it. Exit 0 when valid, 1 with one "
        "line per problem, 2 when FILE cannot be read.",
    )
    check_config.add_argument("file", type=Path, metavar="FILE")
    check_config.add_argument(
        "--format", choices=("text", "github"), default="text",
        help="github: one ::error workflow command per problem (GitHub Actions annotations)",
    )
    check_config.add_argument("--rules", type=Path, default=None, help="bundled rules directory")
    check_config.set_defaults(run=_run_check_config)

    simulate = sub.add_parser(
        "simulate", help="preview what an override changes in the digests of given PRs",
        description="Digest each case (a JSON object with \"event\", a pull_request payload, "
        "and \"files\", the PR's files, as tests/fixtures/cases/real/corpus/ holds them) with "
        "the bundled rules and with FILE applied as the service applies a repository's "
        ".github/pr-digest.yml, and print, per PR, the digest lines FILE adds (+) and removes "
        "(-), then a summary line. Exit 0; 2 when FILE or a case cannot be read.",
    )
    simulate.add_argument("--override", type=Path, required=True, metavar="FILE")
    simulate.add_argument("--cases", type=Path, nargs="+", required=True, metavar="DIR|FILE",
                          help="case files, or folders of *.json case files")
    simulate.add_argument("--lang", choices=LANGS, default=None)
    simulate.add_argument("--rules", type=Path, default=None, help="bundled rules directory")
    simulate.set_defaults(run=_run_simulate)

    schema = sub.add_parser(
        "export-schema", help="write the JSON Schemas of the rule and config files",
        description="Write schema.json (area rules), override.schema.json "
        "(.github/pr-digest.yml), routing.schema.json and risks.schema.json into DIR "
        "(default: the rules directory). Given a FILE.json, write only the area schema there.",
    )
    schema.add_argument("path", nargs="?", type=Path, default=None, metavar="DIR|FILE.json")
    schema.set_defaults(run=_run_export_schema)

    add_operator_commands(sub)
    return parser




def _run_serve(args: argparse.Namespace) -> int:
    from bot.service.wiring import StartError, serve

    try:
        # Only `serve` reads `.env` from its working directory (as Probot apps do); the
        # environment wins over the file. Other commands and tests never see a stray one.
        serve(load_settings(_env_file=".env"), host=args.host, port=args.port)
    except StartError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _run_digest(args: argparse.Namespace) -> int:
    from bot.core.digest import build_digest
    from bot.core.pr_object import (
        NotAPullRequest,
        changed_files,
        facts_from_pull_request,
        pull_request_object,
    )
    from bot.core.render.comment import render_digest
    from bot.core.render.contract import digest_json

    lang, rules_dir = _digest_defaults(args)
    if args.pr:
        if args.event is not None:
            raise UsageError("give either a PR reference or --event PAYLOAD.json, not both")
        if args.conversation is not None:
            raise UsageError("--conversation is for --event (offline); online the "
                             "conversation is read from GitHub")
        if args.open_prs is not None:
            raise UsageError("--open-prs is for --event (offline)")
        ref = parse_pr_ref(args.pr)
        if ref is None:
            raise UsageError(
                f"{args.pr}: not a PR reference; use OWNER/REPO#N, OWNER/REPO/pull/N "
                "or https://github.com/OWNER/REPO/pull/N"
            )
        import asyncio

        from bot.cli.online import digest_online
        from bot.github.protocol import GitHubError

        repo, number = ref
        try:
            markdown, payload = asyncio.run(
                digest_online(
                    load_settings(), repo, number, lang=lang,
                    rules_dir=rules_dir, post=args.post, explain=args.explain,
                )
            )
        except GitHubError as exc:
            raise UsageError(f"{repo}#{number}: {exc}") from None
        _emit(args.format, markdown, payload)
        return 0
    if args.event is None:
        raise UsageError("digest needs a PR reference (OWNER/REPO#N) or --event PAYLOAD.json")
    if args.post:
        raise UsageError("--post needs a PR reference (OWNER/REPO#N)")
    try:
        event = _read_json_object(args.event)
        pr = pull_request_object(event)
        files = changed_files(_read_json_list(args.files)) if args.files else ()
    except NotAPullRequest as exc:
        raise UsageError(str(exc)) from None
    if args.files is None:
        print(
            "digest-bot: warning: no --files: the changed files are unknown, so areas come "
            "from the title, body and labels only",
            file=sys.stderr,
        )
    rules = _load_rules(rules_dir) if args.repo_dir is None else \
        _rules_at_checkout(args.repo_dir, rules_dir)
    facts = facts_from_pull_request(pr, files)
    context = None
    if args.index is not None:
        from bot.cli.index import offline_context

        context = offline_context(args.index, facts, UsageError)
    if args.own_process:
        import gc

        # What the imports, the rule set and the PR's files made lives as long as the
        # process (`run`): out of the collector's full passes, which walked it all
        # during the digest. The digest's own garbage is still collected.
        gc.freeze()
    config = _repo_config(args.repo_dir) if args.repo_dir is not None else None
    conversation = _conversation(args.conversation, facts.repo, facts.number, pr.html_url) \
        if args.conversation is not None else None
    hood = _neighbourhood(args.open_prs, event, facts.repo, conversation) \
        if args.open_prs is not None else None
    digest = build_digest(facts, rules, lang, explain=args.explain, repo_context=context,
                          repo_config=config, conversation=conversation, neighbourhood=hood)
    if args.writer_dry_run:
        from bot.cli.writer_offline import (
            DRY_RUN_MODEL,
            base_files_from_checkout,
            request_json,
            writer_request,
        )

        request = writer_request(
            digest, facts, lang, model=args.writer_model or DRY_RUN_MODEL,
            max_tokens=args.writer_max_tokens or load_settings().writer_max_tokens,
            base_files=base_files_from_checkout(args.repo_dir, facts))
        sys.stdout.write(request_json(request))
        return 0
    written = None
    if args.writer_url:
        from bot.cli.writer_offline import write_offline

        written = write_offline(digest, facts, lang, args, load_settings())
    markdown = render_digest(digest, written=written)
    _emit(args.format, markdown, digest_json(digest, markdown, written))
    return 0


def _conversation(path: Path, repo: str, number: int, html_url: str) -> Conversation:
    from bot.cli.conversation_file import BadConversation, read_conversation_file

    try:
        return read_conversation_file(_read_json(path), repo=repo, number=number,
                                      html_url=html_url)
    except BadConversation as exc:
        raise UsageError(f"{path}: {exc}") from None


def _neighbourhood(path: Path, event: dict[str, Any], repo: str,
                   conversation: Conversation | None) -> Neighbourhood:
    """The other open PRs from `--open-prs`, and the PR's own live state from its object.
    A dependency's state: the file's, else what `--conversation`'s linked work says."""
    from bot.cli.open_prs_file import BadOpenPrs, live_fields, read_open_prs
    from bot.core.neighbours.record import Neighbourhood

    data = _read_json(path)
    try:
        others, states = read_open_prs(data, repo)
        live = live_fields(event)
    except BadOpenPrs as exc:
        raise UsageError(f"{path}: {exc}") from None
    linked = {item.number: item.state for item in (conversation.linked if conversation else ())
              if not item.repo}
    return Neighbourhood(
        others=others, mergeable_state=live.mergeable_state or "",
        created_at=live.created_at, updated_at=live.updated_at,
        dependency_states={**linked, **states},
    )


def _repo_config(directory: Path) -> RepoConfig:
    """The repository's own config (CODEOWNERS, CI, ...) from a checkout or unpacked sdist."""
    import asyncio

    from bot.core.repo_config.config import read_repo_config
    from bot.handlers.repo_config import DirectorySource, read_config_files

    if not directory.is_dir():
        raise UsageError(f"--repo-dir {directory}: not a directory")
    files = asyncio.run(read_config_files(DirectorySource(directory), f"checkout {directory}"))
    return read_repo_config(files)


def _rules_at_checkout(repo_dir: Path, rules_dir: Path) -> Any:
    """The bundled rules with the checkout's override applied, as the service applies the
    default branch's; the bundled rules alone when the checkout has none."""
    from bot.cli.override_file import (
        bundled_rule_files,
        checkout_override,
        read_override_text,
        rules_with_override,
    )

    if not repo_dir.is_dir():
        raise UsageError(f"--repo-dir {repo_dir}: not a directory")
    file = checkout_override(repo_dir, _override_path())
    if file is None:
        return _load_rules(rules_dir)
    rules = rules_with_override(bundled_rule_files(rules_dir), read_override_text(file), str(file))
    print(f"digest-bot: applied the override {file}", file=sys.stderr)
    return rules


def _override_path() -> str:
    """Where a repository keeps its override: the service's setting when any DIGEST_*
    variable is set (see `_digest_defaults`), else its default."""
    from bot.core.rules.override import OVERRIDE_PATH
    from bot.settings.defaults import any_setting_in_env

    return load_settings().repo_config_path if any_setting_in_env() else OVERRIDE_PATH


def _digest_defaults(args: argparse.Namespace) -> tuple[Lang, Path]:
    """The language and rules directory: the flags, else the settings. With no DIGEST_*
    variable set, `Settings()` could only hold its defaults, so they are read from
    bot/settings/defaults.py (which the model's fields use) and pydantic-settings is
    not imported; with any set, the model validates them all, as every command does."""
    from bot.settings.defaults import DEFAULT_LANGUAGE, DEFAULT_RULES_DIR, any_setting_in_env

    if any_setting_in_env():
        settings = load_settings()
        return args.lang or settings.language, args.rules or settings.rules_dir
    return args.lang or DEFAULT_LANGUAGE, args.rules or DEFAULT_RULES_DIR


def _run_check_rules(args: argparse.Namespace) -> int:
    from bot.rulebook.files import check_rules, load_rules

    directory: Path = args.dir or load_settings().rules_dir
    problems = check_rules(directory)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {directory}", file=sys.stderr)
        return 1
    rules = load_rules(directory)
    if args.repo_dir is not None:
        for warning in _pool_warnings(rules.routing, _repo_config(args.repo_dir)):
            print(f"warning: {warning}", file=sys.stderr)
    areas = len(rules.areas)
    print(f"{directory}: rules OK ({areas} area{'' if areas == 1 else 's'} loaded)")
    return 0


def _pool_warnings(routing: RoutingConfig, config: RepoConfig) -> list[str]:
    from bot.core.repo_config.pools import pool_members_not_owners

    if config.codeowners is None:
        return [f"{config.source}: no CODEOWNERS to check the routing pools against"]
    return [
        f"routing.yaml: pool {label!r}: {user} is not named in {config.codeowners.source}"
        for label, user in pool_members_not_owners(routing, config.codeowners)
    ]


def _run_commands(args: argparse.Namespace) -> int:
    from bot.core.render.commands import render_help_table
    from bot.handlers.command import ALL_COMMANDS

    print(render_help_table(ALL_COMMANDS, args.lang))
    return 0


def _run_endpoints(args: argparse.Namespace) -> int:
    from bot.service.endpoints import render_endpoint_table

    print(render_endpoint_table())
    return 0


def _run_check_config(args: argparse.Namespace) -> int:
    from bot.cli.check_config import CannotCheck, check_config

    rules_dir: Path = args.rules or load_settings().rules_dir
    try:
        return check_config(args.file, rules_dir, args.format)
    except CannotCheck as exc:  # unreadable FILE or bundled rules: not a problem *in* FILE
        raise UsageError(str(exc)) from None


def _run_simulate(args: argparse.Namespace) -> int:
    from bot.cli.simulate import report, simulate

    lang, rules_dir = _digest_defaults(args)
    diffs = list(simulate(args.override, args.cases, rules_dir, lang))
    print(report(diffs, args.override))
    return 0


def _run_export_schema(args: argparse.Namespace) -> int:
    from bot.rulebook.files import write_schema, write_schemas

    path: Path = args.path or load_settings().rules_dir
    try:
        if path.is_dir():
            written = write_schemas(path)
        elif not path.parent.is_dir():
            raise UsageError(f"{path}: directory {path.parent} does not exist")
        else:
            write_schema(path)
            written = [path]
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror}") from None
    for target in written:
        print(f"wrote {target}")
    return 0


def _load_rules(directory: Path) -> Any:
    from bot.core.rules import RuleFileError
    from bot.rulebook.files import load_rules_cached

    try:
        return load_rules_cached(directory)
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
        raise UsageError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None


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
