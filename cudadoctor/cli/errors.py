"""Exit statuses (a contract for scripts) and the one-line usage error."""

from __future__ import annotations

from typing import Any

import click

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class InputError(click.ClickException):
    """Bad user input: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"cudadoctor: error: {self.format_message()}", err=True)
