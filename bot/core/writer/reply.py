"""The reply a writer model must give: its JSON schema (sent as `response_format`) and its
pydantic model (what the verifier validates it against)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_ITEMS = 8
MAX_TEXT = 600


class Item(BaseModel):
    """One sentence the digest may show, and the facts or changed paths it rests on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(max_length=MAX_TEXT)
    cites: list[str] = Field(max_length=12)


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(max_length=200)
    summary: str = Field(max_length=MAX_TEXT)
    points: list[Item] = Field(max_length=MAX_ITEMS)
    not_needed: list[Item] = Field(max_length=MAX_ITEMS)
    gaps: list[Item] = Field(max_length=MAX_ITEMS)
    lesson: Item | None = None


def reply_schema() -> dict[str, Any]:
    """The JSON schema as vLLM's structured outputs take it: every key required (a
    strict schema), nullable `lesson` spelled as anyOf."""
    item = {
        "type": "object",
        "additionalProperties": False,
        "required": ["text", "cites"],
        "properties": {
            "text": {"type": "string", "maxLength": MAX_TEXT},
            "cites": {"type": "array", "items": {"type": "string"}, "maxItems": 12},
        },
    }
    items = {"type": "array", "items": item, "maxItems": MAX_ITEMS}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["title", "summary", "points", "not_needed", "gaps", "lesson"],
        "properties": {
            "title": {"type": "string", "maxLength": 200},
            "summary": {"type": "string", "maxLength": MAX_TEXT},
            "points": items,
            "not_needed": items,
            "gaps": items,
            "lesson": {"anyOf": [item, {"type": "null"}]},
        },
    }
