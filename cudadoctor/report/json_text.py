"""A document as ``json.dumps(value, indent=2)`` writes it, without importing ``json``.

A `check --json` writes one document of a few hundred values. ``json`` costs about 2.5 ms of a
`check`'s 80 to import (it compiles its regular expressions as it loads), and with an indent its
encoder is pure Python anyway. The values a report is made of (dicts with string keys, lists,
tuples, strings, ints, finite floats, booleans, None) are written here with the C string encoder
``json`` itself uses (``_json``), and anything else (another key type, NaN or an infinity, a
subclass, a value of another type) is left to ``json.dumps``, so the text is always exactly the
text it would write (tests/test_json_text.py holds the two equal).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

_quoted: Optional[Callable[[str], str]]
try:
    from _json import encode_basestring_ascii as _quoted
except ImportError:  # an interpreter without json's accelerator: json writes everything
    _quoted = None

_INF = float("inf")


class _NotPlain(Exception):
    """A value this writer leaves to json."""


def _write(value: Any, parts: list[str], newline: str) -> None:
    kind = type(value)
    if kind is str:
        parts.append(_quoted(value))  # type: ignore[misc]  # set: _write runs only with _quoted
    elif kind is dict:
        if not value:
            parts.append("{}")
            return
        inner = newline + "  "
        opening = "{" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            parts.append(opening)
            parts.append(_quoted(key))  # type: ignore[misc]
            parts.append(": ")
            _write(item, parts, inner)
            opening = "," + inner
        parts.append(newline)
        parts.append("}")
    elif kind is list or kind is tuple:
        if not value:
            parts.append("[]")
            return
        inner = newline + "  "
        opening = "[" + inner
        for item in value:
            parts.append(opening)
            _write(item, parts, inner)
            opening = "," + inner
        parts.append(newline)
        parts.append("]")
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif kind is int:
        parts.append(int.__repr__(value))
    elif kind is float and -_INF < value < _INF:
        parts.append(float.__repr__(value))
    else:
        raise _NotPlain


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2)``."""
    if _quoted is not None:
        parts: list[str] = []
        try:
            _write(value, parts, "\n")
        except (_NotPlain, RecursionError):
            pass
        else:
            return "".join(parts)
    import json

    return json.dumps(value, indent=2)


def quoted(text: str) -> str:
    """``json.dumps(text)`` for a string."""
    if _quoted is not None and type(text) is str:
        return _quoted(text)
    import json

    return json.dumps(text)
