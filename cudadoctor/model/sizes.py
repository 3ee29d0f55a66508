"""Memory sizes as users type them: 16GiB, 24GB, 8192MiB, 80G, 17179869184."""

from __future__ import annotations

import re
from .text import quoted

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)(b?)\s*\Z", re.IGNORECASE | re.ASCII)
MAX_SIZE_BYTES = 1024**6  # one EiB: sizes beyond it are typos, and beyond a float's range an error
_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


class SizeError(ValueError):
    """Not a size; the message names the value and what is accepted."""


def parse_size(text: str) -> int:
    """Bytes. KiB/MiB/GiB/TiB and bare K/M/G/T are powers of 1024; KB/MB/GB/TB powers of 1000."""
    match = _SIZE.match(text or "")
    if not match or (match.group(3) and not match.group(2)):
        raise SizeError(f"{quoted(text)} is not a size: expected a number with a unit such as 16GiB, 24GB, 8192MiB or 80G")
    number, prefix, binary, byte = match.groups()
    power = _POWER[prefix.lower()]
    base = 1000 if (byte and not binary and prefix) else 1024
    value = float(number) * base**power
    if not value < MAX_SIZE_BYTES:  # also inf, from a number too long for a float
        raise SizeError(f"{quoted(text)} is too large: no GPU has over {MAX_SIZE_BYTES // 1024**5} PiB of memory")
    if value <= 0:
        raise SizeError(f"{quoted(text)} is not a size: it must be more than 0 bytes")
    return int(value)
