"""Docker image references, validated against Docker's reference grammar before any call.

The grammar (distribution/reference): ``[domain[:port]/]path[:tag][@digest]`` where path
components are lowercase alphanumerics joined by ``.``, ``_``, ``__`` or runs of ``-``; a tag is
``[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}``; a digest is ``algorithm:hex`` (at least 32 hex digits);
the name is at most 255 characters. Anything else (shell metacharacters, spaces, uppercase
paths, absurd lengths) is refused here, so it never reaches the Docker API, let alone a shell.
"""

from __future__ import annotations

import re
from typing import Optional

from .record import record

MAX_NAME_LENGTH = 255
MAX_REFERENCE_LENGTH = 1024  # name + tag + a sha512 digest fit well within this

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|-+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN = rf"(?:{_DOMAIN_NAME}|{_IPV6})(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"

_PATH_RE = re.compile(rf"^{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*$", re.ASCII)
_DOMAIN_RE = re.compile(rf"^{_DOMAIN}$", re.ASCII)
_TAG_RE = re.compile(rf"^{_TAG}$", re.ASCII)
_DIGEST_RE = re.compile(rf"^{_DIGEST}$", re.ASCII)


class ImageRefError(ValueError):
    """Not a Docker image reference; the message says which part is wrong and what is accepted."""


@record
class ImageRef:
    domain: Optional[str]  # "registry.example:5000"; None for the default registry
    path: str  # "pytorch/pytorch"
    tag: Optional[str]
    digest: Optional[str]

    @property
    def name(self) -> str:
        return f"{self.domain}/{self.path}" if self.domain else self.path

    def __str__(self) -> str:
        text = self.name
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def parse_image_ref(text: str) -> ImageRef:
    """Parse and validate; raises ImageRefError with a one-line message."""
    accepted = "expected NAME[:TAG][@DIGEST] such as pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    if not isinstance(text, str) or not text:
        raise ImageRefError(f"image reference is empty: {accepted}")
    if len(text) > MAX_REFERENCE_LENGTH:
        raise ImageRefError(f"image reference {_shown(text)} is {len(text)} characters long (at most {MAX_REFERENCE_LENGTH})")
    bad = sorted({c for c in text if not (c.isascii() and (c.isalnum() or c in "._-/:@[]"))})
    if bad:
        shown = " ".join(repr(c) for c in bad[:5])
        raise ImageRefError(f"invalid image reference {_shown(text)}: character {shown} not allowed; {accepted}")
    rest, digest = text, None
    if "@" in rest:
        rest, digest = rest.split("@", 1)
        if not _DIGEST_RE.match(digest):
            raise ImageRefError(f"invalid image reference {_shown(text)}: digest {_shown(digest)} is not ALGORITHM:HEX (e.g. sha256:<64 hex digits>)")
    tag = None
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        rest, tag = rest[:colon], rest[colon + 1 :]
        if not _TAG_RE.match(tag):
            raise ImageRefError(f"invalid image reference {_shown(text)}: tag {_shown(tag)} must be 1-128 of A-Z a-z 0-9 _ . - and not start with . or -")
    domain = None
    first, sep, remainder = rest.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        domain, rest = first, remainder
        if not _DOMAIN_RE.match(domain):
            raise ImageRefError(f"invalid image reference {_shown(text)}: registry {_shown(domain)} is not a host name[:port]")
    if not rest or not _PATH_RE.match(rest):
        raise ImageRefError(
            f"invalid image reference {_shown(text)}: repository {_shown(rest)} must be lowercase letters and digits "
            "separated by '/', '.', '_', '__' or '-'"
        )
    ref = ImageRef(domain, rest, tag, digest)
    if len(ref.name) > MAX_NAME_LENGTH:
        raise ImageRefError(f"invalid image reference {_shown(text)}: the name is longer than {MAX_NAME_LENGTH} characters")
    return ref
