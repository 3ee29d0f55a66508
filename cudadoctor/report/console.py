"""The rich console every text renderer prints to.

Markup is off: text from users, tables, images and NVML is printed literally (a GPU name holding
``[red]`` stays ``[red]``); renderers style with ``rich.text.Text`` instead. Colour follows rich's
rules: off when the stream is not a terminal and under NO_COLOR.
"""

from __future__ import annotations

import sys
from typing import Optional, TextIO

from rich.console import Console
from rich.text import Text


def make_console(file: Optional[TextIO] = None) -> Console:
    stream = file or sys.stdout
    # Piped output keeps whole lines (greppable logs); a terminal gets rich's wrapping.
    interactive = hasattr(stream, "isatty") and stream.isatty()
    return Console(file=stream, highlight=False, soft_wrap=not interactive, emoji=False, markup=False)


def unicode_ok(console: Console) -> bool:
    return (console.encoding or "").lower().startswith("utf")


def indented(text: str, style: str = "") -> Text:
    """A line whose leading spaces stay unstyled (a dim or coloured line starts at its text)."""
    body = text.lstrip(" ")
    return Text.assemble(text[: len(text) - len(body)], (body, style))
