"""Numbers that come from outside (a flag, a run line, a node label, an HTTP header, a wheel name).

One parser for all of them, so that every reader accepts the same thing: ASCII digits only
(``str.isdigit`` and ``int()`` also take ``²``, ``٣`` and ``１``, and ``int()`` takes ``1_0``), a
bound on the length (a 5000-digit number is a typo or an attack, and ``int()`` refuses it past
Python's digit limit with a ValueError most callers don't expect), and finite floats only.
Pure: text in, a number or a :class:`NumberError` out.
"""

from __future__ import annotations

import math
import re

from .text import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# Longest integer any reader needs: a byte count up to an EiB is 19 digits, a port 5, a count 7.
MAX_DIGITS = 19
_INTEGER = re.compile(r"[0-9]+\Z", re.ASCII)
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z", re.ASCII)


class NumberError(ValueError):
    """Not a number this reader accepts; the message names the value and what is accepted."""


def is_ascii_integer(text: str, max_digits: int = MAX_DIGITS) -> bool:
    """True when ``text`` is 1..max_digits ASCII digits (no sign, no space, no underscore)."""
    return isinstance(text, str) and 0 < len(text) <= max_digits and _INTEGER.match(text) is not None


def parse_int(text: str, what: str = "the value", *, max_digits: int = MAX_DIGITS, minimum: int = 0, maximum: Optional[int] = None) -> int:
    """A non-negative integer written in ASCII digits, within ``[minimum, maximum]``."""
    if not isinstance(text, str) or not _INTEGER.match(text):
        raise NumberError(f"{what} {quoted(text)} is not a whole number in ASCII digits")
    if len(text.lstrip("0")) > max_digits:
        raise NumberError(f"{what} {quoted(text)} is too long: at most {max_digits} digits")
    value = int(text)
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" to {maximum}" if maximum is not None else " or more"
        raise NumberError(f"{what} {quoted(text)} is out of range: expected {minimum}{upper}")
    return value


def parse_decimal(text: str, what: str = "the value", *, max_digits: int = MAX_DIGITS) -> float:
    """A finite non-negative decimal (``1``, ``2.5``, ``.5``) in ASCII digits, at most ``max_digits`` long."""
    if not isinstance(text, str) or not _DECIMAL.match(text):
        raise NumberError(f"{what} {quoted(text)} is not a number in ASCII digits")
    if len(text) > max_digits + 1:
        raise NumberError(f"{what} {quoted(text)} is too long: at most {max_digits} digits")
    value = float(text)
    if not math.isfinite(value):  # unreachable with the length bound, kept as the contract
        raise NumberError(f"{what} {quoted(text)} is not a finite number")
    return value


def parse_seconds(text: str, what: str = "the value", *, low: float, high: float) -> float:
    """A number of seconds within ``[low, high]``: finite, ASCII digits, surrounding blanks ignored."""
    value = parse_decimal(text.strip() if isinstance(text, str) else text, what, max_digits=12)
    if not low <= value <= high:
        raise NumberError(f"{what} {quoted(text)} is out of range: expected {low:g} to {high:g} seconds")
    return value


def json_integer(value: object, what: str = "the value", *, maximum: int) -> int:
    """An integer parsed from JSON (not a bool, not a float), within ``[0, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise NumberError(f"{what} {quoted(value)} is not a whole number")
    if not 0 <= value <= maximum:
        raise NumberError(f"{what} {quoted(value)} is out of range: expected 0 to {maximum}")
    return value
