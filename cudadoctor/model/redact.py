"""Secrets kept out of everything cudadoctor prints or records: the credentials of a URL
(``https://user:pass@host/`` becomes ``https://***@host/``) and named secret values (a
kubeconfig's token) wherever they occur in a message. Pure: text in, text out.
"""

from __future__ import annotations

import re
from typing import Iterable

# scheme://userinfo@ -- userinfo is everything up to the last "@" before the host's end.
# The user information runs to the last @ before the path: a password typed with a raw ? or #
# (which RFC 3986 wants percent-encoded, and users type anyway) is masked whole too. Where that
# reads a query's @ as one (a URL with no path), more is masked, never less.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s]*@)+")
MASK = "***"


def redact_url(text: str) -> str:
    """``text`` (a URL, or a message holding URLs) with every URL's user and password replaced by ***."""
    if not isinstance(text, str):
        return text
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with URL credentials and each of ``secrets`` (4 characters or longer) replaced by ***."""
    text = redact_url(text)
    for secret in sorted({s for s in secrets if isinstance(s, str) and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
