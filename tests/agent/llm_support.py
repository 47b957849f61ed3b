"""A local OpenAI-compatible chat endpoint for tests: scripted answers, recorded requests."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLlm:
    """Answers each POST with the next of `answers` (the last one again when they run out)
    and records every request as {"path", "auth", "body"} in `seen`."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.seen: list[dict[str, Any]] = []
        self.url = ""

    @contextlib.contextmanager
    def serving(self) -> Iterator[FakeLlm]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                auth = self.headers.get("Authorization")
                llm.seen.append({"path": self.path, "auth": auth, "body": body})
                text = llm.answers.pop(0) if len(llm.answers) > 1 else llm.answers[0]
                answer = {"choices": [{"message": {"role": "assistant", "content": text}}]}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        try:
            yield self
        finally:
            httpd.shutdown()
            httpd.server_close()
