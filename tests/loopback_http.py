"""A loopback HTTP server whose answers a test writes byte by byte: it can trickle the status line or
the headers, redirect anywhere, lie in Content-Length, send a gzip bomb or an endless body. Each
route is a function (request, socket file) -> None; the server runs in daemon threads."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
import zlib
from typing import Callable, Iterator, Optional

Route = Callable[["Request", "socket.SocketIO"], None]


class Request:
    def __init__(self, line: str, headers: dict[str, str]) -> None:
        self.method, self.path = (line.split(" ") + ["", ""])[:2]
        self.headers = headers


class LoopbackServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.seen: list[Request] = []
        super().__init__(("127.0.0.1", 0), _Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up mid-answer is what these tests make happen

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(socketserver.StreamRequestHandler):
    server: LoopbackServer

    def handle(self) -> None:
        line = self.rfile.readline(65537).decode("latin-1").strip()
        headers: dict[str, str] = {}
        while True:
            raw = self.rfile.readline(65537)
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        request = Request(line, headers)
        self.server.seen.append(request)
        route = next((r for prefix, r in sorted(self.server.routes.items(), key=lambda kv: -len(kv[0]))
                      if request.path.startswith(prefix)), None)
        try:
            if route is None:
                answer(self.wfile, 404, b"not found", "text/plain")
            else:
                route(request, self.wfile)
            self.wfile.flush()
        except OSError:
            pass


def answer(out: "socket.SocketIO", status: int, body: bytes, content_type: str, *,
           headers: Optional[dict[str, str]] = None, length: Optional[str] = None) -> None:
    head = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}", f"Content-Length: {len(body) if length is None else length}",
            "Connection: close"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    out.write(("\r\n".join(head) + "\r\n\r\n").encode("utf-8") + body)


def redirect(location: str, status: int = 302) -> Route:
    def route(request: Request, out: "socket.SocketIO") -> None:
        answer(out, status, b"", "text/plain", headers={"Location": location})
    return route


def trickle(data: Callable[[], Iterator[bytes]], every: float) -> Route:
    """Send the pieces one at a time, ``every`` seconds apart (for ever, if the iterator is endless)."""
    def route(request: Request, out: "socket.SocketIO") -> None:
        for piece in data():
            out.write(piece)
            out.flush()
            time.sleep(every)
    return route


def endless(piece: bytes) -> Iterator[bytes]:
    while True:
        yield piece


def gzip_bomb(decoded_bytes: int) -> bytes:
    """A gzip stream of ``decoded_bytes`` zeros (about a thousandth of that on the wire)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1 << 20)
    parts = [packer.compress(block) for _ in range(decoded_bytes >> 20)]
    return b"".join(parts) + packer.flush()
