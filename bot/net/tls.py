"""One TLS client context for the process.

httpx builds a fresh `ssl.SSLContext` for every client it creates, and loading the CA
bundle into it holds the GIL for ~50 ms (longer on a loaded host). Every job opens
several GitHub clients and maybe a writer client, so while a job ran the thread that
acks webhooks waited behind those loads: single acks of 300-450 ms in
tests/e2e/test_e2e_pattern_stress.py. Built once at start-up and shared, the load
happens before the service takes its first request. `SSLContext` is safe to share
across threads and event loops: each connection makes its own `SSLSocket` from it.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def client_context() -> ssl.SSLContext:
    """httpx's own default (certifi, or SSL_CERT_FILE / SSL_CERT_DIR when set), once."""
    return httpx.create_ssl_context(trust_env=True)
