"""Lines that fit the terminal: text wraps under its own indent, commands never wrap.

rich's own wrapping starts continuation lines at column 0 and may break a command between
``--index-url`` and its URL, so a copied command runs broken. Here every line is wrapped before it
reaches rich (printed with ``soft_wrap=True``, which tells rich not to wrap again):

- prose wraps at spaces onto continuation lines indented like its first line's text (a hanging
  indent); a span in backticks (a command inside a hint) and a finding code never break;
- a command is printed whole on a line of its own, however wide the terminal.

When output is not a terminal (a pipe, a file) nothing wraps: each line stays one line for grep.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Sequence

from rich.console import Console
from rich.text import Text

from ..model.text import escape_control

Segment = tuple[str, str]  # (text, style)
_WORD = re.compile(r"(?:`[^`]*`|\S)+")


def _words(segments: Iterable[Segment]) -> list[list[Segment]]:
    """Words (runs without spaces outside backticks), each a list of styled pieces; a word may span
    segments when no space separates them."""
    words: list[list[Segment]] = []
    glued = False  # the previous segment ended inside a word
    for text, style in segments:
        if not text:
            continue
        position = 0
        for match in _WORD.finditer(text):
            piece = (match.group(), style)
            if glued and match.start() == 0 and words:
                words[-1].append(piece)
            else:
                words.append([piece])
            position = match.end()
        glued = position == len(text) and bool(text) and not text[-1].isspace()
    return words


def _width(word: Sequence[Segment]) -> int:
    return sum(len(text) for text, _ in word)


def _unbreakable(word: Sequence[Segment]) -> bool:
    """A backtick span or a link is copied whole, so it is never cut (it may overflow instead)."""
    text = "".join(t for t, _ in word)
    return "`" in text or "://" in text


def _cut(word: list[Segment], room: int) -> list[list[Segment]]:
    """A word wider than a whole line (a long file name) cut into pieces that fit ``room``."""
    pieces: list[list[Segment]] = [[]]
    used = 0
    for text, style in word:
        while text:
            if used == room:
                pieces.append([])
                used = 0
            take = text[: room - used]
            pieces[-1].append((take, style))
            used += len(take)
            text = text[len(take):]
    return pieces


class Printer:
    """Prints wrapped lines and whole commands to a rich console."""

    def __init__(self, console: Console, width: Optional[int] = None):
        self.console = console
        if width is None and console.is_terminal:
            width = console.width
        self.width = width  # None: do not wrap

    def blank(self) -> None:
        self.console.print(soft_wrap=True)

    def line(self, *segments: Segment, indent: int = 0, hanging: Optional[int] = None, tail: Sequence[Segment] = ()) -> None:
        """``segments`` wrapped at ``self.width``: the first line starts ``indent`` spaces in, the
        others ``hanging`` (default: ``indent`` + 2). ``tail`` (a finding code) is glued to the last
        word, two spaces after it, so it never lands on a line alone. Control characters in the
        text (a node named ``ad\rmin``) are written as escapes first: rich would drop BEL, BS and
        CR, and the wrapping would take CR, VT or FF for a space."""
        segments = tuple((escape_control(text), style) for text, style in segments)
        tail = tuple((escape_control(text), style) for text, style in tail)
        words = _words(segments)
        if tail:
            if words:
                words[-1] = words[-1] + [("  ", "")] + list(tail)
            else:
                words.append(list(tail))
        hanging = indent + 2 if hanging is None else hanging
        if self.width is not None and self.width - hanging >= 20:
            room = self.width - hanging
            words = [piece for word in words
                     for piece in (_cut(word, room) if _width(word) > room and not _unbreakable(word) else [word])]
        lines: list[list[Segment]] = []
        current: list[Segment] = [(" " * indent, "")]
        used = indent
        empty = True
        for word in words:
            size = _width(word)
            if self.width is not None and size > self.width - hanging and _unbreakable(word):
                # A span that must stay whole (a command in backticks) and fits no indented line:
                # alone at column 0, like a command (see command()).
                if not empty:
                    lines.append(current)
                lines.append(list(word))
                current, used, empty = [(" " * hanging, "")], hanging, True
                continue
            if not empty and self.width is not None and used + 1 + size > self.width:
                lines.append(current)
                current, used, empty = [(" " * hanging, "")], hanging, True
            if not empty:
                current.append((" ", ""))
                used += 1
            current.extend(word)
            used += size
            empty = False
        if not empty or len(lines) == 0:
            lines.append(current)
        for pieces in lines:
            self.console.print(Text.assemble(*pieces), soft_wrap=True)

    def command(self, command: str, indent: int = 2, style: str = "") -> None:
        """A command a user copies: one line, never wrapped, whatever the width; when it is wider
        than the terminal it stands alone at column 0, so the terminal's own wrap starts each
        continuation at the left edge and a triple-click still copies it whole."""
        command = escape_control(command)
        if self.width is not None and indent + len(command) > self.width:
            indent = 0
        self.console.print(Text.assemble(" " * indent, (command, style)), soft_wrap=True)
