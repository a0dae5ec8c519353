"""A fake OpenAI-compatible server (vLLM's `/v1/chat/completions`) on loopback.

Each request takes the next scripted `Reply` (the last one repeats): a message content
answered in the real response shape, a delay, an HTTP error, or a refusal of
`json_schema` (a 400 naming `response_format`, as servers without structured outputs
answer). Every request body is recorded.

    with FakeOpenAIServer([Reply(content=...)]) as url:   # url ends in /v1
        ...
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    content: str = ""
    delay: float = 0.0
    status: int = 200
    reject_json_schema: bool = False  # 400 to a json_schema request, answer JSON mode


@dataclass
class FakeOpenAIServer:
    replies: list[Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorization: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                fake.requests.append(body)
                fake.authorization.append(self.headers.get("Authorization", ""))
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                reply = fake.replies[min(len(fake.requests) - 1, len(fake.replies) - 1)]
                if reply.delay:
                    time.sleep(reply.delay)
                kind = body.get("response_format", {}).get("type")
                if reply.reject_json_schema and kind == "json_schema":
                    self._send(400, {"object": "error", "type": "BadRequestError", "code": 400,
                                     "message": "response_format type json_schema is not "
                                     "supported by this server"})
                    return
                if reply.status != 200:
                    self._send(reply.status, {"object": "error", "message": "server error",
                                              "type": "InternalServerError",
                                              "code": reply.status})
                    return
                self._send(200, _completion(body.get("model", ""), reply.content))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> str:
        self._thread.start()
        return self.url

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()


def _completion(model: str, content: str) -> dict[str, Any]:
    """vLLM's chat-completion object (fields as `vllm serve` returns them)."""
    return {
        "id": "chatcmpl-fake0001",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "tool_calls": [],
                        "reasoning_content": None},
            "logprobs": None,
            "finish_reason": "stop",
            "stop_reason": None,
        }],
        "usage": {"prompt_tokens": 1234, "total_tokens": 1334, "completion_tokens": 100,
                  "prompt_tokens_details": None},
        "prompt_logprobs": None,
    }
