# pr-digest webhook service. Config comes from DIGEST_* environment variables;
# the bundled rules are in the installed package (rules/ ships as bot/bundled_rules).
#
# Port 8000. On SIGTERM the service stops taking deliveries and lets running jobs
# finish for DIGEST_DRAIN_SECONDS (20) plus 5 s for open connections: give it longer
# than Docker's default 10 s, e.g. `docker run --stop-timeout 35` or compose
# `stop_grace_period: 35s`, or jobs are cut off (they rerun after restart).
FROM python:3.11-slim AS build
WORKDIR /src
# Exact dependency versions (make constraints), so every build installs the same image.
COPY constraints.txt pyproject.toml README.md ./
COPY bot ./bot
COPY rules ./rules
RUN pip install --no-cache-dir --prefix=/install --constraint constraints.txt .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home /app digest \
    && mkdir -p /data && chown digest /data
COPY --from=build /install /usr/local
WORKDIR /app
ENV DIGEST_DB_PATH=/data/pr-digest.db \
    PYTHONUNBUFFERED=1
USER digest
VOLUME ["/data"]
EXPOSE 8000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"]
CMD ["digest-bot", "serve", "--host", "0.0.0.0", "--port", "8000"]
