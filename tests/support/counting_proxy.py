"""An HTTP proxy on loopback that forwards every request to a server (the moto S3 server) and
records what was asked: method, path, ``Range`` header and the bytes of each answer.

Lets a test see what a client in another process (a Spark task) fetched from S3: point the
client's endpoint at ``proxy.endpoint_url`` instead of the server's::

    with CountingProxy(s3_server.endpoint_url) as proxy:
        ... storage_options={"client_kwargs": {"endpoint_url": proxy.endpoint_url}, ...}
        gets = proxy.requests("GET", "/bucket/key.arrow")
"""
from __future__ import annotations

import http.client
import threading
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Optional

#: Headers not forwarded as they are (hop-by-hop, or set again for the upstream connection).
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"}


@dataclass
class Request:
    """One request the proxy forwarded, and the size of the answer's body."""
    method: str
    path: str
    range: Optional[str]
    status: int
    body_bytes: int


class CountingProxy:
    """Forwards to ``upstream`` (``http://host:port``) from a free port of 127.0.0.1, recording
    each request; a context manager that stops the server on exit."""

    def __init__(self, upstream: str):
        parsed = urllib.parse.urlsplit(upstream)
        self._upstream = (parsed.hostname, parsed.port)
        self.log: List[Request] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # (quiet)
                pass

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn = http.client.HTTPConnection(*proxy._upstream, timeout=60)
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    answer = conn.getresponse()
                    data = answer.read()
                    self.send_response(answer.status, answer.reason)
                    for k, v in answer.getheaders():
                        if k.lower() not in _HOP and (k.lower() != "content-length"
                                                      or self.command == "HEAD"):
                            self.send_header(k, v)
                    if self.command != "HEAD":
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                finally:
                    conn.close()
                with proxy._lock:
                    proxy.log.append(Request(self.command, urllib.parse.urlsplit(self.path).path,
                                             self.headers.get("Range"), answer.status,
                                             0 if self.command == "HEAD" else len(data)))

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.endpoint_url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "CountingProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(30)

    def requests(self, method: Optional[str] = None, path: Optional[str] = None) -> List[Request]:
        """The requests recorded so far, of ``method`` and to ``path`` when given."""
        with self._lock:
            return [r for r in self.log if (method is None or r.method == method)
                    and (path is None or r.path == path)]
