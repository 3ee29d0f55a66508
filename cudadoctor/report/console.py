"""The rich console every text renderer prints to, and what a stream that is not UTF-8 gets.

Markup is off: text from users, tables, images and NVML is printed literally (a GPU name holding
``[red]`` stays ``[red]``); renderers style with ``rich.text.Text`` instead. Control characters in
that text (an escape sequence in a GPU name, a carriage return in a path) are shown escaped
(``\\x1b``), never sent to the terminal. Colour follows rich's rules: off when the stream is not a
terminal and under NO_COLOR.

A stream that cannot encode UTF-8 (``LC_ALL=C`` without Python's UTF-8 mode,
``PYTHONIOENCODING=latin-1``, some CI runners) gets ASCII: the report's marks come from the
ASCII symbol table, and any other character it cannot encode is written as an ASCII stand-in
(an em dash as ``-``, an arrow as ``->``) or escaped, rather than failing the command.
rich is imported only when a console is made, so the CLI can prepare its streams cheaply.
"""

from __future__ import annotations

import codecs
import io
import os
import sys

from ..model.text import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Optional, TextIO

    from rich.console import Console
    from rich.text import Text

# The report's symbols, by name: what a UTF-8 stream shows and what any other stream shows.
UNICODE_SYMBOLS = {"ok": "✓", "info": "i", "warn": "!", "fail": "✗", "arrow": "→", "dash": "—"}
ASCII_SYMBOLS = {"ok": "OK", "info": "i", "warn": "!", "fail": "x", "arrow": "->", "dash": "-"}

# Stand-ins for characters a report or an error may hold, when the stream cannot encode them.
_ASCII_STAND_INS = {
    "—": "-", "–": "-", "‐": "-", "‑": "-", "−": "-", "→": "->", "←": "<-", "⇒": "=>", "≥": ">=",
    "≤": "<=", "≠": "!=", "✓": "OK", "✔": "OK", "✗": "x", "✘": "x", "…": "...", "×": "x", "·": ".",
    "•": "*", "‘": "'", "’": "'", "“": '"', "”": '"', "\u00a0": " ", "\u202f": " ", "°": " deg",
}  # fmt: skip
ERROR_HANDLER = "cudadoctor-ascii"


def _stand_in(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler: an ASCII stand-in for each character, else its escape."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    chunk = error.object[error.start : error.end]
    out = []
    for char in chunk:
        stand_in = _ASCII_STAND_INS.get(char)
        if stand_in is not None:
            try:
                stand_in.encode(error.encoding)
            except (UnicodeError, LookupError):
                stand_in = None
        if stand_in is None:
            code = ord(char)
            stand_in = f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        out.append(stand_in)
    return "".join(out), error.end


codecs.register_error(ERROR_HANDLER, _stand_in)

_ENCODES_UNICODE: dict[str, bool] = {}


def encodes_unicode(stream: Any) -> bool:
    """Can this stream write the report's Unicode symbols (UTF-8, or another encoding that has them)?"""
    encoding = (getattr(stream, "encoding", None) or "ascii").lower()
    known = _ENCODES_UNICODE.get(encoding)
    if known is None:
        try:
            "".join(UNICODE_SYMBOLS.values()).encode(encoding)
            known = True
        except (UnicodeError, LookupError):
            known = False
        _ENCODES_UNICODE[encoding] = known
    return known


def symbols_for(stream: Any) -> dict[str, str]:
    return UNICODE_SYMBOLS if encodes_unicode(stream) else ASCII_SYMBOLS


def prepare_streams(streams: Optional[Iterable[Any]] = None) -> None:
    """Make stdout and stderr write what they cannot encode as ASCII stand-ins or escapes, instead
    of raising UnicodeEncodeError halfway through a report (a lone surrogate fails even UTF-8).
    A standard stream the process was started without (`cudadoctor check >&-`: Python sets it to
    None) writes to the null device: what would be printed is lost, the exit status still says it."""
    if streams is None:
        for name in ("stdout", "stderr"):
            if getattr(sys, name) is None:
                setattr(sys, name, open(os.devnull, "w", encoding="utf-8", errors=ERROR_HANDLER))
    for stream in streams if streams is not None else (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors != ERROR_HANDLER:
            try:
                stream.reconfigure(errors=ERROR_HANDLER)
            except (ValueError, OSError, io.UnsupportedOperation):  # closed, or not reconfigurable
                pass


_CONSOLE_CLASS: list[type] = []


def _literal_console_class() -> type:
    """rich's Console, showing control characters in text escaped instead of emitting them.
    Built on first use, so importing this module does not import rich."""
    if not _CONSOLE_CLASS:
        from rich.console import Console
        from rich.segment import Segment

        class LiteralConsole(Console):
            def render(self, renderable: Any, options: Any = None) -> Any:
                for segment in super().render(renderable, options):
                    if segment.control is None and segment.text:
                        shown = printable(segment.text)
                        if shown != segment.text:
                            segment = Segment(shown, segment.style, segment.control)
                    yield segment

        _CONSOLE_CLASS.append(LiteralConsole)
    return _CONSOLE_CLASS[0]


def make_console(file: Optional[TextIO] = None) -> "Console":
    stream = file or sys.stdout
    # Piped output keeps whole lines (greppable logs); a terminal gets rich's wrapping.
    interactive = hasattr(stream, "isatty") and stream.isatty()
    console: "Console" = _literal_console_class()(
        file=stream, highlight=False, soft_wrap=not interactive, emoji=False, markup=False
    )
    return console


class StatusLine:
    """One line of progress on a terminal (stderr), rewritten in place; nothing at all when
    stderr is not a terminal, so logs and pipes get no extra output."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.shown = 0

    def __call__(self, text: str) -> None:
        line = printable(text).replace("\n", " ")[:100]
        try:
            self.stream.write("\r" + line + " " * max(self.shown - len(line), 0) + ("\r" if not line else ""))
            self.stream.flush()
        except (OSError, ValueError):
            return
        self.shown = len(line)


def status_line(stream: Any = None) -> Optional[StatusLine]:
    """A progress callback for a long wait (a pull, a smoke run), or None when ``stream``
    (stderr by default) is not a terminal."""
    stream = stream if stream is not None else sys.stderr
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    return StatusLine(stream) if interactive else None


def unicode_ok(console: "Console") -> bool:
    return encodes_unicode(console.file)


def symbols(console: "Console") -> dict[str, str]:
    """The symbol table (``ok``, ``info``, ``warn``, ``fail``, ``arrow``, ``dash``) this console's stream can show."""
    return symbols_for(console.file)


def indented(text: str, style: str = "") -> "Text":
    """A line whose leading spaces stay unstyled (a dim or coloured line starts at its text)."""
    from rich.text import Text

    body = text.lstrip(" ")
    return Text.assemble(text[: len(text) - len(body)], (body, style))
