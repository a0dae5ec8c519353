"""Every reviewer pool in rules/routing.yaml is keyed by a label a PR can carry: one the
base's Mergify adds (in any release the corpus reads) or one an area rule itself adds. A
pool under a label nobody adds never routes anyone: `xpu` waited for a label vLLM calls
`intel-gpu`."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests/fixtures/vllm_config"


def _mergify_labels() -> set[str]:
    labels: set[str] = set()
    for path in CONFIGS.glob("*/.github/mergify.yml"):
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        for rule in config.get("pull_request_rules") or []:
            added = (rule.get("actions") or {}).get("label", {}) or {}
            labels.update(added.get("add") or [])
    return labels


def test_every_pool_is_keyed_by_a_label_mergify_or_an_area_adds() -> None:
    rules = load_rules(ROOT / "rules")
    mergify = _mergify_labels()
    assert "intel-gpu" in mergify, "the fixtures hold vLLM's Mergify config"
    by_areas = {label for area in rules.areas for label in area.labels}
    unkeyed = sorted(set(rules.routing.pools) - mergify - by_areas)
    assert unkeyed == []
