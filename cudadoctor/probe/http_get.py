"""One bounded HTTP(S) GET, shared by `table update`, `table learn URL` and `fleet --kubernetes`.

Every guarantee is kept here, in one place:

- **One deadline** (a ``time.monotonic()`` instant) bounds the whole exchange: connecting, the TLS
  handshake, sending, the status line and each header (a server that trickles them a byte at a
  time cannot extend it: every receive is given only the time left), each redirect, the body and
  its decompression. Past it: a :class:`FetchError` with ``timed_out`` set.
- **Every body is capped**, after decompression too (gzip is read through a bounded inflater, so a
  gzip bomb stops at the cap), and a ``Content-Length`` over the cap is refused before reading.
- **Redirects are followed by hand** (never by a library), at most :data:`MAX_REDIRECTS`, never in
  a loop, only to ``https://`` (``http://`` only from ``http://`` under the same policy as the first
  URL: loopback, or ``--allow-http``), and only to the same host unless the caller allows the new
  one (``--allow-redirect-host``). Anything else (``ftp://``, ``file://``) is refused.
- **Credentials** in a URL (``https://user:pass@host/``) are sent as Basic auth to that host only
  and never shown: every URL in a message goes through :func:`cudadoctor.model.redact.redact_url`.
- Numbers from headers go through :mod:`cudadoctor.model.numbers`.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import io
import ipaddress
import socket
import ssl
import threading
import time
import urllib.parse
import zlib
from typing import Any, Callable, Mapping, Optional

from ..model.numbers import NumberError, parse_int
from ..model.record import record
from ..model.redact import redact_url
from ..model.text import one_line

CHUNK = 64 * 1024
MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)

Progress = Callable[[int, Optional[int]], None]  # (bytes so far, total when the server said)


class FetchError(Exception):
    """The exchange failed; the message is one line, with every URL redacted."""

    def __init__(self, message: str, *, timed_out: bool = False, unreachable: bool = False,
                 status: Optional[int] = None, reason: str = "", body: bytes = b"") -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.unreachable = unreachable
        self.status = status
        self.reason = reason
        self.body = body


@record
class Policy:
    """Which URLs may be fetched and followed."""

    allow_http: bool = False  # http:// to a host that is not loopback
    redirect_hosts: tuple[str, ...] = ()  # hosts a redirect may lead to besides the first URL's
    follow_redirects: bool = True


DEFAULT_POLICY = Policy()


@record
class Answer:
    url: str  # the final URL, redacted
    content_type: str
    sha256: str  # of the body as decoded
    size: int  # bytes of the body as decoded


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, policy: Policy, first: Optional[urllib.parse.SplitResult] = None) -> urllib.parse.SplitResult:
    """The URL split, or FetchError: https, or http to loopback or under --allow-http; for a
    redirect (``first`` given), no downgrade from https, and the same host unless allowed."""
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # a port that is not a number raises here
    except ValueError:
        raise FetchError(f"{redact_url(url)}: not a URL") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    shown = redact_url(url)
    if first is not None:
        if scheme not in ("http", "https"):
            raise FetchError(f"{redact_url(first.geturl())}: redirected to {shown}: only https:// redirects are followed")
        if scheme == "http" and first.scheme.lower() == "https":
            raise FetchError(f"{redact_url(first.geturl())}: redirected from https:// to {shown}: refused (a downgrade)")
        if host != (first.hostname or "").lower() and host not in {h.lower() for h in policy.redirect_hosts}:
            raise FetchError(f"{redact_url(first.geturl())}: redirected to another host ({one_line(host, 80)}): refused; "
                             f"--allow-redirect-host {one_line(host, 80)} allows it")
    if scheme not in ("http", "https") or not host:
        raise FetchError(f"{shown}: only https:// URLs are read")
    if scheme == "http" and not (is_loopback(host) or policy.allow_http):
        raise FetchError(f"{shown}: plain http:// is refused (anyone on the way can change the answer): use https://, "
                         "or --allow-http for a network you trust")
    return parts


def get(url: str, *, deadline: float, timeout: float, write: Callable[[bytes], object], max_bytes: int, what: str,
        accept: str = "*/*", headers: Optional[Mapping[str, str]] = None, policy: Policy = DEFAULT_POLICY,
        ssl_context: Optional[ssl.SSLContext] = None, gzip: bool = False,
        progress: Optional[Progress] = None) -> Answer:
    """GET ``url``, handing the decoded body to ``write`` as it arrives. ``what`` names the thing in
    the cap's message ("an index page"); ``timeout`` is only for messages (the deadline bounds)."""
    first = check_url(url, policy)
    parts = first
    seen = {parts.geturl()}
    for _hop in range(MAX_REDIRECTS + 1):
        response, connection = _request(parts, first, deadline, timeout, accept, headers or {}, ssl_context, gzip)
        try:
            status = response.status
            if status in REDIRECTS and policy.follow_redirects:
                location = response.getheader("Location") or ""
                if not location:
                    raise FetchError(f"{redact_url(parts.geturl())}: HTTP {status} without a Location")
                target = urllib.parse.urljoin(parts.geturl(), one_line(location, 2000).strip())
                parts = check_url(target, policy, first)
                if parts.geturl() in seen:
                    raise FetchError(f"{redact_url(first.geturl())}: redirects in a loop (back to {redact_url(target)})")
                seen.add(parts.geturl())
                continue
            if status != 200:
                body = _small_body(response, deadline)
                raise FetchError(f"{redact_url(parts.geturl())}: HTTP {status} {one_line(response.reason or '', 80)}".rstrip(),
                                 status=status, reason=response.reason or "", body=body)
            return _body(response, parts, deadline, timeout, write, max_bytes, what, progress)
        except (socket.timeout, TimeoutError):
            raise _timeout(first, timeout) from None
        except (OSError, http.client.HTTPException) as exc:
            raise FetchError(f"{redact_url(parts.geturl())}: the download failed ({_words(exc)})") from None
        finally:
            response.close()
            connection.close()
    raise FetchError(f"{redact_url(first.geturl())}: more than {MAX_REDIRECTS} redirects")


def _timeout(first: urllib.parse.SplitResult, timeout: float) -> FetchError:
    return FetchError(f"{redact_url(first.geturl())}: no complete answer within {timeout:g} s (--timeout)", timed_out=True)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("deadline")
    return left


class _DeadlineReader(io.RawIOBase):
    """The socket's receiving side: each receive waits only for what is left of the deadline."""

    def __init__(self, owner: "_DeadlineSocket") -> None:
        super().__init__()
        self._owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        sock = self._owner.sock
        sock.settimeout(_left(self._owner.deadline))
        return sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._owner.release()
        super().close()


class _DeadlineSocket:
    """What http.client needs of a socket (sendall, makefile, close), every operation under the
    deadline. As with a real socket, closing it leaves the files made from it readable: the socket
    itself closes when the last of them does (http.client closes the connection before the body
    of a ``Connection: close`` answer is read)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.deadline = deadline
        self._refs = 1

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(_left(self.deadline))
        self.sock.sendall(data)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        self._refs += 1
        return io.BufferedReader(_DeadlineReader(self))

    def settimeout(self, value: Optional[float]) -> None:  # http.client's own timeouts: the deadline rules
        pass

    def setsockopt(self, *args: Any) -> None:
        self.sock.setsockopt(*args)

    def release(self) -> None:
        self._refs -= 1
        if self._refs <= 0:
            self.sock.close()

    def close(self) -> None:
        if self._refs > 0 and not getattr(self, "_closed", False):
            self._closed = True
            self.release()


class _Connection(http.client.HTTPConnection):
    def __init__(self, parts: urllib.parse.SplitResult, deadline: float, context: Optional[ssl.SSLContext]) -> None:
        https = parts.scheme.lower() == "https"
        super().__init__(parts.hostname or "", parts.port or (443 if https else 80), timeout=max(0.001, _left(deadline)))
        self._deadline = deadline
        self._context = (context or ssl.create_default_context()) if https else None

    def connect(self) -> None:
        sock = _connect(self.host, self.port, self._deadline)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._context is not None:
                tls = self._context.wrap_socket(sock, server_hostname=self.host, do_handshake_on_connect=False)
                sock = tls
                tls.settimeout(_left(self._deadline))  # CPython bounds the whole handshake by this timeout
                tls.do_handshake()
        except BaseException:
            sock.close()
            raise
        self.sock = _DeadlineSocket(sock, self._deadline)


def _resolve(host: str, port: int, deadline: float) -> list[Any]:
    """getaddrinfo under the deadline: the resolver takes no timeout, so it runs in a daemon thread
    that is left behind (it ends on its own) when the deadline passes first."""
    found: list[Any] = []
    failed: list[BaseException] = []

    def resolve() -> None:
        try:
            found.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as exc:
            failed.append(exc)

    worker = threading.Thread(target=resolve, name="cudadoctor-resolve", daemon=True)
    worker.start()
    worker.join(_left(deadline))
    if worker.is_alive():
        raise socket.timeout("name resolution")
    if failed:
        raise failed[0]
    return found


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """A TCP connection to the first address of ``host`` that answers, every step under the deadline."""
    last: Optional[BaseException] = None
    for family, kind, proto, _, address in _resolve(host, port, deadline):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_left(deadline))
            sock.connect(address)
            return sock
        except (socket.timeout, TimeoutError):
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            last = exc
    raise last if last is not None else OSError(f"no address for {host}")


def _request(parts: urllib.parse.SplitResult, first: urllib.parse.SplitResult, deadline: float, timeout: float, accept: str,
             headers: Mapping[str, str], context: Optional[ssl.SSLContext], gzip: bool) -> tuple[http.client.HTTPResponse, _Connection]:
    try:
        connection = _Connection(parts, deadline, context)
    except (socket.timeout, TimeoutError):
        raise _timeout(first, timeout) from None
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    sent = {"Accept": accept, "User-Agent": "cudadoctor", "Accept-Encoding": "gzip" if gzip else "identity", **headers}
    if parts.username is not None and not any(k.lower() == "authorization" for k in sent) and (parts.hostname or "").lower() == (first.hostname or "").lower():
        pair = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        sent["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    try:
        connection.request("GET", path, headers=sent)
        return connection.getresponse(), connection
    except (socket.timeout, TimeoutError):
        connection.close()
        raise _timeout(first, timeout) from None
    except ssl.SSLError as exc:
        connection.close()
        raise FetchError(f"{redact_url(parts.geturl())}: TLS failed ({_words(exc)})", unreachable=True) from None
    except (ConnectionError, socket.gaierror) as exc:
        connection.close()
        if isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError)) and time.monotonic() < deadline:
            raise FetchError(f"{redact_url(parts.geturl())}: the server closed the connection without an answer") from None
        raise FetchError(f"{redact_url(parts.geturl())}: cannot connect ({_words(exc)})", unreachable=True) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        connection.close()
        raise FetchError(f"{redact_url(parts.geturl())}: cannot fetch ({_words(exc)})", unreachable=isinstance(exc, OSError)) from None


def _small_body(response: http.client.HTTPResponse, deadline: float) -> bytes:
    """Up to 64 KiB of an error answer (a Status object names what went wrong); best effort."""
    try:
        return response.read1(CHUNK) if time.monotonic() < deadline else b""
    except (OSError, http.client.HTTPException):
        return b""


class _Inflater:
    """Content-Encoding gzip (or deflate) undone a bounded piece at a time."""

    def __init__(self, encoding: str) -> None:
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)

    def feed(self, data: bytes, room: int) -> list[bytes]:
        """The decoded pieces of ``data``, at most ``room + 1`` bytes in all (one past: over the cap)."""
        out = []
        total = 0
        while data and total <= room:
            piece = self._inflate.decompress(data, room + 1 - total)
            out.append(piece)
            total += len(piece)
            data = self._inflate.unconsumed_tail
        return out


def _body(response: http.client.HTTPResponse, parts: urllib.parse.SplitResult, deadline: float, timeout: float,
          write: Callable[[bytes], object], max_bytes: int, what: str, progress: Optional[Progress]) -> Answer:
    shown = redact_url(parts.geturl())
    cap = f"{max_bytes // (1024 * 1024)} MiB" if max_bytes >= 1024 * 1024 else f"{max_bytes} bytes"
    too_large = f"{shown}: more than {cap}: not {what} (cudadoctor reads at most {cap})"
    length_text = response.getheader("Content-Length")
    total: Optional[int] = None
    if length_text is not None and "chunked" not in (response.getheader("Transfer-Encoding") or "").lower():
        try:
            total = parse_int(length_text.strip(), "Content-Length")
        except NumberError as exc:
            raise FetchError(f"{shown}: the server's {one_line(str(exc), 120)}") from None
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
        raise FetchError(f"{shown}: the server sent Content-Encoding {one_line(encoding, 40)}, which cudadoctor does not read")
    inflater = _Inflater("gzip" if encoding in ("gzip", "x-gzip") else "deflate") if encoding != "identity" else None
    if total is not None and total > max_bytes:
        raise FetchError(too_large)
    size = 0
    raw = 0
    digest = hashlib.sha256()
    while True:
        _left(deadline)
        try:
            chunk = response.read1(CHUNK)  # one receive at a time: a trickle cannot outlast the deadline
        except http.client.IncompleteRead as exc:
            raise FetchError(f"{shown}: the download was cut short after {raw + len(exc.partial)} bytes") from None
        if not chunk:
            break
        raw += len(chunk)
        try:
            pieces = inflater.feed(chunk, max_bytes - size) if inflater is not None else [chunk]
        except zlib.error:
            raise FetchError(f"{shown}: the {encoding} body is corrupt") from None
        for piece in pieces:
            size += len(piece)
            if size > max_bytes:
                raise FetchError(too_large)
            write(piece)
            digest.update(piece)
        if raw > max_bytes:
            raise FetchError(too_large)
        if progress is not None:
            progress(raw, total)
    if total is not None and raw < total:
        raise FetchError(f"{shown}: the download was cut short ({raw} of {total} bytes)")
    return Answer(url=shown, content_type=response.getheader("Content-Type") or "", sha256=digest.hexdigest(), size=size)


def _words(exc: object) -> str:
    text = str(getattr(exc, "strerror", None) or exc) or type(exc).__name__
    return redact_url(one_line(" ".join(text.split()), 200))
