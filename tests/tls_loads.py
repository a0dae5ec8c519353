"""Counting CA-bundle loads: the process should load it once, at start-up (bot/net/tls.py)."""

from __future__ import annotations

import ssl
from typing import Any

import pytest


def count_ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """From now on, one entry per `SSLContext.load_verify_locations` call (what httpx
    does for every client it builds without a context of ours)."""
    loads: list[object] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args or kwargs)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    return loads
