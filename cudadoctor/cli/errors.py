"""Exit statuses (a contract for scripts) and the one-line usage error."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..model.text import one_line, printable

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def say_error(message: str) -> None:
    """``cudadoctor: <message>`` on stderr as one bounded line (see model/text.py): whatever a
    user value held, an error is one line a terminal and a log can take."""
    # Written to sys.stderr itself, not through click.echo: click re-encodes an ASCII stream as
    # UTF-8, where the stream's own error handler (report.console.prepare_streams) writes ASCII.
    try:
        sys.stderr.write(one_line(f"cudadoctor: {message}") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or gone: nothing left to tell
        pass


def say_warning(message: str) -> None:
    """``cudadoctor: warning: <message>`` on stderr as one bounded line, every control character
    escaped (a node name or a file name holding ESC, BEL or a newline cannot reach the terminal)."""
    say_error(f"warning: {message}")


def say(text: str, err: bool = False) -> None:
    """A line of plain output: printable (control characters escaped, see model/text.py) and
    written to the stream itself, so a stream that cannot encode it degrades to ASCII."""
    stream = sys.stderr if err else sys.stdout
    try:
        stream.write(printable(text) + "\n")
        stream.flush()
    except (OSError, ValueError):  # the stream is closed: nothing left to tell
        pass


class InputError(click.ClickException):
    """Bad user input: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        say_error(f"error: {self.format_message()}")
