"""Issue 38, item 9: a DIGEST_* name that is no setting but is closest to one that holds
writes back is an error for `serve` (bot/service/wiring.py stops on it); any other
unknown name stays a warning. The process-level test is in
tests/service/test_fail_fast_start.py."""

from __future__ import annotations

from bot.settings.errors import misspelt_safety_lines, unknown_setting_lines
from bot.settings.model import WRITE_SAFETY_SETTINGS, Settings


def test_every_safety_setting_is_a_setting() -> None:
    assert set(WRITE_SAFETY_SETTINGS) <= set(Settings.model_fields)


def test_a_name_closest_to_a_safety_setting_is_an_error_not_a_warning() -> None:
    environ = {"DIGEST_DRYRUN": "1", "Digest_Reconcile_On_Start": "false",
               "DIGEST_WORKER": "2", "DIGEST_ZZZ": "1", "DIGEST_DRY_RUN": "0", "PATH": "/bin"}
    assert misspelt_safety_lines(environ) == [
        "DIGEST_DRYRUN: not a setting; did you mean DIGEST_DRY_RUN? It holds writes back, "
        "so `serve` does not start while it may be misspelt",
        "Digest_Reconcile_On_Start: not a setting; did you mean DIGEST_RECONCILE_ON_STARTUP? "
        "It holds writes back, so `serve` does not start while it may be misspelt",
    ]
    assert unknown_setting_lines(environ) == [
        "DIGEST_WORKER: not a setting, ignored; did you mean DIGEST_WORKERS?",
        "DIGEST_ZZZ: not a setting, ignored; `digest-bot settings-table` lists them",
    ]


def test_the_right_names_in_any_case_are_no_error() -> None:
    environ = {"digest_dry_run": "1", "DIGEST_RECONCILE_ON_STARTUP": "0",
               "DIGEST_WRITE_INTERVAL_SECONDS": "2"}
    assert misspelt_safety_lines(environ) == []
    assert unknown_setting_lines(environ) == []
