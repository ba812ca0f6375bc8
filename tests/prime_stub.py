"""A loopback HTTP server that stands in for the Prime Intellect API in tests.

Point the real `prime` CLI at it with PRIME_API_BASE_URL=http://127.0.0.1:PORT.
Routes answer from ``responses`` (path prefix -> (status, body)); every request
is recorded in ``requests`` for assertions.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class PrimeStub:
    def __init__(self) -> None:
        self.responses: dict[str, tuple[int, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                stub.requests.append({"method": method, "path": self.path, "body": body,
                                      "authorization": self.headers.get("Authorization")})
                status, payload = stub.match(method, self.path)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._answer("GET")

            def do_POST(self):
                self._answer("POST")

            def do_PUT(self):
                self._answer("PUT")

            def do_PATCH(self):
                self._answer("PATCH")

            def do_DELETE(self):
                self._answer("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def match(self, method: str, path: str) -> tuple[int, Any]:
        best = None
        for key, answer in self.responses.items():
            m, _, prefix = key.partition(" ") if " " in key else ("", "", key)
            if m and m != method:
                continue
            if path.split("?")[0].startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, answer)
        return best[1] if best else (404, {"detail": f"no stub for {method} {path}"})

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "PrimeStub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


WHOAMI_OK = {"data": {"id": "user_123", "email": "dev@example.com", "name": "Dev", "slug": "dev", "scope": {}}}


def prime_env(tmp_home, base_url: str, api_key: str | None = "pit_test_key_abcdefghijklmnop") -> dict[str, str]:
    """Environment for running the real prime CLI against a stub, isolated from the user's config."""
    env = {
        "HOME": str(tmp_home),
        "PRIME_API_BASE_URL": base_url,
        "PRIME_BASE_URL": base_url,
        "PRIME_DISABLE_VERSION_CHECK": "1",
        "PRIME_API_KEY": api_key or "",
    }
    return env
