"""Checks the App's credentials at start, so a broken live deployment says so.

A wrong `DIGEST_PRIVATE_KEY_PATH` used to start "(live)", answer `/readyz` 200 and
only log a periodic task's traceback. The check reads the key, mints a JWT with it and
calls `GET /app` once with a short timeout; `/readyz` reports not-ready with the
reason until it passes. A GitHub that cannot be reached is retried in the background;
a key or App id GitHub rejects is not (settings are read once: fix and restart).
"""

from __future__ import annotations

import asyncio
import logging
import time

import jwt

from bot.github.protocol import BadCredentials, GitHubError
from bot.github.session import GitHubSessionFactory
from bot.settings.model import Settings

log = logging.getLogger(__name__)

CHECK_TIMEOUT_SECONDS = 5.0
RETRY_SECONDS = 30.0


class CredentialCheck:
    """`reason` is None once the credentials work; otherwise why the service is not ready."""

    def __init__(
        self,
        settings: Settings,
        factory: GitHubSessionFactory,
        *,
        timeout: float = CHECK_TIMEOUT_SECONDS,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        self._settings = settings
        self._factory = factory
        self._timeout = timeout
        self._retry_seconds = retry_seconds
        self.reason: str | None = "checking the GitHub App credentials"
        self.bot_login: str | None = None

    async def run(self) -> None:
        """Check until the credentials work or fail for good; transient failures retry."""
        while True:
            permanent = await self.check_once()
            if self.reason is None:
                log.info("GitHub App credentials OK (%s)", self.bot_login)
                return
            if permanent:
                log.error("GitHub App credentials do not work: %s; /readyz reports "
                          "not ready until they are fixed and the service restarted",
                          self.reason)
                return
            log.warning("cannot check the GitHub App credentials yet: %s; retrying in %.0fs",
                        self.reason, self._retry_seconds)
            await asyncio.sleep(self._retry_seconds)

    async def check_once(self) -> bool:
        """Sets `reason`; returns True when the failure is permanent."""
        settings = self._settings
        try:
            key = settings.private_key_text()
        except (OSError, UnicodeDecodeError) as exc:
            detail = getattr(exc, "strerror", None) or type(exc).__name__
            self.reason = f"DIGEST_PRIVATE_KEY_PATH={settings.private_key_path}: cannot read " \
                          f"the private key ({detail})"
            return True
        if settings.app_id is None or key is None:
            self.reason = "no App credentials (DIGEST_APP_ID and a private key)"
            return True
        problem = _jwt_problem(settings.app_id, key)
        if problem is not None:
            self.reason = problem
            return True
        try:
            self.bot_login = await asyncio.wait_for(self._factory.bot_login(), self._timeout)
        except BadCredentials as exc:
            self.reason = f"GitHub rejected the App credentials (DIGEST_APP_ID, key): {exc}"
            return True
        except GitHubError as exc:
            self.reason = str(exc)
            # 5xx and transport failures may pass; any other 4xx will not.
            return 400 <= exc.status < 500
        except TimeoutError:
            self.reason = f"GET /app: no answer within {self._timeout:.0f}s"
            return False
        self.reason = None
        return False


def _jwt_problem(app_id: int, key: str) -> str | None:
    """Why no JWT can be minted with this key (never quoting the key), or None."""
    now = int(time.time())
    try:
        jwt.encode({"iat": now - 60, "exp": now + 540, "iss": str(app_id)}, key,
                   algorithm="RS256")
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        return f"the App private key is not a usable RSA PEM key ({type(exc).__name__})"
    return None
