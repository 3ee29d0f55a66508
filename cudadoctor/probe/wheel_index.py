"""Fetch one page of a package index, or one wheel, over HTTPS (probe/http_get.py; no new dependency).

The whole call has one deadline: connecting, the status line and headers, each redirect, the body
and its decompression share it (the caller passes the instant, so parsing the page can share it
too). A download shorter than its Content-Length is an error, never a partial page; a page or a
wheel over its cap is refused in one line naming the cap. Every failure is an IndexFetchError with
a one-line message; parsing the page is compat/wheel_index.py's job.
"""

from __future__ import annotations

import time
from typing import Optional

from ..model.record import record
from ..model.text import shown_path
from .http_get import DEFAULT_POLICY, FetchError, Policy, Progress, get

__all__ = ["IndexFetchError", "FetchedPage", "Policy", "Progress", "fetch_page", "download", "MAX_BYTES", "MAX_WHEEL_BYTES"]

# A project page is megabytes (PyTorch's torch/ page is a few); the cap keeps parsing within a
# deadline too (the HTML reader takes about a second per MiB on a slow machine).
MAX_BYTES = 32 * 1024 * 1024
MAX_WHEEL_BYTES = 8 * 1024 * 1024 * 1024  # the largest CUDA torch wheels are a few GiB

IndexFetchError = FetchError


@record
class FetchedPage:
    url: str  # after redirects, credentials redacted
    body: bytes
    content_type: str
    sha256: str


def fetch_page(url: str, accept: str, timeout: float, progress: Optional[Progress] = None, *,
               deadline: Optional[float] = None, policy: Policy = DEFAULT_POLICY) -> FetchedPage:
    """GET ``url`` with an Accept header; the body, or IndexFetchError."""
    chunks: list[bytes] = []
    answer = get(url, deadline=time.monotonic() + timeout if deadline is None else deadline, timeout=timeout,
                 write=chunks.append, max_bytes=MAX_BYTES, what="an index page", accept=accept, policy=policy,
                 gzip=True, progress=progress)
    return FetchedPage(url=answer.url, body=b"".join(chunks), content_type=answer.content_type, sha256=answer.sha256)


def download(url: str, path: str, timeout: float, progress: Optional[Progress] = None, *,
             policy: Policy = DEFAULT_POLICY) -> tuple[str, int]:
    """GET ``url`` into the file ``path`` (a wheel: streamed to disk, never held in memory);
    (its sha256, its size), or IndexFetchError."""
    try:
        with open(path, "wb") as handle:
            answer = get(url, deadline=time.monotonic() + timeout, timeout=timeout, write=handle.write,
                         max_bytes=MAX_WHEEL_BYTES, what="a wheel", policy=policy, progress=progress)
    except OSError as exc:
        raise IndexFetchError(f"{shown_path(path)}: cannot write the download ({exc.strerror or exc})") from None
    return answer.sha256, answer.size
