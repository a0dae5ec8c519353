"""The README and its docs/ pages: generated tables stay current, the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

from bot.core.render.commands import render_help_table
from bot.handlers.command import ALL_COMMANDS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
COMMANDS_PAGE = ROOT / "docs" / "commands.md"
ENDPOINTS_PAGE = ROOT / "docs" / "deploy" / "README.md"
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
DIGEST_PAGE = ROOT / "docs" / "digest.md"


def test_the_command_table_is_the_generated_one() -> None:
    text = COMMANDS_PAGE.read_text(encoding="utf-8")
    start = text.index("<!-- commands:start")
    start = text.index("\n", start) + 1
    end = text.index("<!-- commands:end -->")
    assert text[start:end].strip() == render_help_table(ALL_COMMANDS, "en").strip(), (
        "docs/commands.md's command table is stale: paste the output of `digest-bot commands`"
    )


def test_every_declared_command_is_parsed_and_documented() -> None:
    from bot.core.commands.parse import DEFAULT_COMMAND_NAMES

    assert {spec.name for spec in ALL_COMMANDS} == set(DEFAULT_COMMAND_NAMES)


def test_the_endpoint_table_is_the_generated_one() -> None:
    from bot.service.endpoints import render_endpoint_table

    text = ENDPOINTS_PAGE.read_text(encoding="utf-8")
    start = text.index("<!-- endpoints:start")
    start = text.index("\n", start) + 1
    end = text.index("<!-- endpoints:end -->")
    assert text[start:end].strip() == render_endpoint_table().strip(), (
        "docs/deploy/README.md's endpoint table is stale: "
        "paste the output of `digest-bot endpoints`"
    )


def test_every_served_route_is_in_the_endpoint_table(tmp_path: Path) -> None:
    from starlette.routing import Route

    from bot.service.endpoints import ENDPOINTS
    from bot.service.wiring import build_service
    from bot.settings.model import Settings

    service = build_service(Settings(db_path=tmp_path / "routes.db"))
    try:
        served = {
            (method, route.path)
            for route in service.app.routes if isinstance(route, Route)
            for method in (route.methods or ()) if method != "HEAD"
        }
    finally:
        service.close()
    assert served == {(e.method, e.path) for e in ENDPOINTS}


def test_the_settings_table_is_the_generated_one() -> None:
    from bot.settings.table import render_settings_table

    text = SETTINGS_PAGE.read_text(encoding="utf-8")
    start = text.index("<!-- settings:start")
    start = text.index("\n", start) + 1
    end = text.index("<!-- settings:end -->")
    assert text[start:end].strip() == render_settings_table().strip(), (
        "docs/settings.md is stale: run `.venv/bin/digest-bot settings-table` and paste "
        "its output between the settings:start and settings:end markers in docs/settings.md"
    )


def test_every_setting_has_a_description() -> None:
    from bot.settings.model import Settings

    missing = [name for name, field in Settings.model_fields.items() if not field.description]
    assert missing == [], f"give these settings a Field(description=...): {missing}"


def test_env_example_names_only_real_settings() -> None:
    from bot.settings.errors import env_name
    from bot.settings.model import Settings

    known = {env_name(name) for name in Settings.model_fields}
    example = README.parent / ".env.example"
    names = [line.split("=", 1)[0] for line in example.read_text(encoding="utf-8").splitlines()
             if line and not line.startswith("#")]
    assert names
    assert [name for name in names if name not in known] == []


def test_the_sample_digest_is_the_current_golden() -> None:
    # docs/digest.md shows what the bot posts; a wording or order change must show there too.
    text = DIGEST_PAGE.read_text(encoding="utf-8")
    start = text.index("````markdown\n") + len("````markdown\n")
    sample = text[start:text.index("\n````", start)]
    golden = ROOT / "tests" / "golden" / "pr_56904.en.md"
    assert sample == golden.read_text(encoding="utf-8").rstrip("\n"), (
        "copy tests/golden/pr_56904.en.md into the sample digest of docs/digest.md"
    )


def test_the_readme_fits_on_a_screen_and_names_the_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, "README.md is past 200 lines: move detail into docs/"
    for command in ("make serve", "make test ", "make test-fast"):
        assert command in text, f"the README's quick start lost `{command.strip()}`"


def test_the_readme_main_settings_are_real_settings() -> None:
    from bot.settings.errors import env_name
    from bot.settings.model import Settings

    text = README.read_text(encoding="utf-8")
    table = text[text.index("## The main settings"):text.index("## Documentation")]
    named = set(re.findall(r"`(DIGEST_[A-Z_]+)`", table))
    assert len(named) >= 8
    known = {env_name(name) for name in Settings.model_fields}
    assert named - known == set()


def test_every_local_link_of_the_readme_and_docs_resolves() -> None:
    pages = [README, *sorted((ROOT / "docs").rglob("*.md")), ROOT / "bench" / "README.md"]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []
