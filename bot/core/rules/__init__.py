"""The rules engine: area rule files as data, validated strictly, compiled once, matched fast.

Pure: callers pass file texts in (`parse_rules`) and get a RuleSet back; reading the
rules directory lives in bot/rulebook/files.py.
"""

from bot.core.reading.template import strip_html_comments
from bot.core.rules.compiled import CompiledArea, CompiledCondition, RuleSet
from bot.core.rules.match import AreaMatchResult, match_areas, match_condition
from bot.core.rules.parse import is_rule_file, parse_rules
from bot.core.rules.problems import RuleFileError, RuleProblem
from bot.core.rules.schema import AreaRule, Condition, LocalizedText, rules_json_schema

__all__ = [
    "AreaMatchResult",
    "AreaRule",
    "CompiledArea",
    "CompiledCondition",
    "Condition",
    "LocalizedText",
    "RuleFileError",
    "RuleProblem",
    "RuleSet",
    "is_rule_file",
    "match_areas",
    "match_condition",
    "parse_rules",
    "rules_json_schema",
    "strip_html_comments",
]
