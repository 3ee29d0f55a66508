"""Showing values that came from outside (a user, a file, a driver, a daemon) safely in one line.

Every message that echoes such a value goes through here, so a 10 kB ``--driver`` or a path
holding a newline still gives one short line: control characters (and lone surrogates, which no
stream can encode) are escaped as ``\\n``, ``\\x1b``, ``\\ud800``; long values are cut with an
ellipsis. Pure: text in, text out.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The longest line an error may be (the bound), and the most of one value a message quotes.
LINE_LIMIT = 300
VALUE_LIMIT = 60
ELLIPSIS = "..."  # ASCII, so an error line survives any stream encoding

# C0 and C1 controls, DEL, lone surrogates, line/paragraph separators, bidi overrides, isolates and
# marks (which reorder what a terminal shows), the invisible zero-width characters and soft hyphen
# (two names that look the same must not be), and the byte-order mark. Compiled on first use: the CLI
# imports this module on every run, and most runs print no error.
_UNSAFE_CLASS = "\x00-\x1f\x7f-\x9f\xad\u061c\u200b-\u200f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
_UNSAFE_IN_TEXT_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u200b-\u200f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
_PATTERNS: dict[str, "re.Pattern[str]"] = {}
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _pattern(chars: str) -> "re.Pattern[str]":
    pattern = _PATTERNS.get(chars)
    if pattern is None:
        pattern = _PATTERNS[chars] = re.compile(f"[{chars}]")
    return pattern


def _escape_one(match: "re.Match[str]") -> str:
    char = match.group(0)
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_control(text: str) -> str:
    """``text`` with every control character (newlines included) written as an escape."""
    # Every character of the class is one str.isprintable refuses: most texts never need the
    # pattern, whose compiling costs about 1 ms of a `check`.
    return text if text.isprintable() else _pattern(_UNSAFE_CLASS).sub(_escape_one, text)


def printable(text: str) -> str:
    """``text`` with control characters escaped, except newlines and tabs (multi-line output)."""
    return text if text.isprintable() else _pattern(_UNSAFE_IN_TEXT_CLASS).sub(_escape_one, text)


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` cannot be encoded as UTF-8 (JSON's ``"\\ud800"`` escapes produce these)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shorten(text: str, limit: int = VALUE_LIMIT) -> str:
    """The start of ``text`` and an ellipsis when it is longer than ``limit``."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ELLIPSIS), 1)] + ELLIPSIS


def unquoted(text: str, limit: int = VALUE_LIMIT) -> str:
    """A value for a message where quotes would be noise (a name in brackets): escaped and shortened."""
    return shorten(escape_control(text), limit)


def _int_text(value: int) -> str:
    # str() refuses integers over 4300 digits (CPython's int/str limit); say how big instead.
    if value.bit_length() > 1000:
        return f"<an integer of about {int(value.bit_length() * 0.30103) + 1} digits>"
    return str(value)


_SHORT_REPR: list[Any] = []


def _short_repr() -> Any:
    """reprlib's Repr, limited to a glance at a list or an object (built on first use)."""
    if not _SHORT_REPR:
        import reprlib

        short = reprlib.Repr()
        short.maxlevel, short.maxstring, short.maxother = 2, 20, 20
        short.maxlist = short.maxtuple = short.maxdict = 4
        _SHORT_REPR.append(short)
    return _SHORT_REPR[0]


def quoted(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value for a message: a string quoted and escaped, anything else its short repr; at most
    about ``limit`` characters either way."""
    if isinstance(value, str):
        return "'" + shorten(escape_control(value).replace("'", "\\'"), limit) + "'"
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return shorten(_int_text(value), limit)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple, dict)):
        try:
            shown = _short_repr().repr(value)
        except (ValueError, RecursionError):  # an integer over the int/str limit inside it
            return "an object" if isinstance(value, dict) else "a list"
        return shorten(escape_control(shown), limit)
    try:
        shown = repr(value)
    except Exception:
        return f"a {type(value).__name__}"
    return shorten(escape_control(shown), limit)


def shown_path(path: str, limit: int = 120) -> str:
    """A file name for a message: escaped, and when long its start and its end (the file's own name)."""
    text = escape_control(path)
    if len(text) <= limit:
        return text
    keep = limit - len(ELLIPSIS)
    return text[: keep // 2] + ELLIPSIS + text[-(keep - keep // 2):]


def one_line(message: str, limit: int = LINE_LIMIT) -> str:
    """A message as one line of at most ``limit`` characters: escaped, and when too long its start
    and its end (which usually says what is accepted) around an ellipsis."""
    text = escape_control(message)
    if len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head - len(ELLIPSIS)
    return text[:head] + ELLIPSIS + text[-tail:]
