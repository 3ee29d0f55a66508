"""Exit statuses (a contract for scripts) and the one-line usage error (no click: the fast path uses them)."""

from __future__ import annotations

import sys

from ..model.text import one_line, printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def shorter(message: str, suffix: str) -> str:
    """The message, cut so that the suffix that follows it still fits in one bounded line."""
    from ..model.text import LINE_LIMIT

    return one_line(message, max(LINE_LIMIT - len(suffix) - 40, 80))


def say_internal_error(exc: BaseException) -> int:
    """A bug, said in one line rather than a traceback dumped on a user; the exit status (3)."""
    say_error(f"internal error: {type(exc).__name__}: {shorter(str(exc), ' (please report this)')} (please report this)")
    return EXIT_INTERNAL


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


class InputError(Exception):
    """Bad user input: one line on stderr, exit 2. Plain (no click), so that the commands' bodies
    run on the fast path too; the click group turns it into a ClickException (cli/group.py)."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def format_message(self) -> str:
        return self.message

    def show(self, file: Any = None) -> None:
        say_error(f"error: {self.format_message()}")


class UsageProblem(Exception):
    """A command line click would refuse for its combination of options (say, --context without
    --kubernetes), raised by a command's click-free body: click says it as its usage error, the
    fast path in the same words (``usage_line``)."""


def usage_line(command: str, message: str) -> str:
    """What cli/group.py's main prints for a click usage error inside ``command``."""
    where = f" (see `cudadoctor {command} --help`)"
    return f"error: {shorter(message, where)}{where}"
