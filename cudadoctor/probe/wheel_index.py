"""Fetch one page of a package index over HTTP(S) (urllib; no new dependency).

The whole call has one deadline: connecting, each read and the redirects share ``timeout`` seconds.
A download shorter than its Content-Length is an error, never a partial page. Every failure is an
IndexFetchError with a one-line message; parsing the page is compat/wheel_index.py's job.
"""

from __future__ import annotations

import hashlib
import http.client
import socket
import time
import urllib.error
import urllib.request
from typing import Callable, Optional

from ..model.record import record

CHUNK = 64 * 1024
MAX_BYTES = 256 * 1024 * 1024  # a project page is megabytes; anything far larger is not one


class IndexFetchError(Exception):
    """The page could not be fetched; the message is one line."""


@record
class FetchedPage:
    url: str  # after redirects
    body: bytes
    content_type: str
    sha256: str


Progress = Callable[[int, Optional[int]], None]  # (bytes so far, total when the server said)


def fetch_page(url: str, accept: str, timeout: float, progress: Optional[Progress] = None) -> FetchedPage:
    """GET ``url`` with an Accept header; the body, or IndexFetchError."""
    chunks: list[bytes] = []
    final, content_type, sha256, _ = _get(url, accept, timeout, progress, chunks.append, MAX_BYTES, "not an index page")
    return FetchedPage(url=final, body=b"".join(chunks), content_type=content_type, sha256=sha256)


MAX_WHEEL_BYTES = 8 * 1024 * 1024 * 1024  # the largest CUDA torch wheels are a few GiB


def download(url: str, path: str, timeout: float, progress: Optional[Progress] = None) -> tuple[str, int]:
    """GET ``url`` into the file ``path`` (a wheel: streamed to disk, never held in memory);
    (its sha256, its size), or IndexFetchError."""
    try:
        with open(path, "wb") as handle:
            _, _, sha256, size = _get(url, "*/*", timeout, progress, handle.write, MAX_WHEEL_BYTES, "not a wheel")
    except OSError as exc:
        raise IndexFetchError(f"{path}: cannot write the download ({_words(exc)})") from None
    return sha256, size


def _get(url: str, accept: str, timeout: float, progress: Optional[Progress], write: Callable[[bytes], object],
         max_bytes: int, too_large: str) -> tuple[str, str, str, int]:
    """GET ``url``, handing the body to ``write`` as it arrives: (final URL, content type, sha256, size)."""
    if not url.startswith(("http://", "https://")):
        raise IndexFetchError(f"{url}: only http:// and https:// index URLs are supported")
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "cudadoctor"})
    try:
        response = urllib.request.urlopen(request, timeout=_left(deadline, url, timeout))
    except urllib.error.HTTPError as exc:
        raise IndexFetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise IndexFetchError(f"{url}: no answer within {timeout:g} s (--timeout)") from None
        raise IndexFetchError(f"{url}: cannot connect ({_words(reason)})") from None
    except (socket.timeout, TimeoutError):
        raise IndexFetchError(f"{url}: no answer within {timeout:g} s (--timeout)") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise IndexFetchError(f"{url}: cannot fetch ({_words(exc)})") from None
    with response:
        length_text = response.headers.get("Content-Length")
        total = int(length_text) if length_text and length_text.isdigit() else None
        content_type = response.headers.get("Content-Type", "")
        size = 0
        digest = hashlib.sha256()
        while True:
            _shrink_socket_timeout(response, _left(deadline, url, timeout))
            try:
                # read1: one receive at a time, so a server that trickles bytes cannot outlast the deadline
                chunk = response.read1(CHUNK)
            except http.client.IncompleteRead as exc:
                raise IndexFetchError(f"{url}: the download was cut short after {size + len(exc.partial)} bytes") from None
            except (socket.timeout, TimeoutError):
                raise IndexFetchError(f"{url}: no answer within {timeout:g} s (--timeout)") from None
            except (OSError, http.client.HTTPException) as exc:
                raise IndexFetchError(f"{url}: the download failed ({_words(exc)})") from None
            if not chunk:
                break
            write(chunk)
            digest.update(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise IndexFetchError(f"{url}: more than {max_bytes // (1024 * 1024)} MiB: {too_large}")
            if progress is not None:
                progress(size, total)
        if total is not None and size < total:
            raise IndexFetchError(f"{url}: the download was cut short ({size} of {total} bytes)")
        return response.geturl(), content_type, digest.hexdigest(), size


def _shrink_socket_timeout(response: http.client.HTTPResponse, left: float) -> None:
    """Each receive may wait only for what is left of the deadline. urllib keeps the socket behind the
    response's reader and offers no public handle on it; without one, the connect timeout stands."""
    sock = getattr(getattr(response.fp, "raw", None), "_sock", None)
    if isinstance(sock, socket.socket):
        sock.settimeout(left)


def _left(deadline: float, url: str, timeout: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise IndexFetchError(f"{url}: no complete answer within {timeout:g} s (--timeout)")
    return left


def _words(exc: object) -> str:
    text = str(getattr(exc, "strerror", None) or exc) or type(exc).__name__
    return " ".join(text.split())[:200]
